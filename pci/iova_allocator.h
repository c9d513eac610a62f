// Allocates device addresses (IOVAs) for DMA memory inside an aperture, honouring alignment and a DMA mask.
//
// Used by the VFIO backend (addresses it programs into the IOMMU) and by virtual devices (the addresses their
// model translates). First fit over an ordered free list; freeing merges neighbours. Thread-safe.
#ifndef BAREGPU_PCI_IOVA_ALLOCATOR_H_
#define BAREGPU_PCI_IOVA_ALLOCATOR_H_

#include <cstdint>
#include <map>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "base/mutex.h"

namespace pci {

class IovaAllocator {
 public:
  // Manages [base, base + size). Both must be page aligned; size 0 makes an allocator that always fails.
  IovaAllocator(uint64_t base, uint64_t size);

  // Returns a range of `size` bytes (rounded up to pages) aligned to `alignment` (a power of two, at least a page)
  // whose last byte is <= dma_mask.
  absl::StatusOr<uint64_t> Allocate(uint64_t size, uint64_t alignment, uint64_t dma_mask);
  // Frees a range returned by Allocate; anything else is an error and changes nothing.
  absl::Status Free(uint64_t iova);
  // Removes [start, start + size) from the free space, e.g. a reserved region the IOMMU does not translate.
  absl::Status Reserve(uint64_t start, uint64_t size);

  uint64_t free_bytes() const;
  uint64_t allocated_bytes() const;

 private:
  mutable base::Mutex mu_;
  std::map<uint64_t, uint64_t> free_ ABSL_GUARDED_BY(mu_);       // start -> size
  std::map<uint64_t, uint64_t> allocated_ ABSL_GUARDED_BY(mu_);  // start -> size
};

}  // namespace pci

#endif  // BAREGPU_PCI_IOVA_ALLOCATOR_H_
