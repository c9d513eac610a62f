#!/usr/bin/python3
"""tools/bench/compare in CI's short mode: it exits 0 (every figure was measured) and prints every row of both
tables, in its text and in its JSON. The figures themselves are shown in the log and not judged: they depend on the
machine and its load.

  compare_test.py COMPARE BUILD
"""
import os
import subprocess
import sys
import tempfile

# The rows issue 24 asks for, as this test knows them (not read from the script under test).
ROWS = {
    "build_compute_1": "queue build: compute, 1 exec+signal pair",
    "build_compute_8": "queue build: compute, 8 exec+signal pairs",
    "build_compute_64": "queue build: compute, 64 exec+signal pairs",
    "build_copy": "queue build: copy, 1 MiB copy + signal",
    "tlsf_free_alloc": "TLSF allocator: free + alloc pair",
    "map_2mib": "map+unmap 1 GiB as 2 MiB pages",
    "map_4kib": "map+unmap 1 GiB as 4 KiB pages",
    "vector_add_element": "interpreter: vector_add, per element",
    "vector_add_lane_instruction": "interpreter: vector_add, per lane-instruction",
    "graph_replay_entry": "graph replay, per entry",
    "dispatch_kernel": "tinygrad dispatch",
}
FLOORS = {
    "map_4kib_floor": "map+unmap 1 GiB as 4 KiB pages vs storing and clearing",
    "signal_round_trip": "signal round trip",
}
TIMEOUT = 280  # below meson's 300 s, so that a hang is reported with what was printed


def main():
    compare, build = sys.argv[1], sys.argv[2]
    with tempfile.TemporaryDirectory(prefix="baregpu-compare-test-") as scratch:
        report = os.path.join(scratch, "compare.json")
        try:
            run = subprocess.run([sys.executable, compare, "--short", "--build", build, "--json", report],
                                 capture_output=True, text=True, timeout=TIMEOUT)
        except subprocess.TimeoutExpired as timeout:
            print(timeout.stdout or "", timeout.stderr or "", sep="\n")
            print(f"compare --short did not finish in {TIMEOUT} s", file=sys.stderr)
            return 1
        print(run.stdout)
        print(run.stderr, file=sys.stderr)
        problems = []
        if run.returncode != 0:
            problems.append(f"exit status {run.returncode}, want 0")
        if "Traceback" in run.stderr:
            problems.append("a traceback")
        lines = run.stdout.splitlines()
        for label in list(ROWS.values()) + list(FLOORS.values()):
            if not any(line.startswith(label) for line in lines):
                problems.append(f"no row starting {label!r}")
        if os.path.exists(report):
            import json
            with open(report) as file:
                tables = json.load(file)
            if sorted(row["key"] for row in tables["rows"]) != sorted(ROWS):
                problems.append(f"JSON rows {[row['key'] for row in tables['rows']]}, want {sorted(ROWS)}")
            if sorted(row["key"] for row in tables["floors"]) != sorted(FLOORS):
                problems.append(f"JSON floors {[row['key'] for row in tables['floors']]}, want {sorted(FLOORS)}")
        else:
            problems.append("no JSON report written")
    for problem in problems:
        print(f"compare_test: {problem}", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
