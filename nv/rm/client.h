// An RM client: the root object (NV01_ROOT) and the objects allocated under it, over any transport
// (nv/rm/transport.h). It chooses every handle, keeps the tree of what it allocated, and hands out RAII objects.
//
// Handles follow two patterns. The client's own: RS_CLIENT_HANDLE_BASE 0xc1d00000 | index, as nouveau's
// r535_gsp_client_ctor numbers its clients (0xc1d00000 | an id below 0x10000 from its IDR; RM's resserv.h puts client
// handles from that base). Its objects': one counter per client from 0xcf000000, as tinygrad's NV_GSP.handle_gen
// (support/nv/ip.py: itertools.count(0xcf000000)); nouveau's fixed per-kind handles (0xde1d0000 for the device,
// 0x5d1d0000 the subdevice, ...) only work for one object of each kind per client. Handles are never reused, so a
// stale one cannot name a newer object.
//
// Freeing an object frees, in the RM, everything allocated under it; the client forgets those too, and their Objects
// become inert (no second free, Control refused). An Object frees its RM object when destroyed, so objects declared
// in order are freed in reverse. Destroying the Client frees the root client, which frees the rest in the RM
// (nouveau's r535_gsp_client_dtor frees the client object alone); Objects that outlive their Client do nothing.
//
// Not thread-safe: one thread uses a client and its objects (the GSP transport's queue is single-threaded too).
#ifndef BAREGPU_NV_RM_CLIENT_H_
#define BAREGPU_NV_RM_CLIENT_H_

#include <cstdint>
#include <map>
#include <memory>
#include <span>
#include <type_traits>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "nv/rm/params.h"
#include "nv/rm/transport.h"

namespace nv::rm {

// RS_CLIENT_HANDLE_BASE (RM's src/nvidia/inc/libraries/resserv/resserv.h, public repository; nouveau's
// r535_gsp_client_ctor ORs its client id into the same 0xc1d00000).
inline constexpr Handle kClientHandleBase = 0xc1d00000;
// Client ids nouveau hands out: idr_alloc(..., 0, 0xffff + 1).
inline constexpr uint32_t kMaxClientIndex = 0xffff;
// The first object handle of a client: tinygrad's handle_gen start.
inline constexpr Handle kFirstObjectHandle = 0xcf000000;
// nouveau's r535_gsp_client_ctor: NV0000_ALLOC_PARAMETERS.processID = ~0 (no process: a kernel client).
inline constexpr uint32_t kKernelProcessId = 0xffffffff;

namespace internal {
struct ClientState;
}  // namespace internal

class Client;

// One RM object of a client. Move-only; frees the object when destroyed while the client still has it.
class Object {
 public:
  Object() = default;
  Object(Object&& other) noexcept;
  Object& operator=(Object&& other) noexcept;
  Object(const Object&) = delete;
  Object& operator=(const Object&) = delete;
  ~Object();

  Handle handle() const { return handle_; }
  uint32_t class_id() const { return class_id_; }
  Handle parent() const { return parent_; }
  // False once freed (by Free, or with an ancestor), when its client is gone, or for an empty Object.
  bool alive() const;
  // Frees the RM object (and its descendants) now. An error leaves it allocated, as the RM does.
  absl::Status Free();

 private:
  friend class Client;
  Object(std::weak_ptr<internal::ClientState> state, Handle handle, uint32_t class_id, Handle parent)
      : state_(std::move(state)), handle_(handle), class_id_(class_id), parent_(parent) {}
  void Release();

  std::weak_ptr<internal::ClientState> state_;
  Handle handle_ = kNullObject;
  uint32_t class_id_ = 0;
  Handle parent_ = kNullObject;
};

class Client {
 public:
  // Allocates the root client 0xc1d00000 | index with NV0000_ALLOC_PARAMETERS {hClient, processID ~0} (nouveau's
  // r535_gsp_client_ctor); the client's handle is the one the transport reports (the kernel RM may choose another).
  // The transport must outlive the client.
  static absl::StatusOr<std::unique_ptr<Client>> Create(Transport& transport, uint32_t index = 0);
  ~Client();
  Client(const Client&) = delete;
  Client& operator=(const Client&) = delete;

