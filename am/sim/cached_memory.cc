#include "am/sim/cached_memory.h"

#include <algorithm>

#include "base/status_macros.h"

namespace am::sim {

absl::StatusOr<std::span<uint8_t>> CachedMemory::Map(const MemoryClient& client, uint64_t address, uint64_t length,
                                                     Access access) {
  const uint64_t generation = memory_.translation_generation();
  if (generation == kNoTranslationGeneration) return memory_.Map(client, address, length, access);
  if (length > 0) {
    if (const Entry* e = Find(KeyOf(client, access), address, generation)) {
      ++hits_;
      const uint64_t offset = address - e->address;
      return std::span<uint8_t>(e->data + offset, std::min<uint64_t>(length, e->size - offset));
    }
  }
  ++misses_;
  const uint64_t redirected = memory_.redirected_accesses();
  BAREGPU_ASSIGN_OR_RETURN(std::span<uint8_t> view, memory_.MapAhead(client, address, length, access));
  // Kept only if nothing was redirected meanwhile (this access may have been) and the translation did not change
  // while it was made (then it may be the old one).
  if (memory_.redirected_accesses() == redirected && memory_.translation_generation() == generation) {
    entries_[next_] = Entry{KeyOf(client, access), generation, address, view.size(), view.data()};
    next_ = (next_ + 1) % kEntries;
  }
  return view.first(std::min<uint64_t>(length, view.size()));
}

}  // namespace am::sim
