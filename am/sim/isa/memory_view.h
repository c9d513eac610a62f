// A wave's window onto GPU memory: translations go through the GMC (GpuMemory::Map, so unmapped or protected pages
// fault exactly as for any engine), and the host view of the last page read and the last page written is kept, so
// that consecutive lanes touching one page translate once rather than once per lane.
#ifndef BAREGPU_AM_SIM_ISA_MEMORY_VIEW_H_
#define BAREGPU_AM_SIM_ISA_MEMORY_VIEW_H_

#include <cstdint>
#include <cstring>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "am/sim/gpu_memory.h"

namespace am::sim::isa {

class MemoryView {
 public:
  MemoryView(GpuMemory& memory, const MemoryClient& client) : memory_(memory), client_(client) {}

  // A host pointer to `size` bytes at `address` when they lie in one translated piece; null (with OK) when they
  // straddle two, so that the caller takes Read/Write. A fault is the GMC's error.
  // A translated piece: `length` bytes of GPU memory at `base`, seen by the host at `host`.
  struct Window {
    uint64_t base = 0;
    uint64_t length = 0;
    uint8_t* host = nullptr;
    // The host pointer to `size` bytes at `address` when they lie in this piece, else null.
    uint8_t* Find(uint64_t address, uint32_t size) const {
      const uint64_t offset = address - base;
      return offset < length && length - offset >= size ? host + offset : nullptr;
    }
  };
  // The piece last translated for `access` (Host changes it): a fast path's lanes look there first, and take Host
  // (which translates, and faults) for an address outside it.
  const Window& LastTranslated(Access access) const { return access == Access::kRead ? read_ : write_; }

  absl::StatusOr<uint8_t*> Host(uint64_t address, uint32_t size, Access access) {
    Window& w = access == Access::kRead ? read_ : write_;
    if (uint8_t* host = w.Find(address, size); host != nullptr) return host;
    const uint64_t page = address & ~uint64_t{kPage - 1};
    absl::StatusOr<std::span<uint8_t>> span = memory_.Map(client_, page, kPage, access);
    if (!span.ok()) return span.status();
    w = {page, span->size(), span->data()};
    return w.Find(address, size);
  }
  absl::Status Read(uint64_t address, void* out, uint32_t size) {
    absl::StatusOr<uint8_t*> host = Host(address, size, Access::kRead);
    if (!host.ok()) return host.status();
    if (*host != nullptr) {
      CopyRelaxed(static_cast<uint8_t*>(out), *host, size);
      return absl::OkStatus();
    }
    return ReadMemory(memory_, client_, address, {static_cast<uint8_t*>(out), size});
  }
  absl::Status Write(uint64_t address, const void* in, uint32_t size) {
    absl::StatusOr<uint8_t*> host = Host(address, size, Access::kWrite);
    if (!host.ok()) return host.status();
    if (*host != nullptr) {
      CopyRelaxed(*host, static_cast<const uint8_t*>(in), size);
      return absl::OkStatus();
    }
    return WriteMemory(memory_, client_, address, {static_cast<const uint8_t*>(in), size});
  }
  // Forget cached translations (a new dispatch may run under new page tables).
  void Reset() { read_ = write_ = {}; }

 private:
  static constexpr uint64_t kPage = 4096;
  // GPU memory is shared with other waves, other engines and the driver: an aligned dword (or word, byte) moves as
  // one relaxed atomic access, as a memory transaction does on the hardware, so that a kernel mixing plain loads
  // with another wave's atomics (an -O0 compare-and-swap loop) is a well-defined program for the host too.
  static void CopyRelaxed(uint8_t* to, const uint8_t* from, uint32_t size) {
    const bool aligned = ((reinterpret_cast<uintptr_t>(to) | reinterpret_cast<uintptr_t>(from)) & 3) == 0;
    if (aligned && size % 4 == 0) {
      for (uint32_t i = 0; i < size; i += 4) {
        __atomic_store_n(reinterpret_cast<uint32_t*>(to + i),
                         __atomic_load_n(reinterpret_cast<const uint32_t*>(from + i), __ATOMIC_RELAXED),
                         __ATOMIC_RELAXED);
      }
      return;
    }
    for (uint32_t i = 0; i < size; ++i) {
      __atomic_store_n(to + i, __atomic_load_n(from + i, __ATOMIC_RELAXED), __ATOMIC_RELAXED);
    }
  }
  GpuMemory& memory_;
  MemoryClient client_;
  Window read_, write_;
};

}  // namespace am::sim::isa

#endif  // BAREGPU_AM_SIM_ISA_MEMORY_VIEW_H_
