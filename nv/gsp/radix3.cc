#include "nv/gsp/radix3.h"

#include "absl/strings/str_format.h"
#include "base/status_macros.h"

namespace nv::gsp {
namespace {

constexpr uint64_t DivRoundUp(uint64_t value, uint64_t divisor) { return (value + divisor - 1) / divisor; }

absl::Status CheckPageAligned(uint64_t address, const char* what, size_t index) {
  if (address % kRadix3PageSize != 0) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "radix3: %s[%d] bus address 0x%x is not 4 KiB aligned (LibOS maps whole 4 KiB pages; allocate page-aligned "
        "DMA memory)",
        what, index, address));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<Radix3Geometry> Radix3GeometryFor(uint64_t image_size) {
  if (image_size == 0) {
    return absl::InvalidArgumentError("radix3: the GSP-RM image (.fwimage) is empty; nothing to map");
  }
  Radix3Geometry g;
  // nouveau sizes level 2 from size / GSP_PAGE_SIZE (rounding down) while the image's scatterlist has
  // DIV_ROUND_UP(size, PAGE_SIZE) pages; for a page-aligned image (every real .fwimage) both are the same. Rounding
  // up maps an image's partial last page too (tinygrad's round_up).
  g.image_pages = DivRoundUp(image_size, kRadix3PageSize);
  if (g.image_pages > kRadix3MaxImagePages) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "radix3: the GSP-RM image is 0x%x bytes, %d pages; one level-1 page maps at most %d pages (1 GiB, "
        "nvkm_gsp_radix3_sg's limit)",
        image_size, g.image_pages, kRadix3MaxImagePages));
  }
  g.level2_pages = DivRoundUp(g.image_pages * sizeof(uint64_t), kRadix3PageSize);
  g.level1_pages = 1;
  g.level0_pages = 1;
  return g;
}

absl::StatusOr<Radix3Table> BuildRadix3(uint64_t image_size, absl::Span<const uint64_t> image_pages,
                                        absl::Span<const uint64_t> level2_pages, uint64_t level1_page) {
  Radix3Table t;
  BAREGPU_ASSIGN_OR_RETURN(t.geometry, Radix3GeometryFor(image_size));
  const Radix3Geometry& g = t.geometry;
  if (image_pages.size() != g.image_pages || level2_pages.size() != g.level2_pages) {
    return absl::InvalidArgumentError(
        absl::StrFormat("radix3: a 0x%x-byte image needs %d image pages and %d level-2 pages; given %d and %d",
                        image_size, g.image_pages, g.level2_pages, image_pages.size(), level2_pages.size()));
  }
  BAREGPU_RETURN_IF_ERROR(CheckPageAligned(level1_page, "level1_page", 0));
  for (size_t i = 0; i < level2_pages.size(); ++i) {
    BAREGPU_RETURN_IF_ERROR(CheckPageAligned(level2_pages[i], "level2_pages", i));
  }
  for (size_t i = 0; i < image_pages.size(); ++i) {
    BAREGPU_RETURN_IF_ERROR(CheckPageAligned(image_pages[i], "image_pages", i));
  }
  t.level0.assign(g.level0_pages * kRadix3EntriesPerPage, 0);
  t.level1.assign(g.level1_pages * kRadix3EntriesPerPage, 0);
  t.level2.assign(g.level2_pages * kRadix3EntriesPerPage, 0);
  t.level0[0] = level1_page;
  for (size_t i = 0; i < level2_pages.size(); ++i) t.level1[i] = level2_pages[i];
  for (size_t i = 0; i < image_pages.size(); ++i) t.level2[i] = image_pages[i];
  return t;
}

}  // namespace nv::gsp
