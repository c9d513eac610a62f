#!/usr/bin/env bash
# Installs the missing Debian packages (tools/packages.txt), configures the build directory and builds.
# Idempotent and incremental; quiet when there is nothing to do. Sourced by demo.sh and test.sh.
#
# Environment: BAREGPU_BUILD_DIR (default build), BAREGPU_MESON_OPTIONS (extra `meson setup` options).
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"

missing=()
while read -r package; do
  [ -n "$package" ] || continue
  if ! dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q 'install ok installed'; then
    missing+=("$package")
  fi
done < <(sed -e 's/#.*//' -e 's/[[:space:]]*$//' -e '/^$/d' tools/packages.txt)

if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing Debian packages: ${missing[*]}"
  sudo=()
  if [ "$(id -u)" != 0 ]; then
    if ! command -v sudo >/dev/null; then
      echo "error: installing ${missing[*]} needs root; run as root or install sudo" >&2
      exit 1
    fi
    sudo=(sudo)
  fi
  "${sudo[@]}" apt-get update -qq
  if ! DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" \
      > /tmp/baregpu-apt.log 2>&1; then
    tail -20 /tmp/baregpu-apt.log >&2
    echo "error: apt-get install failed (full log: /tmp/baregpu-apt.log)" >&2
    exit 1
  fi
fi

# Debian's real amdgpu firmware, which tests parse and boot the virtual GPU with (a cache outside the build tree).
"$root/tools/fetch_firmware.sh"

build_dir=${BAREGPU_BUILD_DIR:-build}
if [ ! -f "$build_dir/build.ninja" ]; then
  echo "setup: configuring $build_dir ${BAREGPU_MESON_OPTIONS:-}"
  # shellcheck disable=SC2086
  if ! meson setup "$build_dir" ${BAREGPU_MESON_OPTIONS:-} > /tmp/baregpu-setup.log 2>&1; then
    cat /tmp/baregpu-setup.log >&2
    exit 1
  fi
  echo "setup: building (a clean build takes a few minutes)"
fi
# Layers join the build by having a meson.build (see meson.build); Meson does not notice a new one by itself.
layout=$(find . -name meson.build -not -path './build*' | sort | md5sum | cut -d' ' -f1)
if [ "$(cat "$build_dir/.baregpu-layout" 2>/dev/null)" != "$layout" ]; then
  meson setup --reconfigure "$build_dir" > /tmp/baregpu-setup.log 2>&1 || { cat /tmp/baregpu-setup.log >&2; exit 1; }
  echo "$layout" > "$build_dir/.baregpu-layout"
fi
if ! meson compile -C "$build_dir" > "$build_dir/compile.log" 2>&1; then
  grep -E 'error|FAILED' -A3 "$build_dir/compile.log" | head -60 >&2
  echo "error: build failed (full log: $build_dir/compile.log)" >&2
  exit 1
fi
