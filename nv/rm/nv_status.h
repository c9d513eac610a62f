// An RM status (NV_STATUS, nvstatuscodes.h) as an absl::Status: the RM client's calls fail with the code the RM
// returned, named in the message ("NV_ERR_INVALID_CLASS (0x22)") and kept as a payload so that a caller can act on
// the number (retry NV_ERR_BUSY_RETRY, treat NV_ERR_OBJECT_NOT_FOUND as gone) without parsing text. Both transports
// produce these: GSP-RM's replies carry NV_STATUS values, as do the vendor kernel driver's NVOS*_PARAMETERS.status.
#ifndef BAREGPU_NV_RM_NV_STATUS_H_
#define BAREGPU_NV_RM_NV_STATUS_H_

#include <cstdint>
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace nv::rm {

// The payload type URL an NV_STATUS travels under (the value as 8 hex digits).
inline constexpr absl::string_view kNvStatusPayload = "type.baregpu/nv.rm.NV_STATUS";

// "NV_ERR_INVALID_CLASS (0x22)"; an unknown code prints as a number alone ("0x1234").
std::string NvStatusLabel(uint32_t nv_status);

// The absl code an NV_STATUS reads as: NV_OK is OK; the codes with an obvious counterpart map to it (no memory or
// resources: ResourceExhausted; an invalid argument, class, handle, parent, client or command: InvalidArgument;
// OBJECT_NOT_FOUND: NotFound; NOT_SUPPORTED: Unimplemented; INSERT_DUPLICATE_NAME: AlreadyExists; TIMEOUT:
// DeadlineExceeded; BUSY_RETRY: Unavailable; INVALID_STATE and STATE_IN_USE: FailedPrecondition); the rest are
// Internal (the RM failed for its own reasons).
absl::StatusCode NvStatusCode(uint32_t nv_status);

// "`context`: NV_ERR_... (0x..)" with the NV_STATUS as payload; OK for NV_OK.
absl::Status NvStatusError(uint32_t nv_status, absl::string_view context);

// The NV_STATUS an error carries, or nullopt when it did not come from the RM (a transport failure, a malformed
// reply, a timeout).
std::optional<uint32_t> NvStatusOf(const absl::Status& status);

}  // namespace nv::rm

#endif  // BAREGPU_NV_RM_NV_STATUS_H_
