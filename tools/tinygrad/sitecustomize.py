"""Points tinygrad's firmware loader at a directory, for running tinygrad against `baregpu serve`.

tinygrad's AM driver loads firmware with tinygrad.helpers.fetch_fw, which downloads one pinned linux-firmware
revision and checks each file's SHA-256 against that revision. Machines without network (and users who want
their distribution's firmware, or baregpu's virtual set) need another source. With this directory on PYTHONPATH
and BAREGPU_TINYGRAD_FIRMWARE=DIR (DIR holding amdgpu/*.bin, as /lib/firmware does), fetch_fw reads DIR instead.
The files are not the pinned revision, so the hash check cannot apply; the GPU (real or virtual) judges them.

Nothing in tinygrad is modified: this replaces one function before tinygrad's AM driver imports it.
"""
import os
import pathlib
import sys

_firmware_dir = os.environ.get("BAREGPU_TINYGRAD_FIRMWARE")
if _firmware_dir:
  import tinygrad.helpers

  def _fetch_fw_from_directory(path: str, name: str, sha256: str) -> bytes:
    file = pathlib.Path(_firmware_dir) / path / name
    if not file.is_file():
      raise FileNotFoundError(f"BAREGPU_TINYGRAD_FIRMWARE: {file} does not exist (tinygrad asked for {path}/{name}); "
                              f"point BAREGPU_TINYGRAD_FIRMWARE at a directory holding {path}/")
    return file.read_bytes()

  tinygrad.helpers.fetch_fw = _fetch_fw_from_directory
  if "tinygrad.runtime.support.am.amdev" in sys.modules:
    sys.modules["tinygrad.runtime.support.am.amdev"].fetch_fw = _fetch_fw_from_directory
