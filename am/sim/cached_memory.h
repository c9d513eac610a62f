// One engine thread's translation cache in front of the GMC: the CP's UTCL1, which keeps a few recent translations
// until the hub's TLB is invalidated. An engine that reads its ring, polls its write pointer and reports its read
// pointer through one of these translates each page once instead of on every access (the TLB's lock and lookup, the
// DMA space's lock), and can read ahead from what it holds (Lookup).
#ifndef BAREGPU_AM_SIM_CACHED_MEMORY_H_
#define BAREGPU_AM_SIM_CACHED_MEMORY_H_

#include <array>
#include <cstdint>
#include <cstring>
#include <span>

#include "am/sim/gpu_memory.h"

namespace am::sim {

// Not thread-safe: one per engine thread. A view is kept while the memory's translation_generation() is unchanged
// (an invalidation, an aperture write, a reset or a DMA unmapping changes it) and is used only by the same client
// (hub, context, bus addressing) for the same kind of access. An access that faulted, or may have been redirected
// to the dummy page, is never kept: each such access must fault again, as on the hardware. Memory without a
// generation (translation_generation() is kNoTranslationGeneration) is mapped on every access.
class CachedMemory final : public GpuMemory {
 public:
  explicit CachedMemory(GpuMemory& memory) : memory_(memory) {}

  absl::StatusOr<std::span<uint8_t>> Map(const MemoryClient& client, uint64_t address, uint64_t length,
                                         Access access) override;
  uint64_t redirected_accesses() const override { return memory_.redirected_accesses(); }
  uint64_t translation_generation() const override { return memory_.translation_generation(); }

  // The host byte a kept view has for `address`, or null: no translation, no fault, nothing counted. For a prefetch
  // (the CP reads ahead in its ring and buffers), never for the access itself.
  const uint8_t* Lookup(const MemoryClient& client, uint64_t address, Access access) const {
    const Entry* e = Find(KeyOf(client, access), address, memory_.translation_generation());
    return e == nullptr ? nullptr : e->data + (address - e->address);
  }

  // The host bytes of the whole access [address, address + length) when one kept view holds them (a hit, counted),
  // else null, and the caller takes Map's path (a miss, a fault, an access across pages). The engines' every packet
  // read and fence write come here first (ReadMemory, MapDword and MapQword below): issue 24 counted about 140
  // instructions per cached access through Map's virtual call and status, and ten of them per signal round trip.
  uint8_t* Held(const MemoryClient& client, uint64_t address, uint64_t length, Access access) {
    if (length == 0) return nullptr;
    const Entry* e = Find(KeyOf(client, access), address, memory_.translation_generation());
    if (e == nullptr || length > e->size - (address - e->address)) return nullptr;
    ++hits_;
    return e->data + (address - e->address);
  }

  // For tests and benchmarks.
  uint64_t hits() const { return hits_; }
  uint64_t misses() const { return misses_; }

 private:
  // How many views are kept: an engine's ring page, its write-pointer poll and its read-pointer report, with one to
  // spare for a ring that crosses a page.
  static constexpr int kEntries = 4;
  // A view's client and access in one word (never 0, which marks a free entry), so that an entry matches by one
  // compare of the key, one of the generation and one of the range.
  static uint64_t KeyOf(const MemoryClient& client, Access access) {
    return uint64_t{client.vmid} << 32 | uint64_t{static_cast<uint8_t>(client.hub)} << 16 |
           uint64_t{client.bus_address} << 12 | uint64_t{static_cast<uint8_t>(access)} << 4 | 1;
  }
  struct Entry {
    uint64_t key = 0;  // KeyOf the client and access it was mapped for; 0: free
    uint64_t generation = 0;
    uint64_t address = 0;  // the GPU address data[0] is at
    uint64_t size = 0;
    uint8_t* data = nullptr;
  };

  // The kept view holding `address` for `key` under `generation`, or null.
  const Entry* Find(uint64_t key, uint64_t address, uint64_t generation) const {
    for (const Entry& e : entries_) {
      if (e.key == key && e.generation == generation && address - e.address < e.size) return &e;
    }
    return nullptr;
  }

  GpuMemory& memory_;
  std::array<Entry, kEntries> entries_{};
  int next_ = 0;  // the entry a miss replaces (round robin)
  uint64_t hits_ = 0;
  uint64_t misses_ = 0;
};

// The whole-range helpers of gpu_memory.h through an engine's cache: a held view serves the access at once.
inline absl::Status ReadMemory(CachedMemory& memory, const MemoryClient& client, uint64_t address,
                               std::span<uint8_t> out, Access access = Access::kRead) {
  if (const uint8_t* held = memory.Held(client, address, out.size(), access)) {
    std::memcpy(out.data(), held, out.size());
    return absl::OkStatus();
  }
  return ReadMemory(static_cast<GpuMemory&>(memory), client, address, out, access);
}
inline absl::Status ReadDwords(CachedMemory& memory, const MemoryClient& client, uint64_t address,
                               std::span<uint32_t> out, Access access = Access::kRead) {
  if (address % sizeof(uint32_t) == 0) {
    if (const uint8_t* held = memory.Held(client, address, out.size_bytes(), access)) {
      CopyDwords(out, held);
      return absl::OkStatus();
    }
  }
  return ReadDwords(static_cast<GpuMemory&>(memory), client, address, out, access);
}
// MapDword and MapQword: an aligned item a held view covers, else gpu_memory.h's helper (`map`), which checks and
// translates.
template <typename T>
absl::StatusOr<T*> MapHeld(CachedMemory& memory, const MemoryClient& client, uint64_t address, Access access,
                           absl::StatusOr<T*> (*map)(GpuMemory&, const MemoryClient&, uint64_t, Access)) {
  if (address % sizeof(T) == 0) {
    if (uint8_t* held = memory.Held(client, address, sizeof(T), access)) return reinterpret_cast<T*>(held);
  }
  return map(memory, client, address, access);
}
inline absl::StatusOr<uint32_t*> MapDword(CachedMemory& memory, const MemoryClient& client, uint64_t address,
                                          Access access) {
  return MapHeld<uint32_t>(memory, client, address, access, &MapDword);
}
inline absl::StatusOr<uint64_t*> MapQword(CachedMemory& memory, const MemoryClient& client, uint64_t address,
                                          Access access) {
  return MapHeld<uint64_t>(memory, client, address, access, &MapQword);
}

}  // namespace am::sim

#endif  // BAREGPU_AM_SIM_CACHED_MEMORY_H_
