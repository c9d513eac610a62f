#!/usr/bin/env python3
"""Generates baregpu's NVIDIA register database and constants (nv/regs/) from the vendored NVIDIA headers.

    tools/nv/generate.py [--vendor ../shared/vendor/nvidia] [--out nv/regs]

Reads the swref register headers (open-gpu-kernel-modules 535.113.01), the RM SDK and GSP headers of that tag,
the class headers of open-gpu-doc and, for the few registers no vendored GA102/AD102 header has, tinygrad's
autogen register dicts (--tinygrad, parsed as Python literals, never imported), and writes:
  <chip>.h             typed registers (nv/regs/register.h) of every register the chip's headers define
  <chip>_table.cc      the same registers with their fields, for name and address lookup (nv/regs/database.h)
  *_constants.h        RPC numbers, NV_STATUS codes, sequencer opcodes, class ids, class methods and fields
  names.cc             the names of RPC functions/events and NV_STATUS codes, for decoding
  qmd_tables.cc        the QMD field tables (name, hi:lo as MW() defines them)
  gsp_layouts.cc       sizeof/offsetof of the GSP boot structures, measured by compiling a probe (tools/nv/layouts.py)
Every number is computed by the C compiler from the header text (a probe program includes the headers and prints
them), so expressions such as (0x110804+(i)*4) or MW((1055+(i)*64):(1024+(i)*64)) come out as the headers mean
them. Output is deterministic. Python 3 standard library only.
"""

import argparse
import ast
import os
import re
import subprocess
import sys
import tempfile

GENERATOR = "tools/nv/generate.py"
OGKM = "open-gpu-kernel-modules-535.113.01/"
SWREF = OGKM + "src/common/inc/swref/published/"
DOC = "open-gpu-doc/"
SDK = OGKM + "src/common/sdk/nvidia/inc/"

# The register headers of each chip, in the order they are read (an addendum after the header it adds fields to).
# The vendored 535 subset has few AD102 headers: Ada's GSP and SEC2 falcons are GA102's (Linux 6.12 nouveau boots
# AD102 with ga102_gsp_flcn, nvkm/subdev/gsp/ad102.c), so AD102 reads GA102's headers and then its own, whose
# definitions win. NV_PMC_BOOT_0/42 exist only in the GA100 manual of open-gpu-doc (no vendored GA102/AD102 header
# has them); the chip id registers sit at the same place on every NVIDIA GPU, and only those two are taken.
GA102_HEADERS = [
    SWREF + "ampere/ga102/dev_boot.h",
    SWREF + "ampere/ga102/dev_falcon_v4.h",
    SWREF + "ampere/ga102/dev_falcon_v4_addendum.h",
    SWREF + "ampere/ga102/dev_falcon_second_pri.h",
    SWREF + "ampere/ga102/dev_fbif_v4.h",
    SWREF + "ampere/ga102/dev_riscv_pri.h",
    SWREF + "ampere/ga102/dev_gsp.h",
    SWREF + "ampere/ga102/dev_gsp_addendum.h",
    SWREF + "ampere/ga102/dev_sec_pri.h",
    SWREF + "ampere/ga102/dev_sec_addendum.h",
    SWREF + "ampere/ga102/dev_nvdec_pri.h",
    SWREF + "ampere/ga102/dev_nvdec_addendum.h",
    SWREF + "ampere/ga102/dev_gc6_island.h",
    SWREF + "ampere/ga102/dev_gc6_island_addendum.h",
    SWREF + "ampere/ga102/dev_vm.h",
    SWREF + "ampere/ga102/dev_ce.h",
    SWREF + "ampere/ga102/dev_ram.h",
]
BOOT_MANUAL = DOC + "manuals/ampere/ga100/dev_boot.ref.txt"
BOOT_REGISTERS = ["NV_PMC_BOOT_0", "NV_PMC_BOOT_42"]
CHIPS = {
    "ga102": GA102_HEADERS,
    "ad102": GA102_HEADERS + [SWREF + "ada/ad102/dev_bus.h", SWREF + "ada/ad102/dev_bus_addendum.h",
                              SWREF + "ada/ad102/dev_gc6_island.h", SWREF + "ada/ad102/dev_gc6_island_addendum.h"],
}

# Registers no vendored GA102/AD102 header defines, from tinygrad's autogen (../shared/vendor/tinygrad, tinygrad
# 0.13.0: tinygrad/runtime/autogen/nv_regs/*.py, which tinygrad generates from NVIDIA's published swref headers
# of open-gpu-kernel-modules commit 81fe4fb4, a 570 release, as its autogen/__init__.py records). Each file holds
# one dict per chip whose header it read: NAME: (base, offset, {field: (lo, hi)}) for a register, NAME: number for
# a constant. Only the dicts' literals are read (ast.literal_eval); tinygrad is never imported.
# (autogen file, chip dict, registers taken with the constants named after them). The autogen has dev_fb only as
# tu102's: NV_PFB_PRI_MMU_WPR2_ADDR_LO/HI are taken from Turing's header for both chips, because Linux 6.12 nouveau
# reads the same offsets on GA102 and AD102 (nvkm/subdev/gsp/fwsec.c nvkm_gsp_fwsec_frts reads 0x1fa824 and
# 0x1fa828, r535.c r535_gsp_booter_unload 0x1fa828; both run for every r535 GSP chip, ga102.c and ad102.c
# included). tests/nv/regs/database_test.cc checks the generated offsets against nouveau's (nv/regs/known_registers.h).
TINYGRAD_AUTOGEN = "tinygrad/runtime/autogen/nv_regs/"
TINYGRAD_REGISTERS = [("dev_fb.py", "tu102", ["NV_PFB_PRI_MMU_WPR2_ADDR_LO", "NV_PFB_PRI_MMU_WPR2_ADDR_HI"])]

