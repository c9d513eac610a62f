#!/usr/bin/env python3
"""Generates baregpu's AMD register database (am/regs/) from Debian's linux-source-6.12 tarball.

    tools/regs/generate.py [--tarball /usr/src/linux-source-6.12.tar.xz] [--out am/regs]

Reads the tarball as one xz stream, keeping only the headers it needs, and writes:
  <ip>_table.cc        every register of the header pair (name, segment, offset) and its fields (name, mask)
  <ip>.h               typed registers (am/regs/register.h) for those listed in tools/regs/typed_registers.txt
  *_constants.h        #define and enum constants of the structure and packet headers (tools/regs/structs.py)
  power_on_values.cc   the power-on (reset) value of every register that has a non-zero one in a *_default.h
                       header (Linux 6.12 has one only for GC 11.0.0, see DEFAULT_HEADERS); typed registers with
                       an entry there also get kDefault
  kernel_layouts.cc    sizeof/offsetof of kernel structures, measured by compiling a probe with gcc
Output is deterministic: the same tarball gives byte-identical files. Python 3 standard library only.
"""

import argparse
import keyword
import lzma
import os
import re
import sys
import tarfile

GENERATOR = "tools/regs/generate.py"
AMD = "drivers/gpu/drm/amd/"

# One entry per register header pair: output stem, header stem under include/asic_reg/, namespace, and how its
# registers map to IP blocks (the MP header holds both MP0 (PSP) and MP1 (SMU) registers; the name says which).
REGISTER_HEADERS = [
    ("gc", "gc/gc_11_0_0", "kGc"),
    ("mmhub", "mmhub/mmhub_3_0_0", "kMmhub"),
    ("mp", "mp/mp_13_0_0", None),
    ("nbio", "nbio/nbio_4_3_0", "kNbio"),
    ("osssys", "oss/osssys_6_0_0", "kOsssys"),
    ("hdp", "hdp/hdp_6_0_0", "kHdp"),
]
# The power-on values (asic_reg/<ip>/<stem>_default.h, one `reg<NAME>_DEFAULT value` per register) by output stem.
# Linux 6.12 ships one only for gc_11_0_0 (which holds SDMA 6.0's registers too); there is none for mmhub_3_0_0,
# mp_13_0_0, nbio_4_3_0, osssys_6_0_0 or hdp_6_0_0 (their directories hold default headers of older versions
# only), so those registers power on as zeros in the virtual GPU.
DEFAULT_HEADERS = {"gc": "gc/gc_11_0_0_default.h"}
IP_ENUM = {"gc": "kGc", "mmhub": "kMmhub", "mp0": "kMp0", "mp1": "kMp1", "nbio": "kNbio", "osssys": "kOsssys",
           "hdp": "kHdp"}


def mp_ip(register):
    return "mp0" if register.startswith("MP0_") else "mp1"


# Headers whose structures and constants the project uses (paths under drivers/gpu/drm/amd/).
STRUCT_HEADERS = [
    "include/discovery.h",
    "include/v11_structs.h",
    "include/soc15_ih_clientid.h",
    "include/soc15_hw_ip.h",
    "include/soc21_enum.h",
    "include/ivsrcid/gfx/irqsrcs_gfx_11_0_0.h",
    "include/ivsrcid/vmc/irqsrcs_vmc_1_0.h",
    "include/ivsrcid/nbio/irqsrcs_nbif_7_4.h",
    "amdgpu/psp_gfx_if.h",
    "amdgpu/nvd.h",
    "amdgpu/sdma_v6_0_0_pkt_open.h",
    "amdgpu/sdma_common.h",
    "amdgpu/amdgpu_vm.h",
    "amdgpu/amdgpu_psp.h",
    "pm/swsmu/inc/pmfw_if/smu_v13_0_0_ppsmc.h",
    "pm/swsmu/inc/pmfw_if/smu13_driver_if_v13_0_0.h",
]


