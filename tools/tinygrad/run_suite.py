#!/usr/bin/python3
"""Runs part of tinygrad's own test suite on a virtual (or real) GPU and prints the pass/fail counts. Backends:
  serve    tinygrad's unmodified AM driver through `baregpu serve` (DEV=PCI+AMD:LLVM, REMOTE=...)
  baregpu  tinygrad on baregpu's own driver and HCQ: the baregpu Python package's backend (DEV=BAREGPU)
  cpu      tinygrad's own CPU backend (DEV=CPU:LLVM), the reference the others are compared with

  tools/tinygrad/run_suite.py [--backend serve|baregpu|cpu] [--build build] [--baregpu build/tools/baregpu]
                              [--device sim:navi31:suite] [--firmware DIR] [--pytest] TEST...

TEST is a tinygrad test module (test.test_tiny) run with unittest, or with --pytest a path or node id
(test/backend/test_ops.py) run with Debian's pytest (tinygrad's conftest.py needs a newer pytest, so it is not
loaded: --noconftest). The server gets a fresh state directory (a cold GPU); tinygrad boots it from cold.
Exit status: 0 when nothing failed, 1 otherwise, 77 when tinygrad or numpy is absent.
"""
import argparse
import os
import pathlib
import re
import select
import signal
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parents[2]
PYTHON = "/usr/bin/python3"
# The build tree the defaults come from: the one meson's test sets (a sanitizer build's), else build/.
BUILD = pathlib.Path(os.environ.get("BAREGPU_BUILD_ROOT") or ROOT / "build")
SKIP = 77


def main():
  parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
  parser.add_argument("--backend", choices=["serve", "baregpu", "cpu"], default="serve")
  parser.add_argument("--build", default=str(BUILD), help="the build tree (its python/ for --backend baregpu)")
  parser.add_argument("--baregpu", default=str(BUILD / "tools/baregpu"))
  parser.add_argument("--device", default="sim:navi31:suite")
  parser.add_argument("--firmware", default=str(BUILD / "firmware/virtual"),
                      help="directory holding amdgpu/*.bin, for tinygrad and (unless virtual) for the virtual GPU")
  parser.add_argument("--tinygrad", default=os.environ.get("BAREGPU_TINYGRAD",
                                                           str(ROOT.parent / "shared/vendor/tinygrad")))
  parser.add_argument("--pytest", action="store_true", help="run TESTs with pytest instead of unittest")
  parser.add_argument("--timeout", type=int, default=3600, help="seconds for the whole run")
  parser.add_argument("--report-all", action="store_true", help="with --pytest: a PASSED/FAILED/... line per test")
  parser.add_argument("-k", dest="select", help="with --pytest: run only the tests this pytest -k expression selects")
  parser.add_argument("tests", nargs="+")
  args = parser.parse_args()
  tinygrad = pathlib.Path(args.tinygrad)
  if not (tinygrad / "tinygrad").is_dir():
    print(f"skip: tinygrad is not at {tinygrad}")
    return SKIP
  if subprocess.run([PYTHON, "-c", "import numpy"], capture_output=True).returncode != 0:
    print(f"skip: {PYTHON} has no numpy (python3-numpy)")
    return SKIP

  state = tempfile.TemporaryDirectory(prefix="baregpu-tinygrad-suite-")
  env = dict(os.environ)
  for variable in ("LD_PRELOAD", "ASAN_OPTIONS", "TSAN_OPTIONS"):
    env.pop(variable, None)
  env["CACHEDB"] = os.path.join(state.name, "tinygrad-cache.db")
  server = None
  if args.backend == "serve":
    server_env = dict(os.environ, BAREGPU_SIM_DIR=state.name)
    if pathlib.Path(args.firmware).resolve() != (BUILD / "firmware/virtual").resolve():
      server_env["BAREGPU_FIRMWARE_PATH"] = args.firmware
    server = subprocess.Popen([args.baregpu, "serve", args.device, "--listen", "127.0.0.1:0"], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, env=server_env, text=True)
    ready, _, _ = select.select([server.stdout], [], [], 60)
    line = server.stdout.readline() if ready else ""
    match = re.search(r" on (\S+)$", line.strip())
    if not match:
      server.kill()
      print(f"baregpu serve did not start: {line!r} {server.stderr.read()}")
      return 1
    env.update({"PYTHONPATH": f"{ROOT / 'tools/tinygrad'}:{tinygrad}", "BAREGPU_TINYGRAD_FIRMWARE": args.firmware,
                "REMOTE": match.group(1), "DEV": "PCI+AMD:LLVM"})
  elif args.backend == "baregpu":
    python_dir = pathlib.Path(args.build) / "python"
    if not (python_dir / "baregpu").is_dir():
      print(f"no baregpu package at {python_dir}: build first (ninja -C {args.build})")
      return 1
    # The build tree's python/ has the package and a sitecustomize.py that registers DEV=BAREGPU with tinygrad.
    env.update({"PYTHONPATH": f"{python_dir}:{tinygrad}", "DEV": "BAREGPU", "BAREGPU_DEVICE": args.device,
                "BAREGPU_SIM_DIR": state.name})
  else:
    env.update({"PYTHONPATH": str(tinygrad), "DEV": "CPU:LLVM"})
  if args.pytest:
    command = [PYTHON, "-m", "pytest", "-q", "-rA" if args.report_all else "-rfE", "-p", "no:cacheprovider", "--noconftest",
               *(["-k", args.select] if args.select else []), *args.tests]
  else:
    command = [PYTHON, "-m", "unittest", "-v", *args.tests]
  try:
    result = subprocess.run(command, cwd=tinygrad, env=env, capture_output=True, text=True, timeout=args.timeout)
    output = result.stdout + result.stderr
  except subprocess.TimeoutExpired as e:
    output = (e.stdout or b"").decode() + (e.stderr or b"").decode() + f"\nTIMEOUT after {args.timeout} s\n"
    result = None
  finally:
    server_log = stop(server)
  print(output)
  if server is not None:
    print("--- baregpu serve ---")
    print(server_log)
  if args.pytest:
    summary = re.findall(r"^=*\s*(\d+ (?:passed|failed|error|skipped|deselected).*?) in [\d.]+s", output, re.M)
    print(f"summary: {summary[-1] if summary else 'none'}")
  else:
    ran = re.search(r"Ran (\d+) tests?", output)
    tail = re.search(r"^(OK|FAILED)(.*)$", output, re.M)
    print(f"summary: ran {ran.group(1) if ran else '?'}: {tail.group(0) if tail else 'no result'}")
  return 0 if result is not None and result.returncode == 0 else 1


def stop(server):
  """Stops `baregpu serve` (None: there is none) and returns its log."""
  if server is None:
    return ""
  server.send_signal(signal.SIGINT)
  try:
    return server.communicate(timeout=60)[1]
  except subprocess.TimeoutExpired:
    server.kill()
    return server.communicate()[1]


if __name__ == "__main__":
  sys.exit(main())
