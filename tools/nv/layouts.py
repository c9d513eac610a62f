"""The GSP boot structures' layouts, for tools/nv/generate.py: sizeof and offsetof of every member, measured by
compiling a probe against the vendored 535.113.01 headers with gcc on this (x86-64) machine, as GSP-RM's own
build lays them out. tests/nv/regs/layouts_test.cc checks the project's definitions (nv/gsp/layouts.h) against
them, member by member.

Not every header compiles alone in the vendored subset; the probe works around it with stub headers that hold
types only, never a layout:
  core/core.h              (gsp_init_args.h includes it for RmPhysAddr): typedef NvU64 RmPhysAddr, as RM's
                           nvtypes-level definition; the subset has no core/
  nvctassert.h             (sdk-structures.h): ct_assert as _Static_assert
GSP_MSG_QUEUE_ELEMENT's definition is copied out of message_queue_priv.h (the rest of that header needs RM's
memory descriptors).
Two structures the subset lacks come from Linux 6.12's nouveau, which carries them for the same 535.113.01:
  rpc_message_header_v     nouveau's struct nvfw_gsp_rpc (nvkm/subdev/gsp/r535.c); the vendored
                           message_queue_priv.h uses it without a definition (RM generates it)
  PACKED_REGISTRY_TABLE/ENTRY  nouveau's include/nvrm/535.113.01/nvidia/generated/g_os_nvoc.h
GspSystemInfo and GSP_VF_INFO are copied out of gsp_static_config.h, which does not compile here (it needs
gpu/gpu.h, gpu_acpi_data.h, chipset.h); the BUSINFO and ACPI_METHOD_DATA types they use come from nouveau's copies
(g_chipset_nvoc.h, gpu_acpi_data.h, their #includes dropped, the vendored ctrl0073system.h in their place).
GspStaticConfigInfo (NV_VGPU_MSG_FUNCTION_GET_GSP_STATIC_INFO's payload) and GspSMInfo are copied out of
gsp_static_config.h the same way. Their member types come from the vendored SDK control headers, included as they
are (ctrl0080gpu.h: NV0080_CTRL_GPU_GET_SRIOV_CAPS_PARAMS; ctrl0080gr.h: NV0080_CTRL_GR_CAPS_TBL_SIZE;
ctrl2080gpu.h: the GID, GPC, TPC and ZCULL info parameters, NV2080_GPU_MAX_NAME_STRING_LENGTH; ctrl2080bios.h:
the SKU info; ctrl2080fb.h: the FB region info; ctrl2080gr.h: the preemption buffer enumeration) and the vendored
rpc_headers.h (MAX_GPC_COUNT, VIRTUAL_DISPLAY_*_PARAMS). Three the subset lacks come from nouveau's 535.113.01
copies, their #includes dropped: COMPUTE_BRANDING_TYPE (g_gpu_nvoc.h, in place of RM's gpu/gpu.h),
RM_ENGINE_TYPE (gpu_engine_type.h) and NVGPU_ENGINE_CAPS_MASK_ARRAY_MAX (nvbitmask.h). The member structures
are measured too, and rpc_get_gsp_static_info_v14_00 (g_rpc-structures.h: the RPC's placeholder parameters).
"""

import os
import re
import subprocess
import sys
import tempfile

OGKM = "open-gpu-kernel-modules-535.113.01/src/"
NOUVEAU = "drivers/gpu/drm/nouveau/"
INCLUDE_DIRS = ["common/sdk/nvidia/inc", "nvidia/arch/nvalloc/common/inc", "common/shared/msgq/inc",
                "common/uproc/os/common/include", "nvidia/kernel/inc", "nvidia/generated", "nvidia/inc/kernel",
                "nvidia/inc", "common/inc"]

