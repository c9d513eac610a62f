#include "nv/rm/nv_status.h"

#include <cstdlib>

#include "absl/strings/cord.h"
#include "absl/strings/str_format.h"
#include "nv/regs/names.h"
#include "nv/regs/status_constants.h"

namespace nv::rm {

using namespace regs::status;  // NOLINT: the codes read as in nvstatuscodes.h

std::string NvStatusLabel(uint32_t nv_status) {
  absl::string_view name = regs::StatusName(nv_status);
  return name.empty() ? absl::StrFormat("%#x", nv_status) : absl::StrFormat("%s (%#x)", name, nv_status);
}

absl::StatusCode NvStatusCode(uint32_t nv_status) {
  switch (nv_status) {
    case NV_OK:
      return absl::StatusCode::kOk;
    case NV_ERR_NO_MEMORY:
    case NV_ERR_INSUFFICIENT_RESOURCES:
      return absl::StatusCode::kResourceExhausted;
    case NV_ERR_INVALID_ARGUMENT:
    case NV_ERR_INVALID_PARAMETER:
    case NV_ERR_INVALID_PARAM_STRUCT:
    case NV_ERR_INVALID_CLASS:
    case NV_ERR_INVALID_OBJECT:
    case NV_ERR_INVALID_OBJECT_HANDLE:
    case NV_ERR_INVALID_OBJECT_PARENT:
    case NV_ERR_INVALID_CLIENT:
    case NV_ERR_INVALID_COMMAND:
    case NV_ERR_INVALID_LIMIT:
      return absl::StatusCode::kInvalidArgument;
    case NV_ERR_OBJECT_NOT_FOUND:
      return absl::StatusCode::kNotFound;
    case NV_ERR_NOT_SUPPORTED:
      return absl::StatusCode::kUnimplemented;
    case NV_ERR_INSERT_DUPLICATE_NAME:
      return absl::StatusCode::kAlreadyExists;
    case NV_ERR_TIMEOUT:
      return absl::StatusCode::kDeadlineExceeded;
    case NV_ERR_BUSY_RETRY:
      return absl::StatusCode::kUnavailable;
    case NV_ERR_INVALID_STATE:
    case NV_ERR_STATE_IN_USE:
      return absl::StatusCode::kFailedPrecondition;
    default:
      return absl::StatusCode::kInternal;
  }
}

absl::Status NvStatusError(uint32_t nv_status, absl::string_view context) {
  if (nv_status == NV_OK) return absl::OkStatus();
  absl::Status status(NvStatusCode(nv_status), absl::StrFormat("%s: %s", context, NvStatusLabel(nv_status)));
  // From a string_view: Debian's Abseil is built with GCC, whose mangling of Cord's std::string&& constructor
  // template clang does not produce.
  const std::string value = absl::StrFormat("%08x", nv_status);
  status.SetPayload(kNvStatusPayload, absl::Cord(absl::string_view(value)));
  return status;
}

std::optional<uint32_t> NvStatusOf(const absl::Status& status) {
  const auto payload = status.GetPayload(kNvStatusPayload);  // absl::optional in Debian's Abseil
  if (!payload) return std::nullopt;
  const std::string text(*payload);
  char* end = nullptr;
  const unsigned long value = std::strtoul(text.c_str(), &end, 16);
  if (text.size() != 8 || end != text.c_str() + text.size()) return std::nullopt;
  return static_cast<uint32_t>(value);
}

}  // namespace nv::rm
