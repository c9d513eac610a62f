// One engine thread's translation cache in front of the GMC: the CP's UTCL1, which keeps a few recent translations
// until the hub's TLB is invalidated. An engine that reads its ring, polls its write pointer and reports its read
// pointer through one of these translates each page once instead of on every access (the TLB's lock and lookup, the
// DMA space's lock), and can read ahead from what it holds (Lookup).
#ifndef BAREGPU_AM_SIM_CACHED_MEMORY_H_
#define BAREGPU_AM_SIM_CACHED_MEMORY_H_

#include <array>
#include <cstdint>
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
  const uint8_t* Lookup(const MemoryClient& client, uint64_t address, Access access) const;

  // For tests and benchmarks.
  uint64_t hits() const { return hits_; }
  uint64_t misses() const { return misses_; }

 private:
  // How many views are kept: an engine's ring page, its write-pointer poll and its read-pointer report, with one to
  // spare for a ring that crosses a page.
  static constexpr int kEntries = 4;
  struct Entry {
    bool valid = false;
    uint64_t generation = 0;
    uint64_t address = 0;  // the GPU address view[0] is at
    std::span<uint8_t> view;
    Hub hub = Hub::kGc;
    uint32_t vmid = 0;
    bool bus_address = false;
    Access access = Access::kRead;
  };

  const Entry* Find(const MemoryClient& client, uint64_t address, Access access, uint64_t generation) const;

  GpuMemory& memory_;
  std::array<Entry, kEntries> entries_{};
  int next_ = 0;  // the entry a miss replaces (round robin)
  uint64_t hits_ = 0;
  uint64_t misses_ = 0;
};

}  // namespace am::sim

#endif  // BAREGPU_AM_SIM_CACHED_MEMORY_H_
