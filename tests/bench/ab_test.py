#!/usr/bin/python3
"""tools/bench/ab: a short paired run of hcq_bench against itself (the report's lines, its figures, the --fast
filter), and its answers to bad arguments (exit status 2, one `ab: error:` line, nothing on stdout) and to a program
that fails (exit status 1).

  ab_test.py AB HCQ_BENCH
"""
import os
import re
import subprocess
import sys
import tempfile

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
import one_line_error  # noqa: E402  (beside this script)

FLOOR = "BM_AtomicPingPong/real_time"


def run(ab, arguments, timeout=300):
    return subprocess.run([sys.executable, ab] + arguments, capture_output=True, text=True, timeout=timeout)


def check_report(ab, program):
    problems = []
    # The floor's bound is far above anything it reads, so every pair is kept; a second run with a bound of 1 ns
    # keeps none.
    done = run(ab, [program, program, "BM_BuildExecSignal", "BM_SubmitBoundSignal/manual_time", "--pairs", "2",
                    "--min-time", "0.01", "--fast", f"{FLOOR}=1e9"])
    if done.returncode != 0:
        return [f"paired run: exit status {done.returncode}:\n{done.stderr}"]
    lines = done.stdout.splitlines()
    if lines[:2] != [f"A: {program}", f"B: {program}"]:
        problems.append(f"the report should name both programs first:\n{done.stdout}")
    if f"2 pairs of runs, min time 0.01 s each; 2 with {FLOOR} under 1e+09 ns in both runs" not in lines:
        problems.append(f"the report should count the pairs and the kept ones:\n{done.stdout}")
    for name in ("BM_BuildExecSignal", "BM_SubmitBoundSignal/manual_time"):
        row = [line for line in lines if line.startswith(name + " ")]
        match = re.fullmatch(rf"{name}\s+(\S+)\s+(\S+)\s+(\S+)\s+(\d+)/2\s+(\S+)", row[0]) if len(row) == 1 else None
        if match is None:
            problems.append(f"no row for {name} with A, B, B - A, 'k/2' and p:\n{done.stdout}")
            continue
        a, b, difference, faster, p = (float(match[1]), float(match[2]), float(match[3]), int(match[4]),
                                       float(match[5]))
        if not (a > 0 and b > 0 and 0 <= faster <= 2 and 0 < p <= 1):
            problems.append(f"{name}: implausible figures {match.groups()}")
        # Two pairs: the median difference lies between the two differences, so within the medians' spread.
        if abs(difference) > max(a, b):
            problems.append(f"{name}: B - A = {difference} is larger than either median ({a}, {b})")
    if "ab: pair 2 of 2" not in done.stderr:
        problems.append(f"progress lines missing on stderr:\n{done.stderr}")
    none = run(ab, [program, program, "BM_BuildExecSignal", "--pairs", "1", "--min-time", "0.01", "--fast",
                    f"{FLOOR}=1"])
    if none.returncode != 0 or "0 with" not in none.stdout or "no pair to compare" not in none.stdout:
        problems.append(f"a floor no run meets should keep no pair and say so:\n{none.stdout}{none.stderr}")
    return problems


def check_error(ab, arguments, status, wants):
    return one_line_error.problems_with(run(ab, arguments, timeout=60), arguments, status, "ab:", wants)


def main():
    ab, program = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    problems = check_report(ab, program)
    with tempfile.TemporaryDirectory() as scratch:
        # Lists a benchmark but fails when asked to run it.
        failing = os.path.join(scratch, "failing_bench")
        with open(failing, "w") as f:
            f.write('#!/bin/sh\ncase "$1" in --benchmark_list_tests*) echo BM_Thing; exit 0;; esac\n'
                    'echo "it broke" >&2\nexit 3\n')
        os.chmod(failing, 0o755)
        plain = os.path.join(scratch, "not_executable")
        open(plain, "w").close()
        bad = [
            ([program], 2, ["the following arguments are required"]),
            (["/nonexistent/bench", program, "BM_X"], 2, ["/nonexistent/bench", "no such executable"]),
            ([plain, program, "BM_X"], 2, ["not_executable", "no such executable"]),
            ([program, program, "BM_X", "--pairs", "0"], 2, ["--pairs 0", "1 to 1000"]),
            ([program, program, "BM_X", "--pairs", "many"], 2, ["--pairs many", "whole number"]),
            ([program, program, "BM_X", "--min-time", "-1"], 2, ["--min-time -1", "more than 0"]),
            ([program, program, "BM_X", "--min-time", "nan"], 2, ["--min-time nan"]),
            ([program, program, "BM_X", "--fast", "145"], 2, ["--fast 145", "NAME=NS"]),
            ([program, program, "BM_X", "--fast", "BM_Y=fast"], 2, ["--fast BM_Y=fast", "NAME=NS"]),
            ([program, program, "BM_.*"], 2, ["BM_.*", "exact name"]),
            ([program, program, "BM_\x1b[31m"], 2, ["exact name"]),
            ([program, program, "BM_NoSuchBenchmark"], 2, ["has no benchmark BM_NoSuchBenchmark",
                                                           "--benchmark_list_tests"]),
            ([failing, failing, "BM_Thing", "--pairs", "1"], 1, ["failing_bench", "status 3", "it broke"]),
        ]
        for arguments, status, wants in bad:
            problems += check_error(ab, arguments, status, wants)
    for problem in problems:
        print(problem)
    print(f"ab_test: {len(problems)} problem(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
