#!/usr/bin/env python3
"""The Python example's answer to a code object it cannot use: one `error:` line naming the path, exit status 1,
no traceback. Missing files, directories and FIFOs (which would block a read forever: each run is bounded)."""
import os
import subprocess
import sys
import tempfile

EXAMPLE = os.path.join(os.environ.get("BAREGPU_SOURCE_ROOT", "."), "examples", "hcq_vector_add.py")


def check(path, want):
    try:
        run = subprocess.run([sys.executable, EXAMPLE, path], capture_output=True, text=True, timeout=60)
    except subprocess.TimeoutExpired:
        return [f"{path}: the example did not finish in 60 s"]
    problems = []
    if run.returncode != 1:
        problems.append(f"{path}: exit status {run.returncode}, want 1")
    if "Traceback" in run.stderr:
        problems.append(f"{path}: a traceback instead of a message:\n{run.stderr}")
    lines = run.stderr.splitlines()
    if len(lines) != 1 or not lines[0].startswith("error: ") or want not in lines[0] or repr(path) not in lines[0]:
        problems.append(f"{path}: stderr should be one 'error: ...{want}...' line naming {path!r}:\n{run.stderr}")
    if "\x1b" in run.stderr:
        problems.append(f"{path}: an escape character reached the terminal")
    return problems


def main():
    with tempfile.TemporaryDirectory(prefix="baregpu-python-example-") as scratch:
        fifo = os.path.join(scratch, "vector_add.co")
        os.mkfifo(fifo)
        problems = []
        problems += check(os.path.join(scratch, "missing.co"), "No such file or directory")
        problems += check(scratch, "is a directory, not a regular file")
        problems += check(fifo, "is a FIFO, not a regular file")
        problems += check(os.path.join(scratch, "x\x1b[31m\nforged.co"), "No such file or directory")
    for problem in problems:
        print(problem, file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