# Registers whose offsets are relative to an engine's base (the header defines them once for every falcon),
# by name prefix, with the unit nv/regs/register.h calls them.
UNITS = [("NV_PFALCON_FALCON_", "kFalcon"), ("NV_PFALCON2_FALCON_", "kFalcon2"), ("NV_PFALCON_FBIF_", "kFbif"),
         ("NV_PRISCV_RISCV_", "kRiscv"),
         # dev_vm.h's registers are relative to the virtual function's register window, whose base
         # (NV_VIRTUAL_FUNCTION_FULL_PHYS_OFFSET, dev_vm_addendum.h) the vendored GA102 headers do not give.
         ("NV_VIRTUAL_FUNCTION_", "kVirtualFunction")]
# The engines' bases, as macros of the headers: (engine, falcon range (its low end is the base), falcon2/RISC-V
# base, FBIF base). RM and nouveau reach a falcon's RISC-V registers at its falcon2 base (dev_riscv_pri.h defines
# NV_FALCON2_GSP_BASE beside them).
ENGINES = [("gsp", "NV_PGSP", "NV_FALCON2_GSP_BASE", "NV_PGSP_FBIF_BASE"),
           ("sec2", "NV_PSEC", "NV_FALCON2_SEC_BASE", "NV_PSEC_FBIF_BASE"),
           ("nvdec0", "NV_PNVDEC(0)", "NV_FALCON2_NVDEC0_BASE", "NV_PNVDEC_FBIF_BASE(0)")]

# Constant headers: (output, [headers], namespace under nv::regs, how names are chosen).
RPC_ENUMS = OGKM + "src/nvidia/kernel/inc/vgpu/rpc_global_enums.h"
STATUS_CODES = SDK + "nvstatuscodes.h"
SEQUENCER = OGKM + "src/nvidia/arch/nvalloc/common/inc/rmgspseq.h"
# Class headers whose every definition (class id, method offsets, fields hi:lo, field values) becomes a constant.
CLASS_HEADERS = [
    ("clc7c0_constants.h", DOC + "classes/compute/clc7c0.h"),  # AMPERE_COMPUTE_B
    ("clc9c0_constants.h", DOC + "classes/compute/clc9c0.h"),  # ADA_COMPUTE_A
    ("clc7b5_constants.h", DOC + "classes/dma-copy/clc7b5.h"),  # AMPERE_DMA_COPY_B
    ("clc56f_constants.h", DOC + "classes/host/clc56f.h"),  # AMPERE_CHANNEL_GPFIFO_A
    ("clc46f_constants.h", DOC + "classes/host/clc46f.h"),  # TURING_CHANNEL_GPFIFO_A
    ("clc461_constants.h", SDK + "class/clc461.h"),  # TURING_USERMODE_A
    ("clc561_constants.h", SDK + "class/clc561.h"),  # AMPERE_USERMODE_A
]
# The GSP boot's constants: (header, names wanted). Enumerations of the header whose members match count too.
GSP_CONSTANTS = [
    (OGKM + "src/nvidia/arch/nvalloc/common/inc/gsp/gsp_fw_wpr_meta.h", r"^GSP_FW_"),
    (OGKM + "src/common/uproc/os/common/include/libos_init_args.h", r"^LIBOS_MEMORY_REGION_"),
    (OGKM + "src/common/shared/msgq/inc/msgq/msgq_priv.h", r"^MSGQ_VERSION$"),
    (OGKM + "src/common/shared/msgq/inc/msgq/msgq.h", r"^MSGQ_"),
    (OGKM + "src/nvidia/kernel/inc/vgpu/rpc_headers.h", r"^NV_VGPU_MSG_(SIGNATURE_VALID|HEADER_VERSION_)"),
    (SEQUENCER, r"^GSP_SEQ_BUF_REG_SAVE_"),
]
# QMD layouts: (table name, header, prefix of its fields).
QMD_TABLES = [
    ("kQmdC7c0V03_00", DOC + "classes/compute/clc7c0qmd.h", "NVC7C0_QMDV03_00_"),
    ("kQmdC9c0V03_00", DOC + "classes/compute/clc9c0qmd.h", "NVC9C0_QMDV03_00_"),
    ("kQmdCbc0V04_00", DOC + "classes/compute/clcbc0qmd.h", "NVCBC0_QMDV04_00_"),
]


def fail(message):
    sys.stderr.write("error: %s\n" % message)
    sys.exit(1)


def read(vendor, path):
    try:
        with open(os.path.join(vendor, path), encoding="utf-8", errors="replace") as f:
            return f.read()
    except OSError as e:
        fail("cannot read %s: %s (the vendored NVIDIA headers live in ../shared/vendor/nvidia)" % (path, e))


def strip_comments(text):
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    return re.sub(r"//[^\n]*", " ", text)


DEFINE = re.compile(r"^[ \t]*#[ \t]*define[ \t]+([A-Za-z_]\w*)(\([\w, ]*\))?[ \t]+(.*?)[ \t]*(?:/\*(.*?)\*/)?[ \t]*$",
                    re.M)


