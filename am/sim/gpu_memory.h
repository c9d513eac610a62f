// Memory as a GPU engine reaches it: through a hub (GCHUB for GFX, compute and SDMA; MMHUB for the PSP and the IH)
// and one of its VM contexts. The GMC model implements it (page-table walk, TLB, apertures, faults); engine
// models only ever see host views of what the translation allowed, so an engine can never reach memory the
// driver did not map for it.
#ifndef BAREGPU_AM_SIM_GPU_MEMORY_H_
#define BAREGPU_AM_SIM_GPU_MEMORY_H_

#include <cstdint>
#include <span>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace am::sim {

enum class Hub : uint8_t { kGc, kMm };
// kExecute is an instruction fetch: it needs the PTE's EXECUTABLE bit (AMDGPU_PTE_EXECUTABLE) where a data read
// needs READABLE.
enum class Access : uint8_t { kRead, kWrite, kExecute };

// Who accesses memory: the hub and VM context the access goes through, and the UTCL2 client id the GMC reports
// in its fault status register (L2_PROTECTION_FAULT_STATUS.CID) if the access faults. `bus_address` marks an
// engine programmed with a physical bus address rather than a GPU address (the IH ring with IH_RB_CNTL.MC_SPACE
// set to the physical space): it bypasses the page tables but still only reaches DMA memory the driver owns.
struct MemoryClient {
  Hub hub = Hub::kGc;
  uint32_t vmid = 0;
  uint32_t fault_cid = 0;
  const char* name = "";
  bool bus_address = false;
};

class GpuMemory {
 public:
  virtual ~GpuMemory() = default;
  // Translates [address, address + length) for `client` and returns a host view of its first physically
  // contiguous piece: never empty, at most `length` bytes. A translation that fails is a fault: the GMC latches
  // it in its fault registers, posts the fault interrupt, and the error names the address and the reason.
  virtual absl::StatusOr<std::span<uint8_t>> Map(const MemoryClient& client, uint64_t address, uint64_t length,
                                                 Access access) = 0;
  // How many faulting accesses so far (any client) were redirected to the dummy page and so succeeded with the dummy
  // page's bytes. A reader that sees it change across a read may have read the dummy page (the instruction fetcher
  // stops decoding ahead there rather than walk what faulting writes left in it, issue 23); another client's fault only
  // costs it that.
  virtual uint64_t redirected_accesses() const { return 0; }

  // A count that changes whenever a view Map gave may no longer be what a new Map would give: a TLB invalidation,
  // a write to a hub's apertures or TLB control, a chip reset, a DMA unmapping, bus mastering switched. While it
  // stays, an engine may keep using a view, as the hardware's UTCL1 keeps a translation until it is invalidated
  // (CachedMemory). kNoTranslationGeneration: no such count, so nothing may be kept. A plain integer, not an
  // optional: GCC returns an optional<uint64_t> through a byte store and a wider reload, a failed store forward on
  // every engine access (issue 24: 8% of the round trip's MEC thread in perf).
  static constexpr uint64_t kNoTranslationGeneration = ~uint64_t{0};
  virtual uint64_t translation_generation() const { return kNoTranslationGeneration; }
  // Map for a cache: the same translation, checks and faults as Map(client, address, length, access), but the view
  // may go on past `length` to the end of the page where the same translation holds, so later accesses to the page
  // need no translation.
  virtual absl::StatusOr<std::span<uint8_t>> MapAhead(const MemoryClient& client, uint64_t address, uint64_t length,
                                                      Access access) {
    return Map(client, address, length, access);
  }
};

// Whole-range helpers over Map. A fault part-way leaves the bytes before it moved (as on the hardware).
absl::Status ReadMemory(GpuMemory& memory, const MemoryClient& client, uint64_t address, std::span<uint8_t> out,
                        Access access = Access::kRead);
absl::Status WriteMemory(GpuMemory& memory, const MemoryClient& client, uint64_t address,
                         std::span<const uint8_t> data);
// ReadMemory of dwords another agent may write meanwhile (an indirect buffer the host patches for its next
// submission while the engine still fetches the last one): each dword is read whole, as the engines fetch them, by
// relaxed atomic loads, so the copy is no data race. `address` must be dword-aligned.
absl::Status ReadDwords(GpuMemory& memory, const MemoryClient& client, uint64_t address, std::span<uint32_t> out,
                        Access access = Access::kRead);
// `out.size()` whole dwords from `from` (dword-aligned), by relaxed atomic loads.
void CopyDwords(std::span<uint32_t> out, const uint8_t* from);
// Naturally aligned 32/64-bit locations, for polls, fences and atomics: use with std::atomic_ref. An unaligned
// address is an error (the engines' packet formats all require alignment).
absl::StatusOr<uint32_t*> MapDword(GpuMemory& memory, const MemoryClient& client, uint64_t address, Access access);
absl::StatusOr<uint64_t*> MapQword(GpuMemory& memory, const MemoryClient& client, uint64_t address, Access access);

}  // namespace am::sim

#endif  // BAREGPU_AM_SIM_GPU_MEMORY_H_
