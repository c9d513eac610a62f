// Reading VFIO's INFO replies: capability chains (struct vfio_info_cap_header, linux/vfio.h), the type1 IOMMU's
// valid IOVA ranges, a region's sparse mmap areas, and the IOVA aperture they leave for DMA.
//
// The kernel fills these buffers, but they are still parsed defensively: every offset and count is checked
// against the buffer, and a chain that loops ends with an error instead of hanging.
#ifndef BAREGPU_PCI_VFIO_INFO_H_
#define BAREGPU_PCI_VFIO_INFO_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "pci/iova_allocator.h"

namespace pci {

struct Range {
  uint64_t start = 0;
  uint64_t end = 0;  // inclusive, as VFIO reports IOVA ranges
};

// The offset of capability `id` in `info`, following `next` links from `first` (0: no chain). `what` names the
// reply in errors ("VFIO_IOMMU_GET_INFO").
absl::StatusOr<std::optional<uint32_t>> FindVfioCapability(std::span<const uint8_t> info, uint32_t first, uint16_t id,
                                                           absl::string_view what);

// VFIO_IOMMU_TYPE1_INFO_CAP_IOVA_RANGE at `offset`: the IOVA ranges the IOMMU translates.
absl::StatusOr<std::vector<Range>> ParseIovaRanges(std::span<const uint8_t> info, uint32_t offset);

// VFIO_REGION_INFO_CAP_SPARSE_MMAP at `offset`: the parts of a region that may be mmapped (end inclusive).
absl::StatusOr<std::vector<Range>> ParseSparseMmapAreas(std::span<const uint8_t> info, uint32_t offset);

// An allocator over the valid IOVA ranges (everything when `ranges` is empty), minus the first MiB so that a
// zero or small garbage address is never valid DMA, and capped at 2^56 so that sizes never wrap.
std::unique_ptr<IovaAllocator> MakeIovaAllocator(const std::vector<Range>& ranges);

}  // namespace pci

#endif  // BAREGPU_PCI_VFIO_INFO_H_
