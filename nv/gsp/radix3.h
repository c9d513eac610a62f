// The radix3 page table through which the booter and GSP-RM's bootloader find the GSP-RM image (the GSP ELF's
// .fwimage) in system memory: GspFwWprMeta.sysmemAddrOfRadix3Elf is the bus address of level 0. Three levels of
// 4 KiB pages of little-endian u64 bus addresses: level 0 holds one entry, the address of the level-1 page; level 1
// one entry per level-2 page; level 2 one entry per image page. Linux 6.12 nouveau nvkm/subdev/gsp/r535.c
// (nvkm_gsp_radix3_sg, "See kgspCreateRadix3_IMPL"); tinygrad support/nv/ip.py (NV_GSP.init_gsp_image) builds the
// same three levels. The page size is LibOS's (libos_init_args.h LIBOS_MEMORY_REGION_RADIX_PAGE_SIZE/LOG2; nouveau's
// GSP_PAGE_SIZE).
//
// nouveau allocates level 1 as one page, so at most 512 level-2 pages, 512 * 512 image pages: 1 GiB of image.
// tinygrad sizes every level by its entries instead ((n - 1) >> 9) + 1 pages; both agree up to that limit, and
// this builder refuses what nouveau cannot map.
#ifndef BAREGPU_NV_GSP_RADIX3_H_
#define BAREGPU_NV_GSP_RADIX3_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "nv/regs/gsp_constants.h"

namespace nv::gsp {

inline constexpr uint64_t kRadix3PageSize = regs::gsp::LIBOS_MEMORY_REGION_RADIX_PAGE_SIZE;
// u64 entries per page: 4096 / 8 = 512.
inline constexpr uint64_t kRadix3EntriesPerPage = kRadix3PageSize / sizeof(uint64_t);
// nouveau's bound: one level-1 page.
inline constexpr uint64_t kRadix3MaxImagePages = kRadix3EntriesPerPage * kRadix3EntriesPerPage;

// How many pages each level takes for an image of `image_size` bytes.
struct Radix3Geometry {
  uint64_t image_pages = 0;   // DIV_ROUND_UP(image_size, 4096): level 2's entries
  uint64_t level2_pages = 0;  // DIV_ROUND_UP(image_pages * 8, 4096): level 1's entries
  uint64_t level1_pages = 0;  // 1: level 0's single entry
  uint64_t level0_pages = 0;  // 1
};

// InvalidArgument for an empty image or one past nouveau's 1 GiB.
absl::StatusOr<Radix3Geometry> Radix3GeometryFor(uint64_t image_size);

// The three levels' page contents, each a whole number of pages of u64 entries (unused entries 0, as the zeroed
// DMA pages nouveau fills).
struct Radix3Table {
  Radix3Geometry geometry;
  std::vector<uint64_t> level0;  // level0_pages * 512 entries
  std::vector<uint64_t> level1;  // level1_pages * 512
  std::vector<uint64_t> level2;  // level2_pages * 512
};

// Fills the levels from the pages' bus addresses: `image_pages` (one per image page, in image order),
// `level2_pages` (the pages that will hold level 2), `level1_page`. Level 0's page address is what
// GspFwWprMeta.sysmemAddrOfRadix3Elf takes; it appears in no entry. Every address must be 4 KiB aligned and the
// counts must match Radix3GeometryFor(image_size); InvalidArgument otherwise.
absl::StatusOr<Radix3Table> BuildRadix3(uint64_t image_size, absl::Span<const uint64_t> image_pages,
                                        absl::Span<const uint64_t> level2_pages, uint64_t level1_page);

}  // namespace nv::gsp

#endif  // BAREGPU_NV_GSP_RADIX3_H_