def defines(text):
    """[(name, parameters or None, value text, access comment)] of the header's #defines, in order."""
    text = text.replace("\\\n", " ")
    out = []
    for m in DEFINE.finditer(text):
        name, params, value, comment = m.group(1), m.group(2), m.group(3), (m.group(4) or "").strip()
        value = re.sub(r"//.*$", "", value).strip()
        if not value or name.startswith("__") or name.endswith("_H__") or name.endswith("_H_"):
            continue
        out.append((name, params[1:-1].strip() if params else None, value, comment))
    return out


# ---------------------------------------------------------------------------------------------------------------
# The probe: one C program that includes (or repeats) the definitions and prints each wanted expression.


class Probe:
    def __init__(self):
        self.exprs = []  # (key, C expression)
        self.prelude = []

    def add(self, key, expr):
        self.exprs.append((key, expr))

    def run(self):
        lines = ["#include <stdio.h>", "#include <stdint.h>"] + self.prelude + ["int main(void) {"]
        for key, expr in self.exprs:
            lines.append('  printf("%%s %%lld\\n", "%s", (long long)(%s));' % (key, expr))
        lines += ["  return 0;", "}", ""]
        with tempfile.TemporaryDirectory() as tmp:
            src, exe = os.path.join(tmp, "probe.c"), os.path.join(tmp, "probe")
            with open(src, "w") as f:
                f.write("\n".join(lines))
            cc = subprocess.run(["gcc", "-std=gnu11", "-w", src, "-o", exe], capture_output=True, text=True)
            if cc.returncode != 0:
                fail("the constant probe does not compile:\n%s" % cc.stderr[:4000])
            run = subprocess.run([exe], capture_output=True, text=True, check=True)
        return {k: int(v) for k, v in (line.split(" ", 1) for line in run.stdout.splitlines())}


FIELD_VALUE = re.compile(r"^\(?[\w()+* ]+\)?\s*:\s*\(?[\w()+* ]+\)?$")  # hi:lo, (i):(i), (1544+(i)*1):(...)


def c_define(name, params, value):
    return "#define %s%s %s" % (name, "(%s)" % params if params else "", value)


# ---------------------------------------------------------------------------------------------------------------
# Registers


class Register:
    def __init__(self, name, params, expr, source, alias=None):
        self.name, self.params, self.expr, self.source, self.alias = name, params, expr, source, alias
        self.fields = []  # Field
        self.count_expr = None
        self.unit = next((u for p, u in UNITS if name.startswith(p)), "kAbsolute")


class Field:
    def __init__(self, name, params, expr, comment):
        self.name, self.params, self.expr, self.comment = name, params, expr, comment
        self.bits = ":" in expr  # hi:lo; otherwise a bit number
        self.values = []  # (suffix, expr, is the init value)
        self.count_expr = None


def tinygrad_source(file, chip):
    """How a register taken from tinygrad's autogen names its source: the file and the chip whose header it was."""
    return "%s%s (%s)" % (TINYGRAD_AUTOGEN, file, chip)


def tinygrad_defines(tinygrad, file, chip, names):
    """The wanted registers of one chip dict of a tinygrad autogen file, as (name, params, value, access) defines
    the header parser takes: the register (an access comment that marks it a register; the autogen keeps no access
    type), its fields hi:lo, and the constants named after it (WPR2_ADDR_LO_ALIGNMENT)."""
    path = os.path.join(tinygrad, TINYGRAD_AUTOGEN, file)
    try:
        with open(path, encoding="utf-8") as f:
            tree = ast.parse(f.read(), path)
    except (OSError, SyntaxError) as e:
        fail("cannot read %s: %s (tinygrad's autogen lives in ../shared/vendor/tinygrad)" % (path, e))
    table = next((n.value for n in tree.body if isinstance(n, ast.Assign) and len(n.targets) == 1 and
                  isinstance(n.targets[0], ast.Name) and n.targets[0].id == chip and isinstance(n.value, ast.Dict)),
                 None)
    if table is None:
        fail("%s has no %s dict" % (path, chip))
    entries = {}
    for key, value in zip(table.keys, table.values):
        name = ast.literal_eval(key)
        if any(name == n or name.startswith(n + "_") for n in names):
            entries[name] = ast.literal_eval(value)  # only the wanted entries: others may hold lambdas
    out = []
    for reg in names:
        if reg not in entries:
            fail("%s: %s has no %s" % (path, chip, reg))
        base, offset, fields = entries.pop(reg)
        if base != 0:
            fail("%s: %s is relative to %#x, not BAR0" % (path, reg, base))
        out.append((reg, None, "%#x" % offset, "---4R"))
        out += [("%s_%s" % (reg, f.upper()), None, "%d:%d" % (hi, lo), "") for f, (lo, hi) in fields.items()]
        for name in [n for n in entries if n.startswith(reg + "_")]:
            value = entries.pop(name)
            if isinstance(value, int):
                out.append((name, None, "%#x" % value, ""))
    return out


