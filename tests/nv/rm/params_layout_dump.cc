// Prints the project's RM allocation parameters (nv/rm/params.h) as params_layout_test.py compares them with the
// vendored headers: "S type size" and "M type member offset size" lines.
#include <cstddef>
#include <cstdio>

#include "nv/rm/params.h"

#define S(type) std::printf("S %s %zu\n", #type, sizeof(::nv::rm::type))
#define M(type, member)                                                              \
  std::printf("M %s %s %zu %zu\n", #type, #member, offsetof(::nv::rm::type, member), \
              sizeof(static_cast<::nv::rm::type*>(nullptr)->member))

int main() {
  S(NV0000_ALLOC_PARAMETERS);
  M(NV0000_ALLOC_PARAMETERS, hClient);
  M(NV0000_ALLOC_PARAMETERS, processID);
  M(NV0000_ALLOC_PARAMETERS, processName);
  S(NV0080_ALLOC_PARAMETERS);
  M(NV0080_ALLOC_PARAMETERS, deviceId);
  M(NV0080_ALLOC_PARAMETERS, hClientShare);
  M(NV0080_ALLOC_PARAMETERS, hTargetClient);
  M(NV0080_ALLOC_PARAMETERS, hTargetDevice);
  M(NV0080_ALLOC_PARAMETERS, flags);
  M(NV0080_ALLOC_PARAMETERS, vaSpaceSize);
  M(NV0080_ALLOC_PARAMETERS, vaStartInternal);
  M(NV0080_ALLOC_PARAMETERS, vaLimitInternal);
  M(NV0080_ALLOC_PARAMETERS, vaMode);
  S(NV2080_ALLOC_PARAMETERS);
  M(NV2080_ALLOC_PARAMETERS, subDeviceId);
  S(NV_VASPACE_ALLOCATION_PARAMETERS);
  M(NV_VASPACE_ALLOCATION_PARAMETERS, index);
  M(NV_VASPACE_ALLOCATION_PARAMETERS, flags);
  M(NV_VASPACE_ALLOCATION_PARAMETERS, vaSize);
  M(NV_VASPACE_ALLOCATION_PARAMETERS, vaStartInternal);
  M(NV_VASPACE_ALLOCATION_PARAMETERS, vaLimitInternal);
  M(NV_VASPACE_ALLOCATION_PARAMETERS, bigPageSize);
  M(NV_VASPACE_ALLOCATION_PARAMETERS, vaBase);
  S(NV_CHANNEL_GROUP_ALLOCATION_PARAMETERS);
  M(NV_CHANNEL_GROUP_ALLOCATION_PARAMETERS, hObjectError);
  M(NV_CHANNEL_GROUP_ALLOCATION_PARAMETERS, hObjectEccError);
  M(NV_CHANNEL_GROUP_ALLOCATION_PARAMETERS, hVASpace);
  M(NV_CHANNEL_GROUP_ALLOCATION_PARAMETERS, engineType);
  M(NV_CHANNEL_GROUP_ALLOCATION_PARAMETERS, bIsCallingContextVgpuPlugin);
  S(NV_CTXSHARE_ALLOCATION_PARAMETERS);
  M(NV_CTXSHARE_ALLOCATION_PARAMETERS, hVASpace);
  M(NV_CTXSHARE_ALLOCATION_PARAMETERS, flags);
  M(NV_CTXSHARE_ALLOCATION_PARAMETERS, subctxId);
  S(NV_MEMORY_DESC_PARAMS);
  M(NV_MEMORY_DESC_PARAMS, base);
  M(NV_MEMORY_DESC_PARAMS, size);
  M(NV_MEMORY_DESC_PARAMS, addressSpace);
  M(NV_MEMORY_DESC_PARAMS, cacheAttrib);
  S(NV_CHANNEL_ALLOC_PARAMS);
  M(NV_CHANNEL_ALLOC_PARAMS, hObjectError);
  M(NV_CHANNEL_ALLOC_PARAMS, hObjectBuffer);
  M(NV_CHANNEL_ALLOC_PARAMS, gpFifoOffset);
  M(NV_CHANNEL_ALLOC_PARAMS, gpFifoEntries);
  M(NV_CHANNEL_ALLOC_PARAMS, flags);
  M(NV_CHANNEL_ALLOC_PARAMS, hContextShare);
  M(NV_CHANNEL_ALLOC_PARAMS, hVASpace);
  M(NV_CHANNEL_ALLOC_PARAMS, hUserdMemory);
  M(NV_CHANNEL_ALLOC_PARAMS, userdOffset);
  M(NV_CHANNEL_ALLOC_PARAMS, engineType);
  M(NV_CHANNEL_ALLOC_PARAMS, cid);
  M(NV_CHANNEL_ALLOC_PARAMS, subDeviceId);
  M(NV_CHANNEL_ALLOC_PARAMS, hObjectEccError);
  M(NV_CHANNEL_ALLOC_PARAMS, instanceMem);
  M(NV_CHANNEL_ALLOC_PARAMS, userdMem);
  M(NV_CHANNEL_ALLOC_PARAMS, ramfcMem);
  M(NV_CHANNEL_ALLOC_PARAMS, mthdbufMem);
  M(NV_CHANNEL_ALLOC_PARAMS, hPhysChannelGroup);
  M(NV_CHANNEL_ALLOC_PARAMS, internalFlags);
  M(NV_CHANNEL_ALLOC_PARAMS, errorNotifierMem);
  M(NV_CHANNEL_ALLOC_PARAMS, eccErrorNotifierMem);
  M(NV_CHANNEL_ALLOC_PARAMS, ProcessID);
  M(NV_CHANNEL_ALLOC_PARAMS, SubProcessID);
  M(NV_CHANNEL_ALLOC_PARAMS, encryptIv);
  M(NV_CHANNEL_ALLOC_PARAMS, decryptIv);
  M(NV_CHANNEL_ALLOC_PARAMS, hmacNonce);
  S(NVC0B5_ALLOCATION_PARAMETERS);
  M(NVC0B5_ALLOCATION_PARAMETERS, version);
  M(NVC0B5_ALLOCATION_PARAMETERS, engineType);
  return 0;
}
