#!/usr/bin/python3
"""tinygrad's own tests on DEV=BAREGPU beside tinygrad's CPU backend, on a fixed slice of its suite.

  tests/python/tinygrad_parity.py [--build build] [--only GROUP]

Runs every group of SLICE with tools/tinygrad/run_suite.py on both backends, prints a table of pass/fail/skip counts
per group and backend, and fails when a test that passes on the CPU backend does not pass on baregpu, unless
KNOWN_DIFFERENCES lists it with its reason (and fails too when a listed test passes again: the list stays true).
Exit status 77 when tinygrad, numpy or pytest is absent. The counts are the README's table.
"""
import argparse
import pathlib
import re
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]
RUN_SUITE = ROOT / "tools/tinygrad/run_suite.py"
PYTHON = "/usr/bin/python3"
SKIP = 77

# test_ops: the elementwise, reduction, matmul and movement ops the interpreter runs in seconds (the whole file takes
# more than 45 minutes on sim:navi31; NOTES.md "tinygrad on sim:navi31").
OPS = ("test_add or test_sub or test_mul or test_div or test_exp or test_log or test_sqrt or test_relu or test_sum or "
       "test_max or test_min or test_matmul or test_gemm or test_where or test_cmp or test_abs or test_neg or "
       "test_sigmoid or test_tanh or test_softmax or test_mean or test_cast or test_pad or test_reshape or "
       "test_permute or test_expand or test_cat or test_cumsum")
SLICE = [
    ("test_tiny", ["test/test_tiny.py"], None),
    ("test_hcq", ["test/device/test_hcq.py", "test/unit/test_hcq_graph.py"], None),
    ("jit", ["test/backend/test_jit.py", "test/backend/test_symbolic_jit.py"], None),
    ("test_dtype_alu", ["test/backend/test_dtype_alu.py"], None),
    ("test_ops (slice)", ["test/backend/test_ops.py"], OPS),
]

# Tests that pass on tinygrad's CPU backend and not on baregpu, each with why (NOTES.md has the evidence).
KNOWN_DIFFERENCES = {
    "test/backend/test_jit.py::TestJit::test_hcq_core_id_runtimevar_merge":
        "CPU only: tinygrad skips it elsewhere (skipUnless Device.DEFAULT == 'CPU': core_id is the CPU's runtime variable)",
}


def run(backend, files, select, build):
    command = [PYTHON, str(RUN_SUITE), "--backend", backend, "--build", build, "--device",
               "sim:navi31:parity", "--pytest", "--report-all", "--timeout", "1500", *files]
    if select:
        command += ["-k", select]
    result = subprocess.run(command, capture_output=True, text=True)
    if result.returncode == SKIP:
        return None
    outcomes = {m.group(2): m.group(1) for m in re.finditer(r"^(PASSED|FAILED|ERROR|XFAIL|XPASS) (\S+)",
                                                                result.stdout, re.M)}
    counts = {k: int(v) for v, k in re.findall(r"(\d+) (passed|failed|skipped|error|errors)\b",
                                                  (re.findall(r"^summary: (.*)$", result.stdout, re.M) or [""])[-1])}
    if not counts and not outcomes:
        print(result.stdout[-4000:] + result.stderr[-2000:])
        raise RuntimeError(f"{backend} {files}: no pytest result (see the output above)")
    return outcomes, counts


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--build", default=str(ROOT / "build"))
    parser.add_argument("--only", help="run only this group of the slice")
    args = parser.parse_args()
    if subprocess.run([PYTHON, "-c", "import pytest, numpy"], capture_output=True).returncode != 0:
        print(f"skip: {PYTHON} lacks pytest or numpy (python3-pytest, python3-numpy)")
        return SKIP
    problems, rows = [], []
    for name, files, select in SLICE:
        if args.only and args.only != name:
            continue
        results = {}
        for backend in ("baregpu", "cpu"):
            got = run(backend, files, select, args.build)
            if got is None:
                print("skip: tinygrad is not there (run_suite.py says why)")
                return SKIP
            results[backend] = got
        rows.append((name, results))
        baregpu, cpu = results["baregpu"][0], results["cpu"][0]
        for test, outcome in sorted(cpu.items()):
            if outcome != "PASSED":
                continue
            if baregpu.get(test) != "PASSED" and test not in KNOWN_DIFFERENCES:
                problems.append(f"{test}: passes on CPU, {baregpu.get(test, 'not run')} on baregpu")
        for test in KNOWN_DIFFERENCES:
            if baregpu.get(test) == "PASSED":
                problems.append(f"{test}: listed as a known difference but passes on baregpu now: drop it")
    print(f"{'group':<18} {'backend':<8} {'passed':>7} {'failed':>7} {'skipped':>8}")
    for name, results in rows:
        for backend in ("baregpu", "cpu"):
            c = results[backend][1]
            failed = c.get("failed", 0) + c.get("error", 0) + c.get("errors", 0)
            print(f"{name:<18} {backend:<8} {c.get('passed', 0):>7} {failed:>7} {c.get('skipped', 0):>8}")
    for test, reason in KNOWN_DIFFERENCES.items():
        print(f"known difference: {test}: {reason}")
    for problem in problems:
        print(f"PARITY: {problem}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
