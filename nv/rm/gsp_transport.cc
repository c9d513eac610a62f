#include "nv/rm/gsp_transport.h"

#include <cstring>
#include <limits>
#include <vector>

#include "absl/strings/str_format.h"
#include "base/status_macros.h"
#include "nv/gsp/layouts.h"
#include "nv/gsp/queue_element.h"
#include "nv/regs/rpc_constants.h"
#include "nv/regs/status_constants.h"
#include "nv/rm/classes.h"
#include "nv/rm/nv_status.h"

namespace nv::rm {
namespace {

using regs::rpc::NV_VGPU_MSG_FUNCTION_FREE;
using regs::rpc::NV_VGPU_MSG_FUNCTION_GSP_RM_ALLOC;
using regs::rpc::NV_VGPU_MSG_FUNCTION_GSP_RM_CONTROL;
using regs::status::NV_OK;

// RMAPI_RPC_FLAGS_NONE (RM's rpcRmApiAlloc_GSP; nouveau and tinygrad send 0 too): no serialized parameters, no
// copy-out on error.
constexpr uint32_t kRpcFlagsNone = 0;

template <typename T>
std::span<const uint8_t> BytesOf(const T& value) {
  return std::span(reinterpret_cast<const uint8_t*>(&value), sizeof(value));
}

// The request: the RPC structure, then the parameters.
template <typename Header>
std::vector<uint8_t> Request(const Header& header, std::span<const uint8_t> params) {
  std::vector<uint8_t> request(sizeof(Header) + params.size());
  std::memcpy(request.data(), &header, sizeof(Header));
  if (!params.empty()) std::memcpy(request.data() + sizeof(Header), params.data(), params.size());
  return request;
}

absl::Status Prefixed(const absl::Status& status, absl::string_view what) {
  absl::Status prefixed(status.code(), absl::StrFormat("%s: %s", what, status.message()));
  status.ForEachPayload([&](absl::string_view url, const absl::Cord& payload) { prefixed.SetPayload(url, payload); });
  return prefixed;
}

absl::Status Malformed(absl::string_view what, absl::string_view why) {
  return absl::DataLossError(absl::StrFormat("%s: malformed reply from GSP-RM: %s", what, why));
}

// A reply's verdict from its rpc_result and the status embedded in its parameters. When both failed,
// `embedded_first` says which one RM's GSP client returns (the embedded one for GSP_RM_ALLOC, rpc_result for the
// others); the message names the other too when the two differ.
absl::Status Verdict(absl::string_view what, uint32_t rpc_result, uint32_t embedded, bool embedded_first) {
  if (rpc_result == NV_OK && embedded == NV_OK) return absl::OkStatus();
  if (rpc_result == NV_OK) return NvStatusError(embedded, absl::StrFormat("%s failed", what));
  const uint32_t status = (embedded_first && embedded != NV_OK) ? embedded : rpc_result;
  const uint32_t other = status == rpc_result ? embedded : rpc_result;
  return NvStatusError(
      status, other == status || other == NV_OK
                  ? absl::StrFormat("%s failed", what)
                  : absl::StrFormat("%s failed (%s %s)", what,
                                    status == rpc_result ? "parameters' status" : "rpc_result", NvStatusLabel(other)));
}

// Checks one echoed 32-bit member of the reply.
absl::Status Echo(absl::string_view what, absl::string_view member, uint32_t replied, uint32_t sent) {
  if (replied == sent) return absl::OkStatus();
  return Malformed(what, absl::StrFormat("%s %#x, sent %#x", member, replied, sent));
}

// GSP_RM_ALLOC and GSP_RM_CONTROL carry their parameters after a `Header` whose paramsSize is 32 bits.
template <typename Header>
absl::Status ParamsFit(absl::string_view what, std::span<const uint8_t> params) {
  if (params.size() <= std::numeric_limits<uint32_t>::max() - sizeof(Header)) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrFormat("%s: %u parameter bytes do not fit paramsSize", what, params.size()));
}

// The `Header` GSP-RM echoes at the start of its reply, into `echo` (`header_name` for the message; an out-parameter:
// the headers end in a flexible array, which StatusOr cannot hold). A reply too short to hold it is GSP-RM's failure
// when rpc_result says so, else malformed.
template <typename Header>
absl::Status EchoedHeader(absl::string_view what, const gsp::GspMessage& reply, absl::string_view header_name,
                          bool embedded_first, Header& echo) {
  if (reply.payload.size() < sizeof(echo)) {
    if (reply.rpc_result != NV_OK) return Verdict(what, reply.rpc_result, NV_OK, embedded_first);
    return Malformed(
        what, absl::StrFormat("%u bytes, shorter than %s (%u)", reply.payload.size(), header_name, sizeof(echo)));
  }
  std::memcpy(&echo, reply.payload.data(), sizeof(echo));
  return absl::OkStatus();
}

// What follows the echoed header (`header_bytes`): as many parameter bytes as were sent, GSP-RM's verdict (rpc_result
// and the header's `embedded_status`), then the parameters copied back into `params`.
absl::Status ParamsBack(absl::string_view what, const gsp::GspMessage& reply, size_t header_bytes,
                        uint32_t embedded_status, bool embedded_first, std::span<uint8_t> params) {
  if (reply.payload.size() - header_bytes < params.size()) {
    return Malformed(
        what, absl::StrFormat("%u parameter bytes, paramsSize %u", reply.payload.size() - header_bytes, params.size()));
  }
  BAREGPU_RETURN_IF_ERROR(Verdict(what, reply.rpc_result, embedded_status, embedded_first));
  if (!params.empty()) std::memcpy(params.data(), reply.payload.data() + header_bytes, params.size());
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<gsp::GspMessage> GspTransport::Call(uint32_t function, std::span<const uint8_t> request,
                                                   const std::string& what) {
  absl::Status sent = queue_.SendRpc(function, request, timeout_);
  if (!sent.ok()) return Prefixed(sent, what);
  // GSP-RM answers with a message as long as the request. One record's worth is taken as it comes, so that a short
  // reply shows as short; a longer one is reassembled from its continuation records up to the request's length.
  const size_t reassemble = request.size() > gsp::kMaxRecordPayload ? request.size() : 0;
  absl::StatusOr<gsp::GspMessage> reply = queue_.WaitForReply(function, timeout_, reassemble);
  if (!reply.ok()) return Prefixed(reply.status(), what);
  return reply;
}

absl::StatusOr<Handle> GspTransport::Alloc(Handle client, Handle parent, Handle object, uint32_t class_id,
                                           std::span<uint8_t> params) {
  const std::string what =
      absl::StrFormat("NV_VGPU_MSG_FUNCTION_GSP_RM_ALLOC of object %#x (class %s, parent %#x, client %#x)", object,
                      ClassLabel(class_id), parent, client);
  if (object == kNullObject) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s: GSP-RM takes the handle its caller chooses, and 0 is NV01_NULL_OBJECT", what));
  }
  BAREGPU_RETURN_IF_ERROR(ParamsFit<gsp::rpc_gsp_rm_alloc_v03_00>(what, params));
  gsp::rpc_gsp_rm_alloc_v03_00 header{};
  header.hClient = client;
  header.hParent = parent;
  header.hObject = object;
  header.hClass = class_id;
  header.status = NV_OK;
  header.paramsSize = static_cast<uint32_t>(params.size());
  header.flags = kRpcFlagsNone;
  BAREGPU_ASSIGN_OR_RETURN(gsp::GspMessage reply,
                           Call(NV_VGPU_MSG_FUNCTION_GSP_RM_ALLOC, Request(header, params), what));

  gsp::rpc_gsp_rm_alloc_v03_00 echo;
  BAREGPU_RETURN_IF_ERROR(EchoedHeader(what, reply, "rpc_gsp_rm_alloc_v03_00", /*embedded_first=*/true, echo));
  BAREGPU_RETURN_IF_ERROR(Echo(what, "hClient", echo.hClient, client));
  BAREGPU_RETURN_IF_ERROR(Echo(what, "hParent", echo.hParent, parent));
  BAREGPU_RETURN_IF_ERROR(Echo(what, "hObject", echo.hObject, object));
  BAREGPU_RETURN_IF_ERROR(Echo(what, "hClass", echo.hClass, class_id));
  BAREGPU_RETURN_IF_ERROR(Echo(what, "paramsSize", echo.paramsSize, header.paramsSize));
  BAREGPU_RETURN_IF_ERROR(ParamsBack(what, reply, sizeof(echo), echo.status, /*embedded_first=*/true, params));
  return object;
}

absl::Status GspTransport::Control(Handle client, Handle object, uint32_t cmd, std::span<uint8_t> params) {
  const std::string what = absl::StrFormat("NV_VGPU_MSG_FUNCTION_GSP_RM_CONTROL command %#x on object %#x (client %#x)",
                                           cmd, object, client);
  BAREGPU_RETURN_IF_ERROR(ParamsFit<gsp::rpc_gsp_rm_control_v03_00>(what, params));
  gsp::rpc_gsp_rm_control_v03_00 header{};
  header.hClient = client;
  header.hObject = object;
  header.cmd = cmd;
  header.status = NV_OK;
  header.paramsSize = static_cast<uint32_t>(params.size());
  header.flags = kRpcFlagsNone;
  BAREGPU_ASSIGN_OR_RETURN(gsp::GspMessage reply,
                           Call(NV_VGPU_MSG_FUNCTION_GSP_RM_CONTROL, Request(header, params), what));

  gsp::rpc_gsp_rm_control_v03_00 echo;
  BAREGPU_RETURN_IF_ERROR(EchoedHeader(what, reply, "rpc_gsp_rm_control_v03_00", /*embedded_first=*/false, echo));
  BAREGPU_RETURN_IF_ERROR(Echo(what, "hClient", echo.hClient, client));
  BAREGPU_RETURN_IF_ERROR(Echo(what, "hObject", echo.hObject, object));
  BAREGPU_RETURN_IF_ERROR(Echo(what, "cmd", echo.cmd, cmd));
  BAREGPU_RETURN_IF_ERROR(Echo(what, "paramsSize", echo.paramsSize, header.paramsSize));
  return ParamsBack(what, reply, sizeof(echo), echo.status, /*embedded_first=*/false, params);
}

absl::Status GspTransport::Free(Handle client, Handle parent, Handle object) {
  const std::string what =
      absl::StrFormat("NV_VGPU_MSG_FUNCTION_FREE of object %#x (parent %#x, client %#x)", object, parent, client);
  gsp::rpc_free_v03_00 request{};
  request.params.hRoot = client;
  request.params.hObjectParent = kNullObject;
  request.params.hObjectOld = object;
  request.params.status = NV_OK;
  BAREGPU_ASSIGN_OR_RETURN(gsp::GspMessage reply, Call(NV_VGPU_MSG_FUNCTION_FREE, BytesOf(request), what));

  gsp::rpc_free_v03_00 echo;
  if (reply.payload.size() < sizeof(echo)) {
    if (reply.rpc_result != NV_OK) return Verdict(what, reply.rpc_result, NV_OK, /*embedded_first=*/false);
    return Malformed(
        what, absl::StrFormat("%u bytes, shorter than rpc_free_v03_00 (%u)", reply.payload.size(), sizeof(echo)));
  }
  std::memcpy(&echo, reply.payload.data(), sizeof(echo));
  BAREGPU_RETURN_IF_ERROR(Echo(what, "hRoot", echo.params.hRoot, client));
  BAREGPU_RETURN_IF_ERROR(Echo(what, "hObjectParent", echo.params.hObjectParent, kNullObject));
  BAREGPU_RETURN_IF_ERROR(Echo(what, "hObjectOld", echo.params.hObjectOld, object));
  return Verdict(what, reply.rpc_result, echo.params.status, /*embedded_first=*/false);
}

}  // namespace nv::rm
