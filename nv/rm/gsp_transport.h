// The RM client's transport to GSP-RM: each call is one RPC over the GSP message queues (nv/gsp/message_queue.h),
// sent and answered as nouveau's r535.c does it and checked the way RM's own GSP client reads the answer
// (open-gpu-kernel-modules src/nvidia/src/kernel/vgpu/rpc.c, public repository: rpcRmApiAlloc_GSP,
// rpcRmApiControl_GSP, rpcRmApiFree_GSP).
//
//   Alloc    NV_VGPU_MSG_FUNCTION_GSP_RM_ALLOC: rpc_gsp_rm_alloc_v03_00 {hClient, hParent, hObject, hClass,
//            status 0, paramsSize, flags 0} and the parameters (r535_gsp_rpc_rm_alloc_get)
//   Control  NV_VGPU_MSG_FUNCTION_GSP_RM_CONTROL: rpc_gsp_rm_control_v03_00 {hClient, hObject, cmd, status 0,
//            paramsSize, flags 0} and the parameters (r535_gsp_rpc_rm_ctrl_get)
//   Free     NV_VGPU_MSG_FUNCTION_FREE: rpc_free_v03_00 {hRoot = client, hObjectParent = NV01_NULL_OBJECT,
//            hObjectOld = object, status 0} (r535_gsp_rpc_rm_free and rpcRmApiFree_GSP both send no parent)
//
// GSP-RM answers with the same structure, the parameters rewritten and the status filled in. A reply must be whole
// (at least the structure and paramsSize bytes), echo the handles, class or command and paramsSize it was sent, and
// succeed: an RPC whose rpc_result is not NV_OK fails with the status in the reply's parameters when it has one
// (rpcRmApiAlloc_GSP returns rpc_params->status then) and rpc_result otherwise; an RPC that went through fails with
// the embedded status when that is not NV_OK (nouveau's r535_gsp_rpc_rm_alloc_push and r535_gsp_rpc_rm_ctrl_push
// check it, and rpcRmApiControl_GSP skips the copy-out then; rpcRmApiAlloc_GSP alone ignores it, and nouveau is the
// reference). Parameters are copied back only on success.
//
// One RPC at a time (nouveau holds the command-queue mutex across send and receive), on the queue owner's thread.
// Messages that arrive while the transport waits for its reply go to the queue's event handler, among them replies
// to RPCs sent earlier without waiting (nouveau sends SET_REGISTRY and GSP_SET_SYSTEM_INFO so): the reply is
// recognised by its function number alone, nouveau's r535_gsp_msg_recv does the same.
#ifndef BAREGPU_NV_RM_GSP_TRANSPORT_H_
#define BAREGPU_NV_RM_GSP_TRANSPORT_H_

#include <cstdint>
#include <span>
#include <string>

#include "absl/time/time.h"
#include "nv/gsp/message_queue.h"
#include "nv/rm/transport.h"

namespace nv::rm {

class GspTransport : public Transport {
 public:
  // How long an RPC may wait for room in the command queue, and then for its reply: nouveau's r535_gsp_msg_recv
  // polls the status queue 4000000 times with usleep_range(1, 2) between polls, at least 4 s.
  static constexpr absl::Duration kDefaultTimeout = absl::Seconds(4);

  explicit GspTransport(gsp::MessageQueue& queue, absl::Duration timeout = kDefaultTimeout)
      : queue_(queue), timeout_(timeout) {}

  absl::StatusOr<Handle> Alloc(Handle client, Handle parent, Handle object, uint32_t class_id,
                               std::span<uint8_t> params) override;
  absl::Status Control(Handle client, Handle object, uint32_t cmd, std::span<uint8_t> params) override;
  absl::Status Free(Handle client, Handle parent, Handle object) override;
  absl::string_view name() const override { return "GSP-RM"; }

 private:
  // Sends `request` as `function` and returns the reply's parameters (validated by the caller) and rpc_result.
  absl::StatusOr<gsp::GspMessage> Call(uint32_t function, std::span<const uint8_t> request, const std::string& what);

  gsp::MessageQueue& queue_;
  absl::Duration timeout_;
};

}  // namespace nv::rm

#endif  // BAREGPU_NV_RM_GSP_TRANSPORT_H_
