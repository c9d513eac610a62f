"""Constants and structure layouts from the amdgpu headers, for tools/regs/generate.py.

Constants: the object-like #defines and enum members of a header whose names match a pattern, with their values
computed by the C compiler (so expressions like (1ULL << 54) come out right), written as C++ constants named as in
the header. Layouts: sizeof and offsetof of every member of the listed kernel structures, measured by compiling
a probe against the headers with gcc on this (x86-64, little-endian) machine; tests/am/regs/layouts_test.cc
checks the project's own definitions against them.
"""

import os
import re
import subprocess
import tempfile

# (output file, header under drivers/gpu/drm/amd/, C++ namespace under am::regs, name patterns, compiles alone)
# A header that does not compile on its own (amdgpu_vm.h includes half the kernel) has its #define lines copied
# into the probe instead.
CONSTANTS = [
    ("discovery_constants.h", "include/discovery.h", "discovery",
     [r"^(PSP_HEADER_SIZE|BINARY_SIGNATURE|DISCOVERY_TABLE_SIGNATURE|GC_TABLE_ID|HARVEST_TABLE_SIGNATURE|"
      r"VCN_INFO_TABLE_ID|MALL_INFO_TABLE_ID|NPS_INFO_TABLE_ID)$",
      r"^(IP_DISCOVERY|GC|HARVEST_INFO|VCN_INFO|MALL_INFO|NPS_INFO|TOTAL_TABLES)$"], True),
    ("hw_id_constants.h", "include/soc15_hw_ip.h", "discovery", [r"_HWID$", r"^HWID_MAX$"], True),
    ("psp_constants.h", "amdgpu/psp_gfx_if.h", "psp",
     [r"^GFX_", r"^PSP_", r"^TEE_", r"^C2PMSG_", r"^FRAME_TYPE_"], True),
    ("pm4_constants.h", "amdgpu/nvd.h", "pm4",
     [r"^PACKET", r"^CP_PACKET2$", r"^(EVENT|CS|CACHE|PS|VS)_", r"^(WAIT_REG_MEM|WRITE_DATA|INDIRECT_BUFFER)_"], True),
    ("pm4_event_constants.h", "include/soc21_enum.h", "pm4", ["enum:VGT_EVENT_TYPE"], True),
    ("sh_mem_constants.h", "include/soc21_enum.h", "gc", ["enum:SH_MEM_ADDRESS_MODE", "enum:SH_MEM_ALIGNMENT_MODE"],
     True),
    ("sdma_constants.h", "amdgpu/sdma_v6_0_0_pkt_open.h", "sdma", ["SDMA_PACKETS"], True),
    ("sdma_policy_constants.h", "amdgpu/sdma_common.h", "sdma",
     ["enum:sdma_utcl2_cache_read_policy", "enum:sdma_utcl2_cache_write_policy"], True),
    ("smu_constants.h", "pm/swsmu/inc/pmfw_if/smu_v13_0_0_ppsmc.h", "smu",
     [r"^PPSMC_", r"^PPS_", r"^DEBUGSMC_", r"^SMU_13_0_0_"], True),
    ("smu_driver_if_constants.h", "pm/swsmu/inc/pmfw_if/smu13_driver_if_v13_0_0.h", "smu",
     [r"^PPCLK_", r"^SMU13_0_0_DRIVER_IF_VERSION$", r"^TABLE_", r"^FEATURE_", r"^TEMP_", r"^SVI_PLANE_",
      r"^THROTTLER_COUNT$", r"^D3HOT_SEQUENCE_COUNT$", r"^NUM_[A-Z0-9]+_DPM_LEVELS$"], True),
    ("ih_constants.h", "include/soc15_ih_clientid.h", "ih", [r"^SOC15_IH_CLIENTID_", r"^SOC21_IH_CLIENTID_"], True),
    ("gfx_srcid_constants.h", "include/ivsrcid/gfx/irqsrcs_gfx_11_0_0.h", "ih", [r"^GFX_11_0_0__SRCID__"], True),
    ("vmc_srcid_constants.h", "include/ivsrcid/vmc/irqsrcs_vmc_1_0.h", "ih", [r"^VMC_1_0__SRCID__", r"^UTCL2_1_0__SRCID__"],
     True),
    ("nbif_srcid_constants.h", "include/ivsrcid/nbio/irqsrcs_nbif_7_4.h", "ih", [r"^NBIF_7_4__SRCID__"], True),
    ("vm_constants.h", "amdgpu/amdgpu_vm.h", "vm", [r"^AMDGPU_(PTE|PDE|MTYPE)_"], False),
    # The memory types the hubs' MX_L1_TLB_CNTL.MTYPE takes (*hub_v3_0_init_tlb_regs programs MTYPE_UC).
    ("mtype_constants.h", "include/soc21_enum.h", "vm", ["enum:MTYPE"], True),
    ("psp_driver_constants.h", "amdgpu/amdgpu_psp.h", "psp", ["enum:psp_bootloader_cmd", "enum:psp_ring_type"],
     False),
    # The SQ's indirect wave registers (read through SQ_IND_INDEX/SQ_IND_DATA, gfx_v11_0_read_wave_data): their
    # indices, the fields of the ones tools decode, the index ranges of SGPRs and VGPRs, and SQ_CMD's commands.
    ("sq_wave_constants.h", "include/asic_reg/gc/gc_11_0_0_offset.h", "sq", [r"^ixSQ_WAVE_"], True),
    ("sq_wave_field_constants.h", "include/asic_reg/gc/gc_11_0_0_sh_mask.h", "sq",
     [r"^SQ_WAVE_(STATUS|HW_ID1|HW_ID2|GPR_ALLOC|IB_STS2)__"], True),
    ("sq_ind_constants.h", "include/soc21_enum.h", "sq", [r"^SQIND_"], True),
    ("sq_cmd_constants.h", "include/soc21_enum.h", "sq", ["enum:SQ_IND_CMD_CMD", "enum:SQ_IND_CMD_MODE"], True),
]

