#!/usr/bin/env bash
# Quick start, step 2: set up, build, and run the whole test suite. Exit status: 0 when every test passed.
#
#   tools/test.sh            the normal build (build/)
#   tools/test.sh --asan     AddressSanitizer + UndefinedBehaviorSanitizer (build-asan/)
#   tools/test.sh --tsan     ThreadSanitizer (build-tsan/)
#   tools/test.sh --clang    clang++-19 (build-clang/), whose -Wthread-safety checks base::Mutex's annotations
#   tools/test.sh --clang --asan   both (build-clang-asan/): what CI runs, since clang builds the sanitized tree
#                            in about a third of GCC's time
#   extra arguments go to `meson test` (e.g. a test name)
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"

suffix=""
sanitize=""
while [ $# -gt 0 ]; do
  case "$1" in
    --asan) sanitize=asan ;;
    --tsan) sanitize=tsan ;;
    --clang)
      # meson.build adds -Wthread-safety for clang; with werror every ABSL_GUARDED_BY violation fails the build.
      export CXX=clang++-19 CC=clang-19
      suffix=-clang ;;
    *) break ;;
  esac
  shift
done
case "$sanitize" in
  asan)
    export BAREGPU_MESON_OPTIONS="-Db_sanitize=address,undefined -Db_lundef=false"
    # hwloc's libpciaccess plugin (hwloc_pci.so) leaks at exit and is dlclosed before LeakSanitizer reports, so
    # the leak cannot be symbolised or suppressed. Without it hwloc still finds PCI devices through sysfs
    # (its linuxio component); only the PCI name database goes unused.
    export HWLOC_COMPONENTS=-pci
    # UndefinedBehaviorSanitizer only prints by default, and a test that triggers it still passes: make it fail.
    export UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1} ;;
  tsan)
    export BAREGPU_MESON_OPTIONS="-Db_sanitize=thread -Db_lundef=false" ;;
esac
if [ -n "$suffix$sanitize" ]; then
  export BAREGPU_BUILD_DIR=build$suffix${sanitize:+-$sanitize}
fi
build_dir=${BAREGPU_BUILD_DIR:-build}

"$root/tools/setup.sh"

status=0
meson test -C "$build_dir" --print-errorlogs "$@" || status=$?

# meson counts executables; the closing line counts GoogleTest cases, from the JUnit log meson writes.
python3 - "$build_dir/meson-logs/testlog.junit.xml" <<'PY' || true
import sys, xml.etree.ElementTree as ET
try:
    root = ET.parse(sys.argv[1]).getroot()
except (OSError, ET.ParseError):
    sys.exit(0)
passed = failed = skipped = 0
for case in root.iter("testcase"):
    if case.find("failure") is not None or case.find("error") is not None:
        failed += 1
    elif case.find("skipped") is not None:
        skipped += 1
    else:
        passed += 1
print(f"tests: {passed} passed, {failed} failed, {skipped} skipped")
PY
exit $status
