"""What the benchmark tools' tests ask of an answer to bad input: the exit status wanted, one `PREFIX error: ...`
line on stderr naming everything in `wants`, no traceback, nothing on stdout, no escape character."""


def problems_with(run, arguments, status, prefix, wants):
    """The ways `run` (a completed subprocess.run with text output) falls short, one line each."""
    problems = []
    if run.returncode != status:
        problems.append(f"{arguments}: exit status {run.returncode}, want {status}")
    lines = run.stderr.splitlines()
    if "Traceback" in run.stderr:
        problems.append(f"{arguments}: a traceback instead of a message:\n{run.stderr}")
    elif len(lines) != 1 or not lines[0].startswith(f"{prefix} error: ") or not all(w in lines[0] for w in wants):
        problems.append(f"{arguments}: stderr should be one '{prefix} error: ...' line with {wants}:\n{run.stderr}")
    if run.stdout:
        problems.append(f"{arguments}: printed on stdout:\n{run.stdout}")
    if "\x1b" in run.stderr:
        problems.append(f"{arguments}: an escape character reached the terminal")
    return problems