# The SDMA packets the driver and the virtual GPU use (sdma_v6_0_0_pkt_open.h names each SDMA_PKT_<NAME>_...).
SDMA_PACKETS = ["COPY_LINEAR", "WRITE_UNTILED", "FENCE", "TRAP", "POLL_REGMEM", "TIMESTAMP_SET", "TIMESTAMP_GET",
                "TIMESTAMP_GET_GLOBAL", "INDIRECT", "NOP", "ATOMIC", "CONSTANT_FILL", "SRBM_WRITE", "COND_EXE",
                "PTEPDE_COPY", "PTEPDE_COPY_BACKWARDS", "PTEPDE_RMW", "SEMAPHORE", "PRE_EXE", "DUMMY_TRAP", "GPUVM_INV",
                "VM_INVALIDATION"]

# Kernel structures whose layout is recorded: (C type as the probe names it, header).
LAYOUTS = [
    ("table_info", "include/discovery.h"),
    ("binary_header", "include/discovery.h"),
    ("die_info", "include/discovery.h"),
    ("ip_discovery_header", "include/discovery.h"),
    ("die_header", "include/discovery.h"),
    ("ip", "include/discovery.h"),
    ("ip_v3", "include/discovery.h"),
    ("ip_v4", "include/discovery.h"),
    ("struct gpu_info_header", "include/discovery.h"),
    ("struct gc_info_v1_0", "include/discovery.h"),
    ("struct gc_info_v1_1", "include/discovery.h"),
    ("struct gc_info_v1_2", "include/discovery.h"),
    ("struct gc_info_v1_3", "include/discovery.h"),
    ("struct gc_info_v2_0", "include/discovery.h"),
    ("struct gc_info_v2_1", "include/discovery.h"),
    ("harvest_info_header", "include/discovery.h"),
    ("harvest_info", "include/discovery.h"),
    ("harvest_table", "include/discovery.h"),
    ("struct psp_gfx_ctrl", "amdgpu/psp_gfx_if.h"),
    ("struct psp_gfx_buf_desc", "amdgpu/psp_gfx_if.h"),
    ("struct psp_gfx_cmd_setup_tmr", "amdgpu/psp_gfx_if.h"),
    ("struct psp_gfx_cmd_load_ip_fw", "amdgpu/psp_gfx_if.h"),
    ("struct psp_gfx_cmd_load_toc", "amdgpu/psp_gfx_if.h"),
    ("struct psp_gfx_cmd_reg_prog", "amdgpu/psp_gfx_if.h"),
    ("struct psp_gfx_cmd_boot_cfg", "amdgpu/psp_gfx_if.h"),
    ("union psp_gfx_commands", "amdgpu/psp_gfx_if.h"),
    ("struct psp_gfx_resp", "amdgpu/psp_gfx_if.h"),
    ("struct psp_gfx_cmd_resp", "amdgpu/psp_gfx_if.h"),
    ("struct psp_gfx_rb_frame", "amdgpu/psp_gfx_if.h"),
    ("struct v11_compute_mqd", "include/v11_structs.h"),
    ("struct v11_sdma_mqd", "include/v11_structs.h"),
    ("SmuMetrics_t", "pm/swsmu/inc/pmfw_if/smu13_driver_if_v13_0_0.h"),
    ("SmuMetricsExternal_t", "pm/swsmu/inc/pmfw_if/smu13_driver_if_v13_0_0.h"),
]

