#!/usr/bin/python3
"""tools/bench/compare's answer to arguments it cannot use and builds it cannot run: exit status 2 and one
`compare: error:` line naming what is wrong and how to fix it, no traceback, nothing on stdout. No benchmark runs:
the builds here are empty directories or hold stand-in programs that only list benchmark names.

  compare_errors_test.py COMPARE
"""
import os
import subprocess
import sys
import tempfile

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
import one_line_error  # noqa: E402  (beside this script)

PROGRAMS = ("hcq_bench", "am_bench", "isa_bench")


# The benchmarks compare ran before issue 24's targets table, as the programs of a build from then list them.
BEFORE_TARGETS = ["BM_BuildExecSignalPairs/1", "BM_BuildExecSignalPairs/8", "BM_BuildExecSignalPairs/64",
                  "BM_BuildCopySignal", "BM_GraphReplayPerEntry/manual_time", "BM_SignalRoundTrip/real_time",
                  "BM_AtomicPingPong/real_time", "BM_TlsfAllocFree", "BM_MapUnmap1GiBAs2MiBPages",
                  "BM_MapUnmap1GiBAs4KiBPages", "BM_StoreAndClearPtes1GiB", "BM_VectorAdd/1048576"]
# Every benchmark compare runs, as the programs of a complete build list them: those and the targets' ones.
COMPLETE_LISTING = BEFORE_TARGETS + [
    "BM_GraphReplayKernels/8/iterations:2048/manual_time", "BM_SubmitBoundExecSignal/1/iterations:8192/manual_time",
    "BM_SubmitBoundExecSignal/8/iterations:8192/manual_time", "BM_FullBootVirtualNavi31/process_time",
    "BM_PartialBootVirtualNavi31/process_time", "BM_TinygradMatmulF32", "BM_TinygradSumF32",
    "BM_VectorAddScaling/real_time", "BM_ScalingFloor/real_time",
    "BM_FirstDispatchOfAKernel/iterations:512", "BM_FirstDispatchOfAKernelWarmHeap/iterations:512",
    "BM_WarmDispatch/workers:1", "BM_PageFaultBesideADispatch/iterations:2048/manual_time",
    "BM_ProtocolFloor/real_time"]
# Without these the virtual GPU's firmware comes from the build tree, which is what the firmware case checks.
ENV = {key: value for key, value in os.environ.items()
       if key not in ("BAREGPU_FIRMWARE_PATH", "BAREGPU_VIRTUAL_FIRMWARE_DIR")}


def check(compare, arguments, wants):
    try:
        run = subprocess.run([sys.executable, compare] + arguments, capture_output=True, text=True, timeout=60,
                             env=ENV)
    except subprocess.TimeoutExpired:
        return [f"{arguments}: compare did not finish in 60 s"]
    return one_line_error.problems_with(run, arguments, 2, "compare:", wants)


def fake_build(root, listing):
    """A build tree whose benchmark programs are shell scripts printing `listing` for --benchmark_list_tests."""
    bench = os.path.join(root, "tests", "bench")
    os.makedirs(bench)
    for name in PROGRAMS:
        path = os.path.join(bench, name)
        with open(path, "w") as file:
            file.write("#!/bin/sh\n" + "".join(f"echo {benchmark}\n" for benchmark in listing))
        os.chmod(path, 0o755)
    return root


def main():
    compare = sys.argv[1]
    with tempfile.TemporaryDirectory(prefix="baregpu-compare-errors-") as scratch:
        empty = os.path.join(scratch, "empty")
        os.mkdir(empty)
        # hcq_bench from before issue 24's benchmarks were added: it lists only the older ones.
        old = fake_build(os.path.join(scratch, "old"), ["BM_BuildExecSignal", "BM_SignalRoundTrip/real_time"])
        # From before issue 24's targets table: its benchmarks are missing.
        before_targets = fake_build(os.path.join(scratch, "before-targets"), BEFORE_TARGETS)
        # Every benchmark there, but no virtual firmware built.
        complete = fake_build(os.path.join(scratch, "complete"), COMPLETE_LISTING)
        # Every benchmark, the firmware and the kernel, but no Python package (the targets run the Python example).
        no_python = fake_build(os.path.join(scratch, "no-python"), COMPLETE_LISTING)
        for built in ("firmware/virtual/amdgpu/psp_13_0_0_sos.bin", "tests/am/sim/isa/kernels/vector_add-O2.co"):
            os.makedirs(os.path.dirname(os.path.join(no_python, built)), exist_ok=True)
            open(os.path.join(no_python, built), "w").close()
        missing = os.path.join(scratch, "missing")
        forged = os.path.join(scratch, "x\x1b[31m\nforged")
        problems = []
        problems += check(compare, ["--build", missing], [missing, "does not exist", "--build"])
        problems += check(compare, ["--build", forged], ["does not exist", repr(forged)])
        problems += check(compare, ["--build", empty], [os.path.join(empty, "tests/bench/hcq_bench"), "is missing",
                                                         f"ninja -C {empty} tests/bench/hcq_bench"])
        problems += check(compare, ["--build", old], ["hcq_bench has no benchmark BM_BuildExecSignalPairs/1",
                                                       f"ninja -C {old} tests/bench/hcq_bench"])
        problems += check(compare, ["--build", before_targets], [
            "hcq_bench has no benchmark BM_GraphReplayKernels/8/iterations:2048/manual_time",
            f"ninja -C {before_targets} tests/bench/hcq_bench"])
        problems += check(compare, ["--build", no_python], [os.path.join(no_python, "python/baregpu"), "is missing",
                                                             f"ninja -C {no_python}"])
        problems += check(compare, ["--build", complete], [
            os.path.join(complete, "firmware/virtual/amdgpu/psp_13_0_0_sos.bin"), "is missing",
            f"ninja -C {complete} firmware/virtual/amdgpu/psp_13_0_0_sos.bin"])
        problems += check(compare, ["--build", empty, "--rounds", "x"], ["--rounds", "'x'", "whole number"])
        problems += check(compare, ["--build", empty, "--rounds", "0"], ["--rounds", "'0'", "whole number"])
        problems += check(compare, ["--build", empty, "--min-time", "0.05s"], ["--min-time", "'0.05s'", "seconds"])
        problems += check(compare, ["--build", empty, "--bogus"], ["unrecognized arguments: --bogus", "--help"])
        problems += check(compare, ["--build", empty, "--json", os.path.join(missing, "out.json")],
                          ["--json", missing, "does not exist"])
    for problem in problems:
        print(problem, file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
