// The RM client's transport: the three RM calls every object operation is made of, whoever runs the RM.
//
// Two RMs answer them. GSP-RM on the GPU, reached through its message queues (nv/rm/gsp_transport.h: the RPCs
// NV_VGPU_MSG_FUNCTION_GSP_RM_ALLOC, GSP_RM_CONTROL and FREE, as nouveau's r535.c sends them); and, later, the NVIDIA
// kernel driver's RM, reached through ioctls on /dev/nvidiactl (NV_ESC_RM_ALLOC with NVOS21_PARAMETERS,
// NV_ESC_RM_CONTROL with NVOS54_PARAMETERS, NV_ESC_RM_FREE with NVOS00_PARAMETERS: nvos.h, nv-ioctl-numbers.h;
// tinygrad's ops_nv.py NVKIface.rm_alloc / rm_control / free). The interface is what both carry:
//
//   Alloc    hClient/hRoot, hParent/hObjectParent, hObject/hObjectNew, hClass, the class's parameters in and out
//            (GSP-RM copies them back in its reply; the kernel RM writes through pAllocParms)
//   Control  hClient, hObject, cmd, the command's parameters in and out (paramsSize bytes)
//   Free     hClient/hRoot, hObjectParent, hObject/hObjectOld
//
// Every call returns the RM's NV_STATUS as an absl::Status (nv/rm/nv_status.h: named, with the number as payload),
// or an error of the transport itself (a malformed reply, a timeout) that carries no NV_STATUS.
//
// Handles: the client chooses them (nouveau and tinygrad's GSP path both do; GSP-RM takes the handles its caller
// gives). The kernel RM may also generate one (NVOS21/NVOS64 hObjectNew "0 to generate"), so Alloc returns the
// handle the RM used, and a transport that cannot generate one refuses object 0. The root client (class NV01_ROOT)
// is allocated with client, parent and object all its own handle, as nouveau's r535_gsp_client_ctor does.
#ifndef BAREGPU_NV_RM_TRANSPORT_H_
#define BAREGPU_NV_RM_TRANSPORT_H_

#include <cstdint>
#include <span>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace nv::rm {

// NvHandle (nvtypes.h: NvU32).
using Handle = uint32_t;
// NV01_NULL_OBJECT (cl0000.h): no object.
inline constexpr Handle kNullObject = 0;

class Transport {
 public:
  virtual ~Transport() = default;

  // Allocates `object` of class `class_id` under `parent` in `client`; `params` is the class's allocation structure
  // (empty for classes that take none) and holds what the RM wrote back on success. Returns the object's handle.
  virtual absl::StatusOr<Handle> Alloc(Handle client, Handle parent, Handle object, uint32_t class_id,
                                       std::span<uint8_t> params) = 0;

  // Runs control command `cmd` on `object`; `params` in, and what the RM wrote back on success.
  virtual absl::Status Control(Handle client, Handle object, uint32_t cmd, std::span<uint8_t> params) = 0;

  // Frees `object` (and, in the RM, everything allocated under it).
  virtual absl::Status Free(Handle client, Handle parent, Handle object) = 0;

  // Who answers, for messages: "GSP-RM".
  virtual absl::string_view name() const = 0;
};

}  // namespace nv::rm

#endif  // BAREGPU_NV_RM_TRANSPORT_H_
