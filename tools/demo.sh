#!/usr/bin/env bash
# Quick start, step 1: set up, build, and run baregpu's main job.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
"$root/tools/setup.sh"
build_dir=${BAREGPU_BUILD_DIR:-build}
cd "$root"
echo "\$ baregpu list"
"$build_dir/tools/baregpu" list
