#!/usr/bin/env python3
"""The RM allocation parameters the project defines (nv/rm/params.h) against what gcc makes of NVIDIA's own headers
(the vendored open-gpu-kernel-modules-535.113.01 SDK): the same size, and every member the header declares at the
same offset with the same size, no member more or less. The header's member list is read with tools/regs/structs.py
(the parser the AMD and GSP layout probes use), a C probe compiled against the headers measures it, and
params_layout_dump prints the project's side. Exits 77 (skip) without ../shared/vendor/nvidia.

Usage: params_layout_test.py PARAMS_LAYOUT_DUMP
"""
import os
import pathlib
import re
import subprocess
import sys
import tempfile

SKIP = 77
SOURCE_ROOT = pathlib.Path(os.environ.get("BAREGPU_SOURCE_ROOT", pathlib.Path(__file__).resolve().parents[3]))
SDK = SOURCE_ROOT.parent / "shared/vendor/nvidia/open-gpu-kernel-modules-535.113.01/src/common/sdk/nvidia/inc"

# (C type, header under the SDK's inc/ that defines it)
STRUCTS = [
    ("NV0000_ALLOC_PARAMETERS", "class/cl0000.h"),
    ("NV0080_ALLOC_PARAMETERS", "class/cl0080.h"),
    ("NV2080_ALLOC_PARAMETERS", "class/cl2080.h"),
    ("NV_VASPACE_ALLOCATION_PARAMETERS", "nvos.h"),
    ("NV_CHANNEL_GROUP_ALLOCATION_PARAMETERS", "nvos.h"),
    ("NV_CTXSHARE_ALLOCATION_PARAMETERS", "nvos.h"),
    ("NV_MEMORY_DESC_PARAMS", "alloc/alloc_channel.h"),
    ("NV_CHANNEL_ALLOC_PARAMS", "alloc/alloc_channel.h"),
    ("NVC0B5_ALLOCATION_PARAMETERS", "class/clc0b5sw.h"),
]


def parse(text):
    sizes, members = {}, {}
    for line in text.splitlines():
        parts = line.split()
        if parts[0] == "S":
            sizes[parts[1]] = int(parts[2])
        else:
            members.setdefault(parts[1], {})[parts[2]] = (int(parts[3]), int(parts[4]))
    return sizes, members


def main():
    if len(sys.argv) != 2:
        print(__doc__)
        return 2
    if not SDK.is_dir():
        print("skipped: %s is absent (the vendored NVIDIA headers)" % SDK)
        return SKIP
    sys.path.insert(0, str(SOURCE_ROOT / "tools/regs"))
    import structs  # tools/regs/structs.py

    lines = ["#include <stdio.h>", "#include <stddef.h>", '#include "nvtypes.h"', '#include "nvos.h"'] + [
        '#include "%s"' % h for h in sorted({h for _, h in STRUCTS} - {"nvos.h"})] + ["int main(void) {"]
    for ctype, header in STRUCTS:
        # NV_DECLARE_ALIGNED(TYPE NAME, 8) hides the member from the parser; unwrap it as tools/nv/layouts.py does.
        text = re.sub(r"NV_DECLARE_ALIGNED\(\s*([^,]+?)\s*,\s*\d+\s*\)", r"\1",
                      (SDK / header).read_text(errors="replace"))
        text = re.sub(r"\bNV_ALIGN_BYTES\(\d+\)", "", text)  # nvos.h's spelling of the same, after the name
        lines += structs.layout_probe_lines(ctype, text)
    lines += ["  return 0;", "}", ""]
    with tempfile.TemporaryDirectory() as tmp:
        src, exe = os.path.join(tmp, "probe.c"), os.path.join(tmp, "probe")
        pathlib.Path(src).write_text("\n".join(lines))
        cc = subprocess.run(["gcc", "-std=gnu11", "-w", "-I" + str(SDK), src, "-o", exe], capture_output=True,
                            text=True)
        if cc.returncode != 0:
            print("the probe does not compile:\n" + cc.stderr[:4000])
            return 1
        header_sizes, header_members = parse(subprocess.run([exe], capture_output=True, text=True,
                                                            check=True).stdout)
    our_sizes, our_members = parse(subprocess.run([sys.argv[1]], capture_output=True, text=True, check=True).stdout)

    failures = []
    for ctype, header in STRUCTS:
        if our_sizes.get(ctype) != header_sizes[ctype]:
            failures.append("sizeof %s: %s in nv/rm/params.h, %d in %s" % (ctype, our_sizes.get(ctype),
                                                                         header_sizes[ctype], header))
        theirs, ours = header_members.get(ctype, {}), our_members.get(ctype, {})
        for member, layout in theirs.items():
            if member not in ours:
                failures.append("%s.%s (%s) has no counterpart" % (ctype, member, header))
            elif ours[member] != layout:
                failures.append("%s.%s: offset/size %s in nv/rm/params.h, %s in %s" % (ctype, member, ours[member],
                                                                                     layout, header))
        for member in ours.keys() - theirs.keys():
            failures.append("%s.%s is not a member in %s" % (ctype, member, header))
        print("checked %s (%s): size %d, %d members" % (ctype, header, header_sizes[ctype], len(theirs)))
    for f in failures:
        print("FAIL " + f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
