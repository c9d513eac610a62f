#!/usr/bin/env python3
"""The shared libraries export their public API and nothing else (meson test install/symbols).

libbaregpu.so: every hcq_* function hcq/hcq.h declares (but its static inline helpers), and C++ symbols only of the installed headers' API
(hcq:: classes, am::CodeObject, pci::Address): no am::sim::, base::, hcq::amd::, std:: or other internal symbol.
libbaregpu-sim.so: only its entry point. Both sonames carry meson.build's project version.

Usage: symbols.py BUILD_ROOT SOURCE_ROOT
"""
import re
import subprocess
import sys
from pathlib import Path

# The public C++ API, as demangled names; baregpu.map exports exactly these patterns.
PUBLIC_CPP = re.compile(r"^(?:vtable for |typeinfo for |typeinfo name for |non-virtual thunk to )?"
                        r"(?:hcq::[A-Z]|am::CodeObject::|am::AmdgpuMachName\(|pci::Address::)")
# What the linker defines in every shared object, and the version nodes of the maps.
LINKER_DEFINED = {"_init", "_fini", "_edata", "_end", "__bss_start", "BAREGPU", "BAREGPU_SIM"}
SIM_ENTRY_POINTS = {"baregpu_sim_register_kinds"}


def exported(library):
    """Defined dynamic symbols of `library`: (mangled, demangled) pairs."""
    mangled = subprocess.run(["nm", "-D", "--defined-only", "--format=posix", str(library)], check=True,
                             capture_output=True, text=True).stdout.split("\n")
    # posix format: "NAME[@@VERSION] TYPE VALUE SIZE"; the version node is not part of the name.
    names = [line.split(" ")[0].split("@")[0] for line in mangled if line.strip()]
    demangled = subprocess.run(["c++filt"], input="\n".join(names), check=True, capture_output=True,
                               text=True).stdout.split("\n")
    return list(zip(names, demangled))


def soname(library):
    dynamic = subprocess.run(["readelf", "-d", str(library)], check=True, capture_output=True, text=True).stdout
    match = re.search(r"\(SONAME\)\s+Library soname: \[([^\]]+)\]", dynamic)
    return match.group(1) if match else None


def main():
    build, source = Path(sys.argv[1]), Path(sys.argv[2])
    failures = []
    version = re.search(r"^\s*version:\s*'(\d+)\.(\d+)\.(\d+)'", (source / "meson.build").read_text(), re.M)
    major, minor = int(version.group(1)), int(version.group(2))
    soversion = f"{major}" if major > 0 else f"{major}.{minor}"  # meson.build: MAJOR.MINOR before 1.0

    core = build / "libbaregpu.so"
    symbols = exported(core)
    names = {name for name, _ in symbols}
    internal = [demangled for name, demangled in symbols
                if not name.startswith("hcq_") and name not in LINKER_DEFINED and not PUBLIC_CPP.match(demangled)]
    if internal:
        failures.append(f"libbaregpu.so exports {len(internal)} symbols outside the public API, e.g.:\n  " +
                        "\n  ".join(sorted(internal)[:20]))
    header = (source / "hcq" / "hcq.h").read_text()
    # The header's static inline helpers (hcq_constant, hcq_variable) are compiled into the caller, not exported.
    inline = set(re.findall(r"\bstatic\s+inline\s+[a-z_0-9]+\s*\*?\s*(hcq_[a-z0-9_]+)\s*\(", header))
    declared = set(re.findall(r"\b(hcq_[a-z0-9_]+)\s*\(", header)) - inline
    if not declared:
        failures.append("found no hcq_* function in hcq/hcq.h")
    missing = sorted(declared - names)
    if missing:
        failures.append(f"libbaregpu.so does not export these hcq.h functions: {', '.join(missing)}")
    for must in ["hcq::Device::Open(", "typeinfo for hcq::Device", "am::CodeObject::Parse(", "pci::Address::Parse("]:
        if not any(demangled.startswith(must) for _, demangled in symbols):
            failures.append(f"libbaregpu.so does not export {must}...")
    if soname(core) != f"libbaregpu.so.{soversion}":
        failures.append(f"libbaregpu.so's soname is {soname(core)}, not libbaregpu.so.{soversion}")

    sim = build / "libbaregpu-sim.so"
    sim_names = {name for name, _ in exported(sim)} - LINKER_DEFINED
    if sim_names != SIM_ENTRY_POINTS:
        extra = sorted(sim_names - SIM_ENTRY_POINTS)
        failures.append(f"libbaregpu-sim.so exports {len(extra)} symbols besides its entry point, e.g.: "
                        f"{', '.join(extra[:10])}; missing: {sorted(SIM_ENTRY_POINTS - sim_names)}")
    if soname(sim) != f"libbaregpu-sim.so.{soversion}":
        failures.append(f"libbaregpu-sim.so's soname is {soname(sim)}, not libbaregpu-sim.so.{soversion}")

    for failure in failures:
        print("FAIL:", failure)
    print(f"libbaregpu.so: {len(symbols)} exported symbols ({len(declared)} hcq.h functions); "
          f"libbaregpu-sim.so: {len(sim_names)}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
