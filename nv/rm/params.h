// The allocation parameters of the RM classes the client allocates (nv/rm/classes.h), as the project defines them:
// named as in NVIDIA's headers, member names too, little-endian x86-64 layout. nv/gsp/layouts.h has the RPC
// structures; these are the class-specific parameters that follow them.
//
// Paths are under shared/vendor/nvidia/open-gpu-kernel-modules-535.113.01/src/common/sdk/nvidia/inc/. Each
// structure's size and member offsets were worked out by hand from its header (NvHandle, NvU32 and NvV32 are 4
// bytes, NvBool 1, NvU64 8 and, where NV_DECLARE_ALIGNED(..., 8) or NV_ALIGN_BYTES(8) says so, 8-aligned; a
// structure is padded to its largest alignment) and pinned by the static_asserts below;
// tests/nv/rm/params_layout_test.py checks them against what gcc makes of the headers themselves.
#ifndef BAREGPU_NV_RM_PARAMS_H_
#define BAREGPU_NV_RM_PARAMS_H_

#include <cstddef>
#include <cstdint>

namespace nv::rm {

// nvlimits.h
inline constexpr uint32_t NV_PROC_NAME_MAX_LENGTH = 100;
inline constexpr uint32_t NV_MAX_SUBDEVICES = 8;

// class/cl0000.h: NV01_ROOT's parameters (the client). 4 + 4 + 100 = 108 bytes.
struct NV0000_ALLOC_PARAMETERS {
  uint32_t hClient;
  uint32_t processID;
  char processName[NV_PROC_NAME_MAX_LENGTH];
};
static_assert(sizeof(NV0000_ALLOC_PARAMETERS) == 108);
static_assert(offsetof(NV0000_ALLOC_PARAMETERS, processName) == 8);

// class/cl0080.h: NV01_DEVICE_0's parameters. Five 4-byte members, then vaSpaceSize 8-aligned at 24, vaStartInternal
// 32, vaLimitInternal 40, vaMode 48; 52 padded to 56.
struct NV0080_ALLOC_PARAMETERS {
  uint32_t deviceId;
  uint32_t hClientShare;
  uint32_t hTargetClient;
  uint32_t hTargetDevice;
  uint32_t flags;  // NvV32
  uint64_t vaSpaceSize;
  uint64_t vaStartInternal;
  uint64_t vaLimitInternal;
  uint32_t vaMode;  // NvV32
};
static_assert(sizeof(NV0080_ALLOC_PARAMETERS) == 56);
static_assert(offsetof(NV0080_ALLOC_PARAMETERS, vaSpaceSize) == 24);
static_assert(offsetof(NV0080_ALLOC_PARAMETERS, vaMode) == 48);

// nvos.h: NV0080_ALLOC_PARAMETERS.vaMode.
inline constexpr uint32_t NV_DEVICE_ALLOCATION_VAMODE_OPTIONAL_MULTIPLE_VASPACES = 0x0;

// class/cl2080.h: NV20_SUBDEVICE_0's parameters.
struct NV2080_ALLOC_PARAMETERS {
  uint32_t subDeviceId;
};
static_assert(sizeof(NV2080_ALLOC_PARAMETERS) == 4);

// nvos.h: FERMI_VASPACE_A's parameters. index 0, flags 4, vaSize 8, vaStartInternal 16, vaLimitInternal 24,
// bigPageSize 32, vaBase (8-aligned) 40; 48 bytes.
struct NV_VASPACE_ALLOCATION_PARAMETERS {
  uint32_t index;
  uint32_t flags;  // NvV32
  uint64_t vaSize;
  uint64_t vaStartInternal;
  uint64_t vaLimitInternal;
  uint32_t bigPageSize;
  uint64_t vaBase;
};
static_assert(sizeof(NV_VASPACE_ALLOCATION_PARAMETERS) == 48);
static_assert(offsetof(NV_VASPACE_ALLOCATION_PARAMETERS, bigPageSize) == 32);
static_assert(offsetof(NV_VASPACE_ALLOCATION_PARAMETERS, vaBase) == 40);

// nvos.h: NV_VASPACE_ALLOCATION_PARAMETERS.index (nouveau's mmu/r535.c r535_mmu_promote_vmm uses GPU_NEW).
inline constexpr uint32_t NV_VASPACE_ALLOCATION_INDEX_GPU_NEW = 0x0;

// nvos.h: KEPLER_CHANNEL_GROUP_A's parameters. Four handles/words, then bIsCallingContextVgpuPlugin (NvBool) at 16;
// 17 padded to 20.
struct NV_CHANNEL_GROUP_ALLOCATION_PARAMETERS {
  uint32_t hObjectError;
  uint32_t hObjectEccError;
  uint32_t hVASpace;
  uint32_t engineType;
  uint8_t bIsCallingContextVgpuPlugin;  // NvBool
};
static_assert(sizeof(NV_CHANNEL_GROUP_ALLOCATION_PARAMETERS) == 20);
static_assert(offsetof(NV_CHANNEL_GROUP_ALLOCATION_PARAMETERS, bIsCallingContextVgpuPlugin) == 16);

// nvos.h: FERMI_CONTEXT_SHARE_A's parameters (a subcontext of a channel group).
struct NV_CTXSHARE_ALLOCATION_PARAMETERS {
  uint32_t hVASpace;
  uint32_t flags;
  uint32_t subctxId;
};
static_assert(sizeof(NV_CTXSHARE_ALLOCATION_PARAMETERS) == 12);

// nvos.h: NV_CTXSHARE_ALLOCATION_PARAMETERS.flags, NV_CTXSHARE_ALLOCATION_FLAGS_SUBCONTEXT (1:0) values.
inline constexpr uint32_t NV_CTXSHARE_ALLOCATION_FLAGS_SUBCONTEXT_SYNC = 0x0;
inline constexpr uint32_t NV_CTXSHARE_ALLOCATION_FLAGS_SUBCONTEXT_ASYNC = 0x1;

// alloc/alloc_channel.h: a piece of memory GSP-RM is told about directly (a channel's instance block, USERD, RAMFC,
// method buffer). 24 bytes.
struct NV_MEMORY_DESC_PARAMS {
  uint64_t base;
  uint64_t size;
  uint32_t addressSpace;
  uint32_t cacheAttrib;
};
static_assert(sizeof(NV_MEMORY_DESC_PARAMS) == 24);

// alloc/alloc_channel.h: CC_CHAN_ALLOC_IV_SIZE_DWORD, CC_CHAN_ALLOC_NONCE_SIZE_DWORD.
inline constexpr uint32_t CC_CHAN_ALLOC_IV_SIZE_DWORD = 3;
inline constexpr uint32_t CC_CHAN_ALLOC_NONCE_SIZE_DWORD = 8;

// alloc/alloc_channel.h: a GPFIFO channel's parameters (NV_CHANNEL_ALLOC_PARAMS; NV_CHANNELGPFIFO_ALLOCATION_PARAMETERS
// is its typedef). By hand: hObjectError 0, hObjectBuffer 4, gpFifoOffset 8, gpFifoEntries 16, flags 20,
// hContextShare 24, hVASpace 28, hUserdMemory[8] 32, userdOffset[8] 64, engineType 128, cid 132, subDeviceId 136,
// hObjectEccError 140, instanceMem 144, userdMem 168, ramfcMem 192, mthdbufMem 216, hPhysChannelGroup 240,
// internalFlags 244, errorNotifierMem 248, eccErrorNotifierMem 272, ProcessID 296, SubProcessID 300, encryptIv 304,
// decryptIv 316, hmacNonce 328; 360 bytes.
struct NV_CHANNEL_ALLOC_PARAMS {
  uint32_t hObjectError;
  uint32_t hObjectBuffer;
  uint64_t gpFifoOffset;
  uint32_t gpFifoEntries;
  uint32_t flags;
  uint32_t hContextShare;
  uint32_t hVASpace;
  uint32_t hUserdMemory[NV_MAX_SUBDEVICES];
  uint64_t userdOffset[NV_MAX_SUBDEVICES];
  uint32_t engineType;
  uint32_t cid;
  uint32_t subDeviceId;
  uint32_t hObjectEccError;
  NV_MEMORY_DESC_PARAMS instanceMem;
  NV_MEMORY_DESC_PARAMS userdMem;
  NV_MEMORY_DESC_PARAMS ramfcMem;
  NV_MEMORY_DESC_PARAMS mthdbufMem;
  uint32_t hPhysChannelGroup;
  uint32_t internalFlags;
  NV_MEMORY_DESC_PARAMS errorNotifierMem;
  NV_MEMORY_DESC_PARAMS eccErrorNotifierMem;
  uint32_t ProcessID;
  uint32_t SubProcessID;
  uint32_t encryptIv[CC_CHAN_ALLOC_IV_SIZE_DWORD];
  uint32_t decryptIv[CC_CHAN_ALLOC_IV_SIZE_DWORD];
  uint32_t hmacNonce[CC_CHAN_ALLOC_NONCE_SIZE_DWORD];
};
using NV_CHANNELGPFIFO_ALLOCATION_PARAMETERS = NV_CHANNEL_ALLOC_PARAMS;
static_assert(sizeof(NV_CHANNEL_ALLOC_PARAMS) == 360);
static_assert(offsetof(NV_CHANNEL_ALLOC_PARAMS, userdOffset) == 64);
static_assert(offsetof(NV_CHANNEL_ALLOC_PARAMS, engineType) == 128);
static_assert(offsetof(NV_CHANNEL_ALLOC_PARAMS, instanceMem) == 144);
static_assert(offsetof(NV_CHANNEL_ALLOC_PARAMS, hPhysChannelGroup) == 240);
static_assert(offsetof(NV_CHANNEL_ALLOC_PARAMS, errorNotifierMem) == 248);
static_assert(offsetof(NV_CHANNEL_ALLOC_PARAMS, ProcessID) == 296);
static_assert(offsetof(NV_CHANNEL_ALLOC_PARAMS, hmacNonce) == 328);

// class/clc0b5sw.h: a copy engine object's parameters (nouveau's ce/r535.c r535_ce_obj_ctor sends these for every
// copy class, AMPERE_DMA_COPY_B included).
struct NVC0B5_ALLOCATION_PARAMETERS {
  uint32_t version;
  uint32_t engineType;
};
static_assert(sizeof(NVC0B5_ALLOCATION_PARAMETERS) == 8);

// class/clc0b5sw.h: VERSION_1 makes engineType an NV2080_ENGINE_TYPE ordinal (what nouveau sends).
inline constexpr uint32_t NVC0B5_ALLOCATION_PARAMETERS_VERSION_1 = 1;

// class/cl2080_notification.h: engine types (NV2080_ENGINE_TYPE_COPY(i) is COPY0 + i).
inline constexpr uint32_t NV2080_ENGINE_TYPE_GRAPHICS = 0x1;
inline constexpr uint32_t NV2080_ENGINE_TYPE_COPY0 = 0x9;

}  // namespace nv::rm

#endif  // BAREGPU_NV_RM_PARAMS_H_