def fail(message):
    sys.stderr.write("error: %s\n" % message)
    sys.exit(1)


def read_tarball(path, wanted_suffixes):
    """Returns {path below the top directory: text} for the wanted members, in one pass over the xz stream."""
    found = {}
    try:
        with tarfile.open(path, "r|xz") as tar:
            for member in tar:
                name = member.name.split("/", 1)[1] if "/" in member.name else member.name
                if member.isfile() and name in wanted_suffixes:
                    found[name] = tar.extractfile(member).read().decode("utf-8", "replace")
                    if len(found) == len(wanted_suffixes):
                        break
    except (OSError, tarfile.TarError, EOFError, lzma.LZMAError) as e:
        fail("cannot read %s: %s (install Debian's linux-source-6.12 package)" % (path, e))
    missing = sorted(set(wanted_suffixes) - set(found))
    if missing:
        fail("%s lacks %s" % (path, ", ".join(missing)))
    return found


def kernel_version(makefile):
    fields = dict(re.findall(r"^(VERSION|PATCHLEVEL|SUBLEVEL) = (\d+)", makefile, re.M))
    return "%s.%s.%s" % (fields["VERSION"], fields["PATCHLEVEL"], fields["SUBLEVEL"])


# ---------------------------------------------------------------------------------------------------------------
# Registers


def parse_registers(offset_text, mask_text, where):
    """[(name, offset, segment, [(field, mask, shift)])] in header order; only BASE_IDX (MMIO) registers."""
    offsets = {}
    order = []
    for name, value in re.findall(r"^#define reg(\w+)\s+(0x[0-9a-fA-F]+|\d+)\s*$", offset_text, re.M):
        if name.endswith("_BASE_IDX"):
            continue
        if name in offsets:
            fail("%s: register %s defined twice" % (where, name))
        offsets[name] = int(value, 0)
        order.append(name)
    segments = {n: int(v) for n, v in re.findall(r"^#define reg(\w+)_BASE_IDX\s+(\d+)\s*$", offset_text, re.M)}
    fields = {n: {} for n in order}
    shifts = {}
    for reg_field, kind, value in re.findall(r"^#define (\w+?)(__SHIFT|_MASK)\s+(0x[0-9a-fA-F]+)U?L?\s*$",
                                             mask_text, re.M):
        # The register is the longest "__"-separated prefix that names a register; the comment lines that head
        # each group are not reliable (some groups follow the wrong comment).
        parts = reg_field.split("__")
        reg = None
        for i in range(len(parts) - 1, 0, -1):
            if "__".join(parts[:i]) in fields:
                reg = "__".join(parts[:i])
                field = "__".join(parts[i:])
                break
        if reg is None:
            continue  # a field of an indirect (ix) or config-space (cfg) register, which have no segment
        if kind == "__SHIFT":
            shifts[(reg, field)] = int(value, 16)
        else:
            mask = int(value, 16)
            old = fields[reg].get(field)
            if old is not None and old != mask:
                fail("%s: %s.%s has two masks (%#x, %#x)" % (where, reg, field, old, mask))
            fields[reg][field] = mask
    result = []
    for name in order:
        if name not in segments:
            # Without BASE_IDX the segment is unknown (Linux cannot address it through SOC15 either): left out.
            sys.stderr.write("note: %s: register %s has no BASE_IDX; left out\n" % (where, name))
            continue
        flist = []
        for field, mask in fields[name].items():
            if mask == 0 or mask > 0xFFFFFFFF:
                fail("%s: %s.%s mask %#x is not a 32-bit field" % (where, name, field, mask))
            # Kept as the header gives them, as Linux's REG_GET_FIELD/REG_SET_FIELD use them, even where the two
            # disagree (a handful of gc fields); such fields are reported so that nobody trusts them blindly.
            shift = shifts.get((name, field), (mask & -mask).bit_length() - 1)
            if (mask >> shift) << shift != mask:
                sys.stderr.write("note: %s: %s.%s shift %d disagrees with mask %#x; kept as given\n" %
                                 (where, name, field, shift, mask))
            flist.append((field, mask, shift))
        result.append((name, offsets[name], segments[name], flist))
    return result


