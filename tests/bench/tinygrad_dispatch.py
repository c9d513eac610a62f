#!/usr/bin/python3
"""tinygrad's per-kernel dispatch overhead on sim:navi31: baregpu's own backend (DEV=BAREGPU) beside tinygrad's own
HCQ stack (its AM driver through `baregpu serve`, DEV=PCI+AMD:LLVM), same kernels, one run.

  tests/bench/tinygrad_dispatch.py [--build build] [--kernels N] [--calls M]

A TinyJit function of N small kernels (each a separate 256-float elementwise kernel) is captured, then called M
times; each call is timed from the call to the completion of its graph (the result's buffer synchronised). Prints
the median microseconds per call and per kernel for both, and their ratio (serve / baregpu: above 1 means
baregpu dispatches faster). Both include the kernels' run time on the virtual GPU's interpreter, which is the same
for both. A benchmark: numbers are reported, nothing is asserted. Exit status 77 without tinygrad or numpy.
"""
import argparse
import json
import os
import pathlib
import re
import select
import signal
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parents[2]
TINYGRAD = pathlib.Path(os.environ.get("BAREGPU_TINYGRAD", ROOT.parent / "shared/vendor/tinygrad"))
PYTHON = "/usr/bin/python3"
SKIP = 77

CLIENT = r"""
import json, statistics, sys, time
import numpy as np
from tinygrad import Device, Tensor, TinyJit
kernels, calls = int(sys.argv[1]), int(sys.argv[2])

@TinyJit
def chain(x):
  for i in range(kernels):
    x = (x * 1.0001 + i).contiguous()  # contiguous: every step is a kernel of its own
  return x.realize()

x = Tensor(np.ones(256, dtype=np.float32)).realize()
dev = Device[Device.DEFAULT]
for _ in range(3):  # capture, then the first replays
  chain(x)
dev.synchronize()
assert chain.captured is not None and len(chain.captured.linear.src) >= 1  # a captured graph replays
times = []
for _ in range(calls):
  start = time.perf_counter()
  out = chain(x)
  dev.synchronize()
  times.append(time.perf_counter() - start)
expected = np.ones(256, dtype=np.float32)
for i in range(kernels):
  expected = expected * np.float32(1.0001) + np.float32(i)
np.testing.assert_allclose(out.numpy(), expected, rtol=1e-4)
print(json.dumps({"median_us": statistics.median(times) * 1e6, "kernels": kernels}))
"""


def run_client(env, kernels, calls):
    result = subprocess.run([PYTHON, "-c", CLIENT, str(kernels), str(calls)], env=env, capture_output=True, text=True,
                            cwd=TINYGRAD, timeout=1200)
    if result.returncode != 0:
        raise RuntimeError(result.stdout[-3000:] + result.stderr[-3000:])
    return json.loads(result.stdout.strip().splitlines()[-1])


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--build", default=str(ROOT / "build"))
    parser.add_argument("--kernels", type=int, default=16)
    parser.add_argument("--calls", type=int, default=20)
    args = parser.parse_args()
    if not (TINYGRAD / "tinygrad").is_dir() or subprocess.run([PYTHON, "-c", "import numpy"]).returncode != 0:
        print(f"skip: needs tinygrad at {TINYGRAD} and {PYTHON} with numpy")
        return SKIP
    build = pathlib.Path(args.build).resolve()
    base = {k: v for k, v in os.environ.items() if k not in ("LD_PRELOAD", "ASAN_OPTIONS", "TSAN_OPTIONS")}
    results = {}
    with tempfile.TemporaryDirectory(prefix="baregpu-dispatch-") as state:
        env = dict(base, PYTHONPATH=f"{build / 'python'}:{TINYGRAD}", DEV="BAREGPU",
                   BAREGPU_DEVICE="sim:navi31:dispatch-baregpu", BAREGPU_SIM_DIR=state,
                   CACHEDB=os.path.join(state, "cache.db"))
        results["baregpu"] = run_client(env, args.kernels, args.calls)
        server = subprocess.Popen([str(build / "tools/baregpu"), "serve", "sim:navi31:dispatch-serve", "--listen",
                                   "127.0.0.1:0"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                  env=dict(base, BAREGPU_SIM_DIR=state))
        try:
            ready, _, _ = select.select([server.stdout], [], [], 60)
            match = re.search(r" on (\S+)$", server.stdout.readline().strip() if ready else "")
            if not match:
                raise RuntimeError("baregpu serve did not start")
            env = dict(base, PYTHONPATH=f"{ROOT / 'tools/tinygrad'}:{TINYGRAD}", DEV="PCI+AMD:LLVM",
                       REMOTE=match.group(1), BAREGPU_TINYGRAD_FIRMWARE=str(build / "firmware/virtual"),
                       CACHEDB=os.path.join(state, "cache.db"))
            results["serve"] = run_client(env, args.kernels, args.calls)
        finally:
            server.send_signal(signal.SIGINT)
            server.communicate(timeout=60)
    n = args.kernels
    for name, label in (("baregpu", "DEV=BAREGPU (baregpu's driver and HCQ)"),
                        ("serve", "DEV=PCI+AMD:LLVM (tinygrad's AM driver, baregpu serve)")):
        us = results[name]["median_us"]
        print(f"{label:<58} {us:10.1f} us per call, {us / n:8.1f} us per kernel")
    print(f"ratio (serve / baregpu): {results['serve']['median_us'] / results['baregpu']['median_us']:.2f}x "
          f"({n} kernels, median of {args.calls} calls)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
