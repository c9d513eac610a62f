// The GPU virtual address space of the process: one allocator shared by every device the process opens, so that
// an address means one buffer everywhere (a buffer mapped into several devices' page tables, peer access, HCQ
// signals visible to all queues). Large allocations are aligned so that the page tables can use huge pages and
// fragments: 2 MiB for 2 MiB and more, 64 KiB for 64 KiB and more.
//
// The range [kStart, kEnd) is the project's choice: inside gfx11's 48-bit VM space, clear of address 0 and of
// the low 4 GiB (where a stray 32-bit pointer would land), below the top where the kernel driver places its own
// reserved ranges.
#ifndef BAREGPU_AM_VA_ALLOCATOR_H_
#define BAREGPU_AM_VA_ALLOCATOR_H_

#include <cstdint>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "am/tlsf_allocator.h"
#include "base/mutex.h"

namespace am {

class VaAllocator {
 public:
  static constexpr uint64_t kStart = uint64_t{1} << 44;  // 16 TiB
  static constexpr uint64_t kEnd = uint64_t{0x7} << 44;  // 112 TiB

  // The process-wide allocator.
  static VaAllocator& Global();

  VaAllocator(uint64_t start, uint64_t end) : tlsf_(start, end - start, kPageSize) {}

  absl::StatusOr<uint64_t> Allocate(uint64_t size, uint64_t alignment = 0);
  absl::Status Free(uint64_t va);
  uint64_t free_bytes() const;

 private:
  static constexpr uint64_t kPageSize = 4096;
  mutable base::Mutex mu_;
  TlsfAllocator tlsf_ ABSL_GUARDED_BY(mu_);
};

}  // namespace am

#endif  // BAREGPU_AM_VA_ALLOCATOR_H_
