// A wave's window onto GPU memory: translations go through the GMC (GpuMemory::Map, so unmapped or protected pages
// fault exactly as for any engine), and the host views of the last few pages read and written are kept, so that
// lanes and instructions touching those pages translate once rather than once per lane.
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
  // Whole pages translated during this dispatch, by page number, direct mapped: a wave-wide fast path finds a lane's
  // page with one compare, however its lanes spread over pages (the lanes of one load in tinygrad's matmul read 8
  // pages, interleaved), and takes Host only for a page not seen yet (or evicted by another page in its slot).
  struct PageSlot {
    uint64_t page = ~uint64_t{0};  // address / kPage; the default matches no address
    uint8_t* host = nullptr;
  };
  static constexpr uint64_t kPage = 4096;
  static constexpr int kPageSlots = 64;
  const PageSlot* Pages(Access access) const { return access == Access::kRead ? read_pages_ : write_pages_; }
  // The slot of the page holding `address`: the page number hashed (Fibonacci hashing, the top 6 bits of its
  // product with 2^64 / phi), not its low bits, since buffers a power of two apart (vector_add's a, b and c, 4 MiB
  // each) would share low bits and evict one another in every wave.
  static int SlotOf(uint64_t address) {
    static_assert(kPageSlots == 64);
    return static_cast<int>(((address / kPage) * 0x9e3779b97f4a7c15ull) >> 58);
  }
  // The host view of the page holding `address` when `pages` (from Pages) has it, else null.
  static uint8_t* FindPage(const PageSlot* pages, uint64_t address) {
    const PageSlot& slot = pages[SlotOf(address)];
    return slot.page == address / kPage ? slot.host + address % kPage : nullptr;
  }

  // A host pointer to `size` bytes at `address` when they lie in one translated piece; null (with OK) when they
  // straddle two, so that the caller takes Read/Write. A fault is the GMC's error.
  absl::StatusOr<uint8_t*> Host(uint64_t address, uint32_t size, Access access) {
    Windows& w = access == Access::kRead ? read_ : write_;
    if (uint8_t* host = w.way[w.last].Find(address, size); host != nullptr) return host;
    for (int i = 0; i < kWays; ++i) {
      if (uint8_t* host = w.way[i].Find(address, size); host != nullptr) {
        w.last = i;
        return host;
      }
    }
    const uint64_t page = address & ~uint64_t{kPage - 1};
    const uint64_t redirected = memory_.redirected_accesses();
    absl::StatusOr<std::span<uint8_t>> span = memory_.Map(client_, page, kPage, access);
    if (!span.ok()) return span.status();
    // Only a whole page that translated without a fault is kept by page number: a fault redirected to the dummy page
    // stays in the ways only, so that an access after its eviction faults again, as before (another client's
    // redirection meanwhile skips it too: harmless, the next access translates again). The fast paths move dwords
    // through the page's host view, which must be dword aligned for that (pages always are).
    if (span->size() == kPage && memory_.redirected_accesses() == redirected &&
        reinterpret_cast<uintptr_t>(span->data()) % 4 == 0) {
      PageSlot* pages = access == Access::kRead ? read_pages_ : write_pages_;
      pages[SlotOf(page)] = {page / kPage, span->data()};
    }
    w.last = w.next;
    w.next = (w.next + 1) % kWays;
    w.way[w.last] = {page, span->size(), span->data()};
    return w.way[w.last].Find(address, size);
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
  void Reset() {
    read_ = write_ = {};
    for (int i = 0; i < kPageSlots; ++i) read_pages_[i] = write_pages_[i] = {};
  }

 private:
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
  // The last pages translated for reads and for writes, a few of each: a kernel reads its arguments and each of its
  // inputs from pages of their own, and with one window each wave of vector_add translated three pages again
  // (kernarg, a, b), each translation a page walk (and, for FlatMemory, a lock both workers take). Replaced round
  // robin. Like the single window before them they live for one dispatch (a runner's view), during which the
  // driver does not change the page tables under the dispatch. 16, not 4: the lanes of one load in tinygrad's matmul
  // read rows of a matrix 1 KiB apart, 8 pages per wave, which round robin over 4 ways translated again every lane
  // (a page walk and FlatMemory's lock each).
  static constexpr int kWays = 16;
  struct Windows {
    Window way[kWays];
    int last = 0;  // the way used last, which LastTranslated returns
    int next = 0;  // the way the next translation replaces
  };
  GpuMemory& memory_;
  MemoryClient client_;
  Windows read_, write_;
  PageSlot read_pages_[kPageSlots], write_pages_[kPageSlots];
};

}  // namespace am::sim::isa

#endif  // BAREGPU_AM_SIM_ISA_MEMORY_VIEW_H_
