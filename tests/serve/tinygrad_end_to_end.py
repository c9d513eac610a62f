"""tinygrad's own AM driver boots the virtual Navi31 through `baregpu serve`, cold then warm, and its Tensor work
is checked against numpy; tinygrad's client allocates shared system memory over a Unix socket (MAP_SYSMEM_FD).

Usage: tinygrad_end_to_end.py BAREGPU FIRMWARE   (FIRMWARE: 'virtual' or a Debian release in the firmware cache)
Exits 77 (skip) when tinygrad (../shared/vendor/tinygrad), numpy, libLLVM 19 or the firmware is absent.
"""
import ctypes.util
import os
import pathlib
import re
import select
import signal
import socket
import subprocess
import sys
import tempfile
import time
import unittest

SKIP = 77
SOURCE_ROOT = pathlib.Path(os.environ.get("BAREGPU_SOURCE_ROOT", pathlib.Path(__file__).resolve().parents[2]))
BUILD_ROOT = pathlib.Path(os.environ.get("BAREGPU_BUILD_ROOT", SOURCE_ROOT / "build"))
TINYGRAD = pathlib.Path(os.environ.get("BAREGPU_TINYGRAD", SOURCE_ROOT.parent / "shared/vendor/tinygrad"))
FIRMWARE_CACHE = pathlib.Path(os.environ.get("BAREGPU_FIRMWARE_CACHE", SOURCE_ROOT / ".cache/firmware"))
PYTHON = "/usr/bin/python3"  # Debian's, with python3-numpy (tools/packages.txt)
CLIENT_TIMEOUT = 900  # seconds for one tinygrad process: a cold boot plus compiling, under a sanitizer