def parse_registers(vendor, headers, extra=()):
    """The registers of the headers, in order, with fields and field values; and the other numeric constants.
    `extra`: [(source, defines)] read after the headers (tinygrad's autogen)."""
    registers = {}
    order = []
    constants = []  # (name, params, expr, source)
    ranges = {}  # device ranges: name -> (params, value)
    all_lines = []
    boot = read(vendor, BOOT_MANUAL)
    texts = [(BOOT_MANUAL, [d for d in defines(boot) if any(d[0] == r or d[0].startswith(r + "_")
                                                            for r in BOOT_REGISTERS)])]
    texts += [(h, defines(read(vendor, h))) for h in headers]
    texts += list(extra)
    for source, defs in texts:
        for name, params, value, comment in defs:
            all_lines.append(c_define(name, params, value))
            access = comment.replace(" ", "")
            if re.match(r"^[RWC\-][W\-].4[RA]$", access):
                if name in registers:
                    order.remove(name)
                registers[name] = Register(name, params, value, source)
                order.append(name)
                continue
            if access.endswith("D") and ":" in value:
                ranges[name] = (params, value)
                continue
            alias = re.match(r"^(\w+)(\((\d+)\))?$", value)
            if alias and alias.group(1) in registers and not params:
                reg = Register(name, None, value, source, alias=alias.group(1))
                registers[name] = reg
                order.append(name)
                continue
            # The register a field or value belongs to: the longest register name before it that prefixes it
            # (in header order: CPUCTL_ALIAS_EN is CPUCTL's field, defined before the CPUCTL_ALIAS register).
            owner = max((r for r in order if name.startswith(r + "_")), key=len, default=None)
            if owner is None:
                if params is None and not FIELD_VALUE.match(value):
                    constants.append((name, None, value, source))
                elif params is not None and not FIELD_VALUE.match(value):
                    constants.append((name, params, value, source))
                continue
            reg = registers[owner]
            rest = name[len(owner) + 1:]
            if rest == "_SIZE_1":
                reg.count_expr = value
                continue
            if rest.startswith("_"):
                continue  # __PRIV_LEVEL_MASK and friends: the register's protection, not a field
            if FIELD_VALUE.match(value) or (params and value == "(%s)" % params):
                reg.fields.append(Field(rest, params, value, access))
                continue
            field = max((f for f in reg.fields if rest.startswith(f.name + "_")), key=lambda f: len(f.name),
                        default=None)
            if field is None:
                constants.append((name, params, value, source))
                continue
            suffix = rest[len(field.name) + 1:]
            if suffix == "_SIZE_1":
                field.count_expr = value
            elif not suffix.startswith("_"):
                field.values.append((suffix, value, len(access) >= 3 and access[2] == "I"))
    return [registers[n] for n in order], constants, ranges, all_lines


def evaluate_registers(registers, constants, ranges, lines):
    probe = Probe()
    probe.prelude = lines
    for reg in registers:
        if reg.params:
            probe.add(reg.name + ".0", "%s(0)" % reg.name)
            probe.add(reg.name + ".1", "%s(1)" % reg.name)
            if reg.count_expr:
                probe.add(reg.name + ".n", reg.count_expr)
        else:
            probe.add(reg.name + ".0", reg.name)
        for f in reg.fields:
            key = "%s.%s" % (reg.name, f.name)
            arg = "(0)" if f.params else ""
            # A hi:lo field gives lo and hi through C's ?: (as DRF_BASE/DRF_EXTENT do); a bare (i) is bit i.
            pick = ("(0 ? %s)", "(1 ? %s)") if f.bits else ("(%s)", "(%s)")
            probe.add(key + ".lo", pick[0] % ("%s_%s%s" % (reg.name, f.name, arg)))
            probe.add(key + ".hi", pick[1] % ("%s_%s%s" % (reg.name, f.name, arg)))
            if f.params:
                probe.add(key + ".lo1", pick[0] % ("%s_%s(1)" % (reg.name, f.name)))
                if f.count_expr:
                    probe.add(key + ".n", f.count_expr)
            for suffix, _, _ in f.values:
                probe.add("%s.%s" % (key, suffix), "%s_%s_%s" % (reg.name, f.name, suffix))
    for name, params, _, _ in constants:
        if params:
            probe.add(name + ".0", "%s(0)" % name)
            probe.add(name + ".1", "%s(1)" % name)
        else:
            probe.add(name, name)
    for name, (params, _) in ranges.items():
        probe.add(name + ".lo", "(0 ? %s%s)" % (name, "(0)" if params else ""))
    return probe.run()


CPP_RESERVED = {
    "alignas", "alignof", "and", "asm", "auto", "bool", "break", "case", "catch", "char", "class", "const",
    "continue", "default", "delete", "do", "double", "else", "enum", "explicit", "export", "extern", "false", "float",
    "for", "friend", "goto", "if", "inline", "int", "long", "mutable", "namespace", "new", "not", "operator", "or",
    "private", "protected", "public", "register", "return", "short", "signed", "sizeof", "static", "struct",
    "switch", "template", "this", "throw", "true", "try", "typedef", "union", "unsigned", "using", "virtual", "void",
    "volatile", "while", "xor",
    # members of nv::regs::Register
    "raw", "set_raw", "address",
}


def accessor(field):
    name = field.lower()
    if name[0].isdigit():
        return "f_" + name
    return name + "_" if name in CPP_RESERVED else name