def parse_defaults(default_text, registers, where):
    """{register name: power-on value} for the registers of `registers` (parse_registers' list) in the header."""
    known = {name for name, _, _, _ in registers}
    values = {}
    for name, value in re.findall(r"^#define reg(\w+)_DEFAULT\s+(0x[0-9a-fA-F]+)\s*$", default_text, re.M):
        if name not in known:
            # Not an MMIO register of the offset header (no offset, or no BASE_IDX): nothing to seed.
            sys.stderr.write("note: %s: %s has a default but no addressable register; left out\n" % (where, name))
            continue
        if name in values and values[name] != int(value, 16):
            fail("%s: %s has two defaults (%#x, %s)" % (where, name, values[name], value))
        values[name] = int(value, 16)
    return values


def emit_power_on(rows, notes, version):
    """rows: [(ip enum, segment, offset, value, name)] of non-zero power-on values, in header order."""
    out = ["// Generated by %s from Linux %s %s; do not edit." % (GENERATOR, version, ", ".join(notes)),
           "// The registers whose power-on value is not zero; every other register powers on as 0.",
           '#include "am/regs/power_on_values.h"', "", "namespace am::regs {", "namespace {", "",
           "constexpr PowerOnValue kValues[] = {", "    // {ip, segment, offset, value}  register"]
    for ip_enum, segment, offset, value, name in rows:
        out.append("    {Ip::%s, %d, %#x, %#010x},  // %s" % (ip_enum, segment, offset, value, name))
    out += ["};", "", "}  // namespace", "", "std::span<const PowerOnValue> PowerOnValues() { return kValues; }", "",
            "}  // namespace am::regs", ""]
    return "\n".join(out)


class StringTable:
    """NUL-separated names, each stored once; emits C string literal lines."""

    def __init__(self):
        self.offsets = {}
        self.names = []
        self.size = 0

    def add(self, name):
        if name not in self.offsets:
            self.offsets[name] = self.size
            self.names.append(name)
            self.size += len(name) + 1
        return self.offsets[name]

    def literal_lines(self, indent="    "):
        lines, line = [], ""
        for name in self.names:
            piece = name + "\\0"
            if line and len(line) + len(piece) > 100:
                lines.append(indent + '"' + line + '"')
                line = ""
            line += piece
        if line:
            lines.append(indent + '"' + line + '"')
        return lines


def emit_table(stem, ip_of, registers, header_note, version):
    out = ["// Generated by %s from Linux %s %s; do not edit." % (GENERATOR, version, header_note),
           "// Every MMIO register of the header pair with its fields; the runtime view is am/regs/database.h.",
           '#include "am/regs/register_table.h"', "", "namespace am::regs::internal {", "namespace {", ""]
    strings = StringTable()
    reg_rows, field_rows = [], []
    for name, offset, segment, flist in registers:
        name_at = strings.add(name)
        reg_rows.append("    {%d, %#x, %d, %d, %d, Ip::%s}," % (name_at, offset, len(field_rows), len(flist), segment,
                                                                IP_ENUM[ip_of(name)]))
        for field, mask, shift in flist:
            field_rows.append("    {%d, %#x, %d}," % (strings.add(field), mask, shift))
    out.append("constexpr char kStrings[] =")
    out += strings.literal_lines()
    out[-1] += ";"
    out += ["", "constexpr RegisterEntry kRegisters[] = {", "    // {name, offset, first field, fields, segment, ip}"]
    out += reg_rows
    out += ["};", "", "constexpr FieldEntry kFields[] = {", "    // {name, mask, shift}"]
    out += field_rows if field_rows else ["    {0, 0, 0},"]
    out += ["};", "", "}  // namespace", ""]
    out.append("extern const RegisterTable k%sTable;" % stem.capitalize())
    out.append('const RegisterTable k%sTable = {"%s", kStrings, sizeof(kStrings), kRegisters, %d, kFields, %d};' %
               (stem.capitalize(), header_note, len(reg_rows), len(field_rows)))
    out += ["", "}  // namespace am::regs::internal", ""]
    return "\n".join(out)