class Server:
  """`baregpu serve` in a process of its own; its first stdout line says where it listens."""

  def __init__(self, baregpu, args, env):
    self.proc = subprocess.Popen([baregpu, "serve", *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                 env=env, text=True)
    ready, _, _ = select.select([self.proc.stdout], [], [], 60)
    if not ready:
      self.proc.kill()
      raise RuntimeError("baregpu serve printed nothing within 60 s")
    line = self.proc.stdout.readline()
    match = re.search(r" on (\S+)$", line.strip())
    if not match:
      self.proc.kill()
      raise RuntimeError(f"baregpu serve: unexpected first line {line!r}; stderr: {self.proc.stderr.read()}")
    self.address = match.group(1)

  def stop(self):
    """Ctrl-C: the server ends every session and exits 0."""
    self.proc.send_signal(signal.SIGINT)
    try:
      _, err = self.proc.communicate(timeout=60)
    except subprocess.TimeoutExpired:
      self.proc.kill()
      raise
    return self.proc.returncode, err


def tinygrad_env(firmware_dir, remote):
  env = dict(os.environ)
  env.update({
    "PYTHONPATH": f"{SOURCE_ROOT / 'tools/tinygrad'}:{TINYGRAD}",
    "BAREGPU_TINYGRAD_FIRMWARE": str(firmware_dir),
    "REMOTE": remote,
    "DEV": "PCI+AMD:LLVM",
    "DEBUG": "2",
    "CACHEDB": str(pathlib.Path(tempfile.gettempdir()) / f"baregpu-tinygrad-cache-{os.getpid()}.db"),
  })
  for sanitizer_variable in ("LD_PRELOAD", "ASAN_OPTIONS", "TSAN_OPTIONS"):
    env.pop(sanitizer_variable, None)  # tinygrad's interpreter is not the instrumented program
  return env


class TinygradEndToEnd(unittest.TestCase):
  baregpu = ""
  firmware = "virtual"

  def setUp(self):
    self.state = tempfile.TemporaryDirectory(prefix="baregpu-serve-e2e-")
    self.server_env = dict(os.environ, BAREGPU_SIM_DIR=self.state.name)  # a cold GPU of its own
    if self.firmware == "virtual":
      self.firmware_dir = BUILD_ROOT / "firmware/virtual"
    else:
      self.firmware_dir = FIRMWARE_CACHE / "debian" / self.firmware
      self.server_env["BAREGPU_FIRMWARE_PATH"] = str(self.firmware_dir)

  def tearDown(self):
    self.state.cleanup()

  def run_client(self, remote):
    result = subprocess.run([PYTHON, str(SOURCE_ROOT / "tests/serve/tinygrad_tensor_checks.py")],
                            env=tinygrad_env(self.firmware_dir, remote), capture_output=True, text=True,
                            timeout=CLIENT_TIMEOUT)
    output = result.stdout + result.stderr
    self.assertEqual(result.returncode, 0, output)
    return output

  def test_boots_cold_then_warm_and_computes(self):
    server = Server(self.baregpu, ["sim:navi31:tinygrad", "--listen", "127.0.0.1:0"], self.server_env)
    try:
      cold = self.run_client(server.address)
      # A cold GPU gets tinygrad's full boot: PSP and SMU bring-up with the firmware, then GFX and SDMA.
      for block in ("AM_SOC", "AM_GMC", "AM_IH", "AM_PSP", "AM_SMU", "AM_GFX", "AM_SDMA"):
        self.assertIn(f"{block} initialized", cold)
      for check in ("add", "mul_exp", "matmul", "sum", "max", "int_arange"):
        self.assertIn(f"{check}: ok", cold)
      # A second process finds the GPU booted (tinygrad's SCRATCH_REG7/6 handshake) and re-initialises only GFX
      # and SDMA: its partial boot.
      warm = self.run_client(server.address)
      self.assertNotIn("AM_PSP initialized", warm)
      self.assertIn("AM_GFX initialized", warm)
      self.assertIn("matmul: ok", warm)
    finally:
      code, log = server.stop()
    self.assertEqual(code, 0, log)
    self.assertEqual(log.count("drives sim:navi31:tinygrad"), 2, log)
    self.assertIn("stopping", log)

  def test_a_client_killed_mid_boot_leaves_a_gpu_the_next_one_boots(self):
    if self.firmware != "virtual":
      self.skipTest("firmware-independent")
    server = Server(self.baregpu, ["sim:navi31:tinygrad-killed", "--listen", "127.0.0.1:0"], self.server_env)
    try:
      # Killed at a boot stage, not after a time: the client dies as its driver starts the PSP, after the memory
      # controller is up (tinygrad_killed_before_psp.py says why not a kill from outside).
      env = dict(tinygrad_env(self.firmware_dir, server.address), PYTHONUNBUFFERED="1")
      killed = subprocess.run([PYTHON, str(SOURCE_ROOT / "tests/serve/tinygrad_killed_before_psp.py")], env=env,
                              capture_output=True, text=True, timeout=CLIENT_TIMEOUT)
      output = killed.stdout + killed.stderr
      self.assertEqual(killed.returncode, -signal.SIGKILL, output)
      self.assertIn("AM_GMC initialized", output)
      self.assertIn("killed as the PSP starts", output)
      # The next process finds a GPU that never finished booting, boots it fully and computes.
      after = self.run_client(server.address)
      self.assertIn("AM_PSP initialized", after)
      self.assertIn("matmul: ok", after)
    finally:
      code, log = server.stop()
    self.assertEqual(code, 0, log)
    self.assertIn("client #1", log)
    self.assertIn("devices released", log)

  def test_unix_socket_shares_system_memory_with_tinygrads_client(self):
    if self.firmware != "virtual":
      self.skipTest("firmware-independent")
    path = os.path.join(self.state.name, "serve.sock")
    server = Server(self.baregpu, ["sim:edu", "--unix", path], self.server_env)
    try:
      sys.path[:0] = [str(TINYGRAD)]
      from tinygrad.runtime.support.system import APLRemotePCIDevice, RemoteCmd, RemotePCIDevice
      sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
      sock.connect(path)
      device = RemotePCIDevice("ED", "remote:unix:0", sock=sock)
      # tinygrad's macOS client asks for shared memory with MAP_SYSMEM_FD; its parsing of the reply (an mmap of
      # the memfd, page addresses at the start) is exercised here on Linux, unbound from its macOS set-up.
      view, pages = APLRemotePCIDevice.alloc_sysmem(device, 3 * 4096)
      self.assertEqual(len(pages), 3)
      self.assertTrue(all(p % 4096 == 0 and p != 0 for p in pages))
      view[4096:4096 + 6] = b"tinygr"
      # The server's own view of that memory (the reply's handle is 0: the first allocation).
      _, _, data, _ = RemotePCIDevice._rpc(sock, 0, RemoteCmd.SYSMEM_READ, 4096, 6, bar=0, readout_size=6)
      self.assertEqual(data, b"tinygr")
      self.assertEqual(device.read_config(0, 2), 0x1234)  # QEMU edu's vendor id
      sock.close()
    finally:
      code, log = server.stop()
    self.assertEqual(code, 0, log)


def main():
  if len(sys.argv) != 3:
    print(__doc__)
    return 2
  TinygradEndToEnd.baregpu, TinygradEndToEnd.firmware = sys.argv[1], sys.argv[2]
  if not (TINYGRAD / "tinygrad").is_dir():
    print(f"skip: tinygrad is not at {TINYGRAD} (../shared/vendor/tinygrad)")
    return SKIP
  if subprocess.run([PYTHON, "-c", "import numpy"], capture_output=True).returncode != 0:
    print(f"skip: {PYTHON} has no numpy (Debian python3-numpy; tools/setup.sh installs it)")
    return SKIP
  if ctypes.util.find_library("LLVM-19") is None and ctypes.util.find_library("LLVM") is None:
    print("skip: no libLLVM for tinygrad's AMD compiler (Debian libllvm19, from llvm-19)")
    return SKIP
  if TinygradEndToEnd.firmware != "virtual" and not (FIRMWARE_CACHE / "debian" / TinygradEndToEnd.firmware).is_dir():
    print(f"skip: no Debian firmware {TinygradEndToEnd.firmware} in {FIRMWARE_CACHE} (tools/fetch_firmware.sh)")
    return SKIP
  result = unittest.main(argv=[sys.argv[0], "-v"], exit=False).result
  return 0 if result.wasSuccessful() else 1


if __name__ == "__main__":
  sys.exit(main())
