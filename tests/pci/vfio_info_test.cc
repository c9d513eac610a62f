#include "pci/vfio_info.h"

#include <linux/vfio.h>

#include <cstring>
#include <vector>

#include "absl/strings/match.h"
#include "gtest/gtest.h"
#include "pci/host_memory.h"

namespace pci {
namespace {

// Builds a reply the way the kernel lays it out: a fixed part, then capabilities linked by `next`.
class Reply {
 public:
  explicit Reply(size_t fixed_size) : bytes_(fixed_size, 0) {}
  template <typename T>
  uint32_t Append(const T& value) {
    const uint32_t offset = static_cast<uint32_t>(bytes_.size());
    bytes_.resize(bytes_.size() + sizeof(T));
    std::memcpy(bytes_.data() + offset, &value, sizeof(T));
    return offset;
  }
  void Link(uint32_t from, uint32_t to) {
    vfio_info_cap_header header;
    std::memcpy(&header, bytes_.data() + from, sizeof(header));
    header.next = to;
    std::memcpy(bytes_.data() + from, &header, sizeof(header));
  }
  std::span<const uint8_t> span() const { return bytes_; }
  std::vector<uint8_t>& bytes() { return bytes_; }

 private:
  std::vector<uint8_t> bytes_;
};

uint32_t AppendIovaRanges(Reply& reply, const std::vector<vfio_iova_range>& ranges) {
  vfio_iommu_type1_info_cap_iova_range cap{};
  cap.header.id = VFIO_IOMMU_TYPE1_INFO_CAP_IOVA_RANGE;
  cap.header.version = 1;
  cap.nr_iovas = static_cast<uint32_t>(ranges.size());
  const uint32_t offset = reply.Append(cap);
  for (const vfio_iova_range& r : ranges) reply.Append(r);
  return offset;
}

TEST(VfioInfoTest, FindsTheIovaRangeCapabilityBehindAnother) {
  Reply reply(sizeof(vfio_iommu_type1_info));
  vfio_iommu_type1_info_dma_avail avail{};
  avail.header.id = VFIO_IOMMU_TYPE1_INFO_DMA_AVAIL;
  avail.avail = 65535;
  const uint32_t first = reply.Append(avail);
  // Intel's usual answer: everything except the MSI window at 0xfee00000.
  const uint32_t ranges_at = AppendIovaRanges(reply, {{0, 0xfedfffff}, {0xfef00000, 0xffffffffffff}});
  reply.Link(first, ranges_at);

  auto found = FindVfioCapability(reply.span(), first, VFIO_IOMMU_TYPE1_INFO_CAP_IOVA_RANGE, "test");
  ASSERT_TRUE(found.ok()) << found.status();
  ASSERT_EQ(*found, ranges_at);
  auto ranges = ParseIovaRanges(reply.span(), **found);
  ASSERT_TRUE(ranges.ok()) << ranges.status();
  ASSERT_EQ(ranges->size(), 2u);
  EXPECT_EQ((*ranges)[0].end, 0xfedfffffu);
  EXPECT_EQ((*ranges)[1].start, 0xfef00000u);
  EXPECT_EQ((*ranges)[1].end, 0xffffffffffffu);

  auto absent = FindVfioCapability(reply.span(), first, VFIO_IOMMU_TYPE1_INFO_CAP_MIGRATION, "test");
  ASSERT_TRUE(absent.ok());
  EXPECT_FALSE(absent->has_value());
}

TEST(VfioInfoTest, LoopingChainIsAnErrorNotAHang) {
  Reply reply(sizeof(vfio_iommu_type1_info));
  vfio_info_cap_header header{};
  header.id = 77;
  const uint32_t a = reply.Append(header);
  reply.Link(a, a);
  auto found = FindVfioCapability(reply.span(), a, VFIO_IOMMU_TYPE1_INFO_CAP_IOVA_RANGE, "VFIO_IOMMU_GET_INFO");
  ASSERT_FALSE(found.ok());
  EXPECT_TRUE(absl::StrContains(found.status().message(), "VFIO_IOMMU_GET_INFO: capability chain longer"))
      << found.status();
}

TEST(VfioInfoTest, OffsetsAndCountsPastTheReplyAreErrors) {
  Reply reply(sizeof(vfio_iommu_type1_info));
  auto beyond = FindVfioCapability(reply.span(), 4096, VFIO_IOMMU_TYPE1_INFO_CAP_IOVA_RANGE, "test");
  ASSERT_FALSE(beyond.ok());
  EXPECT_EQ(beyond.status().code(), absl::StatusCode::kOutOfRange);

  const uint32_t at = AppendIovaRanges(reply, {{0, 0xffff}});
  vfio_iommu_type1_info_cap_iova_range cap;
  std::memcpy(&cap, reply.bytes().data() + at, sizeof(cap));
  cap.nr_iovas = 0x40000000;  // a count that would run far past the buffer (and overflow a naive size product)
  std::memcpy(reply.bytes().data() + at, &cap, sizeof(cap));
  auto ranges = ParseIovaRanges(reply.span(), at);
  ASSERT_FALSE(ranges.ok());
  EXPECT_TRUE(absl::StrContains(ranges.status().message(), "1073741824 entries")) << ranges.status();
}

TEST(VfioInfoTest, SparseMmapAreasSkipEmptyOnes) {
  Reply reply(sizeof(vfio_region_info));
  vfio_region_info_cap_sparse_mmap cap{};
  cap.header.id = VFIO_REGION_INFO_CAP_SPARSE_MMAP;
  cap.nr_areas = 3;
  const uint32_t at = reply.Append(cap);
  reply.Append(vfio_region_sparse_mmap_area{0, 0x2000});
  reply.Append(vfio_region_sparse_mmap_area{0x3000, 0});  // empty
  reply.Append(vfio_region_sparse_mmap_area{0x4000, 0xc000});
  auto areas = ParseSparseMmapAreas(reply.span(), at);
  ASSERT_TRUE(areas.ok()) << areas.status();
  ASSERT_EQ(areas->size(), 2u);
  EXPECT_EQ((*areas)[0].end, 0x1fffu);
  EXPECT_EQ((*areas)[1].start, 0x4000u);
  EXPECT_EQ((*areas)[1].end, 0xffffu);
}

TEST(MakeIovaAllocatorTest, AllocatesOnlyInsideValidRangesAndBelowTheMask) {
  // A hole from 2 MiB to 4 MiB (reserved region); usable [1 MiB, 2 MiB) and [4 MiB, 8 MiB).
  auto allocator = MakeIovaAllocator({{0, 0x1fffff}, {0x400000, 0x7fffff}});
  EXPECT_EQ(allocator->free_bytes(), 0x100000u + 0x400000u);
  auto low = allocator->Allocate(0x100000, kPageSize, UINT64_MAX);
  ASSERT_TRUE(low.ok()) << low.status();
  EXPECT_EQ(*low, 0x100000u);  // the first MiB stays unused
  auto next = allocator->Allocate(0x1000, kPageSize, UINT64_MAX);
  ASSERT_TRUE(next.ok()) << next.status();
  EXPECT_EQ(*next, 0x400000u);  // skipped the hole
  auto masked = allocator->Allocate(0x400000, kPageSize, 0x3fffff);
  EXPECT_FALSE(masked.ok());  // what is left lies above a 22-bit mask
}

TEST(MakeIovaAllocatorTest, NoRangesMeansEverythingUpToTheCeiling) {
  auto allocator = MakeIovaAllocator({});
  auto iova = allocator->Allocate(0x1000, kPageSize, 0x0fffffff);  // 28-bit device, like QEMU's edu
  ASSERT_TRUE(iova.ok()) << iova.status();
  EXPECT_EQ(*iova, 0x100000u);
  EXPECT_EQ(allocator->free_bytes() + allocator->allocated_bytes(), (uint64_t{1} << 56) - 0x100000);
}

TEST(MakeIovaAllocatorTest, RangesBelowTheFirstMibLeaveNothing) {
  auto allocator = MakeIovaAllocator({{0, 0xfffff}});
  EXPECT_EQ(allocator->free_bytes(), 0u);
  EXPECT_FALSE(allocator->Allocate(0x1000, kPageSize, UINT64_MAX).ok());
}

}  // namespace
}  // namespace pci
