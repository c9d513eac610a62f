#!/usr/bin/env bash
# The installed library as an application meets it (meson test install/tree):
#   1. `meson install --destdir` into a temporary directory;
#   2. every installed header compiles on its own against the installed tree (and Abseil), the C ones as C too,
#      and README.md lists exactly the installed headers;
#   3. a C program (hcq.h) built with `pkg-config --cflags --libs baregpu` alone, pkg-config seeing only the
#      installed .pc files (so no -dev package's .pc is needed), opens the virtual GPU and moves bytes through VRAM;
#   4. a C++ program (hcq/device.h) built with `pkg-config --cflags --libs baregpu-cpp` does the same through the
#      copy queue, and checks that the libraries it loaded are the installed ones;
#   5. the C program fails, naming the installed path, when an installed virtual firmware file is missing: the
#      device really boots from the installed tree's files;
#   6. the installed Python package (site-packages of Meson's Python) imports, names the installed library, moves
#      bytes through VRAM, and its .pth file maps tinygrad's runtime module name to it.
# Usage: install_test.sh BUILD_ROOT SOURCE_ROOT
set -euo pipefail
build=$1
source=$2
cc=${CC:-cc}
cxx=${CXX:-c++}
# A sanitized build's libraries need the sanitizer runtime in the program (meson passes b_sanitize).
sanitize=()
c_sanitize=()
if [ -n "${BAREGPU_SANITIZE:-}" ] && [ "$BAREGPU_SANITIZE" != none ]; then
  sanitize=(-fsanitize="$BAREGPU_SANITIZE")
  c_sanitize=("${sanitize[@]}")
  # A C program links clang's C sanitizer runtime only, but the library's UBSan checks (vptr) need the C++ one,
  # which needs libstdc++'s ABI on the command line; GCC's libubsan has both. Sanitized builds only: the normal
  # build links the C program with pkg-config's flags alone.
  if "$cc" --version | grep -q clang; then c_sanitize+=(-fsanitize-link-c++-runtime -lstdc++); fi
fi