CPP_RESERVED = set(keyword.kwlist) | {
    "alignas", "alignof", "and", "and_eq", "asm", "auto", "bitand", "bitor", "bool", "break", "case", "catch", "char",
    "class", "compl", "concept", "const", "consteval", "constexpr", "constinit", "const_cast", "continue", "co_await",
    "co_return", "co_yield", "decltype", "default", "delete", "do", "double", "dynamic_cast", "else", "enum",
    "explicit", "export", "extern", "false", "float", "for", "friend", "goto", "if", "inline", "int", "long",
    "mutable", "namespace", "new", "noexcept", "not", "not_eq", "nullptr", "operator", "or", "or_eq", "private",
    "protected", "public", "register", "reinterpret_cast", "requires", "return", "short", "signed", "sizeof",
    "static", "static_assert", "static_cast", "struct", "switch", "template", "this", "thread_local", "throw",
    "true", "try", "typedef", "typeid", "typename", "union", "unsigned", "using", "virtual", "void", "volatile",
    "wchar_t", "while", "xor", "xor_eq",
    # members of am::regs::Register
    "raw", "set_raw",
}


def accessor_name(field):
    name = field.lower()
    if name in CPP_RESERVED or name[0].isdigit():
        name = "f_" + name if name[0].isdigit() else name + "_"
    return name


def read_typed_list(path):
    """{ip: [(register, line number)]} from lines 'IP REGISTER' ('#' starts a comment)."""
    try:
        with open(path) as f:
            lines = f.read().splitlines()
    except (OSError, UnicodeDecodeError) as e:
        fail("cannot read the typed register list %s: %s" % (path, e))
    wanted = {}
    for number, line in enumerate(lines, 1):
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        parts = line.split()
        if len(parts) != 2 or parts[0] not in IP_ENUM:
            fail("%s:%d: expected 'IP REGISTER' with IP one of %s, got %r" % (path, number, ", ".join(IP_ENUM), line))
        wanted.setdefault(parts[0], []).append((parts[1], number))
    return wanted


def emit_typed(ip, names, by_name, header_note, version, list_path, list_file, defaults):
    guard = "BAREGPU_AM_REGS_%s_H_" % ip.upper()
    out = ["// Generated by %s from Linux %s %s; do not edit." % (GENERATOR, version, header_note),
           "// Typed %s registers: those listed in %s (add a line there and regenerate)." % (ip, list_path),
           "// For each field F: f() reads it, f(v) sets it (and returns the register, so calls chain).",
           "#ifndef " + guard, "#define " + guard, "", "#include <array>", "",
           '#include "am/regs/register.h"', "", "namespace am::regs::%s {" % ip, ""]
    seen = set()
    for name, line in sorted(names):
        if name in seen:
            continue
        seen.add(name)
        reg = by_name.get(name)
        if reg is None or reg[0] != ip:
            where = " (it is a %s register)" % reg[0] if reg else ""
            fail("%s:%d: no %s register named %s in %s%s" % (list_file, line, ip, name, header_note, where))
        _, offset, segment, flist = reg
        out.append("struct %s : Register<%s, Ip::%s, %d, %#x> {" % (name, name, IP_ENUM[ip], segment, offset))
        out.append('  static constexpr char kName[] = "%s";' % name)
        if name in defaults:
            out.append("  static constexpr uint32_t kDefault = %#010x;  // power-on value (_default.h)" % defaults[name])
        specs = ", ".join('{"%s", %#x, %d}' % (f, m, s) for f, m, s in flist)
        out.append("  static constexpr std::array<FieldSpec, %d> kFields{{%s}};" % (len(flist), specs))
        accessors = set()
        for field, mask, shift in flist:
            acc = accessor_name(field)
            if acc in accessors:
                fail("%s: two fields of %s give accessor %s" % (header_note, name, acc))
            accessors.add(acc)
            out.append("  BAREGPU_REG_FIELD(%s, %#x, %d)" % (acc, mask, shift))
        out.append("};")
    out += ["", "}  // namespace am::regs::%s" % ip, "", "#endif  // " + guard, ""]
    return "\n".join(out)


