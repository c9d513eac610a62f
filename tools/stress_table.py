#!/usr/bin/env python3
"""Prints the stress suite's figures as the README's markdown table.

Reads the lines tests/stress/stress_report.h prints ("stress: <what>: tried N, survived N, lost N") from a meson
test log (default build/meson-logs/testlog.txt); a figure reported twice (a test run again) keeps the last.

  tools/stress_table.py [LOG]
"""
import re
import sys

LINE = re.compile(r"^stress: (?P<what>.+): tried (?P<tried>\d+), survived (?P<survived>\d+), lost (?P<lost>\d+)$")


def main(argv):
    path = argv[1] if len(argv) > 1 else "build/meson-logs/testlog.txt"
    try:
        with open(path, encoding="utf-8", errors="replace") as log:
            lines = log.read().splitlines()
    except OSError as error:
        print(f"stress_table: cannot read {path}: {error.strerror}; run `meson test -C build --suite stress` first",
              file=sys.stderr)
        return 2
    figures = {}
    for line in lines:
        match = LINE.match(line.strip())
        if match:
            figures[match["what"]] = (match["tried"], match["survived"], match["lost"])
    if not figures:
        print(f"stress_table: no stress figures in {path}", file=sys.stderr)
        return 1
    print("| stress case | tried | survived | lost |")
    print("|---|---:|---:|---:|")
    for what, (tried, survived, lost) in figures.items():
        print(f"| {what} | {tried} | {survived} | {lost} |")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