  Handle handle() const;
  // Live objects, the root not counted.
  size_t object_count() const;
  // The first error of a free made by a destructor (which cannot return it); OK when there was none.
  absl::Status deferred_free_status() const;

  // Allocates an object of `class_id` under `parent` (the client's handle or one of its live objects) with the
  // class's parameters (empty for none), which hold what the RM wrote back.
  absl::StatusOr<Object> Alloc(Handle parent, uint32_t class_id, std::span<uint8_t> params);
  template <typename Params>
  requires std::is_trivially_copyable_v<Params> absl::StatusOr<Object> Alloc(Handle parent, uint32_t class_id,
                                                                             Params& params) {
    return Alloc(parent, class_id, std::span(reinterpret_cast<uint8_t*>(&params), sizeof(Params)));
  }

  // Runs a control command on a live object; `params` in and out.
  absl::Status Control(const Object& object, uint32_t cmd, std::span<uint8_t> params);
  template <typename Params>
  requires std::is_trivially_copyable_v<Params> absl::Status Control(const Object& object, uint32_t cmd,
                                                                     Params& params) {
    return Control(object, cmd, std::span(reinterpret_cast<uint8_t*>(&params), sizeof(Params)));
  }

  // The objects the HCQ backend needs, with the parameters nouveau's r535 code and tinygrad send.
  // NV01_DEVICE_0 under the client: deviceId, hClientShare = this client (r535_gsp_device_ctor, tinygrad's
  // NVDevice), vaMode OPTIONAL_MULTIPLE_VASPACES.
  absl::StatusOr<Object> AllocDevice(uint32_t device_id = 0);
  // NV20_SUBDEVICE_0 under a device (r535_gsp_subdevice_ctor).
  absl::StatusOr<Object> AllocSubdevice(const Object& device, uint32_t subdevice_id = 0);
  // FERMI_VASPACE_A under a device (r535_mmu_promote_vmm; tinygrad's NVDevice).
  absl::StatusOr<Object> AllocVaSpace(const Object& device, NV_VASPACE_ALLOCATION_PARAMETERS& params);
  // KEPLER_CHANNEL_GROUP_A under a device (tinygrad's NVDevice: engineType GRAPHICS).
  absl::StatusOr<Object> AllocChannelGroup(const Object& device, NV_CHANNEL_GROUP_ALLOCATION_PARAMETERS& params);
  // FERMI_CONTEXT_SHARE_A under a channel group (tinygrad's NVDevice).
  absl::StatusOr<Object> AllocContextShare(const Object& channel_group, NV_CTXSHARE_ALLOCATION_PARAMETERS& params);
  // AMPERE_CHANNEL_GPFIFO_A under a channel group or a device (nouveau's r535_chan_ramfc_write allocates it under
  // the device, tinygrad under its channel group).
  absl::StatusOr<Object> AllocGpfifoChannel(const Object& parent, NV_CHANNELGPFIFO_ALLOCATION_PARAMETERS& params);
  // ADA_COMPUTE_A under a channel, no parameters (nouveau's r535_gr_obj_ctor sends none; tinygrad neither).
  absl::StatusOr<Object> AllocCompute(const Object& channel);
  // AMPERE_DMA_COPY_B under a channel for copy engine `copy_engine`: NVC0B5_ALLOCATION_PARAMETERS {VERSION_1,
  // NV2080_ENGINE_TYPE_COPY(copy_engine)} (nouveau's r535_ce_obj_ctor).
  absl::StatusOr<Object> AllocCopy(const Object& channel, uint32_t copy_engine = 0);
  // AMPERE_USERMODE_A under a subdevice, no parameters (tinygrad's NVKIface.setup_usermode; AD102's usermode class
  // is nouveau's ga100_vfn's).
  absl::StatusOr<Object> AllocUsermode(const Object& subdevice);

 private:
  explicit Client(std::shared_ptr<internal::ClientState> state) : state_(std::move(state)) {}

  std::shared_ptr<internal::ClientState> state_;
};

}  // namespace nv::rm

#endif  // BAREGPU_NV_RM_CLIENT_H_
