#include "pci/vfio_info.h"

#include <linux/vfio.h>

#include <algorithm>
#include <cstring>

#include "absl/strings/str_format.h"
#include "base/bits.h"
#include "base/status_macros.h"
#include "pci/host_memory.h"

namespace pci {
namespace {

constexpr uint64_t kFirstUsableIova = uint64_t{1} << 20;
constexpr uint64_t kIovaCeiling = uint64_t{1} << 56;
// Far more capabilities than any VFIO reply carries; a longer chain is a loop.
constexpr int kMaxCapabilities = 64;

// Fills `out` (not a StatusOr<T>: VFIO's capability structs end in flexible array members, which clang refuses
// as a base class's member, and StatusOr<T> derives from its storage).
template <typename T>
absl::Status ReadStruct(std::span<const uint8_t> info, uint64_t offset, absl::string_view what, T* out) {
  if (offset > info.size() || info.size() - offset < sizeof(T)) {
    return absl::OutOfRangeError(absl::StrFormat("%s: %d-byte structure at offset %#x runs past the %d-byte reply",
                                                 what, sizeof(T), offset, info.size()));
  }
  std::memcpy(out, info.data() + offset, sizeof(T));
  return absl::OkStatus();
}

// Reads the `count` (offset, size)-style records that follow a capability's fixed part.
template <typename Cap, typename Entry, typename Convert>
absl::StatusOr<std::vector<Range>> ReadRecords(std::span<const uint8_t> info, uint32_t offset, uint32_t Cap::*count,
                                               absl::string_view what, Convert convert) {
  Cap cap;
  BAREGPU_RETURN_IF_ERROR(ReadStruct(info, offset, what, &cap));
  const uint64_t first = uint64_t{offset} + sizeof(Cap);
  if (first > info.size() || (info.size() - first) / sizeof(Entry) < cap.*count) {
    return absl::OutOfRangeError(absl::StrFormat("%s: %d entries at offset %#x run past the %d-byte reply", what,
                                                 cap.*count, first, info.size()));
  }
  std::vector<Range> ranges;
  for (uint32_t i = 0; i < cap.*count; ++i) {
    Entry entry;
    BAREGPU_RETURN_IF_ERROR(ReadStruct(info, first + uint64_t{i} * sizeof(Entry), what, &entry));
    std::optional<Range> range = convert(entry);
    if (range.has_value()) ranges.push_back(*range);
  }
  return ranges;
}

}  // namespace

absl::StatusOr<std::optional<uint32_t>> FindVfioCapability(std::span<const uint8_t> info, uint32_t first, uint16_t id,
                                                           absl::string_view what) {
  uint32_t offset = first;
  for (int hops = 0; offset != 0; ++hops) {
    if (hops == kMaxCapabilities) {
      return absl::DataLossError(
          absl::StrFormat("%s: capability chain longer than %d entries (a loop?)", what, kMaxCapabilities));
    }
    vfio_info_cap_header header;
    BAREGPU_RETURN_IF_ERROR(ReadStruct(info, offset, what, &header));
    if (header.id == id) return offset;
    offset = header.next;
  }
  return std::nullopt;
}

absl::StatusOr<std::vector<Range>> ParseIovaRanges(std::span<const uint8_t> info, uint32_t offset) {
  return ReadRecords<vfio_iommu_type1_info_cap_iova_range, vfio_iova_range>(
      info, offset, &vfio_iommu_type1_info_cap_iova_range::nr_iovas, "VFIO_IOMMU_TYPE1_INFO_CAP_IOVA_RANGE",
      [](const vfio_iova_range& r) -> std::optional<Range> {
        if (r.end < r.start) return std::nullopt;
        return Range{r.start, r.end};
      });
}

absl::StatusOr<std::vector<Range>> ParseSparseMmapAreas(std::span<const uint8_t> info, uint32_t offset) {
  return ReadRecords<vfio_region_info_cap_sparse_mmap, vfio_region_sparse_mmap_area>(
      info, offset, &vfio_region_info_cap_sparse_mmap::nr_areas, "VFIO_REGION_INFO_CAP_SPARSE_MMAP",
      [](const vfio_region_sparse_mmap_area& a) -> std::optional<Range> {
        if (a.size == 0 || a.offset > UINT64_MAX - (a.size - 1)) return std::nullopt;
        return Range{a.offset, a.offset + a.size - 1};
      });
}

std::unique_ptr<IovaAllocator> MakeIovaAllocator(const std::vector<Range>& ranges) {
  std::vector<Range> usable;
  for (const Range& r : ranges.empty() ? std::vector<Range>{{0, kIovaCeiling - 1}} : ranges) {
    // Whole pages only, between the first MiB and the ceiling.
    const uint64_t start = base::AlignUp(std::max(r.start, kFirstUsableIova), kPageSize);
    const uint64_t end = base::AlignDown(std::min(r.end, kIovaCeiling - 1) + 1, kPageSize);  // exclusive
    if (start < end) usable.push_back(Range{start, end});
  }
  if (usable.empty()) return std::make_unique<IovaAllocator>(0, 0);
  std::sort(usable.begin(), usable.end(), [](const Range& a, const Range& b) { return a.start < b.start; });
  uint64_t last_end = 0;
  for (const Range& r : usable) last_end = std::max(last_end, r.end);
  auto allocator = std::make_unique<IovaAllocator>(usable.front().start, last_end - usable.front().start);
  uint64_t covered = usable.front().start;
  for (const Range& r : usable) {
    if (r.start > covered) (void)allocator->Reserve(covered, r.start - covered);  // a hole the IOMMU refuses
    covered = std::max(covered, r.end);
  }
  return allocator;
}

}  // namespace pci
