#include "hcq/kernarg_area.h"

#include "absl/strings/str_format.h"
#include "base/status_macros.h"

namespace hcq {

KernargArea::~KernargArea() { Shutdown(); }

absl::Status KernargArea::Init(uint64_t area_bytes, Hooks hooks) {
  area_bytes_ = area_bytes;
  hooks_ = std::move(hooks);
  areas_.reserve(kMaxAreas);  // areas never move: a Piece points into one
  BAREGPU_ASSIGN_OR_RETURN(Buffer memory, hooks_.alloc(area_bytes_));
  areas_.push_back(Area{.memory = memory, .live = std::vector<Live>(area_bytes_ / kAlignment + 1)});
  current_ = 0;
  return absl::OkStatus();
}

void KernargArea::Shutdown() {
  for (Area& area : areas_) {
    if (area.memory.valid() && hooks_.free) hooks_.free(area.memory);
  }
  areas_.clear();
}

void KernargArea::Reclaim(Area& area, uint64_t reached) {
  while (area.count > 0 && area.oldest().release <= reached) {
    area.first = (area.first + 1) % area.live.size();
    --area.count;
  }
  if (area.count == 0) area.head = 0;  // empty: start over at the bottom (keeps pieces contiguous)
}

bool KernargArea::Fits(const Area& area, uint64_t bytes, uint64_t size, uint64_t* at) {
  if (area.count + 1 >= area.live.size()) return false;
  if (area.count == 0) {
    *at = 0;
    return bytes <= size;
  }
  const uint64_t tail = area.oldest().offset;
  if (area.head > tail) {  // live region [tail, head): room above it, or below the tail after a wrap
    if (area.head + bytes <= size) return *at = area.head, true;
    if (bytes < tail) return *at = 0, true;
    return false;
  }
  // Wrapped: live region [tail, size) + [0, head): room between head and tail.
  if (area.head + bytes < tail) return *at = area.head, true;
  return false;
}

KernargArea::Piece KernargArea::Take(Area& area, uint64_t at, uint64_t bytes, uint64_t release) {
  area.live[(area.first + area.count) % area.live.size()] = {at, bytes, release};
  ++area.count;
  area.head = at + bytes;
  return {area.memory.cpu() + at, area.memory.va() + at};
}

absl::StatusOr<KernargArea::Piece> KernargArea::Alloc(uint64_t bytes, absl::string_view device_name) {
  if (bytes > area_bytes_) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s: %d bytes of kernel arguments exceed the area (%d bytes); raise DeviceOptions::kernarg_bytes", device_name,
        bytes, area_bytes_));
  }
  const uint64_t release = hooks_.timeline_next();
  uint64_t at = 0;
  for (int attempt = 0;; ++attempt) {
    const uint64_t reached = hooks_.timeline_reached();
    // The current area first, then the others (one of them may have drained).
    for (size_t i = 0; i < areas_.size(); ++i) {
      Area& area = areas_[(current_ + i) % areas_.size()];
      Reclaim(area, reached);
      if (Fits(area, bytes, area_bytes_, &at)) {
        current_ = (current_ + i) % areas_.size();
        return Take(area, at, bytes, release);
      }
    }
    // No room anywhere. The oldest piece of the current area: is its work submitted (its value handed out)?
    const Area& area = areas_[current_];
    if (attempt == 0 && area.count > 0 && area.oldest().release < release) {
      BAREGPU_RETURN_IF_ERROR(hooks_.wait(area.oldest().release));
      continue;
    }
    if (static_cast<int>(areas_.size()) < kMaxAreas) {
      BAREGPU_ASSIGN_OR_RETURN(Buffer memory, hooks_.alloc(area_bytes_));
      areas_.push_back(Area{.memory = memory, .live = std::vector<Live>(area_bytes_ / kAlignment + 1)});
      current_ = areas_.size() - 1;
      continue;
    }
    uint64_t pieces = 0;
    for (const Area& a : areas_) pieces += a.count;
    return absl::ResourceExhaustedError(absl::StrFormat(
        "%s: all kernel-argument memory (%d areas of %d bytes) holds arguments of %d launches that are not "
        "finished or not yet submitted; submit them (signalling the device's timeline) before creating more, or "
        "raise DeviceOptions::kernarg_bytes",
        device_name, areas_.size(), area_bytes_, pieces));
  }
}

void KernargArea::ForgetTimeline() {
  for (Area& area : areas_) {
    area.first = area.count = 0;
    area.head = 0;
  }
}

}  // namespace hcq
