#!/usr/bin/env bash
# Quick start, step 1: set up, build, and run baregpu's main job: list the GPUs (real and virtual), then read the
# virtual RX 7900 XTX's identity and IP discovery table as the driver sees it.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
"$root/tools/setup.sh"
build_dir=${BAREGPU_BUILD_DIR:-build}
cd "$root"
echo "\$ baregpu list"
"$build_dir/tools/baregpu" list
echo
echo "\$ baregpu info sim:navi31"
"$build_dir/tools/baregpu" info sim:navi31
echo
# HCQ: vector add on the virtual GPU from Python through the C API (exit 77: the code object is not built).
case "$build_dir" in /*) build_abs=$build_dir ;; *) build_abs="$root/$build_dir" ;; esac
echo "\$ python3 examples/hcq_vector_add.py $build_dir/libbaregpu.so $build_dir/tests/am/sim/isa/kernels/vector_add-O2.co"
status=0
python3 "$root/examples/hcq_vector_add.py" --test "$build_abs/libbaregpu.so" \
  "$build_abs/tests/am/sim/isa/kernels/vector_add-O2.co" sim:navi31:demo || status=$?
[ "$status" -eq 0 ] || [ "$status" -eq 77 ] || exit "$status"
