#!/usr/bin/env bash
# Fetches Debian's real GPU firmware (component non-free-firmware) into a cache the tests read:
#   firmware-amd-graphics     .cache/firmware/debian/VERSION/amdgpu/*.bin, VERSION/copyright
#   firmware-nvidia-graphics  .cache/firmware/debian/VERSION/nvidia/CHIP/..., VERSION/nvidia.copyright
# The machine's apt sources are left alone: apt runs with a private sources list, lists and package cache under
# .cache/firmware/apt (the recipe in ../shared/docs/REFERENCES.md). Idempotent: each package has its own completion
# marker (VERSION/.complete for amdgpu, as before; VERSION/.complete-nvidia), so a cache that holds only the AMD
# package gets the NVIDIA one added and nothing fetched twice. Called by setup.sh.
#
# Symlinks stay symlinks: firmware-nvidia-graphics links chips that share files (nvidia/ad102/gsp/gsp-*.bin ->
# ../../ga102/gsp/...) with relative links inside nvidia/, as /lib/firmware has them once installed, so the cache
# looks like a real firmware root and the links resolve wherever the cache lives.
#
#   tools/fetch_firmware.sh            every package below
#   BAREGPU_FIRMWARE_CACHE=DIR         another cache directory
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cache=${BAREGPU_FIRMWARE_CACHE:-$root/.cache/firmware}

# PACKAGE VERSION SUITE DIR MARKER: DIR is the package's directory under lib/firmware, MARKER its completion marker.
# firmware-amd-graphics 20250410 (bookworm-backports) has Navi31's whole gfx11 set; 20230210 (bookworm) is Debian 12's
# own. firmware-nvidia-graphics 20250410 has GSP-RM 535.113.01 for TU10x, GA100, GA10x and AD10x (a 39.5 MB
# download, 64 MB unpacked: 242 files, 199 links).
packages=(
  "firmware-amd-graphics 20250410-2~bpo12+1 bookworm-backports amdgpu .complete"
  "firmware-amd-graphics 20230210-5 bookworm amdgpu .complete"
  "firmware-nvidia-graphics 20250410-2~bpo12+1 bookworm-backports nvidia .complete-nvidia"
)

missing=()
for entry in "${packages[@]}"; do
  read -r package version suite dir marker <<<"$entry"
  [ -f "$cache/debian/$version/$marker" ] || missing+=("$entry")
done
[ ${#missing[@]} -gt 0 ] || exit 0

apt_dir=$cache/apt
mkdir -p "$apt_dir/lists/partial" "$apt_dir/archives/partial"
sources=$(for entry in "${packages[@]}"; do
  read -r package version suite dir marker <<<"$entry"
  echo "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian $suite non-free-firmware"
done | sort -u)
echo "$sources" >"$apt_dir/sources.list"
apt_options=(-o "Dir::Etc::sourcelist=$apt_dir/sources.list" -o Dir::Etc::sourceparts=- -o "Dir::State::lists=$apt_dir/lists"
  -o "Dir::Cache=$apt_dir" -o "Dir::Cache::archives=$apt_dir/archives" -o APT::Sandbox::User=root)
echo "setup: fetching Debian's GPU firmware (non-free-firmware) into $cache"
if ! apt-get "${apt_options[@]}" update -qq >"$apt_dir/update.log" 2>&1; then
  tail -5 "$apt_dir/update.log" >&2
  echo "error: apt-get update for Debian's non-free-firmware component failed (log: $apt_dir/update.log)" >&2
  exit 1
fi
for entry in "${missing[@]}"; do
  read -r package version suite dir marker <<<"$entry"
  if ! (cd "$apt_dir/archives" && apt-get "${apt_options[@]}" download "$package=$version") \
      >"$apt_dir/download.log" 2>&1; then
    tail -5 "$apt_dir/download.log" >&2
    echo "error: could not download $package $version from $suite (log: $apt_dir/download.log)" >&2
    exit 1
  fi
  deb=$(ls "$apt_dir/archives/${package}_${version//:/%3a}_all.deb")
  unpacked=$cache/debian/$version
  # The AMD package keeps its old copyright path (VERSION/copyright); others are named after their directory.
  copyright=copyright
  [ "$dir" = amdgpu ] || copyright=$dir.copyright
  # Unpacked beside the version directory, then moved in: an interrupted run leaves no half directory behind the
  # marker, and another package's files in the version directory are left alone.
  tmp=$unpacked.$dir.tmp
  rm -rf "$tmp" "${unpacked:?}/$dir" "${unpacked:?}/$copyright" "${unpacked:?}/$marker"
  mkdir -p "$tmp" "$unpacked"
  dpkg-deb -x "$deb" "$tmp/root"
  mv "$tmp/root/lib/firmware/$dir" "$unpacked/$dir"
  cp "$tmp/root/usr/share/doc/$package/copyright" "$unpacked/$copyright"
  rm -rf "$tmp"
  touch "$unpacked/$marker"
  rm -f "$deb"
done
