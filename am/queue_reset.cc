#include "am/queue_reset.h"

#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"

namespace am {

std::string QueueReset::ToString() const {
  if (lost_dwords == 0) return absl::StrFormat("%s: %s; nothing was pending", queue, method);
  return absl::StrFormat("%s: %s; lost %d dwords (%s) from rptr %#x to wptr %#x", queue, method, lost_dwords,
                         lost_packets.empty() ? "undecodable" : absl::StrJoin(lost_packets, ", "), rptr, wptr);
}

}  // namespace am