# What the kernel's own headers would give the amdgpu headers; only types and attributes, no facts.
PRELUDE = """#include <stdint.h>
#include <stddef.h>
#include <stdbool.h>
#include <stdio.h>
typedef uint8_t u8; typedef uint16_t u16; typedef uint32_t u32; typedef uint64_t u64;
typedef int8_t s8; typedef int16_t s16; typedef int32_t s32; typedef int64_t s64;
#define __packed __attribute__((packed))
#define __iomem
#define DECLARE_FLEX_ARRAY(TYPE, NAME) struct { struct { } __empty_##NAME; TYPE NAME[]; }
/* discovery.h orders ip_v4's nibble fields by these; amdgpu is built for little-endian x86 here. */
#define LITTLEENDIAN_CPU 1
"""


def strip_comments(text):
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    return re.sub(r"//[^\n]*", " ", text)


def object_defines(text):
    """[(name, line)] of object-like #defines, continuation lines joined."""
    text = strip_comments(text).replace("\\\n", " ")
    result = []
    for m in re.finditer(r"^[ \t]*#[ \t]*define[ \t]+([A-Za-z_]\w*)([^\n]*)$", text, re.M):
        name, rest = m.group(1), m.group(2)
        if rest.startswith("(") or not rest.strip():
            continue  # function-like, or a flag with no value
        result.append((name, m.group(0).strip()))
    return result


def all_defines(text):
    text = strip_comments(text).replace("\\\n", " ")
    return [m.group(0).strip() for m in re.finditer(r"^[ \t]*#[ \t]*define[^\n]*$", text, re.M)]


def shift_macros(text):
    """Names of one-parameter macros that shift their argument into a field: NAME(x) ((x) << N)."""
    text = strip_comments(text).replace("\\\n", " ")
    return re.findall(r"^[ \t]*#[ \t]*define[ \t]+(\w+)\((\w+)\)\s+\(\s*\(\2\)\s*<<\s*\w+\s*\)\s*$", text, re.M)


def enum_members(text):
    names = []
    for body in re.findall(r"\benum\b[^{;]*\{(.*?)\}", strip_comments(text), re.S):
        for item in body.split(","):
            m = re.match(r"\s*([A-Za-z_]\w*)", item)
            if m:
                names.append(m.group(1))
    return names


