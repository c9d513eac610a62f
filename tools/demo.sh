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