# (C type, header under the 535 src/ the definition is read from)
LAYOUTS = [
    ("GspFwWprMeta", "nvidia/arch/nvalloc/common/inc/gsp/gsp_fw_wpr_meta.h"),
    ("LibosMemoryRegionInitArgument", "common/uproc/os/common/include/libos_init_args.h"),
    ("MESSAGE_QUEUE_INIT_ARGUMENTS", "nvidia/inc/kernel/gpu/gsp/gsp_init_args.h"),
    ("GSP_SR_INIT_ARGUMENTS", "nvidia/inc/kernel/gpu/gsp/gsp_init_args.h"),
    ("GSP_ARGUMENTS_CACHED", "nvidia/inc/kernel/gpu/gsp/gsp_init_args.h"),
    ("msgqTxHeader", "common/shared/msgq/inc/msgq/msgq_priv.h"),
    ("msgqRxHeader", "common/shared/msgq/inc/msgq/msgq_priv.h"),
    ("GSP_MSG_QUEUE_ELEMENT", "nvidia/inc/kernel/gpu/gsp/message_queue_priv.h"),
    ("RM_RISCV_UCODE_DESC", "nvidia/arch/nvalloc/common/inc/rmRiscvUcode.h"),
    ("rpc_gsp_set_system_info_v17_00", "nvidia/generated/g_rpc-structures.h"),
    ("rpc_gsp_rm_alloc_v03_00", "nvidia/generated/g_rpc-structures.h"),
    ("rpc_gsp_rm_control_v03_00", "nvidia/generated/g_rpc-structures.h"),
    ("rpc_free_v03_00", "nvidia/generated/g_rpc-structures.h"),
    ("NVOS00_PARAMETERS_v03_00", "nvidia/generated/g_sdk-structures.h"),
    ("rpc_run_cpu_sequencer_v17_00", "nvidia/generated/g_rpc-structures.h"),
    ("rpc_post_event_v17_00", "nvidia/generated/g_rpc-structures.h"),
    ("rpc_rc_triggered_v17_02", "nvidia/generated/g_rpc-structures.h"),
    ("rpc_os_error_log_v17_00", "nvidia/generated/g_rpc-structures.h"),
    ("GSP_SEQUENCER_BUFFER_CMD", "nvidia/arch/nvalloc/common/inc/rmgspseq.h"),
    ("GspSystemInfo", "nvidia/inc/kernel/gpu/gsp/gsp_static_config.h"),
    ("GSP_VF_INFO", "nvidia/inc/kernel/gpu/gsp/gsp_static_config.h"),
    # NV_VGPU_MSG_FUNCTION_GET_GSP_STATIC_INFO: its (placeholder) parameters, the payload and the payload's parts.
    ("rpc_get_gsp_static_info_v14_00", "nvidia/generated/g_rpc-structures.h"),
    ("GspStaticConfigInfo", "nvidia/inc/kernel/gpu/gsp/gsp_static_config.h"),
    ("GspSMInfo", "nvidia/inc/kernel/gpu/gsp/gsp_static_config.h"),
    ("NV2080_CTRL_GPU_GET_GID_INFO_PARAMS", "common/sdk/nvidia/inc/ctrl/ctrl2080/ctrl2080gpu.h"),
    ("NV2080_CTRL_GPU_GET_FERMI_GPC_INFO_PARAMS", "common/sdk/nvidia/inc/ctrl/ctrl2080/ctrl2080gpu.h"),
    ("NV2080_CTRL_GPU_GET_FERMI_TPC_INFO_PARAMS", "common/sdk/nvidia/inc/ctrl/ctrl2080/ctrl2080gpu.h"),
    ("NV2080_CTRL_GPU_GET_FERMI_ZCULL_INFO_PARAMS", "common/sdk/nvidia/inc/ctrl/ctrl2080/ctrl2080gpu.h"),
    ("NV2080_CTRL_BIOS_GET_SKU_INFO_PARAMS", "common/sdk/nvidia/inc/ctrl/ctrl2080/ctrl2080bios.h"),
    ("NV2080_CTRL_CMD_FB_GET_FB_REGION_INFO_PARAMS", "common/sdk/nvidia/inc/ctrl/ctrl2080/ctrl2080fb.h"),
    ("NV2080_CTRL_CMD_FB_GET_FB_REGION_FB_REGION_INFO", "common/sdk/nvidia/inc/ctrl/ctrl2080/ctrl2080fb.h"),
    ("NV0080_CTRL_GPU_GET_SRIOV_CAPS_PARAMS", "common/sdk/nvidia/inc/ctrl/ctrl0080/ctrl0080gpu.h"),
    ("VIRTUAL_DISPLAY_GET_NUM_HEADS_PARAMS", "nvidia/kernel/inc/vgpu/rpc_headers.h"),
    ("VIRTUAL_DISPLAY_GET_MAX_RESOLUTION_PARAMS", "nvidia/kernel/inc/vgpu/rpc_headers.h"),
]
# The SDK control headers GspStaticConfigInfo's members come from (all vendored; they compile as they are).
STATIC_INFO_INCLUDES = ["ctrl/ctrl0080/ctrl0080gpu.h", "ctrl/ctrl0080/ctrl0080gr.h", "ctrl/ctrl2080/ctrl2080bios.h",
                        "ctrl/ctrl2080/ctrl2080fb.h", "ctrl/ctrl2080/ctrl2080gpu.h", "ctrl/ctrl2080/ctrl2080gr.h"]
