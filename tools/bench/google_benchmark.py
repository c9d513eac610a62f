"""baregpu's side of tools/bench/compare: runs one of the project's Google Benchmark programs (tests/bench/*_bench)
with JSON output and reads back each benchmark's times and counters.

Google Benchmark 1.7.1 (Debian 12) takes --benchmark_min_time as a plain number of seconds ("0.05"; it rejects
"0.05s" and has no "100x" iteration form), so every run names its min time and its filter explicitly: a run is
bounded by that, by the benchmark's own work per iteration, and by the timeout given here.
"""
import json
import subprocess


class BenchmarkError(Exception):
    """A benchmark program that failed, timed out, or reported an error for one of its benchmarks."""


# Nanoseconds per unit of Google Benchmark's time_unit field.
NANOSECONDS = {"ns": 1.0, "us": 1e3, "ms": 1e6, "s": 1e9}


class Result:
    """One benchmark's figures from the JSON report (times in nanoseconds per iteration)."""

    def __init__(self, entry):
        scale = NANOSECONDS[entry.get("time_unit", "ns")]
        self.name = entry["name"]
        self.iterations = entry["iterations"]
        # real_time is the manual time for UseManualTime benchmarks (BM_GraphReplayPerEntry's CPU time of Run()).
        self.real_ns = entry["real_time"] * scale
        self.cpu_ns = entry["cpu_time"] * scale
        known = {"name", "run_name", "run_type", "repetitions", "repetition_index", "threads", "iterations",
                 "real_time", "cpu_time", "time_unit", "family_index", "per_family_instance_index"}
        self.counters = {key: value for key, value in entry.items() if key not in known}


def list_benchmarks(program, env, timeout):
    """The benchmark names `program` has (--benchmark_list_tests)."""
    run = subprocess.run([str(program), "--benchmark_list_tests=true"], capture_output=True, text=True, env=env,
                         timeout=timeout)
    if run.returncode != 0:
        raise BenchmarkError(f"{program} --benchmark_list_tests exited with status {run.returncode}: "
                             f"{run.stderr.strip()[-500:]}")
    return run.stdout.split()


def run(program, names, min_time, env, timeout):
    """Runs the benchmarks named exactly in `names` (one process) and returns {name: Result}."""
    # Benchmark names are letters, digits, '_', '/' and ':', none of them special in the filter's regex.
    pattern = "^(" + "|".join(names) + ")$"
    command = [str(program), "--benchmark_format=json", f"--benchmark_filter={pattern}",
               f"--benchmark_min_time={min_time:g}"]
    try:
        completed = subprocess.run(command, capture_output=True, text=True, env=env, timeout=timeout)
    except subprocess.TimeoutExpired:
        raise BenchmarkError(f"{program.name} did not finish in {timeout} s ({' '.join(command[1:])})") from None
    if completed.returncode != 0:
        raise BenchmarkError(f"{program.name} exited with status {completed.returncode}: "
                             f"{completed.stderr.strip()[-500:]}")
    if not completed.stdout.strip():
        raise BenchmarkError(f"{program.name} ran no benchmark ({' '.join(command[1:])}): "
                             f"{completed.stderr.strip()[-500:]}")
    try:
        report = json.loads(completed.stdout)
    except ValueError as error:
        raise BenchmarkError(f"{program.name} printed no JSON report ({error}): {completed.stdout[:200]!r}") from None
    results = {}
    for entry in report.get("benchmarks", []):
        if entry.get("error_occurred"):
            raise BenchmarkError(f"{program.name} {entry['name']}: {entry.get('error_message', 'failed')}")
        results[entry["name"]] = Result(entry)
    missing = [name for name in names if name not in results]
    if missing:
        raise BenchmarkError(f"{program.name} reported nothing for {', '.join(missing)}")
    return results