# Outside the build tree on purpose: a library under the build root uses the build tree's firmware.
tmp=$(mktemp -d /tmp/baregpu-install-test.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
root=$tmp/root

fail() { echo "FAIL: $*" >&2; exit 1; }

# --no-rebuild: meson test has built everything, and a second ninja in the same build directory would race it.
meson install -C "$build" --no-rebuild --destdir "$root" > "$tmp/install.log" 2>&1 ||
  { cat "$tmp/install.log" >&2; fail "meson install --destdir failed"; }

pcfile=$(find "$root" -name baregpu.pc -print -quit)
[ -n "$pcfile" ] || fail "meson install installed no baregpu.pc"
pcdir=$(dirname "$pcfile")
libdir=$(dirname "$pcdir")
include=$(find "$root" -type d -path '*/include/baregpu' -print -quit)
[ -n "$include" ] || fail "meson install installed no include/baregpu"
[ -e "$libdir/libbaregpu.so" ] || fail "no libbaregpu.so in $libdir"
ls "$libdir"/libbaregpu-sim.so.* > /dev/null 2>&1 || fail "no libbaregpu-sim.so.* in $libdir"

# The .pc files carry meson.build's project version.
version=$(sed -n "s/^ *version: *'\([0-9.]*\)'.*/\1/p" "$source/meson.build" | head -1)
for pc in baregpu baregpu-cpp; do
  pc_version=$(PKG_CONFIG_PATH=$pcdir pkg-config --modversion "$pc") || fail "pkg-config cannot read $pc.pc"
  [ "$pc_version" = "$version" ] || fail "$pc.pc has version $pc_version, meson.build $version"
done

# The installed CLI (static: it links the internal archives) says the same version and knows the virtual GPU.
cli=$(find "$root" -type f -path '*/bin/baregpu' -print -quit)
[ -n "$cli" ] || fail "meson install installed no bin/baregpu"
[ "$("$cli" --version)" = "baregpu $version" ] || fail "installed baregpu --version says '$("$cli" --version)'"
"$cli" list | grep -q 'sim:navi31' || fail "installed baregpu list does not show sim:navi31"

# 2. Headers. Each alone, so a missing include of its own shows; -I the installed tree only (plus the system's).
headers=$(cd "$include" && find . -name '*.h' | sed 's|^\./||' | sort)
[ -n "$headers" ] || fail "no headers installed"
cpp_flags=$(PKG_CONFIG_PATH=$pcdir PKG_CONFIG_SYSROOT_DIR=$root pkg-config --cflags baregpu-cpp)
count=0
for header in $headers; do
  # shellcheck disable=SC2086
  echo "#include \"$header\"" | "$cxx" -std=c++20 -fsyntax-only -Wall -Wextra -Werror $cpp_flags -x c++ - \
    2> "$tmp/header.log" || { cat "$tmp/header.log" >&2; fail "installed header $header does not compile alone"; }
  count=$((count + 1))
done
for header in hcq/hcq.h base/version.h; do
  # (the declaration: ISO C wants a translation unit to declare something, and base/version.h has only macros)
  printf '#include "%s"\nint baregpu_header_check;\n' "$header" | "$cc" -std=c11 -fsyntax-only -Wall -Wextra -Werror -pedantic -I"$include" -x c - \
    2> "$tmp/header.log" || { cat "$tmp/header.log" >&2; fail "installed C header $header does not compile as C"; }
done
echo "headers: $count installed, each compiles alone; hcq/hcq.h and base/version.h also as C"
# README.md's library section lists the installed headers between these two lines.
listed=$(sed -n '/^<!-- installed headers -->$/,/^<!-- end installed headers -->$/p' "$source/README.md" |
         grep -o '`[a-z_/]*\.h`' | tr -d '`' | sort -u)
[ "$listed" = "$headers" ] || fail "README.md's list of installed headers differs from the install:
$(diff <(echo "$listed") <(echo "$headers") || true)"

export BAREGPU_SIM_DIR=$tmp/sim  # the virtual devices' persistent state, fresh
unset BAREGPU_VIRTUAL_FIRMWARE_DIR BAREGPU_SIM_LIBRARY
mkdir -p "$BAREGPU_SIM_DIR"

# The installed CLI boots the virtual GPU from the installed firmware (found relative to the program); the man page
# and the bash completion generated from its command table are installed beside it.
"$cli" boot sim:navi31:install-cli > "$tmp/cli_boot.log" 2>&1 ||
  { cat "$tmp/cli_boot.log" >&2; fail "the installed baregpu cannot boot sim:navi31"; }
[ -n "$(find "$root" -type f -path '*/share/man/man1/baregpu.1' -print -quit)" ] ||
  fail "meson install installed no share/man/man1/baregpu.1"
completion=$(find "$root" -type f -path '*/share/bash-completion/completions/baregpu' -print -quit)
[ -n "$completion" ] && bash -n "$completion" ||
  fail "meson install installed no valid share/bash-completion/completions/baregpu"

# 3. C: pkg-config sees only the installed .pc files (PKG_CONFIG_LIBDIR replaces the system's directories).
c_flags=$(PKG_CONFIG_LIBDIR=$pcdir PKG_CONFIG_SYSROOT_DIR=$root pkg-config --cflags --libs baregpu) ||
  fail "pkg-config --cflags --libs baregpu needs more than the installed .pc files"
# shellcheck disable=SC2086
"$cc" -std=c11 -Wall -Wextra -Werror "${c_sanitize[@]}" "$source/tests/install/hcq_c_program.c" -o "$tmp/hcq_c_program" $c_flags ||
  fail "the C program does not build with: $cc ... $c_flags"
LD_LIBRARY_PATH=$libdir "$tmp/hcq_c_program" sim:navi31:install-c || fail "the C program failed"

# 4. C++.
cpp_link=$(PKG_CONFIG_PATH=$pcdir PKG_CONFIG_SYSROOT_DIR=$root pkg-config --cflags --libs baregpu-cpp)
# shellcheck disable=SC2086
"$cxx" -std=c++20 -Wall -Wextra -Werror "${sanitize[@]}" "$source/tests/install/hcq_cpp_program.cc" -o "$tmp/hcq_cpp_program" \
  $cpp_link || fail "the C++ program does not build with: $cxx ... $cpp_link"
LD_LIBRARY_PATH=$libdir "$tmp/hcq_cpp_program" sim:navi31:install-cpp "$root/" || fail "the C++ program failed"

# 5. Without one of the installed firmware files the device cannot boot, and the error names the file in the
#    installed tree: what the programs booted from was the installed firmware, not another copy.
firmware=$(find "$root" -type d -path '*/share/baregpu/firmware/amdgpu' -print -quit)
[ -n "$firmware" ] || fail "no share/baregpu/firmware/amdgpu installed"
[ -f "$firmware/psp_13_0_0_sos.bin" ] || fail "no psp_13_0_0_sos.bin in $firmware"
mv "$firmware/psp_13_0_0_sos.bin" "$tmp/psp_13_0_0_sos.bin"
rm -rf "$BAREGPU_SIM_DIR" && mkdir -p "$BAREGPU_SIM_DIR"  # a cold device, which must load its firmware
if LD_LIBRARY_PATH=$libdir "$tmp/hcq_c_program" sim:navi31:install-c > "$tmp/nofw.log" 2>&1; then
  fail "the C program booted the virtual GPU without the installed psp_13_0_0_sos.bin: it used firmware from elsewhere"
fi
grep -qF "$firmware/psp_13_0_0_sos.bin" "$tmp/nofw.log" ||
  fail "without the installed psp_13_0_0_sos.bin, the error does not name it in the installed tree:
$(cat "$tmp/nofw.log")"
mv "$tmp/psp_13_0_0_sos.bin" "$firmware/psp_13_0_0_sos.bin"
# 6. Python: the package's files and the .pth are installed; with the installed library (BAREGPU_LIBRARY: the
#    package names PREFIX/LIBDIR, which under --destdir is not there) it runs on the virtual GPU.
pth=$(find "$root" -name baregpu-tinygrad.pth -print -quit)
[ -n "$pth" ] || fail "meson install installed no baregpu-tinygrad.pth"
site=$(dirname "$pth")
for f in baregpu/__init__.py baregpu/hcq.py baregpu/_hcq.py baregpu/_config.py baregpu/tinygrad.py _baregpu_tinygrad.py; do
  [ -f "$site/$f" ] || fail "no $f in the installed site-packages ($site)"
done
grep -q "libbaregpu.so" "$site/baregpu/_config.py" || fail "the installed _config.py names no libbaregpu.so"
grep -q "$build" "$site/baregpu/_config.py" && fail "the installed _config.py names the build tree"
lib=$(ls "$libdir"/libbaregpu.so.* | head -1)
python=${BAREGPU_PYTHON:-python3}
preload=()
if [ -n "${BAREGPU_SANITIZER_RUNTIME:-}" ]; then
  preload=(LD_PRELOAD="$BAREGPU_SANITIZER_RUNTIME" ASAN_OPTIONS=detect_leaks=0)
fi
env "${preload[@]}" PYTHONPATH="$site" BAREGPU_LIBRARY="$lib" LD_LIBRARY_PATH="$libdir" "$python" -c '
import sys, baregpu
assert baregpu.api_version()[0] >= 1
with baregpu.Device("sim:navi31:install-py") as dev:
    buf = dev.alloc(4096)
    buf.copyin(b"installed")
    assert bytes(buf.copyout(size=9)) == b"installed", "bytes lost"
import _baregpu_tinygrad
finders = [f for f in sys.meta_path if isinstance(f, _baregpu_tinygrad._Finder)]
assert len(finders) == 1 and finders[0].find_spec("tinygrad.runtime.ops_baregpu") is not None, "no finder"
assert finders[0].find_spec("tinygrad.runtime.ops_amd") is None, "the finder claims other modules"
print("python: the installed package works")' || fail "the installed Python package does not work"
echo "install test passed"
