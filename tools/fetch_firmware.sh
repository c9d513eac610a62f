#!/usr/bin/env bash
# Fetches Debian's real amdgpu firmware (package firmware-amd-graphics, component non-free-firmware) into a cache the
# tests read: .cache/firmware/debian/VERSION/amdgpu/*.bin. The machine's apt sources are left alone: apt runs with a
# private sources list, lists and package cache under .cache/firmware/apt (the recipe in
# ../shared/docs/REFERENCES.md). Idempotent: a version already unpacked is not fetched again. Called by setup.sh.
#
#   tools/fetch_firmware.sh            both versions below
#   BAREGPU_FIRMWARE_CACHE=DIR         another cache directory
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cache=${BAREGPU_FIRMWARE_CACHE:-$root/.cache/firmware}

# VERSION SUITE: the versions tests boot with. 20250410 (bookworm-backports) has Navi31's whole gfx11 set;
# 20230210 (bookworm) is Debian 12's own.
versions=(
  "20250410-2~bpo12+1 bookworm-backports"
  "20230210-5 bookworm"
)

missing=()
for entry in "${versions[@]}"; do
  read -r version suite <<<"$entry"
  [ -f "$cache/debian/$version/.complete" ] || missing+=("$entry")
done
[ ${#missing[@]} -gt 0 ] || exit 0

apt_dir=$cache/apt
mkdir -p "$apt_dir/lists/partial" "$apt_dir/archives/partial"
: >"$apt_dir/sources.list"
for entry in "${versions[@]}"; do
  read -r version suite <<<"$entry"
  echo "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian $suite non-free-firmware" \
    >>"$apt_dir/sources.list"
done
apt_options=(-o "Dir::Etc::sourcelist=$apt_dir/sources.list" -o Dir::Etc::sourceparts=- -o "Dir::State::lists=$apt_dir/lists"
  -o "Dir::Cache=$apt_dir" -o "Dir::Cache::archives=$apt_dir/archives" -o APT::Sandbox::User=root)
echo "setup: fetching Debian's firmware-amd-graphics (non-free-firmware) into $cache"
if ! apt-get "${apt_options[@]}" update -qq >"$apt_dir/update.log" 2>&1; then
  tail -5 "$apt_dir/update.log" >&2
  echo "error: apt-get update for Debian's non-free-firmware component failed (log: $apt_dir/update.log)" >&2
  exit 1
fi
for entry in "${missing[@]}"; do
  read -r version suite <<<"$entry"
  if ! (cd "$apt_dir/archives" && apt-get "${apt_options[@]}" download "firmware-amd-graphics=$version") \
      >"$apt_dir/download.log" 2>&1; then
    tail -5 "$apt_dir/download.log" >&2
    echo "error: could not download firmware-amd-graphics $version from $suite (log: $apt_dir/download.log)" >&2
    exit 1
  fi
  deb=$(ls "$apt_dir/archives"/firmware-amd-graphics_"${version//:/%3a}"_all.deb)
  unpacked=$cache/debian/$version
  rm -rf "$unpacked" "$unpacked.tmp"
  mkdir -p "$unpacked.tmp"
  dpkg-deb -x "$deb" "$unpacked.tmp/root"
  mv "$unpacked.tmp/root/lib/firmware/amdgpu" "$unpacked.tmp/amdgpu"
  cp "$unpacked.tmp/root/usr/share/doc/firmware-amd-graphics/copyright" "$unpacked.tmp/copyright"
  rm -rf "$unpacked.tmp/root"
  touch "$unpacked.tmp/.complete"
  mv "$unpacked.tmp" "$unpacked"
  rm -f "$deb"
done