STATIC_CONFIG = "nvidia/inc/kernel/gpu/gsp/gsp_static_config.h"
# From nouveau (see the module comment): (C type, path under drivers/gpu/drm/nouveau).
# Types GspSystemInfo needs that the vendored subset lacks, from nouveau's copies of 535.113.01 headers (their
# #include lines dropped; the vendored ctrl0073system.h gives what gpu_acpi_data.h needs).
# GspStaticConfigInfo's COMPUTE_BRANDING_TYPE (g_gpu_nvoc.h: gpu/gpu.h's generated part) and
# NVGPU_ENGINE_CAPS_MASK_ARRAY_MAX (nvbitmask.h, from RM_ENGINE_TYPE_LAST of gpu_engine_type.h) likewise.
NOUVEAU_TYPES = ["include/nvrm/535.113.01/nvidia/generated/g_chipset_nvoc.h",
                 "include/nvrm/535.113.01/nvidia/inc/kernel/gpu/gpu_acpi_data.h",
                 "include/nvrm/535.113.01/nvidia/generated/g_gpu_nvoc.h",
                 "include/nvrm/535.113.01/nvidia/inc/kernel/gpu/gpu_engine_type.h",
                 "include/nvrm/535.113.01/nvidia/inc/kernel/gpu/nvbitmask.h"]
NOUVEAU_LAYOUTS = [
    ("rpc_message_header_v", "nvkm/subdev/gsp/r535.c", "nvfw_gsp_rpc"),
    ("PACKED_REGISTRY_ENTRY", "include/nvrm/535.113.01/nvidia/generated/g_os_nvoc.h", None),
    ("PACKED_REGISTRY_TABLE", "include/nvrm/535.113.01/nvidia/generated/g_os_nvoc.h", None),
]

STUBS = {
    "core/core.h": '#include "nvtypes.h"\ntypedef NvU64 RmPhysAddr;\n',
    "nvctassert.h": "#define ct_assert(x) _Static_assert(x, #x)\n",
}


def struct_text(text, name):
    """The definition of `name` (typedef'd anonymous or named struct) with NV_DECLARE_ALIGNED unwrapped; a
    `typedef struct NAME_t {...} NAME;` (gsp_static_config.h's style) is found under NAME."""
    text = re.sub(r"\bstruct %s_t\b" % re.escape(name), "struct " + name, text)
    text = re.sub(r"NV_DECLARE_ALIGNED\(\s*([^,]+?)\s*,\s*\d+\s*\)", r"\1", text)
    return re.sub(r"__counted_by\(\w+\)", "", text)


def queue_element(text):
    """GSP_MSG_QUEUE_ELEMENT's definition alone: the rest of message_queue_priv.h needs RM's memory descriptors."""
    return re.search(r"typedef struct GSP_MSG_QUEUE_ELEMENT\s*\{.*?\}\s*GSP_MSG_QUEUE_ELEMENT;", text, re.S).group(0)


def typedef(text, name, tag=None):
    """The `typedef struct TAG {...} NAME;` definition alone (TAG defaults to NAME), from a header that does not
    compile on its own."""
    return re.search(r"typedef struct %s\s*\{.*?\}\s*%s;" % (tag or name, name), text, re.S).group(0)


def strip_guard(text):
    """g_os_nvoc.h's structures without its include lines (nouveau's paths), for pasting into the probe."""
    return re.sub(r"^\s*#\s*include[^\n]*$", "", text, flags=re.M)


def nouveau_definition(text, c_name, typedef):
    """A struct of nouveau's source as C the probe can compile: `struct c_name {...};` renamed to `typedef`."""
    m = re.search(r"struct %s \{.*?\n\};" % c_name, text, re.S)
    body = m.group(0).replace("struct %s {" % c_name, "typedef struct {")
    body = re.sub(r"\bu8\b", "NvU8", re.sub(r"\bu32\b", "NvU32", body))
    return body[:-2] + "} %s;" % typedef


def nouveau_paths():
    """The nouveau files the probe needs, as paths inside Debian's linux-source-6.12 tarball."""
    return [NOUVEAU + p for _, p, _ in NOUVEAU_LAYOUTS] + [NOUVEAU + p for p in NOUVEAU_TYPES]