def sdma_names(text):
    packets = set(re.findall(r"^#define SDMA_PKT_(\w+?)_HEADER_op_offset\b", text, re.M))
    wanted = set(SDMA_PACKETS)
    names = []
    for name, _ in object_defines(text):
        if name.startswith("SDMA_OP_") or name.startswith("SDMA_SUBOP_"):
            names.append(name)
            continue
        if not name.startswith("SDMA_PKT_"):
            continue
        # The packet is the longest packet name that prefixes the define (COPY_LINEAR vs COPY_LINEAR_SUBWIN).
        owner = max((p for p in packets if name.startswith("SDMA_PKT_" + p + "_")), key=len, default=None)
        if owner in wanted:
            names.append(name)
    return names


def struct_members(text, ctype):
    """Top-level member names of a structure (members of anonymous unions/structs included; bitfields left
    out, as offsetof cannot take them), each with whether it is a flexible array."""
    name = ctype.split()[-1]
    kind = ctype.split()[0] if " " in ctype else r"(?:struct|union)"
    clean = re.sub(r"^\s*#.*$", "", strip_comments(text), flags=re.M)
    m = re.search(r"\b%s\s+%s\s*\{" % (kind, re.escape(name)), clean)
    if m:
        body, _ = matching_body(clean, m.end() - 1)
        return parse_members(body)
    # A typedef of an anonymous structure: typedef struct { ... } Name;
    for t in re.finditer(r"\btypedef\s+(?:struct|union)\s*\{", clean):
        body, end = matching_body(clean, t.end() - 1)
        if re.match(r"\s*%s\s*;" % re.escape(name), clean[end + 1:]):
            return parse_members(body)
    raise ValueError("%s not found" % ctype)


def layout_probe_lines(ctype, text):
    """The probe's printf lines for struct `ctype` as `text` declares it: "S NAME size", then "M NAME member offset size"
    per member (size 0 for a flexible array), NAME being ctype with spaces as '_'."""
    name = ctype.replace(" ", "_")
    lines = ['  printf("S %s %%zu\\n", sizeof(%s));' % (name, ctype)]
    for member, flex in struct_members(text, ctype):
        size = "0" if flex else "sizeof(((%s*)0)->%s)" % (ctype, member)
        lines.append('  printf("M %s %s %%zu %%zu\\n", offsetof(%s, %s), (size_t)%s);' %
                     (name, member, ctype, member, size))
    return lines


def matching_body(text, open_at):
    depth = 0
    for i in range(open_at, len(text)):
        if text[i] == "{":
            depth += 1
        elif text[i] == "}":
            depth -= 1
            if depth == 0:
                return text[open_at + 1:i], i
    raise ValueError("unbalanced braces")


def parse_members(body):
    members = []
    i, decl = 0, ""
    while i < len(body):
        c = body[i]
        if c == "{":
            inner, end = matching_body(body, i)
            semi = body.index(";", end)
            declarator = body[end + 1:semi].replace("__packed", "").strip()
            if declarator:
                members.append((re.match(r"\**\s*(\w+)", declarator).group(1), False))
            else:
                members += parse_members(inner)
            i, decl = semi + 1, ""
            continue
        if c == ";":
            decl = decl.strip()
            flex = re.match(r"DECLARE_FLEX_ARRAY\s*\(\s*[\w ]+,\s*(\w+)\s*\)", decl)
            if flex:
                members.append((flex.group(1), True))
            elif decl and ":" not in decl:
                m = re.search(r"(\w+)\s*(\[[^\]]*\])*\s*$", decl)
                members.append((m.group(1), decl.endswith("[]")))
            i, decl = i + 1, ""
            continue
        decl += c
        i += 1
    return members


