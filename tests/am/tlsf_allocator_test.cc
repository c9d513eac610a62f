#include "am/tlsf_allocator.h"

#include <map>
#include <random>

#include "gtest/gtest.h"

namespace am {
namespace {

constexpr uint64_t kBase = 0x1000'0000;
constexpr uint64_t kPage = 4096;

TEST(TlsfAllocatorTest, AllocatesAlignedGranulesAndFreesThem) {
  TlsfAllocator allocator(kBase, 1 << 20, kPage);
  auto a = allocator.Allocate(100);
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(*a, kBase);
  EXPECT_EQ(allocator.AllocationSize(*a), kPage);
  auto b = allocator.Allocate(3 * kPage);
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(*b, kBase + kPage);
  EXPECT_EQ(allocator.free_bytes(), (1 << 20) - 4 * kPage);
  ASSERT_TRUE(allocator.Free(*a).ok());
  ASSERT_TRUE(allocator.Free(*b).ok());
  EXPECT_EQ(allocator.free_bytes(), 1u << 20);
  EXPECT_EQ(allocator.largest_free_block(), 1u << 20);  // merged back into one block
}

TEST(TlsfAllocatorTest, HonoursLargeAlignment) {
  TlsfAllocator allocator(kBase + kPage, 64 << 20, kPage);  // base itself only page-aligned
  auto small = allocator.Allocate(kPage);
  ASSERT_TRUE(small.ok());
  auto huge = allocator.Allocate(2 << 20, 2 << 20);
  ASSERT_TRUE(huge.ok());
  EXPECT_EQ(*huge % (2 << 20), 0u);
  auto again = allocator.Allocate(kPage);  // the head cut off for alignment is usable
  ASSERT_TRUE(again.ok());
  EXPECT_LT(*again, *huge);
}

TEST(TlsfAllocatorTest, ExhaustionNamesTheLargestFreeBlock) {
  TlsfAllocator allocator(0, 8 * kPage, kPage);
  ASSERT_TRUE(allocator.Allocate(4 * kPage).ok());
  auto too_big = allocator.Allocate(5 * kPage);
  ASSERT_EQ(too_big.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_NE(too_big.status().message().find("largest free block 0x4000"), std::string::npos)
      << too_big.status().message();
  EXPECT_FALSE(allocator.Allocate(0).ok());
  EXPECT_FALSE(allocator.Allocate(kPage, 3 * kPage).ok());  // alignment not a power of two
  EXPECT_FALSE(allocator.Allocate(uint64_t{1} << 40).ok());
}

TEST(TlsfAllocatorTest, FreeOfSomethingElseChangesNothing) {
  TlsfAllocator allocator(kBase, 1 << 20, kPage);
  auto a = allocator.Allocate(2 * kPage);
  ASSERT_TRUE(a.ok());
  EXPECT_FALSE(allocator.Free(*a + kPage).ok());  // inside an allocation
  EXPECT_FALSE(allocator.Free(*a + 1).ok());      // unaligned
  EXPECT_FALSE(allocator.Free(kBase - kPage).ok());
  EXPECT_TRUE(allocator.Free(*a).ok());
  EXPECT_FALSE(allocator.Free(*a).ok());  // double free
  EXPECT_EQ(allocator.free_bytes(), 1u << 20);
}

// Random allocations and frees against a reference of live ranges: no overlap, everything inside the range,
// alignment kept, accounting exact, and at the end one block again.
TEST(TlsfAllocatorTest, RandomWorkloadKeepsRangesDisjointAndMergesBack) {
  constexpr uint64_t kSize = 256 << 20;
  TlsfAllocator allocator(kBase, kSize, kPage);
  std::mt19937_64 random(12345);
  std::map<uint64_t, uint64_t> live;  // address -> size
  uint64_t used = 0;
  for (int step = 0; step < 20000; ++step) {
    if (live.empty() || random() % 3 != 0) {
      const uint64_t size = (random() % 4 == 0) ? (random() % 64 + 1) * (64 << 10) : random() % (64 << 10) + 1;
      const uint64_t alignment = uint64_t{1} << (12 + random() % 10);
      auto address = allocator.Allocate(size, alignment);
      if (!address.ok()) continue;
      ASSERT_EQ(*address % alignment, 0u);
      const uint64_t rounded = allocator.AllocationSize(*address);
      ASSERT_GE(rounded, size);
      ASSERT_GE(*address, kBase);
      ASSERT_LE(*address + rounded, kBase + kSize);
      auto next = live.lower_bound(*address);
      if (next != live.end()) {
        ASSERT_LE(*address + rounded, next->first);
      }
      if (next != live.begin()) {
        ASSERT_LE(std::prev(next)->first + std::prev(next)->second, *address);
      }
      live[*address] = rounded;
      used += rounded;
    } else {
      auto victim = live.begin();
      std::advance(victim, random() % live.size());
      ASSERT_TRUE(allocator.Free(victim->first).ok());
      used -= victim->second;
      live.erase(victim);
    }
    ASSERT_EQ(allocator.free_bytes(), kSize - used);
  }
  for (const auto& [address, size] : live) ASSERT_TRUE(allocator.Free(address).ok());
  EXPECT_EQ(allocator.largest_free_block(), kSize);
  EXPECT_EQ(allocator.allocation_count(), 0u);
}

}  // namespace
}  // namespace am