# ---------------------------------------------------------------------------------------------------------------


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    root = os.path.dirname(os.path.dirname(here))
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--tarball", default="/usr/src/linux-source-6.12.tar.xz")
    parser.add_argument("--out", default=os.path.join(root, "am", "regs"))
    parser.add_argument("--typed-list", default=os.path.join(here, "typed_registers.txt"))
    args = parser.parse_args()

    wanted = {"Makefile"}
    for _, stem, _ in REGISTER_HEADERS:
        wanted |= {AMD + "include/asic_reg/%s_offset.h" % stem, AMD + "include/asic_reg/%s_sh_mask.h" % stem}
    wanted |= {AMD + "include/asic_reg/" + h for h in DEFAULT_HEADERS.values()}
    wanted |= {AMD + h for h in STRUCT_HEADERS}
    typed = read_typed_list(args.typed_list)  # first: a mistake there should not wait for the tarball
    files = read_tarball(args.tarball, wanted)
    version = kernel_version(files["Makefile"])
    list_path = "tools/regs/typed_registers.txt"

    outputs = {}
    by_name = {}
    notes = {}
    defaults = {}  # register name -> power-on value
    power_on_rows, power_on_notes = [], []
    for stem, header, ip_enum in REGISTER_HEADERS:
        note = "asic_reg/%s_{offset,sh_mask}.h" % header
        regs = parse_registers(files[AMD + "include/asic_reg/%s_offset.h" % header],
                               files[AMD + "include/asic_reg/%s_sh_mask.h" % header], note)
        ip_of = mp_ip if ip_enum is None else (lambda _name, s=stem: s)
        outputs["%s_table.cc" % stem] = emit_table(stem, ip_of, regs, note, version)
        for name, offset, segment, flist in regs:
            by_name[name] = (ip_of(name), offset, segment, flist)
            notes[ip_of(name)] = note
        if stem in DEFAULT_HEADERS:
            default_note = "asic_reg/" + DEFAULT_HEADERS[stem]
            values = parse_defaults(files[AMD + "include/asic_reg/" + DEFAULT_HEADERS[stem]], regs, default_note)
            defaults.update(values)
            power_on_notes.append(default_note)
            for name, offset, segment, _ in regs:
                if values.get(name, 0) != 0:
                    power_on_rows.append((IP_ENUM[ip_of(name)], segment, offset, values[name], name))
    outputs["power_on_values.cc"] = emit_power_on(power_on_rows, power_on_notes, version)
    for ip in IP_ENUM:
        outputs["%s.h" % ip] = emit_typed(ip, typed.get(ip, []), by_name, notes[ip], version, list_path,
                                          args.typed_list, defaults)

    import structs  # tools/regs/structs.py: constants and the layout probe
    outputs.update(structs.generate(files, version, GENERATOR, AMD, fail))

    os.makedirs(args.out, exist_ok=True)
    for name in sorted(outputs):
        path = os.path.join(args.out, name)
        data = outputs[name].encode()
        try:
            with open(path, "rb") as f:
                if f.read() == data:
                    continue
        except OSError:
            pass
        with open(path, "wb") as f:
            f.write(data)
    print("wrote %d files to %s (Linux %s)" % (len(outputs), args.out, version))


if __name__ == "__main__":
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    main()
