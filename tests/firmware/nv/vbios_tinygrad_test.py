#!/usr/bin/env python3
"""tinygrad's own, unmodified NV_FLCN.prep_ucode (tinygrad/runtime/support/nv/ip.py) on the virtual AD102 VBIOS.

The script writes the virtual ROM with `baregpu fw vbios --virtual=ad102`, serves it where tinygrad reads it (BAR0
0x300000, 1 MiB), lets prep_ucode walk it and patch FWSEC for the FRTS command, and checks what it patched against
the image's documented layout (firmware/nv/virtual_vbios.h): init_cmd 0x15 in the DMEMMAPPER at DMEM 0x200, the FRTS
command (read_vbios v1/24 bytes, frts_region v1/20 bytes, media type 2) in the buffer at DMEM 0x400, and the last
signature (fuse version 1) at DMEM 0x800. Exits 77 (skip) without ../shared/vendor/tinygrad.

Usage: vbios_tinygrad_test.py BAREGPU
"""
import array
import os
import pathlib
import struct
import subprocess
import sys
import tempfile

SKIP = 77
SOURCE_ROOT = pathlib.Path(os.environ.get("BAREGPU_SOURCE_ROOT", pathlib.Path(__file__).resolve().parents[3]))
TINYGRAD = pathlib.Path(os.environ.get("BAREGPU_TINYGRAD", SOURCE_ROOT.parent / "shared/vendor/tinygrad"))
ROM_BAR0 = 0x300000  # ip.py reads the PROM window here
ROM_WINDOW = 0x100000

# The virtual image's layout (virtual_vbios.h): FWSEC_PROD's DMEM offsets and its two signatures.
DMEMMAPPER, CMD_IN, PKC = 0x200, 0x400, 0x800
PROD_DESC, DESC_V3, SIG = 0x900, 44, 384


def main():
    if not (TINYGRAD / "tinygrad/runtime/support/nv/ip.py").is_file():
        print(f"skip: tinygrad is not at {TINYGRAD}")
        return SKIP
    sys.path.insert(0, str(TINYGRAD))
    try:
        from tinygrad.runtime.support.nv.ip import NV_FLCN
    except ImportError as e:  # numpy or another dependency missing
        print(f"skip: cannot import tinygrad's NV driver: {e}")
        return SKIP
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "ad102.rom")
        subprocess.run([sys.argv[1], "fw", "vbios", "--virtual=ad102", f"--output={path}"], check=True)
        rom = pathlib.Path(path).read_bytes()

    class Mmio:
        def __getitem__(self, s):
            assert (s.start, s.stop) == (ROM_BAR0 // 4, (ROM_BAR0 + ROM_WINDOW) // 4), s
            return list(array.array("I", (rom + b"\xff" * ROM_WINDOW)[:ROM_WINDOW]))

    captured = {}

    class Device:
        mmio = Mmio()
        vram_size = 24 << 30  # RTX 4090

        def _alloc_boot_mem(self, size, data=None, sysmem=False):
            captured["image"] = bytes(data)
            return None, 0x1000, None

    flcn = NV_FLCN.__new__(NV_FLCN)
    flcn.nvdev = Device()
    flcn.prep_ucode()
    image, desc = captured["image"], flcn.desc_v3
    dmem = desc.IMEMLoadSize
    failures = []

    def check(what, got, want):
        if got != want:
            failures.append(f"{what}: {got!r}, expected {want!r}")

    check("IMEMLoadSize", desc.IMEMLoadSize, 0x2000)
    check("DMEMLoadSize", desc.DMEMLoadSize, 0x1000)
    check("identity magic", image[:14], b"BAREGPU_VFWSEC")
    check("init_cmd", struct.unpack_from("<I", image, dmem + DMEMMAPPER + 44)[0], 0x15)
    check("read_vbios ver/size", struct.unpack_from("<II", image, dmem + CMD_IN), (1, 24))
    ver, size, _, _, media = struct.unpack_from("<5I", image, dmem + CMD_IN + 24)
    check("frts_region ver/size/media", (ver, size, media), (1, 20, 2))
    last_signature = rom[PROD_DESC + DESC_V3 + SIG:PROD_DESC + DESC_V3 + 2 * SIG]
    check("signature patched at PKCDataOffset", image[dmem + PKC:dmem + PKC + SIG], last_signature)
    for f in failures:
        print("FAIL:", f)
    if not failures:
        print("tinygrad's prep_ucode found FWSEC and patched the FRTS command, init_cmd and the signature")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