def constants_for(files, amd, spec):
    out_name, header, namespace, patterns, standalone = spec
    text = files[amd + header]
    if patterns == ["SDMA_PACKETS"]:
        names = sdma_names(text)
    elif patterns[0].startswith("enum:"):  # every member of the named enums
        names = []
        for pattern in patterns:
            m = re.search(r"\benum\s+%s\s*\{(.*?)\}" % pattern[5:], strip_comments(text), re.S)
            names += [re.match(r"\s*(\w+)", item).group(1) for item in m.group(1).split(",") if item.strip()]
    else:
        candidates = [n for n, _ in object_defines(text)] + enum_members(text)
        names = [n for n in candidates if any(re.search(p, n) for p in patterns)]
    if spec[3] != ["SDMA_PACKETS"] and not spec[3][0].startswith("enum:"):
        names += ["%s()" % n for n, _ in shift_macros(text) if any(re.search(p, n) for p in patterns)]
    seen = set()
    return [n for n in names if not (n in seen or seen.add(n))]


def generate(files, version, generator, amd, fail):
    outputs = {}
    # One probe for everything: includes (or copies the defines of) each header, prints each constant and each
    # layout. A constant whose expression does not compile on its own (it needs driver state) is dropped and
    # the probe rebuilt; gcc's error lines name them.
    header_names = sorted({spec[1] for spec in CONSTANTS} | {h for _, h in LAYOUTS})
    constants = {spec[0]: constants_for(files, amd, spec) for spec in CONSTANTS}
    dropped = set()
    for attempt in range(20):
        lines = [PRELUDE]
        for spec in CONSTANTS:
            if not spec[4] and spec[3][0].startswith("enum:"):
                # A header that does not compile on its own: only the named enums' definitions are copied.
                for pattern in spec[3]:
                    m = re.search(r"\benum\s+%s\s*\{.*?\}\s*;" % pattern[5:], strip_comments(files[amd + spec[1]]),
                                  re.S)
                    lines.append(m.group(0))
            elif not spec[4]:
                lines += all_defines(files[amd + spec[1]])
        for h in header_names:
            if any(spec[1] == h and not spec[4] for spec in CONSTANTS):
                continue
            lines.append('#include "%s"' % h.replace("/", "__"))
        lines.append("int main(void) {")
        line_of = {}
        for spec in CONSTANTS:
            for n in constants[spec[0]]:
                if (spec[0], n) in dropped:
                    continue
                line_of[sum(l.count("\n") + 1 for l in lines) + 1] = (spec[0], n)
                if n.endswith("()"):  # a field-shift macro: its value at 1 gives the shift
                    lines.append('  printf("C %s %s %%d %%llu\\n", 0, (unsigned long long)(%s));' %
                                 (spec[0], n, n[:-1] + "1)"))
                    continue
                # A negative 32-bit value is a bit pattern that overflowed int, e.g. (6 << 29): kept as uint32.
                lines.append('  printf("C %s %s %%d %%llu\\n", (%s) < 0 && sizeof(%s) > 4, (unsigned long long)(%s) %s);' %
                             (spec[0], n, n, n, n, "& (sizeof(%s) > 4 ? ~0ull : 0xffffffffull)" % n))
        for ctype, h in LAYOUTS:
            lines += layout_probe_lines(ctype, files[amd + h])
        lines += ["  return 0;", "}", ""]
        source = "\n".join(lines)
        output, errors = probe_with_headers(source, files, amd, header_names, fail)
        if output is not None:
            break
        bad = set()
        for m in re.finditer(r"probe\.c:(\d+):\d+: error", errors):
            if int(m.group(1)) in line_of:
                bad.add(line_of[int(m.group(1))])
        if not bad:
            fail("layout probe does not compile:\n%s" % errors[:4000])
        dropped |= bad
    else:
        fail("layout probe still fails after dropping constants")

    values = {}
    sizes = {}
    members = {}
    for line in output.splitlines():
        parts = line.split()
        if parts[0] == "C":
            values[(parts[1], parts[2])] = (parts[3] == "1", int(parts[4]))
        elif parts[0] == "S":
            sizes[parts[1]] = int(parts[2])
        elif parts[0] == "M":
            members.setdefault(parts[1], []).append((parts[2], int(parts[3]), int(parts[4])))

    for spec in CONSTANTS:
        out_name, header, namespace, _, _ = spec
        guard = "BAREGPU_AM_REGS_%s_" % out_name.upper().replace(".", "_")
        out = ["// Generated by %s from Linux %s %s; do not edit." % (generator, version, header),
               "// Its constants, named as in the header, with the values the C compiler gives them.",
               "#ifndef " + guard, "#define " + guard, "", "#include <cstdint>", "",
               "namespace am::regs::%s {" % namespace, ""]
        for n in constants[out_name]:
            if (out_name, n) not in values:
                continue
            negative, raw = values[(out_name, n)]
            if n.endswith("()"):
                if raw == 0 or raw & (raw - 1) or raw > 0x80000000:
                    fail("%s: %s(1) is %#x, not a single bit" % (header, n[:-2], raw))
                out.append("constexpr uint32_t %s(uint32_t x) { return x << %d; }" % (n[:-2], raw.bit_length() - 1))
            elif negative:
                out.append("inline constexpr int64_t %s = %d;" % (n, raw - (1 << 64)))
            elif raw > 0xFFFFFFFF:
                out.append("inline constexpr uint64_t %s = %#xull;" % (n, raw))
            else:
                out.append("inline constexpr uint32_t %s = %#x;" % (n, raw))
        out += ["", "}  // namespace am::regs::%s" % namespace, "", "#endif  // " + guard, ""]
        outputs[out_name] = "\n".join(out)

    out = ["// Generated by %s from Linux %s amdgpu headers; do not edit." % (generator, version),
           "// sizeof/offsetof of kernel structures, measured by compiling a probe with gcc (x86-64). The project's",
           "// own definitions are checked against these by tests/am/regs/layouts_test.cc.",
           '#include "am/regs/kernel_layouts.h"', "", "namespace am::regs {", "namespace {", "",
           "constexpr KernelMember kMembers[] = {", "    // {structure, member, offset, size (0: flexible array)}"]
    for ctype, _ in LAYOUTS:
        key = ctype.replace(" ", "_")
        for member, offset, size in members.get(key, []):
            out.append('    {"%s", "%s", %d, %d},' % (ctype, member, offset, size))
    out += ["};", "", "constexpr KernelStruct kStructs[] = {", "    // {structure, header, size}"]
    for ctype, h in LAYOUTS:
        out.append('    {"%s", "%s", %d},' % (ctype, h, sizes[ctype.replace(" ", "_")]))
    out += ["};", "", "}  // namespace", "",
            "absl::Span<const KernelStruct> KernelStructs() { return kStructs; }",
            "absl::Span<const KernelMember> KernelMembers() { return kMembers; }", "",
            "}  // namespace am::regs", ""]
    outputs["kernel_layouts.cc"] = "\n".join(out)
    return outputs


def probe_with_headers(source, files, amd, header_names, fail):
    with tempfile.TemporaryDirectory() as tmp:
        for h in header_names:
            with open(os.path.join(tmp, h.replace("/", "__")), "w") as f:
                f.write(files[amd + h])
        src = os.path.join(tmp, "probe.c")
        exe = os.path.join(tmp, "probe")
        with open(src, "w") as f:
            f.write(source)
        cc = subprocess.run(["gcc", "-std=gnu11", "-w", src, "-o", exe], capture_output=True, text=True, cwd=tmp)
        if cc.returncode != 0:
            return None, cc.stderr
        run = subprocess.run([exe], capture_output=True, text=True)
        if run.returncode != 0:
            fail("layout probe failed to run: %s" % run.stderr)
        return run.stdout, None
