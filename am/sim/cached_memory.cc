#include "am/sim/cached_memory.h"

#include <algorithm>

#include "base/status_macros.h"

namespace am::sim {

const CachedMemory::Entry* CachedMemory::Find(const MemoryClient& client, uint64_t address, Access access,
                                              uint64_t generation) const {
  for (const Entry& e : entries_) {
    if (e.valid && e.generation == generation && e.access == access && e.hub == client.hub && e.vmid == client.vmid &&
        e.bus_address == client.bus_address && address - e.address < e.view.size()) {
      return &e;
    }
  }
  return nullptr;
}

const uint8_t* CachedMemory::Lookup(const MemoryClient& client, uint64_t address, Access access) const {
  const uint64_t generation = memory_.translation_generation();
  if (generation == kNoTranslationGeneration) return nullptr;
  const Entry* e = Find(client, address, access, generation);
  return e == nullptr ? nullptr : e->view.data() + (address - e->address);
}

absl::StatusOr<std::span<uint8_t>> CachedMemory::Map(const MemoryClient& client, uint64_t address, uint64_t length,
                                                     Access access) {
  const uint64_t generation = memory_.translation_generation();
  if (generation == kNoTranslationGeneration) return memory_.Map(client, address, length, access);
  if (length > 0) {
    if (const Entry* e = Find(client, address, access, generation)) {
      ++hits_;
      const uint64_t offset = address - e->address;
      return e->view.subspan(offset, std::min<uint64_t>(length, e->view.size() - offset));
    }
  }
  ++misses_;
  const uint64_t redirected = memory_.redirected_accesses();
  BAREGPU_ASSIGN_OR_RETURN(std::span<uint8_t> view, memory_.MapAhead(client, address, length, access));
  // Kept only if nothing was redirected meanwhile (this access may have been) and the translation did not change
  // while it was made (then it may be the old one).
  if (memory_.redirected_accesses() == redirected && memory_.translation_generation() == generation) {
    entries_[next_] = Entry{true, generation, address, view, client.hub, client.vmid, client.bus_address, access};
    next_ = (next_ + 1) % kEntries;
  }
  return view.first(std::min<uint64_t>(length, view.size()));
}

}  // namespace am::sim