def generate(vendor, nouveau, generator, fail):
    """`nouveau`: {path in the tarball: text} for nouveau_paths()."""
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "regs"))
    import structs  # tools/regs/structs.py: the member parser the AMD layouts use

    root = os.path.join(vendor, OGKM)
    r535 = nouveau[NOUVEAU + "nvkm/subdev/gsp/r535.c"]
    static_config = open(os.path.join(root, STATIC_CONFIG)).read()
    lines = ["#include <stdio.h>", "#include <stddef.h>", '#include "nvtypes.h"', "#define RPC_STRUCTURES",
             '#include "vgpu/rpc_headers.h"', '#include "g_rpc-structures.h"', '#include "gsp/gsp_fw_wpr_meta.h"',
             '#include "libos_init_args.h"', '#include "gpu/gsp/gsp_init_args.h"', '#include "msgq/msgq_priv.h"',
             '#include "rmRiscvUcode.h"', '#include "rmgspseq.h"',
             nouveau_definition(r535, "nvfw_gsp_rpc", "rpc_message_header_v"),
             queue_element(open(os.path.join(root, "nvidia/inc/kernel/gpu/gsp/message_queue_priv.h")).read()),
             '#include "ctrl/ctrl0073/ctrl0073system.h"'] + [strip_guard(nouveau[NOUVEAU + p]) for p in NOUVEAU_TYPES] + [
             typedef(static_config, "GSP_VF_INFO"), typedef(static_config, "GspSystemInfo")] + [
             '#include "%s"' % h for h in STATIC_INFO_INCLUDES] + [
             typedef(static_config, "GspSMInfo", "GspSMInfo_t"),
             typedef(static_config, "GspStaticConfigInfo", "GspStaticConfigInfo_t"),
             "#define __counted_by(x)",
             strip_guard(nouveau[NOUVEAU + "include/nvrm/535.113.01/nvidia/generated/g_os_nvoc.h"]),
             "int main(void) {"]
    measured = []
    texts = {}
    for ctype, header in LAYOUTS:
        texts.setdefault(header, open(os.path.join(root, header), errors="replace").read())
        measured.append((ctype, OGKM + header, struct_text(texts[header], ctype)))
    for ctype, path, c_name in NOUVEAU_LAYOUTS:
        text = nouveau[NOUVEAU + path]
        if c_name:
            text = nouveau_definition(text, c_name, ctype)
        measured.append((ctype, "linux-6.12 nouveau " + path, struct_text(text, ctype)))
    for ctype, _, text in measured:
        lines += structs.layout_probe_lines(ctype, text)
    lines += ["  return 0;", "}", ""]

    with tempfile.TemporaryDirectory() as tmp:
        for path, content in STUBS.items():
            os.makedirs(os.path.dirname(os.path.join(tmp, "stub", path)), exist_ok=True)
            with open(os.path.join(tmp, "stub", path), "w") as f:
                f.write(content)
        src, exe = os.path.join(tmp, "probe.c"), os.path.join(tmp, "probe")
        with open(src, "w") as f:
            f.write("\n".join(lines))
        includes = ["-I" + os.path.join(tmp, "stub")] + ["-I" + os.path.join(root, d) for d in INCLUDE_DIRS]
        cc = subprocess.run(["gcc", "-std=gnu11", "-w"] + includes + [src, "-o", exe], capture_output=True, text=True)
        if cc.returncode != 0:
            fail("the layout probe does not compile:\n%s" % cc.stderr[:4000])
        output = subprocess.run([exe], capture_output=True, text=True, check=True).stdout

    sizes, members = {}, {}
    for line in output.splitlines():
        parts = line.split()
        if parts[0] == "S":
            sizes[parts[1]] = int(parts[2])
        else:
            members.setdefault(parts[1], []).append((parts[2], int(parts[3]), int(parts[4])))
    out = ["// Generated by %s from %s (%s) and Linux 6.12 nouveau (%s); do not edit." %
           (generator, OGKM, ", ".join(sorted({h for _, h in LAYOUTS})),
            ", ".join(sorted({p for _, p, _ in NOUVEAU_LAYOUTS} | set(NOUVEAU_TYPES)))),
           "// sizeof/offsetof of the GSP boot structures, measured by compiling a probe with gcc (x86-64). The",
           "// project's own definitions are checked against these by tests/nv/regs/layouts_test.cc.",
           '#include "nv/regs/gsp_layouts.h"', "", "namespace nv::regs {", "namespace {", "",
           "constexpr MeasuredMember kMembers[] = {", "    // {structure, member, offset, size (0: flexible array)}"]
    for ctype, _, _ in measured:
        for member, offset, size in members.get(ctype, []):
            out.append('    {"%s", "%s", %d, %d},' % (ctype, member, offset, size))
    out += ["};", "", "constexpr MeasuredStruct kStructs[] = {", "    // {structure, header, size}"]
    for ctype, header, _ in measured:
        out.append('    {"%s", "%s", %d},' % (ctype, header, sizes[ctype]))
    out += ["};", "", "}  // namespace", "",
            "absl::Span<const MeasuredStruct> MeasuredStructs() { return kStructs; }",
            "absl::Span<const MeasuredMember> MeasuredMembers() { return kMembers; }", "",
            "}  // namespace nv::regs", ""]
    return "\n".join(out)
