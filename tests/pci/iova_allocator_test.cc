#include "pci/iova_allocator.h"

#include <algorithm>
#include <thread>
#include <vector>

#include "base/bits.h"
#include "gtest/gtest.h"
#include "pci/host_memory.h"

namespace pci {
namespace {

constexpr uint64_t kNoMask = UINT64_MAX;

TEST(IovaAllocatorTest, AllocatesPageRoundedRangesInsideTheAperture) {
  IovaAllocator iova(0x100000, 0x100000);
  auto a = iova.Allocate(1, kPageSize, kNoMask);
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(*a, 0x100000u);
  auto b = iova.Allocate(kPageSize + 1, kPageSize, kNoMask);
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(*b, 0x101000u);  // the first allocation took a whole page
  EXPECT_EQ(iova.allocated_bytes(), 3 * kPageSize);
  EXPECT_EQ(iova.free_bytes(), 0x100000 - 3 * kPageSize);
}

TEST(IovaAllocatorTest, HonoursAlignment) {
  IovaAllocator iova(0x1000, 0x1000000);
  auto a = iova.Allocate(kPageSize, kPageSize, kNoMask);
  auto b = iova.Allocate(kPageSize, 0x200000, kNoMask);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(*a, 0x1000u);
  EXPECT_EQ(*b % 0x200000, 0u);
  // The hole left below the aligned range is still usable.
  auto c = iova.Allocate(kPageSize, kPageSize, kNoMask);
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(*c, 0x2000u);
  EXPECT_FALSE(iova.Allocate(kPageSize, 3 * kPageSize, kNoMask).ok());  // not a power of two
  EXPECT_FALSE(iova.Allocate(kPageSize, 512, kNoMask).ok());            // below the page size
}

TEST(IovaAllocatorTest, HonoursTheDmaMask) {
  // An edu-like device addresses 28 bits: everything it gets must end below 256 MiB.
  const uint64_t mask = base::LowBitsMask(28);
  IovaAllocator iova(0x100000, uint64_t{1} << 40);
  std::vector<uint64_t> ranges;
  while (true) {
    auto r = iova.Allocate(base::MiB(16), kPageSize, mask);
    if (!r.ok()) {
      EXPECT_EQ(r.status().code(), absl::StatusCode::kResourceExhausted);
      EXPECT_NE(std::string(r.status().message()).find("DMA mask 0xfffffff"), std::string::npos);
      break;
    }
    EXPECT_LE(*r + base::MiB(16) - 1, mask);
    ranges.push_back(*r);
  }
  EXPECT_EQ(ranges.size(), 15u);  // (256 MiB - 1 MiB) / 16 MiB whole ranges fit below the mask
  // The same request without the mask still succeeds, with a range reaching above the mask.
  auto high = iova.Allocate(base::MiB(16), kPageSize, kNoMask);
  ASSERT_TRUE(high.ok());
  EXPECT_GT(*high + base::MiB(16) - 1, mask);
}

TEST(IovaAllocatorTest, ExhaustionThenFreeAndReuse) {
  IovaAllocator iova(0x10000, 4 * kPageSize);
  std::vector<uint64_t> pages;
  for (int i = 0; i < 4; ++i) pages.push_back(*iova.Allocate(kPageSize, kPageSize, kNoMask));
  EXPECT_EQ(iova.Allocate(kPageSize, kPageSize, kNoMask).status().code(), absl::StatusCode::kResourceExhausted);
  // Free two neighbours: they merge, so a two-page range fits again at the same place.
  ASSERT_TRUE(iova.Free(pages[1]).ok());
  ASSERT_TRUE(iova.Free(pages[2]).ok());
  auto two = iova.Allocate(2 * kPageSize, kPageSize, kNoMask);
  ASSERT_TRUE(two.ok());
  EXPECT_EQ(*two, pages[1]);
  // Free everything: the whole aperture is one range again.
  ASSERT_TRUE(iova.Free(pages[0]).ok());
  ASSERT_TRUE(iova.Free(*two).ok());
  ASSERT_TRUE(iova.Free(pages[3]).ok());
  auto all = iova.Allocate(4 * kPageSize, kPageSize, kNoMask);
  ASSERT_TRUE(all.ok());
  EXPECT_EQ(*all, 0x10000u);
}

TEST(IovaAllocatorTest, DoubleFreeAndUnknownAddressesAreErrorsThatChangeNothing) {
  IovaAllocator iova(0x10000, 4 * kPageSize);
  uint64_t a = *iova.Allocate(kPageSize, kPageSize, kNoMask);
  ASSERT_TRUE(iova.Free(a).ok());
  auto again = iova.Free(a);
  EXPECT_EQ(again.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(std::string(again.message()).find("double free"), std::string::npos);
  EXPECT_FALSE(iova.Free(0x12345000).ok());
  EXPECT_EQ(iova.free_bytes(), 4 * kPageSize);
}

TEST(IovaAllocatorTest, ReservedRangesAreNeverHandedOut) {
  IovaAllocator iova(0, 16 * kPageSize);
  ASSERT_TRUE(iova.Reserve(4 * kPageSize, 8 * kPageSize).ok());  // e.g. the MSI window of an x86 IOMMU
  EXPECT_EQ(iova.free_bytes(), 8 * kPageSize);
  std::vector<uint64_t> got;
  for (auto r = iova.Allocate(kPageSize, kPageSize, kNoMask); r.ok();
       r = iova.Allocate(kPageSize, kPageSize, kNoMask)) {
    EXPECT_TRUE(*r < 4 * kPageSize || *r >= 12 * kPageSize) << std::hex << *r;
    got.push_back(*r);
  }
  EXPECT_EQ(got.size(), 8u);
}

TEST(IovaAllocatorTest, ZeroSizeIsRejected) {
  IovaAllocator iova(0x10000, kPageSize);
  EXPECT_EQ(iova.Allocate(0, kPageSize, kNoMask).status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(IovaAllocatorTest, ConcurrentAllocationsNeverOverlap) {
  IovaAllocator iova(0x100000, 4096 * kPageSize);
  std::vector<std::vector<uint64_t>> per_thread(4);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 256; ++i) {
        auto a = iova.Allocate(2 * kPageSize, kPageSize, kNoMask);
        ASSERT_TRUE(a.ok());
        if (i % 2 == 0) {
          per_thread[t].push_back(*a);
        } else {
          ASSERT_TRUE(iova.Free(*a).ok());
        }
      }
    });
  }
  for (auto& th : threads) th.join();
  std::vector<uint64_t> all;
  for (auto& v : per_thread) all.insert(all.end(), v.begin(), v.end());
  std::sort(all.begin(), all.end());
  for (size_t i = 1; i < all.size(); ++i) EXPECT_GE(all[i], all[i - 1] + 2 * kPageSize);
  EXPECT_EQ(iova.allocated_bytes(), all.size() * 2 * kPageSize);
}

}  // namespace
}  // namespace pci