def field_rows(reg, v):
    """[(name, hi, lo, index stride, count, init value or None)] of a register's fields, with indexed ones once."""
    rows = []
    for f in reg.fields:
        key = "%s.%s" % (reg.name, f.name)
        lo, hi = v[key + ".lo"], v[key + ".hi"]
        if hi < lo or hi > 31:
            fail("%s: field %s is %d:%d, not within a 32-bit register" % (reg.source, key, hi, lo))
        stride = v[key + ".lo1"] - lo if f.params else 0
        count = v.get(key + ".n", 1) if f.params else 1
        if stride:  # only the elements within this register (INTR_TOP's SUBTREE(i) counts 64 bits over two)
            count = min(count, (31 - hi) // stride + 1)
        init = [v["%s.%s" % (key, s)] for s, _, is_init in f.values if is_init]
        rows.append((f.name, hi, lo, stride, count, init[0] if len(init) == 1 else None))
    return rows


def reg_geometry(reg, v):
    offset = v[reg.name + ".0"]
    stride = v[reg.name + ".1"] - offset if reg.params else 0
    count = v.get(reg.name + ".n", 1) if reg.params else 1
    if reg.params and not reg.count_expr:
        count = 0  # the header gives no __SIZE_1: the count is not known
    return offset, stride, count


def emit_typed(chip, registers, v, notes, engines):
    guard = "BAREGPU_NV_REGS_%s_H_" % chip.upper()
    out = ["// Generated by %s from %s" % (GENERATOR, notes),
           "// Typed %s registers: every register of those headers. For each field F: f() reads it, f(v) sets it;" % chip,
           "// indexed fields (F(i) in the header) take the index first. Field values the header names are constants",
           "// of the register (STARTCPU_TRUE); kResetValue holds the fields' init (I) values over kResetMask.",
           "#ifndef " + guard, "#define " + guard, "", "#include <array>", "#include <cstdint>", "",
           '#include "nv/regs/register.h"', "", "namespace nv::regs::%s {" % chip, "",
           "// The engines' bases {falcon, falcon2/RISC-V, FBIF}: %s." % "; ".join(
               "%s: %s, %s, %s" % (n, f, f2, fb) for n, f, f2, fb in ENGINES)]
    for (name, falcon, falcon2, fbif) in engines:
        out.append("inline constexpr EngineBases k%s{%#x, %#x, %#x};" % (name.capitalize(), falcon, falcon2, fbif))
    out.append("")
    for reg in registers:
        offset, stride, count = reg_geometry(reg, v)
        rows = field_rows(reg, v)
        out.append("// %s%s" % (reg.source.split("/")[-1], " (alias of %s)" % reg.expr if reg.alias else ""))
        out.append("struct %s : Register<%s, Unit::%s, %#x, %#x, %d> {" % (reg.name, reg.name, reg.unit, offset, stride,
                                                                          count))
        out.append('  static constexpr char kName[] = "%s";' % reg.name)
        specs = []
        reset, reset_mask = 0, 0
        for name, hi, lo, fstride, fcount, init in rows:
            if fstride:
                continue
            mask = ((1 << (hi - lo + 1)) - 1) << lo
            specs.append('{"%s", %#x, %d}' % (name, mask, lo))
            if init is not None:
                reset |= (init << lo) & mask
                reset_mask |= mask
        out.append("  static constexpr std::array<FieldSpec, %d> kFields{{%s}};" % (len(specs), ", ".join(specs)))
        if reset_mask:
            out.append("  static constexpr uint32_t kResetValue = %#x;" % reset)
            out.append("  static constexpr uint32_t kResetMask = %#x;" % reset_mask)
        seen = set()
        for f, (name, hi, lo, fstride, fcount, _) in zip(reg.fields, rows):
            acc = accessor(name)
            if acc in seen:
                fail("%s: two fields of %s give accessor %s" % (reg.source, reg.name, acc))
            seen.add(acc)
            if fstride:
                out.append("  BAREGPU_NV_REG_FIELD_ARRAY(%s, %d, %d, %d, %d)" % (acc, lo, hi - lo + 1, fstride, fcount))
            else:
                out.append("  BAREGPU_REG_FIELD(%s, %#x, %d)" % (acc, ((1 << (hi - lo + 1)) - 1) << lo, lo))
            for suffix, _, _ in f.values:
                out.append("  static constexpr uint32_t %s_%s = %#x;" % (name, suffix, v["%s.%s.%s" % (reg.name, name,
                                                                                                       suffix)]))
        out.append("};")
    out += ["", "}  // namespace nv::regs::%s" % chip, "", "#endif  // " + guard, ""]
    return "\n".join(out)


class StringTable:
    def __init__(self):
        self.offsets, self.names, self.size = {}, [], 0

    def add(self, name):
        if name not in self.offsets:
            self.offsets[name] = self.size
            self.names.append(name)
            self.size += len(name) + 1
        return self.offsets[name]

    def literal_lines(self):
        lines, line = [], ""
        for name in self.names:
            piece = name + "\\0"
            if line and len(line) + len(piece) > 100:
                lines.append('    "' + line + '"')
                line = ""
            line += piece
        if line:
            lines.append('    "' + line + '"')
        return lines


def emit_table(chip, registers, v, notes, sources, engines):
    strings = StringTable()
    for s in sources:
        strings.add(s)
    reg_rows, frows = [], []
    for reg in registers:
        offset, stride, count = reg_geometry(reg, v)
        first = len(frows)
        for name, hi, lo, fstride, fcount, _ in field_rows(reg, v):
            if not fstride:
                frows.append("    {%d, %d, %d}," % (strings.add(name), hi, lo))
                continue
            for i in range(fcount or 1):  # an indexed field: one entry per index, within the 32 bits
                if lo + i * fstride + (hi - lo) <= 31:
                    frows.append("    {%d, %d, %d}," % (strings.add("%s(%d)" % (name, i)), hi + i * fstride,
                                                        lo + i * fstride))
        reg_rows.append("    {%d, Unit::%s, %#x, %#x, %d, %d, %d, %d}," % (
            strings.add(reg.name), reg.unit, offset, stride, count, first, len(frows) - first,
            strings.add(reg.source)))
    out = ["// Generated by %s from %s" % (GENERATOR, notes),
           "// Every register of the chip's headers with its fields; the runtime view is nv/regs/database.h.",
           '#include "nv/regs/register_table.h"', "", "namespace nv::regs::internal {", "namespace {", "",
           "constexpr char kStrings[] ="]
    out += strings.literal_lines()
    out[-1] += ";"
    out += ["", "constexpr RegisterEntry kRegisters[] = {",
            "    // {name, unit, offset, stride, count (0: not given), first field, fields, source header}"]
    out += reg_rows
    out += ["};", "", "constexpr FieldEntry kFields[] = {", "    // {name, hi, lo}"]
    out += frows or ["    {0, 0, 0},"]
    out += ["};", "", "constexpr EngineEntry kEngines[] = {", "    // {name, falcon base, falcon2/RISC-V base, FBIF base}"]
    for name, falcon, falcon2, fbif in engines:
        out.append('    {"%s", %#x, %#x, %#x},' % (name, falcon, falcon2, fbif))
    out += ["};", "", "}  // namespace", "",
            "extern const RegisterTable k%sTable;" % chip.capitalize(),
            "const RegisterTable k%sTable = {\"%s\", kStrings, sizeof(kStrings), kRegisters, %d, kFields, %d, kEngines, %d};" %
            (chip.capitalize(), chip, len(reg_rows), len(frows), len(engines)),
            "", "}  // namespace nv::regs::internal", ""]
    return "\n".join(out)


def chip_outputs(vendor, tinygrad, chip, headers):
    extra = [(tinygrad_source(file, dict_chip), tinygrad_defines(tinygrad, file, dict_chip, names))
             for file, dict_chip, names in TINYGRAD_REGISTERS]
    registers, constants, ranges, lines = parse_registers(vendor, headers, extra)
    v = evaluate_registers(registers, constants, ranges, lines)
    sources = [BOOT_MANUAL] + headers + [s for s, _ in extra]
    notes = ("%s{%s}, %s and tinygrad's autogen %s; do not edit.\n// Headers, in the order read (a later definition "
             "wins): %s\n// From tinygrad's autogen (no vendored header of this chip has them): %s") % (
        SWREF, ",".join(sorted({h[len(SWREF):].rsplit("/", 1)[0] for h in headers})), BOOT_MANUAL, TINYGRAD_AUTOGEN,
        ", ".join(s.split("/")[-1] for s in sources[:len(sources) - len(extra)]),
        "; ".join("%s: %s" % (tinygrad_source(f, c), ", ".join(n)) for f, c, n in TINYGRAD_REGISTERS))
    engines = []
    for name, falcon, falcon2, fbif in ENGINES:
        fkey = re.sub(r"\(0\)$", "", falcon) + ".lo"
        k2 = falcon2 if falcon2 in v else None
        kf = fbif if fbif in v else re.sub(r"\(0\)$", ".0", fbif)
        if fkey not in v or k2 is None or kf not in v:
            fail("%s: the base macros of engine %s are missing" % (chip, name))
        engines.append((name, v[fkey], v[k2], v[kf]))
    outputs = {"%s.h" % chip: emit_typed(chip, registers, v, notes, engines),
               "%s_table.cc" % chip: emit_table(chip, registers, v, notes, sources, engines)}
    counts = (len(registers), sum(len(r.fields) for r in registers))
    return outputs, counts


# ---------------------------------------------------------------------------------------------------------------
# Constants


def header_guard(name):
    return "BAREGPU_NV_REGS_%s_" % name.upper().replace(".", "_")


def emit_constants(out_name, sources, namespace, items, why):
    """items: [(name, kind, value)] with kind 'u32', 'u64', 'bits' (value (hi, lo)), 'fn' ((base, stride)),
    'bitsfn' ((hi, lo, stride))."""
    guard = header_guard(out_name)
    out = ["// Generated by %s from %s; do not edit." % (GENERATOR, ", ".join(sources)),
           "// %s" % why, "#ifndef " + guard, "#define " + guard, "", "#include <cstdint>", "",
           '#include "nv/regs/bits.h"', "", "namespace nv::regs::%s {" % namespace, ""]
    for name, kind, value in items:
        if kind == "u32":
            out.append("inline constexpr uint32_t %s = %#x;" % (name, value))
        elif kind == "u64":
            out.append("inline constexpr uint64_t %s = %#xull;" % (name, value))
        elif kind == "bits":
            out.append("inline constexpr Bits %s{%d, %d};" % (name, value[0], value[1]))
        elif kind == "fn":
            out.append("constexpr uint32_t %s(uint32_t i) { return %#x + i * %#x; }" % (name, value[0], value[1]))
        elif kind == "bitsfn":
            out.append("constexpr Bits %s(uint32_t i) { return {%d + i * %d, %d + i * %d}; }" %
                       (name, value[0], value[2], value[1], value[2]))
    out += ["", "}  // namespace nv::regs::%s" % namespace, "", "#endif  // " + guard, ""]
    return "\n".join(out)


# A number or an arithmetic expression; a bare identifier (an alias of another macro) is left out.
NUMERIC = re.compile(r"^[\w()+*<>\-|&~ ]+$")
IDENTIFIER = re.compile(r"^[A-Za-z_]\w*$")


def define_items(vendor, header, prelude=(), wanted=None):
    """Every define of a header (or those whose name matches `wanted`, with the members of its enumerations that
    do) as a constant: numbers, hi:lo fields, linear one-argument macros."""
    text = read(vendor, header)
    defs = defines(text)
    probe = Probe()
    probe.prelude = list(prelude) + [c_define(n, p, val) for n, p, val, _ in defs]
    kinds = []
    if wanted:
        for body in re.findall(r"\benum\b[^{;]*\{.*?\}[^;]*;", strip_comments(text), re.S):
            members = [m for m in re.findall(r"^\s*([A-Za-z_]\w*)", body.split("{", 1)[1], re.M)
                       if re.search(wanted, m)]
            if members:
                probe.prelude.append(body)
                for m in members:
                    probe.add(m, m)
                    kinds.append((m, "num"))
    for name, params, value, _ in defs:
        if params and "," in params or (wanted and not re.search(wanted, name)):
            continue
        arg = "(0)" if params else ""
        if FIELD_VALUE.match(value.replace("MW(", "").rstrip(")")) and ":" in value:
            probe.add(name + ".lo", "(0 ? %s%s)" % (name, arg))
            probe.add(name + ".hi", "(1 ? %s%s)" % (name, arg))
            if params:
                probe.add(name + ".lo1", "(0 ? %s(1))" % name)
            kinds.append((name, "bitsfn" if params else "bits"))
        elif NUMERIC.match(value) and not IDENTIFIER.match(value):
            if params:
                probe.add(name + ".0", "%s(0)" % name)
                probe.add(name + ".1", "%s(1)" % name)
                kinds.append((name, "fn"))
            else:
                probe.add(name, name)
                kinds.append((name, "num"))
    v = probe.run()
    items = []
    # A name the header defines twice (clc56f.h repeats NVC56F_DMA_IMMD_DATA, with the same bits) appears once, with
    # its last definition, as the preprocessor would have it.
    last = {name: i for i, (name, _) in enumerate(kinds)}
    kinds = [k for i, k in enumerate(kinds) if last[k[0]] == i]
    for name, kind in kinds:
        if kind == "bits":
            items.append((name, "bits", (v[name + ".hi"], v[name + ".lo"])))
        elif kind == "bitsfn":
            items.append((name, "bitsfn", (v[name + ".hi"], v[name + ".lo"], v[name + ".lo1"] - v[name + ".lo"])))
        elif kind == "fn":
            items.append((name, "fn", (v[name + ".0"], v[name + ".1"] - v[name + ".0"])))
        else:
            value = v[name] & 0xFFFFFFFFFFFFFFFF
            items.append((name, "u64" if value > 0xFFFFFFFF else "u32", value))
    return items


def rpc_names(vendor):
    text = strip_comments(read(vendor, RPC_ENUMS))
    functions = ["NV_VGPU_MSG_FUNCTION_" + m for m in re.findall(r"^\s*X\(\s*\w+\s*,\s*(\w+)\s*\)", text, re.M)]
    events = ["NV_VGPU_MSG_EVENT_" + m for m in re.findall(r"^\s*E\(\s*(\w+)", text, re.M)]
    return functions, events


def status_codes(vendor):
    text = read(vendor, STATUS_CODES)
    return re.findall(r'^NV_STATUS_CODE\((\w+),\s*(0x[0-9a-fA-F]+|\d+)\s*,\s*"((?:[^"\\]|\\.)*)"\)', text, re.M)


def constants_outputs(vendor):
    outputs = {}
    # RPC numbers: the enums of rpc_global_enums.h, valued by the compiler.
    functions, events = rpc_names(vendor)
    probe = Probe()
    probe.prelude = ['#include "%s"' % os.path.join(vendor, RPC_ENUMS)]
    for n in functions + events:
        probe.add(n, n)
    seq = re.findall(r"^\s*(GSP_SEQ_BUF_OPCODE_\w+)", strip_comments(read(vendor, SEQUENCER)), re.M)
    seq_enum = re.search(r"typedef enum GSP_SEQ_BUF_OPCODE\s*\{.*?\}\s*GSP_SEQ_BUF_OPCODE;",
                         strip_comments(read(vendor, SEQUENCER)), re.S).group(0)
    probe.prelude.append(seq_enum)
    for n in seq:
        probe.add(n, n)
    codes = status_codes(vendor)
    probe.prelude += ["#define %s %s" % (n, val) for n, val, _ in codes]
    for n, _, _ in codes:
        probe.add(n, n)
    v = probe.run()
    outputs["rpc_constants.h"] = emit_constants(
        "rpc_constants.h", [RPC_ENUMS], "rpc",
        [(n, "u32", v[n]) for n in functions + events],
        "The RPC function (host to GSP) and event (GSP to host) numbers of GSP-RM 535.113.01.")
    outputs["sequencer_constants.h"] = emit_constants(
        "sequencer_constants.h", [SEQUENCER], "gsp", [(n, "u32", v[n]) for n in seq],
        "The opcodes of the GSP sequencer buffer (rpc_run_cpu_sequencer_v17_00.commandBuffer).")
    outputs["status_constants.h"] = emit_constants(
        "status_constants.h", [STATUS_CODES], "status", [(n, "u32", v[n]) for n, _, _ in codes],
        "NV_STATUS codes, named as in the header; nv/regs/names.h turns a code into its name and message.")
    names = ["// Generated by %s from %s, %s; do not edit." % (GENERATOR, RPC_ENUMS, STATUS_CODES),
             "// The names of RPC numbers and NV_STATUS codes, for decoding (nv/regs/names.h).",
             '#include "nv/regs/names.h"', "", "namespace nv::regs {", "namespace {", "",
             "constexpr NamedValue kRpcFunctions[] = {"]
    names += ['    {%#x, "%s", ""},' % (v[n], n) for n in functions]
    names += ["};", "", "constexpr NamedValue kRpcEvents[] = {"]
    names += ['    {%#x, "%s", ""},' % (v[n], n) for n in events]
    names += ["};", "", "constexpr NamedValue kStatusCodes[] = {"]
    names += ['    {%#x, "%s", "%s"},' % (v[n], n, msg) for n, _, msg in codes]
    names += ["};", "", "}  // namespace", "",
              "absl::Span<const NamedValue> RpcFunctions() { return kRpcFunctions; }",
              "absl::Span<const NamedValue> RpcEvents() { return kRpcEvents; }",
              "absl::Span<const NamedValue> StatusCodes() { return kStatusCodes; }", "",
              "}  // namespace nv::regs", ""]
    outputs["names.cc"] = "\n".join(names)

    for out_name, header in CLASS_HEADERS:
        items = define_items(vendor, header)
        outputs[out_name] = emit_constants(out_name, [header], "cls", items,
                                           "Its class id, methods (byte offsets), fields (hi:lo) and field values.")

    items, headers = [], []
    for header, wanted in GSP_CONSTANTS:
        items += define_items(vendor, header, wanted=wanted)
        headers.append(header)
    outputs["gsp_constants.h"] = emit_constants("gsp_constants.h", headers, "gsp", items,
                                                "The GSP boot's magic numbers, versions and region kinds.")

    qmd = ["// Generated by %s from %s; do not edit." % (GENERATOR, ", ".join(h for _, h, _ in QMD_TABLES)),
           "// QMD fields: name (without the class and version prefix), bit hi:lo within the QMD as MW() places",
           "// them; an indexed field F(i) is listed once with the distance between its elements.",
           '#include "nv/regs/qmd.h"', "", "namespace nv::regs {", "namespace {", ""]
    spans = []
    for table, header, prefix in QMD_TABLES:
        items = define_items(vendor, header, prelude=["#define MW(x) x"])
        rows = []
        for name, kind, value in items:
            if not name.startswith(prefix) or kind not in ("bits", "bitsfn"):
                continue
            stride = value[2] if kind == "bitsfn" else 0
            rows.append('    {"%s", %d, %d, %d},' % (name[len(prefix):], value[0], value[1], stride))
        qmd += ["// %s: %s*" % (header, prefix), "constexpr QmdField %s[] = {" % table,
                "    // {name, hi, lo, index stride (0: not indexed)}"] + rows + ["};", ""]
        spans.append(table)
    qmd += ["}  // namespace", ""]
    for table in spans:
        qmd.append("absl::Span<const QmdField> %sFields() { return %s; }" % (table[1:], table))
    qmd += ["", "}  // namespace nv::regs", ""]
    outputs["qmd_tables.cc"] = "\n".join(qmd)
    return outputs


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    root = os.path.dirname(os.path.dirname(here))
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--vendor", default=os.path.normpath(os.path.join(root, "..", "shared", "vendor", "nvidia")))
    parser.add_argument("--out", default=os.path.join(root, "nv", "regs"))
    parser.add_argument("--tinygrad",
                        default=os.path.normpath(os.path.join(root, "..", "shared", "vendor", "tinygrad")),
                        help="tinygrad's source tree, for the registers only its autogen has (never imported)")
    parser.add_argument("--tarball", default="/usr/src/linux-source-6.12.tar.xz",
                        help="Debian's linux-source-6.12, for the structures and types only nouveau has")
    args = parser.parse_args()
    if not os.path.isdir(args.vendor):
        fail("cannot read %s: no such directory (the vendored NVIDIA headers)" % args.vendor)

    outputs = {}
    summary = []
    for chip, headers in CHIPS.items():
        files, (nregs, nfields) = chip_outputs(args.vendor, args.tinygrad, chip, headers)
        outputs.update(files)
        summary.append("%s: %d registers, %d fields" % (chip, nregs, nfields))
    outputs.update(constants_outputs(args.vendor))
    import layouts  # tools/nv/layouts.py: the GSP structure probe
    sys.path.insert(0, os.path.join(root, "tools", "regs"))
    import generate as amd  # tools/regs/generate.py: reads members of Debian's kernel tarball in one pass
    nouveau = amd.read_tarball(args.tarball, set(layouts.nouveau_paths()))
    outputs["gsp_layouts.cc"] = layouts.generate(args.vendor, nouveau, GENERATOR, fail)

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
    print("wrote %d files to %s (%s)" % (len(outputs), args.out, "; ".join(summary)))


if __name__ == "__main__":
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    main()
