// The project's GSP structures (nv/gsp/layouts.h) against the layouts gcc gives the vendored 535.113.01 headers
// (recorded in nv/regs/gsp_layouts.cc by tools/nv/generate.py): the same size, and every member of the header at
// the same offset with the same size. Each checked structure is printed.
#include "nv/gsp/layouts.h"

#include <cstddef>
#include <iostream>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "gtest/gtest.h"
#include "nv/regs/gsp_layouts.h"

namespace nv::regs {
namespace {

struct MemberCheck {
  std::string name;
  size_t offset;
  size_t size;
};

struct Entry {
  Entry(std::string c_type, size_t size, std::vector<MemberCheck> members)
      : c_type(std::move(c_type)), size(size), members(std::move(members)) {}
  std::string c_type;
  size_t size;
  std::vector<MemberCheck> members;
};

void PrintTo(const Entry& entry, std::ostream* os) { *os << entry.c_type; }

// A member as the header names it; a flexible array has size 0, as the probe records it.
#define M(type, member) \
  MemberCheck { #member, offsetof(::nv::gsp::type, member), sizeof(static_cast <::nv::gsp::type*>(nullptr)->member) }
#define FLEX(type, member) \
  MemberCheck { #member, offsetof(::nv::gsp::type, member), 0 }
#define S(type) #type, sizeof(::nv::gsp::type)

const std::vector<Entry>& Entries() {
  static const auto* entries = new std::vector<Entry>{
      Entry(S(GspFwWprMeta), {M(GspFwWprMeta, magic),
                              M(GspFwWprMeta, revision),
                              M(GspFwWprMeta, sysmemAddrOfRadix3Elf),
                              M(GspFwWprMeta, sizeOfRadix3Elf),
                              M(GspFwWprMeta, sysmemAddrOfBootloader),
                              M(GspFwWprMeta, sizeOfBootloader),
                              M(GspFwWprMeta, bootloaderCodeOffset),
                              M(GspFwWprMeta, bootloaderDataOffset),
                              M(GspFwWprMeta, bootloaderManifestOffset),
                              M(GspFwWprMeta, sysmemAddrOfSignature),
                              M(GspFwWprMeta, sizeOfSignature),
                              M(GspFwWprMeta, gspFwHeapFreeListWprOffset),
                              M(GspFwWprMeta, unused0),
                              M(GspFwWprMeta, unused1),
                              M(GspFwWprMeta, gspFwRsvdStart),
                              M(GspFwWprMeta, nonWprHeapOffset),
                              M(GspFwWprMeta, nonWprHeapSize),
                              M(GspFwWprMeta, gspFwWprStart),
                              M(GspFwWprMeta, gspFwHeapOffset),
                              M(GspFwWprMeta, gspFwHeapSize),
                              M(GspFwWprMeta, gspFwOffset),
                              M(GspFwWprMeta, bootBinOffset),
                              M(GspFwWprMeta, frtsOffset),
                              M(GspFwWprMeta, frtsSize),
                              M(GspFwWprMeta, gspFwWprEnd),
                              M(GspFwWprMeta, fbSize),
                              M(GspFwWprMeta, vgaWorkspaceOffset),
                              M(GspFwWprMeta, vgaWorkspaceSize),
                              M(GspFwWprMeta, bootCount),
                              M(GspFwWprMeta, partitionRpcAddr),
                              M(GspFwWprMeta, partitionRpcRequestOffset),
                              M(GspFwWprMeta, partitionRpcReplyOffset),
                              M(GspFwWprMeta, elfCodeOffset),
                              M(GspFwWprMeta, elfDataOffset),
                              M(GspFwWprMeta, elfCodeSize),
                              M(GspFwWprMeta, elfDataSize),
                              M(GspFwWprMeta, lsUcodeVersion),
                              M(GspFwWprMeta, partitionRpcPadding),
                              M(GspFwWprMeta, sysmemAddrOfCrashReportQueue),
                              M(GspFwWprMeta, sizeOfCrashReportQueue),
                              M(GspFwWprMeta, lsUcodeVersionPadding),
                              M(GspFwWprMeta, gspFwHeapVfPartitionCount),
                              M(GspFwWprMeta, padding),
                              M(GspFwWprMeta, verified)}),
      Entry(S(LibosMemoryRegionInitArgument),
            {M(LibosMemoryRegionInitArgument, id8), M(LibosMemoryRegionInitArgument, pa),
             M(LibosMemoryRegionInitArgument, size), M(LibosMemoryRegionInitArgument, kind),
             M(LibosMemoryRegionInitArgument, loc)}),
      Entry(S(MESSAGE_QUEUE_INIT_ARGUMENTS),
            {M(MESSAGE_QUEUE_INIT_ARGUMENTS, sharedMemPhysAddr), M(MESSAGE_QUEUE_INIT_ARGUMENTS, pageTableEntryCount),
             M(MESSAGE_QUEUE_INIT_ARGUMENTS, cmdQueueOffset), M(MESSAGE_QUEUE_INIT_ARGUMENTS, statQueueOffset),
             M(MESSAGE_QUEUE_INIT_ARGUMENTS, locklessCmdQueueOffset),
             M(MESSAGE_QUEUE_INIT_ARGUMENTS, locklessStatQueueOffset)}),
      Entry(S(GSP_SR_INIT_ARGUMENTS), {M(GSP_SR_INIT_ARGUMENTS, oldLevel), M(GSP_SR_INIT_ARGUMENTS, flags),
                                       M(GSP_SR_INIT_ARGUMENTS, bInPMTransition)}),
      Entry(S(GSP_ARGUMENTS_CACHED),
            {M(GSP_ARGUMENTS_CACHED, messageQueueInitArguments), M(GSP_ARGUMENTS_CACHED, srInitArguments),
             M(GSP_ARGUMENTS_CACHED, gpuInstance), M(GSP_ARGUMENTS_CACHED, profilerArgs)}),
      Entry(S(msgqTxHeader),
            {M(msgqTxHeader, version), M(msgqTxHeader, size), M(msgqTxHeader, msgSize), M(msgqTxHeader, msgCount),
             M(msgqTxHeader, writePtr), M(msgqTxHeader, flags), M(msgqTxHeader, rxHdrOff), M(msgqTxHeader, entryOff)}),
      Entry(S(msgqRxHeader), {M(msgqRxHeader, readPtr)}),
      Entry(S(GSP_MSG_QUEUE_ELEMENT), {M(GSP_MSG_QUEUE_ELEMENT, authTagBuffer), M(GSP_MSG_QUEUE_ELEMENT, aadBuffer),
                                       M(GSP_MSG_QUEUE_ELEMENT, checkSum), M(GSP_MSG_QUEUE_ELEMENT, seqNum),
                                       M(GSP_MSG_QUEUE_ELEMENT, elemCount), M(GSP_MSG_QUEUE_ELEMENT, rpc)}),
      Entry(S(RM_RISCV_UCODE_DESC), {M(RM_RISCV_UCODE_DESC, version),
                                     M(RM_RISCV_UCODE_DESC, bootloaderOffset),
                                     M(RM_RISCV_UCODE_DESC, bootloaderSize),
                                     M(RM_RISCV_UCODE_DESC, bootloaderParamOffset),
                                     M(RM_RISCV_UCODE_DESC, bootloaderParamSize),
                                     M(RM_RISCV_UCODE_DESC, riscvElfOffset),
                                     M(RM_RISCV_UCODE_DESC, riscvElfSize),
                                     M(RM_RISCV_UCODE_DESC, appVersion),
                                     M(RM_RISCV_UCODE_DESC, manifestOffset),
                                     M(RM_RISCV_UCODE_DESC, manifestSize),
                                     M(RM_RISCV_UCODE_DESC, monitorDataOffset),
                                     M(RM_RISCV_UCODE_DESC, monitorDataSize),
                                     M(RM_RISCV_UCODE_DESC, monitorCodeOffset),
                                     M(RM_RISCV_UCODE_DESC, monitorCodeSize),
                                     M(RM_RISCV_UCODE_DESC, bIsMonitorEnabled),
                                     M(RM_RISCV_UCODE_DESC, swbromCodeOffset),
                                     M(RM_RISCV_UCODE_DESC, swbromCodeSize),
                                     M(RM_RISCV_UCODE_DESC, swbromDataOffset),
                                     M(RM_RISCV_UCODE_DESC, swbromDataSize),
                                     M(RM_RISCV_UCODE_DESC, fbReservedSize),
                                     M(RM_RISCV_UCODE_DESC, bSignedAsCode)}),
      Entry(S(rpc_gsp_set_system_info_v17_00), {M(rpc_gsp_set_system_info_v17_00, data)}),
      Entry(S(rpc_gsp_rm_alloc_v03_00), {M(rpc_gsp_rm_alloc_v03_00, hClient), M(rpc_gsp_rm_alloc_v03_00, hParent),
                                         M(rpc_gsp_rm_alloc_v03_00, hObject), M(rpc_gsp_rm_alloc_v03_00, hClass),
                                         M(rpc_gsp_rm_alloc_v03_00, status), M(rpc_gsp_rm_alloc_v03_00, paramsSize),
                                         M(rpc_gsp_rm_alloc_v03_00, flags), M(rpc_gsp_rm_alloc_v03_00, reserved),
                                         FLEX(rpc_gsp_rm_alloc_v03_00, params)}),
      Entry(S(rpc_gsp_rm_control_v03_00),
            {M(rpc_gsp_rm_control_v03_00, hClient), M(rpc_gsp_rm_control_v03_00, hObject),
             M(rpc_gsp_rm_control_v03_00, cmd), M(rpc_gsp_rm_control_v03_00, status),
             M(rpc_gsp_rm_control_v03_00, paramsSize), M(rpc_gsp_rm_control_v03_00, flags),
             FLEX(rpc_gsp_rm_control_v03_00, params)}),
      Entry(S(rpc_free_v03_00), {M(rpc_free_v03_00, params)}),
      Entry(S(NVOS00_PARAMETERS_v03_00),
            {M(NVOS00_PARAMETERS_v03_00, hRoot), M(NVOS00_PARAMETERS_v03_00, hObjectParent),
             M(NVOS00_PARAMETERS_v03_00, hObjectOld), M(NVOS00_PARAMETERS_v03_00, status)}),
      Entry(S(rpc_run_cpu_sequencer_v17_00),
            {M(rpc_run_cpu_sequencer_v17_00, bufferSizeDWord), M(rpc_run_cpu_sequencer_v17_00, cmdIndex),
             M(rpc_run_cpu_sequencer_v17_00, regSaveArea), FLEX(rpc_run_cpu_sequencer_v17_00, commandBuffer)}),
      Entry(S(rpc_post_event_v17_00),
            {M(rpc_post_event_v17_00, hClient), M(rpc_post_event_v17_00, hEvent), M(rpc_post_event_v17_00, notifyIndex),
             M(rpc_post_event_v17_00, data), M(rpc_post_event_v17_00, info16), M(rpc_post_event_v17_00, status),
             M(rpc_post_event_v17_00, eventDataSize), M(rpc_post_event_v17_00, bNotifyList),
             FLEX(rpc_post_event_v17_00, eventData)}),
      Entry(S(rpc_rc_triggered_v17_02), {M(rpc_rc_triggered_v17_02, nv2080EngineType), M(rpc_rc_triggered_v17_02, chid),
                                         M(rpc_rc_triggered_v17_02, exceptType), M(rpc_rc_triggered_v17_02, scope),
                                         M(rpc_rc_triggered_v17_02, partitionAttributionId)}),
      Entry(S(rpc_os_error_log_v17_00), {M(rpc_os_error_log_v17_00, exceptType), M(rpc_os_error_log_v17_00, runlistId),
                                         M(rpc_os_error_log_v17_00, chid), M(rpc_os_error_log_v17_00, errString)}),
      Entry(S(GSP_SEQUENCER_BUFFER_CMD), {M(GSP_SEQUENCER_BUFFER_CMD, opCode), M(GSP_SEQUENCER_BUFFER_CMD, payload)}),
      Entry(S(GSP_VF_INFO),
            {M(GSP_VF_INFO, totalVFs), M(GSP_VF_INFO, firstVFOffset), M(GSP_VF_INFO, FirstVFBar0Address),
             M(GSP_VF_INFO, FirstVFBar1Address), M(GSP_VF_INFO, FirstVFBar2Address), M(GSP_VF_INFO, b64bitBar0),
             M(GSP_VF_INFO, b64bitBar1), M(GSP_VF_INFO, b64bitBar2)}),
      Entry(S(GspSystemInfo), {M(GspSystemInfo, gpuPhysAddr),
                               M(GspSystemInfo, gpuPhysFbAddr),
                               M(GspSystemInfo, gpuPhysInstAddr),
                               M(GspSystemInfo, nvDomainBusDeviceFunc),
                               M(GspSystemInfo, simAccessBufPhysAddr),
                               M(GspSystemInfo, pcieAtomicsOpMask),
                               M(GspSystemInfo, consoleMemSize),
                               M(GspSystemInfo, maxUserVa),
                               M(GspSystemInfo, pciConfigMirrorBase),
                               M(GspSystemInfo, pciConfigMirrorSize),
                               M(GspSystemInfo, oorArch),
                               M(GspSystemInfo, clPdbProperties),
                               M(GspSystemInfo, Chipset),
                               M(GspSystemInfo, bGpuBehindBridge),
                               M(GspSystemInfo, bMnocAvailable),
                               M(GspSystemInfo, bUpstreamL0sUnsupported),
                               M(GspSystemInfo, bUpstreamL1Unsupported),
                               M(GspSystemInfo, bUpstreamL1PorSupported),
                               M(GspSystemInfo, bUpstreamL1PorMobileOnly),
                               M(GspSystemInfo, upstreamAddressValid),
                               M(GspSystemInfo, FHBBusInfo),
                               M(GspSystemInfo, chipsetIDInfo),
                               M(GspSystemInfo, acpiMethodData),
                               M(GspSystemInfo, hypervisorType),
                               M(GspSystemInfo, bIsPassthru),
                               M(GspSystemInfo, sysTimerOffsetNs),
                               M(GspSystemInfo, gspVFInfo)}),
      Entry(S(rpc_get_gsp_static_info_v14_00), {M(rpc_get_gsp_static_info_v14_00, data)}),
      Entry(S(GspStaticConfigInfo), {M(GspStaticConfigInfo, grCapsBits),
                                     M(GspStaticConfigInfo, gidInfo),
                                     M(GspStaticConfigInfo, gpcInfo),
                                     M(GspStaticConfigInfo, tpcInfo),
                                     M(GspStaticConfigInfo, zcullInfo),
                                     M(GspStaticConfigInfo, SKUInfo),
                                     M(GspStaticConfigInfo, fbRegionInfoParams),
                                     M(GspStaticConfigInfo, computeBranding),
                                     M(GspStaticConfigInfo, sriovCaps),
                                     M(GspStaticConfigInfo, sriovMaxGfid),
                                     M(GspStaticConfigInfo, engineCaps),
                                     M(GspStaticConfigInfo, SM_info),
                                     M(GspStaticConfigInfo, poisonFuseEnabled),
                                     M(GspStaticConfigInfo, fb_length),
                                     M(GspStaticConfigInfo, fbio_mask),
                                     M(GspStaticConfigInfo, fb_bus_width),
                                     M(GspStaticConfigInfo, fb_ram_type),
                                     M(GspStaticConfigInfo, fbp_mask),
                                     M(GspStaticConfigInfo, l2_cache_size),
                                     M(GspStaticConfigInfo, gfxpBufferSize),
                                     M(GspStaticConfigInfo, gfxpBufferAlignment),
                                     M(GspStaticConfigInfo, gpuNameString),
                                     M(GspStaticConfigInfo, gpuShortNameString),
                                     M(GspStaticConfigInfo, gpuNameString_Unicode),
                                     M(GspStaticConfigInfo, bGpuInternalSku),
                                     M(GspStaticConfigInfo, bIsQuadroGeneric),
                                     M(GspStaticConfigInfo, bIsQuadroAd),
                                     M(GspStaticConfigInfo, bIsNvidiaNvs),
                                     M(GspStaticConfigInfo, bIsVgx),
                                     M(GspStaticConfigInfo, bGeforceSmb),
                                     M(GspStaticConfigInfo, bIsTitan),
                                     M(GspStaticConfigInfo, bIsTesla),
                                     M(GspStaticConfigInfo, bIsMobile),
                                     M(GspStaticConfigInfo, bIsGc6Rtd3Allowed),
                                     M(GspStaticConfigInfo, bIsGcOffRtd3Allowed),
                                     M(GspStaticConfigInfo, bIsGcoffLegacyAllowed),
                                     M(GspStaticConfigInfo, bar1PdeBase),
                                     M(GspStaticConfigInfo, bar2PdeBase),
                                     M(GspStaticConfigInfo, bVbiosValid),
                                     M(GspStaticConfigInfo, vbiosSubVendor),
                                     M(GspStaticConfigInfo, vbiosSubDevice),
                                     M(GspStaticConfigInfo, bPageRetirementSupported),
                                     M(GspStaticConfigInfo, bSplitVasBetweenServerClientRm),
                                     M(GspStaticConfigInfo, bClRootportNeedsNosnoopWAR),
                                     M(GspStaticConfigInfo, displaylessMaxHeads),
                                     M(GspStaticConfigInfo, displaylessMaxResolution),
                                     M(GspStaticConfigInfo, displaylessMaxPixels),
                                     M(GspStaticConfigInfo, hInternalClient),
                                     M(GspStaticConfigInfo, hInternalDevice),
                                     M(GspStaticConfigInfo, hInternalSubdevice),
                                     M(GspStaticConfigInfo, bSelfHostedMode),
                                     M(GspStaticConfigInfo, bAtsSupported),
                                     M(GspStaticConfigInfo, bIsGpuUefi)}),
      Entry(S(GspSMInfo),
            {M(GspSMInfo, version), M(GspSMInfo, regBankCount), M(GspSMInfo, regBankRegCount),
             M(GspSMInfo, maxWarpsPerSM), M(GspSMInfo, maxThreadsPerWarp), M(GspSMInfo, geomGsObufEntries),
             M(GspSMInfo, geomXbufEntries), M(GspSMInfo, maxSPPerSM), M(GspSMInfo, rtCoreCount)}),
      Entry(S(NV2080_CTRL_GPU_GET_GID_INFO_PARAMS),
            {M(NV2080_CTRL_GPU_GET_GID_INFO_PARAMS, index), M(NV2080_CTRL_GPU_GET_GID_INFO_PARAMS, flags),
             M(NV2080_CTRL_GPU_GET_GID_INFO_PARAMS, length), M(NV2080_CTRL_GPU_GET_GID_INFO_PARAMS, data)}),
      Entry(S(NV2080_CTRL_GPU_GET_FERMI_GPC_INFO_PARAMS), {M(NV2080_CTRL_GPU_GET_FERMI_GPC_INFO_PARAMS, gpcMask)}),
      Entry(S(NV2080_CTRL_GPU_GET_FERMI_TPC_INFO_PARAMS), {M(NV2080_CTRL_GPU_GET_FERMI_TPC_INFO_PARAMS, gpcId),
                                                           M(NV2080_CTRL_GPU_GET_FERMI_TPC_INFO_PARAMS, tpcMask)}),
      Entry(S(NV2080_CTRL_GPU_GET_FERMI_ZCULL_INFO_PARAMS),
            {M(NV2080_CTRL_GPU_GET_FERMI_ZCULL_INFO_PARAMS, gpcId),
             M(NV2080_CTRL_GPU_GET_FERMI_ZCULL_INFO_PARAMS, zcullMask)}),
      Entry(S(NV2080_CTRL_BIOS_GET_SKU_INFO_PARAMS),
            {M(NV2080_CTRL_BIOS_GET_SKU_INFO_PARAMS, BoardID), M(NV2080_CTRL_BIOS_GET_SKU_INFO_PARAMS, chipSKU),
             M(NV2080_CTRL_BIOS_GET_SKU_INFO_PARAMS, chipSKUMod), M(NV2080_CTRL_BIOS_GET_SKU_INFO_PARAMS, project),
             M(NV2080_CTRL_BIOS_GET_SKU_INFO_PARAMS, projectSKU), M(NV2080_CTRL_BIOS_GET_SKU_INFO_PARAMS, CDP),
             M(NV2080_CTRL_BIOS_GET_SKU_INFO_PARAMS, projectSKUMod),
             M(NV2080_CTRL_BIOS_GET_SKU_INFO_PARAMS, businessCycle)}),
      Entry(S(NV2080_CTRL_CMD_FB_GET_FB_REGION_INFO_PARAMS),
            {M(NV2080_CTRL_CMD_FB_GET_FB_REGION_INFO_PARAMS, numFBRegions),
             M(NV2080_CTRL_CMD_FB_GET_FB_REGION_INFO_PARAMS, fbRegion)}),
      Entry(S(NV2080_CTRL_CMD_FB_GET_FB_REGION_FB_REGION_INFO),
            {M(NV2080_CTRL_CMD_FB_GET_FB_REGION_FB_REGION_INFO, base),
             M(NV2080_CTRL_CMD_FB_GET_FB_REGION_FB_REGION_INFO, limit),
             M(NV2080_CTRL_CMD_FB_GET_FB_REGION_FB_REGION_INFO, reserved),
             M(NV2080_CTRL_CMD_FB_GET_FB_REGION_FB_REGION_INFO, performance),
             M(NV2080_CTRL_CMD_FB_GET_FB_REGION_FB_REGION_INFO, supportCompressed),
             M(NV2080_CTRL_CMD_FB_GET_FB_REGION_FB_REGION_INFO, supportISO),
             M(NV2080_CTRL_CMD_FB_GET_FB_REGION_FB_REGION_INFO, bProtected),
             M(NV2080_CTRL_CMD_FB_GET_FB_REGION_FB_REGION_INFO, blackList)}),
      Entry(
          S(NV0080_CTRL_GPU_GET_SRIOV_CAPS_PARAMS),
          {M(NV0080_CTRL_GPU_GET_SRIOV_CAPS_PARAMS, totalVFs), M(NV0080_CTRL_GPU_GET_SRIOV_CAPS_PARAMS, firstVfOffset),
           M(NV0080_CTRL_GPU_GET_SRIOV_CAPS_PARAMS, vfFeatureMask),
           M(NV0080_CTRL_GPU_GET_SRIOV_CAPS_PARAMS, FirstVFBar0Address),
           M(NV0080_CTRL_GPU_GET_SRIOV_CAPS_PARAMS, FirstVFBar1Address),
           M(NV0080_CTRL_GPU_GET_SRIOV_CAPS_PARAMS, FirstVFBar2Address),
           M(NV0080_CTRL_GPU_GET_SRIOV_CAPS_PARAMS, bar0Size), M(NV0080_CTRL_GPU_GET_SRIOV_CAPS_PARAMS, bar1Size),
           M(NV0080_CTRL_GPU_GET_SRIOV_CAPS_PARAMS, bar2Size), M(NV0080_CTRL_GPU_GET_SRIOV_CAPS_PARAMS, b64bitBar0),
           M(NV0080_CTRL_GPU_GET_SRIOV_CAPS_PARAMS, b64bitBar1), M(NV0080_CTRL_GPU_GET_SRIOV_CAPS_PARAMS, b64bitBar2),
           M(NV0080_CTRL_GPU_GET_SRIOV_CAPS_PARAMS, bSriovEnabled),
           M(NV0080_CTRL_GPU_GET_SRIOV_CAPS_PARAMS, bSriovHeavyEnabled),
           M(NV0080_CTRL_GPU_GET_SRIOV_CAPS_PARAMS, bEmulateVFBar0TlbInvalidationRegister),
           M(NV0080_CTRL_GPU_GET_SRIOV_CAPS_PARAMS, bClientRmAllocatedCtxBuffer)}),
      Entry(S(VIRTUAL_DISPLAY_GET_NUM_HEADS_PARAMS),
            {M(VIRTUAL_DISPLAY_GET_NUM_HEADS_PARAMS, numHeads), M(VIRTUAL_DISPLAY_GET_NUM_HEADS_PARAMS, maxNumHeads)}),
      Entry(S(VIRTUAL_DISPLAY_GET_MAX_RESOLUTION_PARAMS),
            {M(VIRTUAL_DISPLAY_GET_MAX_RESOLUTION_PARAMS, headIndex),
             M(VIRTUAL_DISPLAY_GET_MAX_RESOLUTION_PARAMS, maxHResolution),
             M(VIRTUAL_DISPLAY_GET_MAX_RESOLUTION_PARAMS, maxVResolution)}),
      Entry(S(rpc_message_header_v),
            {M(rpc_message_header_v, header_version), M(rpc_message_header_v, signature),
             M(rpc_message_header_v, length), M(rpc_message_header_v, function), M(rpc_message_header_v, rpc_result),
             M(rpc_message_header_v, rpc_result_private), M(rpc_message_header_v, sequence),
             M(rpc_message_header_v, spare), M(rpc_message_header_v, cpuRmGfid), FLEX(rpc_message_header_v, data)}),
      Entry(S(PACKED_REGISTRY_ENTRY), {M(PACKED_REGISTRY_ENTRY, nameOffset), M(PACKED_REGISTRY_ENTRY, type),
                                       M(PACKED_REGISTRY_ENTRY, data), M(PACKED_REGISTRY_ENTRY, length)}),
      Entry(S(PACKED_REGISTRY_TABLE), {M(PACKED_REGISTRY_TABLE, size), M(PACKED_REGISTRY_TABLE, numEntries),
                                       FLEX(PACKED_REGISTRY_TABLE, entries)}),
  };
  return *entries;
}

const MeasuredStruct* FindStruct(const std::string& type) {
  for (const MeasuredStruct& s : MeasuredStructs()) {
    if (type == s.type) return &s;
  }
  return nullptr;
}

class NvLayoutsTest : public ::testing::TestWithParam<Entry> {};

TEST_P(NvLayoutsTest, MatchesTheHeader) {
  const Entry& entry = GetParam();
  const MeasuredStruct* measured = FindStruct(entry.c_type);
  ASSERT_NE(measured, nullptr) << entry.c_type << " is not recorded in nv/regs/gsp_layouts.cc";
  EXPECT_EQ(entry.size, measured->size) << "sizeof " << entry.c_type;
  std::set<std::string> header_members;
  int checked = 0;
  for (const MeasuredMember& m : MeasuredMembers()) {
    if (entry.c_type != m.type) continue;
    header_members.insert(m.member);
    const MemberCheck* mine = nullptr;
    for (const MemberCheck& c : entry.members) {
      if (c.name == m.member) mine = &c;
    }
    if (mine == nullptr) {
      ADD_FAILURE() << entry.c_type << "." << m.member << " has no counterpart";
      continue;
    }
    EXPECT_EQ(mine->offset, m.offset) << "offset of " << entry.c_type << "." << m.member;
    EXPECT_EQ(mine->size, m.size) << "size of " << entry.c_type << "." << m.member;
    ++checked;
  }
  for (const MemberCheck& c : entry.members) {
    EXPECT_TRUE(header_members.count(c.name)) << c.name << " is not a member of " << entry.c_type;
  }
  std::cout << "checked " << entry.c_type << " (" << measured->header << "): size " << measured->size << ", " << checked
            << " members\n";
}

std::string EntryName(const ::testing::TestParamInfo<Entry>& info) { return info.param.c_type; }

INSTANTIATE_TEST_SUITE_P(Gsp535, NvLayoutsTest, ::testing::ValuesIn(Entries()), EntryName);

TEST(NvLayoutsCoverageTest, EveryMeasuredStructureIsChecked) {
  std::set<std::string> mine;
  for (const Entry& e : Entries()) mine.insert(e.c_type);
  for (const MeasuredStruct& s : MeasuredStructs()) EXPECT_TRUE(mine.count(s.type)) << s.type << " is not checked";
  EXPECT_EQ(mine.size(), MeasuredStructs().size());
}

// gsp_fw_wpr_meta.h: GSP_FW_WPR_META_MAGIC 0xdc3aae21371a60b3ULL sits in the first quadword; nouveau writes the
// same value (r535.c). A fact read from the header text, independent of the probe.
TEST(NvLayoutsFactsTest, WprMetaStartsWithItsMagic) {
  EXPECT_EQ(offsetof(::nv::gsp::GspFwWprMeta, magic), 0u);
  EXPECT_EQ(sizeof(::nv::gsp::GspFwWprMeta), 256u);
  EXPECT_EQ(offsetof(::nv::gsp::GSP_MSG_QUEUE_ELEMENT, rpc), 48u);
}

// Offsets of GspStaticConfigInfo worked out by hand from gsp_static_config.h and the SDK headers, independent of
// the probe: grCapsBits is NvU8[NV0080_CTRL_GR_CAPS_TBL_SIZE = 23] (ctrl0080gr.h), so gidInfo (NvU32s first)
// starts at 24 and is 3 * 4 + NV2080_GPU_MAX_GID_LENGTH 0x100 = 268 bytes (ctrl2080gpu.h): gpcInfo at 292. Then
// tpcInfo and zcullInfo, MAX_GPC_COUNT 32 (rpc_headers.h) * 8 bytes each: 296 and 552; SKUInfo (ctrl2080bios.h:
// 4 + 4+2+5+5+6+2 chars + 4 = 32 bytes) at 808; fbRegionInfoParams (8-byte aligned) at 840.
TEST(NvLayoutsFactsTest, StaticConfigInfoOffsetsByHand) {
  EXPECT_EQ(offsetof(::nv::gsp::GspStaticConfigInfo, gidInfo), 24u);
  EXPECT_EQ(offsetof(::nv::gsp::GspStaticConfigInfo, gpcInfo), 292u);
  EXPECT_EQ(offsetof(::nv::gsp::GspStaticConfigInfo, tpcInfo), 296u);
  EXPECT_EQ(offsetof(::nv::gsp::GspStaticConfigInfo, SKUInfo), 808u);
  EXPECT_EQ(offsetof(::nv::gsp::GspStaticConfigInfo, fbRegionInfoParams), 840u);
  // A region: three NvU64 (24), performance (4), three NvBool, blackList NvBool[17] = 48 after padding to 8.
  EXPECT_EQ(sizeof(::nv::gsp::NV2080_CTRL_CMD_FB_GET_FB_REGION_FB_REGION_INFO), 48u);
}

}  // namespace
}  // namespace nv::regs
