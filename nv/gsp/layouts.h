// The GSP-RM 535.113.01 structures the boot exchanges with the GSP, as the project defines them: named as in
// NVIDIA's headers (the member names too, so that each can be found in the source it mirrors), little-endian
// x86-64 layout. Each structure's comment names its header; tests/nv/regs/layouts_test.cc checks every member
// against the layout gcc gives the vendored headers (nv/regs/gsp_layouts.cc, tools/nv/layouts.py), and the
// static_asserts below pin the sizes where the structure is defined.
//
// Paths are under shared/vendor/nvidia/open-gpu-kernel-modules-535.113.01/src/ unless they say otherwise.
#ifndef BAREGPU_NV_GSP_LAYOUTS_H_
#define BAREGPU_NV_GSP_LAYOUTS_H_

#include <cstddef>
#include <cstdint>

#include "nv/regs/gsp_constants.h"

namespace nv::gsp {

// nvidia/arch/nvalloc/common/inc/gsp/gsp_fw_wpr_meta.h: the WPR metadata the booter reads (its address goes to
// the GSP's falcon mailboxes); it describes where FWSEC-FRTS, the GSP-RM image and its heap go in the WPR2 region.
struct GspFwWprMeta {
  uint64_t magic;  // GSP_FW_WPR_META_MAGIC
  uint64_t revision;
  uint64_t sysmemAddrOfRadix3Elf;
  uint64_t sizeOfRadix3Elf;
  uint64_t sysmemAddrOfBootloader;
  uint64_t sizeOfBootloader;
  uint64_t bootloaderCodeOffset;
  uint64_t bootloaderDataOffset;
  uint64_t bootloaderManifestOffset;
  union {
    struct {
      uint64_t sysmemAddrOfSignature;
      uint64_t sizeOfSignature;
    };
    struct {
      uint32_t gspFwHeapFreeListWprOffset;
      uint32_t unused0;
      uint64_t unused1;
    };
  };
  uint64_t gspFwRsvdStart;
  uint64_t nonWprHeapOffset;
  uint64_t nonWprHeapSize;
  uint64_t gspFwWprStart;
  uint64_t gspFwHeapOffset;
  uint64_t gspFwHeapSize;
  uint64_t gspFwOffset;
  uint64_t bootBinOffset;
  uint64_t frtsOffset;
  uint64_t frtsSize;
  uint64_t gspFwWprEnd;
  uint64_t fbSize;
  uint64_t vgaWorkspaceOffset;
  uint64_t vgaWorkspaceSize;
  uint64_t bootCount;
  union {
    struct {
      uint64_t partitionRpcAddr;
      uint16_t partitionRpcRequestOffset;
      uint16_t partitionRpcReplyOffset;
      uint32_t elfCodeOffset;
      uint32_t elfDataOffset;
      uint32_t elfCodeSize;
      uint32_t elfDataSize;
      uint32_t lsUcodeVersion;
    };
    struct {
      uint32_t partitionRpcPadding[4];
      uint64_t sysmemAddrOfCrashReportQueue;
      uint32_t sizeOfCrashReportQueue;
      uint32_t lsUcodeVersionPadding[1];
    };
  };
  uint8_t gspFwHeapVfPartitionCount;
  uint8_t padding[7];
  uint64_t verified;  // GSP_FW_WPR_META_VERIFIED once the booter has checked it
};
static_assert(sizeof(GspFwWprMeta) == 256);
static_assert(offsetof(GspFwWprMeta, gspFwRsvdStart) == 88);
static_assert(offsetof(GspFwWprMeta, verified) == 248);

// common/uproc/os/common/include/libos_init_args.h: one memory region LibOS is told about at start (the log
// buffers and the RM arguments page), in the array whose address goes to the GSP's mailboxes.
struct LibosMemoryRegionInitArgument {
  uint64_t id8;   // the region's name, up to 8 characters packed into a number
  uint64_t pa;    // physical address
  uint64_t size;  // bytes
  uint8_t kind;   // LIBOS_MEMORY_REGION_NONE/CONTIGUOUS/RADIX3
  uint8_t loc;    // LIBOS_MEMORY_REGION_LOC_NONE/SYSMEM/FB
};
static_assert(sizeof(LibosMemoryRegionInitArgument) == 32);

// nvidia/inc/kernel/gpu/gsp/gsp_init_args.h: where the message queues are in the shared memory.
struct MESSAGE_QUEUE_INIT_ARGUMENTS {
  uint64_t sharedMemPhysAddr;  // RmPhysAddr
  uint32_t pageTableEntryCount;
  uint64_t cmdQueueOffset;  // NvLength
  uint64_t statQueueOffset;
  uint64_t locklessCmdQueueOffset;
  uint64_t locklessStatQueueOffset;
};
static_assert(sizeof(MESSAGE_QUEUE_INIT_ARGUMENTS) == 48);

// nvidia/inc/kernel/gpu/gsp/gsp_init_args.h: suspend/resume state handed to GSP-RM at start.
struct GSP_SR_INIT_ARGUMENTS {
  uint32_t oldLevel;
  uint32_t flags;
  uint8_t bInPMTransition;  // NvBool
};
static_assert(sizeof(GSP_SR_INIT_ARGUMENTS) == 12);

// nvidia/inc/kernel/gpu/gsp/gsp_init_args.h: the RM arguments page (LibOS region "RMARGS").
struct GSP_ARGUMENTS_CACHED {
  MESSAGE_QUEUE_INIT_ARGUMENTS messageQueueInitArguments;
  GSP_SR_INIT_ARGUMENTS srInitArguments;
  uint32_t gpuInstance;
  struct {
    uint64_t pa;
    uint64_t size;
  } profilerArgs;
};
static_assert(sizeof(GSP_ARGUMENTS_CACHED) == 80);

// common/shared/msgq/inc/msgq/msgq_priv.h: a queue's header, written by its producer at the start of the queue.
struct msgqTxHeader {
  uint32_t version;
  uint32_t size;      // bytes, page aligned
  uint32_t msgSize;   // bytes per entry, a power of two
  uint32_t msgCount;  // entries
  uint32_t writePtr;  // the entry written next
  uint32_t flags;
  uint32_t rxHdrOff;  // where the consumer's msgqRxHeader is, from the queue's start
  uint32_t entryOff;  // where the entries start
};
static_assert(sizeof(msgqTxHeader) == 32);

// common/shared/msgq/inc/msgq/msgq_priv.h: written by the queue's consumer.
struct msgqRxHeader {
  uint32_t readPtr;
};
static_assert(sizeof(msgqRxHeader) == 4);

// Linux 6.12 nouveau, nvkm/subdev/gsp/r535.c (struct nvfw_gsp_rpc): the RPC header every message starts with.
// The vendored 535 subset uses rpc_message_header_v without defining it (RM generates it).
struct rpc_message_header_v {
  uint32_t header_version;  // NV_VGPU_MSG_HEADER_VERSION_MAJOR_TOT << 24 (rpc_headers.h)
  uint32_t signature;       // NV_VGPU_MSG_SIGNATURE_VALID
  uint32_t length;          // header and parameters, bytes
  uint32_t function;        // NV_VGPU_MSG_FUNCTION_* or NV_VGPU_MSG_EVENT_*
  uint32_t rpc_result;      // an NV_STATUS
  uint32_t rpc_result_private;
  uint32_t sequence;
  union {
    uint32_t spare;
    uint32_t cpuRmGfid;
  };
  uint8_t data[];  // the function's parameters
};
static_assert(sizeof(rpc_message_header_v) == 32);

// nvidia/inc/kernel/gpu/gsp/message_queue_priv.h: one queue element; a message spans elemCount of them.
struct GSP_MSG_QUEUE_ELEMENT {
  uint8_t authTagBuffer[16];
  uint8_t aadBuffer[16];
  uint32_t checkSum;  // makes the 64-bit XOR of the element's words zero
  uint32_t seqNum;
  uint32_t elemCount;                   // elements this message takes
  alignas(8) rpc_message_header_v rpc;  // NV_DECLARE_ALIGNED(..., 8)
};
static_assert(offsetof(GSP_MSG_QUEUE_ELEMENT, rpc) == 48);
static_assert(sizeof(GSP_MSG_QUEUE_ELEMENT) == 80);

// nvidia/arch/nvalloc/common/inc/rmRiscvUcode.h: the descriptor of a RISC-V ucode image (the booter's, GSP-RM's
// bootloader).
struct RM_RISCV_UCODE_DESC {
  uint32_t version;
  uint32_t bootloaderOffset;
  uint32_t bootloaderSize;
  uint32_t bootloaderParamOffset;
  uint32_t bootloaderParamSize;
  uint32_t riscvElfOffset;
  uint32_t riscvElfSize;
  uint32_t appVersion;
  uint32_t manifestOffset;
  uint32_t manifestSize;
  uint32_t monitorDataOffset;
  uint32_t monitorDataSize;
  uint32_t monitorCodeOffset;
  uint32_t monitorCodeSize;
  uint32_t bIsMonitorEnabled;
  uint32_t swbromCodeOffset;
  uint32_t swbromCodeSize;
  uint32_t swbromDataOffset;
  uint32_t swbromDataSize;
  uint32_t fbReservedSize;
  uint32_t bSignedAsCode;
};
static_assert(sizeof(RM_RISCV_UCODE_DESC) == 84);

// nvidia/inc/kernel/gpu/gsp/gsp_static_config.h: SR-IOV virtual functions, part of GspSystemInfo.
struct GSP_VF_INFO {
  uint32_t totalVFs;
  uint32_t firstVFOffset;
  uint64_t FirstVFBar0Address;
  uint64_t FirstVFBar1Address;
  uint64_t FirstVFBar2Address;
  uint8_t b64bitBar0;  // NvBool
  uint8_t b64bitBar1;
  uint8_t b64bitBar2;
};
static_assert(sizeof(GSP_VF_INFO) == 40);

// Linux 6.12 nouveau, include/nvrm/535.113.01/nvidia/generated/g_chipset_nvoc.h (the vendored subset has no
// chipset.h): a PCI function's ids, part of GspSystemInfo.
struct BUSINFO {
  uint16_t deviceID;
  uint16_t vendorID;
  uint16_t subdeviceID;
  uint16_t subvendorID;
  uint8_t revisionID;
};
static_assert(sizeof(BUSINFO) == 10);

// nvidia/inc/kernel/gpu/gsp/gsp_static_config.h: what the host tells GSP-RM about the system
// (NV_VGPU_MSG_FUNCTION_GSP_SET_SYSTEM_INFO's payload). acpiMethodData (ACPI_METHOD_DATA, nouveau's copy of
// gpu_acpi_data.h: the _DOD/JT/MUX/caps results) is kept as bytes: a host without those ACPI methods sends it zeroed
// (bValid 0); its size and alignment are the probe's.
struct GspSystemInfo {
  uint64_t gpuPhysAddr;      // BAR0
  uint64_t gpuPhysFbAddr;    // BAR1
  uint64_t gpuPhysInstAddr;  // BAR2/3
  uint64_t nvDomainBusDeviceFunc;
  uint64_t simAccessBufPhysAddr;
  uint64_t pcieAtomicsOpMask;
  uint64_t consoleMemSize;
  uint64_t maxUserVa;
  uint32_t pciConfigMirrorBase;
  uint32_t pciConfigMirrorSize;
  uint8_t oorArch;
  uint64_t clPdbProperties;
  uint32_t Chipset;
  uint8_t bGpuBehindBridge;  // NvBool, as every b* member
  uint8_t bMnocAvailable;
  uint8_t bUpstreamL0sUnsupported;
  uint8_t bUpstreamL1Unsupported;
  uint8_t bUpstreamL1PorSupported;
  uint8_t bUpstreamL1PorMobileOnly;
  uint8_t upstreamAddressValid;
  BUSINFO FHBBusInfo;
  BUSINFO chipsetIDInfo;
  alignas(4) uint8_t acpiMethodData[484];
  uint32_t hypervisorType;
  uint8_t bIsPassthru;
  uint64_t sysTimerOffsetNs;
  GSP_VF_INFO gspVFInfo;
};
static_assert(sizeof(GspSystemInfo) == 664);

// nvidia/generated/g_rpc-structures.h: NV_VGPU_MSG_FUNCTION_GSP_SET_SYSTEM_INFO's parameters (the GspSystemInfo
// follows in the message).
struct rpc_gsp_set_system_info_v17_00 {
  uint32_t data;
};

// nvidia/generated/g_rpc-structures.h: NV_VGPU_MSG_FUNCTION_GET_GSP_STATIC_INFO's parameters, a placeholder: the
// host sends the RPC with sizeof(GspStaticConfigInfo) bytes after the header, and GSP-RM answers in their place
// with the GspStaticConfigInfo (nouveau's r535_gsp_rpc_get_gsp_static_info reads the reply as one).
struct rpc_get_gsp_static_info_v14_00 {
  uint32_t data;
};
static_assert(sizeof(rpc_get_gsp_static_info_v14_00) == 4);

// The array bounds GspStaticConfigInfo uses, as its headers define them (the probe checks every member's size).
inline constexpr int kMaxGpcCount = 32;               // nvidia/kernel/inc/vgpu/rpc_headers.h MAX_GPC_COUNT
inline constexpr int kGrCapsTblSize = 23;             // ctrl0080gr.h NV0080_CTRL_GR_CAPS_TBL_SIZE
inline constexpr int kGpuMaxGidLength = 0x100;        // ctrl2080gpu.h NV2080_GPU_MAX_GID_LENGTH
inline constexpr int kGpuMaxNameStringLength = 0x40;  // ctrl2080gpu.h NV2080_GPU_MAX_NAME_STRING_LENGTH
inline constexpr int kFbRegionInfoMaxEntries = 16;    // ctrl2080fb.h NV2080_CTRL_CMD_FB_GET_FB_REGION_INFO_MAX_ENTRIES
inline constexpr int kFbRegionInfoMemTypes = 17;      // ctrl2080fb.h NV2080_CTRL_CMD_FB_GET_FB_REGION_INFO_MEM_TYPES
inline constexpr int kPreemptionBindBuffersContextPool = 5;  // ctrl2080gr.h ..._BIND_BUFFERS_CONTEXT_POOL
// nvbitmask.h NVGPU_ENGINE_CAPS_MASK_ARRAY_MAX: (RM_ENGINE_TYPE_LAST 0x3e - 1) / 32 + 1 (nouveau's copies of
// nvbitmask.h and gpu_engine_type.h; the vendored subset has neither).
inline constexpr int kEngineCapsMaskArrayMax = 2;

// common/sdk/nvidia/inc/ctrl/ctrl2080/ctrl2080gpu.h: the GPU's unique id (GspStaticConfigInfo.gidInfo).
struct NV2080_CTRL_GPU_GET_GID_INFO_PARAMS {
  uint32_t index;
  uint32_t flags;
  uint32_t length;  // bytes of data in use
  uint8_t data[kGpuMaxGidLength];
};
static_assert(sizeof(NV2080_CTRL_GPU_GET_GID_INFO_PARAMS) == 268);

// ctrl2080gpu.h: the floorswept GPC mask (bit g: GPC g exists).
struct NV2080_CTRL_GPU_GET_FERMI_GPC_INFO_PARAMS {
  uint32_t gpcMask;
};

// ctrl2080gpu.h: one GPC's TPC mask (GspStaticConfigInfo.tpcInfo[gpc]; nouveau counts TPCs of the GPCs in gpcMask).
struct NV2080_CTRL_GPU_GET_FERMI_TPC_INFO_PARAMS {
  uint32_t gpcId;
  uint32_t tpcMask;
};

// ctrl2080gpu.h: one GPC's ZCULL mask.
struct NV2080_CTRL_GPU_GET_FERMI_ZCULL_INFO_PARAMS {
  uint32_t gpcId;
  uint32_t zcullMask;
};

// common/sdk/nvidia/inc/ctrl/ctrl2080/ctrl2080bios.h: the board's SKU strings (not NUL-terminated).
struct NV2080_CTRL_BIOS_GET_SKU_INFO_PARAMS {
  uint32_t BoardID;
  char chipSKU[4];
  char chipSKUMod[2];
  char project[5];
  char projectSKU[5];
  char CDP[6];
  char projectSKUMod[2];
  uint32_t businessCycle;
};
static_assert(sizeof(NV2080_CTRL_BIOS_GET_SKU_INFO_PARAMS) == 32);

// common/sdk/nvidia/inc/ctrl/ctrl2080/ctrl2080fb.h: one region of video memory as GSP-RM partitioned it; nouveau
// keeps regions that are neither reserved nor protected and support compression and ISO, and takes the end of the
// last usable one as the start of RM's reserved area.
struct NV2080_CTRL_CMD_FB_GET_FB_REGION_FB_REGION_INFO {
  uint64_t base;
  uint64_t limit;  // inclusive
  uint64_t reserved;
  uint32_t performance;
  uint8_t supportCompressed;
  uint8_t supportISO;
  uint8_t bProtected;
  uint8_t blackList[kFbRegionInfoMemTypes];  // NV2080_CTRL_CMD_FB_GET_FB_REGION_SURFACE_MEM_TYPE_FLAG (NvBool[])
};
static_assert(sizeof(NV2080_CTRL_CMD_FB_GET_FB_REGION_FB_REGION_INFO) == 48);

// ctrl2080fb.h: the FB regions (the first numFBRegions of fbRegion are valid).
struct NV2080_CTRL_CMD_FB_GET_FB_REGION_INFO_PARAMS {
  uint32_t numFBRegions;
  NV2080_CTRL_CMD_FB_GET_FB_REGION_FB_REGION_INFO fbRegion[kFbRegionInfoMaxEntries];
};
static_assert(sizeof(NV2080_CTRL_CMD_FB_GET_FB_REGION_INFO_PARAMS) == 776);

// common/sdk/nvidia/inc/ctrl/ctrl0080/ctrl0080gpu.h: SR-IOV capabilities.
struct NV0080_CTRL_GPU_GET_SRIOV_CAPS_PARAMS {
  uint32_t totalVFs;
  uint32_t firstVfOffset;
  uint32_t vfFeatureMask;
  uint64_t FirstVFBar0Address;
  uint64_t FirstVFBar1Address;
  uint64_t FirstVFBar2Address;
  uint64_t bar0Size;
  uint64_t bar1Size;
  uint64_t bar2Size;
  uint8_t b64bitBar0;
  uint8_t b64bitBar1;
  uint8_t b64bitBar2;
  uint8_t bSriovEnabled;
  uint8_t bSriovHeavyEnabled;
  uint8_t bEmulateVFBar0TlbInvalidationRegister;
  uint8_t bClientRmAllocatedCtxBuffer;
};
static_assert(sizeof(NV0080_CTRL_GPU_GET_SRIOV_CAPS_PARAMS) == 72);

// nvidia/inc/kernel/gpu/gsp/gsp_static_config.h: SM properties.
struct GspSMInfo {
  uint32_t version;
  uint32_t regBankCount;
  uint32_t regBankRegCount;
  uint32_t maxWarpsPerSM;
  uint32_t maxThreadsPerWarp;
  uint32_t geomGsObufEntries;
  uint32_t geomXbufEntries;
  uint32_t maxSPPerSM;
  uint32_t rtCoreCount;
};
static_assert(sizeof(GspSMInfo) == 36);

// nvidia/kernel/inc/vgpu/rpc_headers.h: the displayless (virtual display) limits.
struct VIRTUAL_DISPLAY_GET_NUM_HEADS_PARAMS {
  uint32_t numHeads;
  uint32_t maxNumHeads;
};

struct VIRTUAL_DISPLAY_GET_MAX_RESOLUTION_PARAMS {
  uint32_t headIndex;
  uint32_t maxHResolution;
  uint32_t maxVResolution;
};

// nvidia/inc/kernel/gpu/gsp/gsp_static_config.h: what GSP-RM tells the host once booted
// (NV_VGPU_MSG_FUNCTION_GET_GSP_STATIC_INFO's reply). Nouveau (r535_gsp_rpc_get_gsp_static_info) reads the
// internal client/device/subdevice handles, bar1PdeBase/bar2PdeBase, fbRegionInfoParams, gpcInfo and tpcInfo.
// computeBranding is RM's COMPUTE_BRANDING_TYPE enumeration (0 none, 1 Tesla: nouveau's g_gpu_nvoc.h copy).
struct GspStaticConfigInfo {
  uint8_t grCapsBits[kGrCapsTblSize];
  NV2080_CTRL_GPU_GET_GID_INFO_PARAMS gidInfo;
  NV2080_CTRL_GPU_GET_FERMI_GPC_INFO_PARAMS gpcInfo;
  NV2080_CTRL_GPU_GET_FERMI_TPC_INFO_PARAMS tpcInfo[kMaxGpcCount];
  NV2080_CTRL_GPU_GET_FERMI_ZCULL_INFO_PARAMS zcullInfo[kMaxGpcCount];
  NV2080_CTRL_BIOS_GET_SKU_INFO_PARAMS SKUInfo;
  NV2080_CTRL_CMD_FB_GET_FB_REGION_INFO_PARAMS fbRegionInfoParams;
  uint32_t computeBranding;
  NV0080_CTRL_GPU_GET_SRIOV_CAPS_PARAMS sriovCaps;
  uint32_t sriovMaxGfid;
  uint32_t engineCaps[kEngineCapsMaskArrayMax];
  GspSMInfo SM_info;
  uint8_t poisonFuseEnabled;
  uint64_t fb_length;
  uint32_t fbio_mask;
  uint32_t fb_bus_width;
  uint32_t fb_ram_type;
  uint32_t fbp_mask;
  uint32_t l2_cache_size;
  uint32_t gfxpBufferSize[kPreemptionBindBuffersContextPool];
  uint32_t gfxpBufferAlignment[kPreemptionBindBuffersContextPool];
  uint8_t gpuNameString[kGpuMaxNameStringLength];
  uint8_t gpuShortNameString[kGpuMaxNameStringLength];
  uint16_t gpuNameString_Unicode[kGpuMaxNameStringLength];
  uint8_t bGpuInternalSku;
  uint8_t bIsQuadroGeneric;
  uint8_t bIsQuadroAd;
  uint8_t bIsNvidiaNvs;
  uint8_t bIsVgx;
  uint8_t bGeforceSmb;
  uint8_t bIsTitan;
  uint8_t bIsTesla;
  uint8_t bIsMobile;
  uint8_t bIsGc6Rtd3Allowed;
  uint8_t bIsGcOffRtd3Allowed;
  uint8_t bIsGcoffLegacyAllowed;
  uint64_t bar1PdeBase;
  uint64_t bar2PdeBase;
  uint8_t bVbiosValid;
  uint32_t vbiosSubVendor;
  uint32_t vbiosSubDevice;
  uint8_t bPageRetirementSupported;
  uint8_t bSplitVasBetweenServerClientRm;
  uint8_t bClRootportNeedsNosnoopWAR;
  VIRTUAL_DISPLAY_GET_NUM_HEADS_PARAMS displaylessMaxHeads;
  VIRTUAL_DISPLAY_GET_MAX_RESOLUTION_PARAMS displaylessMaxResolution;
  uint64_t displaylessMaxPixels;
  uint32_t hInternalClient;  // NvHandle
  uint32_t hInternalDevice;
  uint32_t hInternalSubdevice;
  uint8_t bSelfHostedMode;
  uint8_t bAtsSupported;
  uint8_t bIsGpuUefi;
};
static_assert(sizeof(GspStaticConfigInfo) == 2168);

// Linux 6.12 nouveau, include/nvrm/535.113.01/nvidia/generated/g_os_nvoc.h: NV_VGPU_MSG_FUNCTION_SET_REGISTRY's
// table (the vendored subset has no definition): entries, then the names and string data they point to.
struct PACKED_REGISTRY_ENTRY {
  uint32_t nameOffset;  // from the table's start
  uint8_t type;
  uint32_t data;
  uint32_t length;
};
static_assert(sizeof(PACKED_REGISTRY_ENTRY) == 16);

struct PACKED_REGISTRY_TABLE {
  uint32_t size;
  uint32_t numEntries;
  PACKED_REGISTRY_ENTRY entries[];
};
static_assert(sizeof(PACKED_REGISTRY_TABLE) == 8);

// nvidia/generated/g_rpc-structures.h: NV_VGPU_MSG_FUNCTION_GSP_RM_ALLOC's parameters; the class's allocation
// parameters follow.
struct rpc_gsp_rm_alloc_v03_00 {
  uint32_t hClient;  // NvHandle
  uint32_t hParent;
  uint32_t hObject;
  uint32_t hClass;
  uint32_t status;
  uint32_t paramsSize;
  uint32_t flags;
  uint8_t reserved[4];
  uint8_t params[];
};
static_assert(sizeof(rpc_gsp_rm_alloc_v03_00) == 32);

// nvidia/generated/g_rpc-structures.h: NV_VGPU_MSG_FUNCTION_GSP_RM_CONTROL's parameters; the control's follow.
struct rpc_gsp_rm_control_v03_00 {
  uint32_t hClient;
  uint32_t hObject;
  uint32_t cmd;
  uint32_t status;
  uint32_t paramsSize;
  uint32_t flags;
  uint8_t params[];
};
static_assert(sizeof(rpc_gsp_rm_control_v03_00) == 24);

// nvidia/generated/g_sdk-structures.h: NvRmFree's parameters.
struct NVOS00_PARAMETERS_v03_00 {
  uint32_t hRoot;
  uint32_t hObjectParent;
  uint32_t hObjectOld;
  uint32_t status;  // NvV32
};
static_assert(sizeof(NVOS00_PARAMETERS_v03_00) == 16);

// nvidia/generated/g_rpc-structures.h: NV_VGPU_MSG_FUNCTION_FREE's parameters.
struct rpc_free_v03_00 {
  NVOS00_PARAMETERS_v03_00 params;
};
static_assert(sizeof(rpc_free_v03_00) == 16);

// nvidia/generated/g_rpc-structures.h: NV_VGPU_MSG_FUNCTION_UNLOADING_GUEST_DRIVER's parameters (NvBool is a byte).
struct rpc_unloading_guest_driver_v1F_07 {
  uint8_t bInPMTransition;
  uint8_t bGc6Entering;
  uint32_t newLevel;
};
static_assert(sizeof(rpc_unloading_guest_driver_v1F_07) == 8);
static_assert(offsetof(rpc_unloading_guest_driver_v1F_07, newLevel) == 4);

// nvidia/generated/g_rpc-structures.h: NV_VGPU_MSG_EVENT_GSP_RUN_CPU_SEQUENCER's parameters; commandBuffer holds
// GSP_SEQUENCER_BUFFER_CMDs packed as opcode then payload dwords.
struct rpc_run_cpu_sequencer_v17_00 {
  uint32_t bufferSizeDWord;
  uint32_t cmdIndex;
  uint32_t regSaveArea[regs::gsp::GSP_SEQ_BUF_REG_SAVE_SIZE];
  uint32_t commandBuffer[];
};
static_assert(sizeof(rpc_run_cpu_sequencer_v17_00) == 40);

// nvidia/arch/nvalloc/common/inc/rmgspseq.h: a sequencer command as RM builds it (GSP_SEQ_BUF_PAYLOAD_*).
struct GSP_SEQUENCER_BUFFER_CMD {
  uint32_t opCode;  // GSP_SEQ_BUF_OPCODE (an enum: int-sized)
  union {
    struct {
      uint32_t addr, val;
    } regWrite;
    struct {
      uint32_t addr, mask, val;
    } regModify;
    struct {
      uint32_t addr, mask, val, timeout, error;
    } regPoll;
    struct {
      uint32_t val;
    } delayUs;
    struct {
      uint32_t addr, index;
    } regStore;
  } payload;
};
static_assert(sizeof(GSP_SEQUENCER_BUFFER_CMD) == 24);

// nvidia/generated/g_rpc-structures.h: NV_VGPU_MSG_EVENT_POST_EVENT's parameters.
struct rpc_post_event_v17_00 {
  uint32_t hClient;
  uint32_t hEvent;
  uint32_t notifyIndex;
  uint32_t data;
  uint16_t info16;
  uint32_t status;
  uint32_t eventDataSize;
  uint8_t bNotifyList;  // NvBool
  uint8_t eventData[];
};
static_assert(sizeof(rpc_post_event_v17_00) == 32);

// nvidia/generated/g_rpc-structures.h: NV_VGPU_MSG_EVENT_RC_TRIGGERED's parameters (a channel's robust-channel
// error).
struct rpc_rc_triggered_v17_02 {
  uint32_t nv2080EngineType;
  uint32_t chid;
  uint32_t exceptType;
  uint32_t scope;
  uint16_t partitionAttributionId;
};
static_assert(sizeof(rpc_rc_triggered_v17_02) == 20);

// nvidia/generated/g_rpc-structures.h: NV_VGPU_MSG_EVENT_OS_ERROR_LOG's parameters.
struct rpc_os_error_log_v17_00 {
  uint32_t exceptType;
  uint32_t runlistId;
  uint32_t chid;
  char errString[0x100];
};
static_assert(sizeof(rpc_os_error_log_v17_00) == 268);

}  // namespace nv::gsp

#endif  // BAREGPU_NV_GSP_LAYOUTS_H_
