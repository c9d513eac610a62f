#include "pci/sim/dma_space.h"

#include <cstring>
#include <vector>

#include "gtest/gtest.h"

namespace pci::sim {
namespace {

class DmaSpaceTest : public ::testing::Test {
 protected:
  DmaSpaceTest() : low_(4096, 0xaa), high_(4096, 0xbb) {
    dma_.Map(0x10000, low_.data(), low_.size());
    dma_.Map(0x11000, high_.data(), high_.size());  // adjacent: together one 8 KiB range
    dma_.set_bus_master(true);
  }
  DmaSpace dma_;
  std::vector<uint8_t> low_, high_;
};

TEST_F(DmaSpaceTest, ReadsAndWritesSpanAdjacentMappings) {
  std::vector<uint8_t> data(64, 0x42);
  ASSERT_TRUE(dma_.Write(0x10fe0, data.data(), data.size()));
  EXPECT_EQ(low_[4095], 0x42);
  EXPECT_EQ(high_[31], 0x42);
  EXPECT_EQ(high_[32], 0xbb);
  std::vector<uint8_t> back(64);
  ASSERT_TRUE(dma_.Read(0x10fe0, back.data(), back.size()));
  EXPECT_EQ(back, data);
  EXPECT_EQ(dma_.fault_count(), 0u);
}

TEST_F(DmaSpaceTest, PartlyUnmappedRangesMoveNothingAndFault) {
  std::vector<uint8_t> data(64, 0x42);
  ASSERT_FALSE(dma_.Write(0x11fe0, data.data(), data.size()));  // runs 32 bytes past the end
  for (uint8_t b : high_) ASSERT_EQ(b, 0xbb);
  ASSERT_FALSE(dma_.Write(0xffe0, data.data(), data.size()));  // starts 32 bytes before the start
  for (uint8_t b : low_) ASSERT_EQ(b, 0xaa);
  EXPECT_EQ(dma_.fault_count(), 2u);
  EXPECT_EQ(dma_.last_fault()->address, 0xffe0u);
  EXPECT_FALSE(dma_.Write(UINT64_MAX - 8, data.data(), 64));  // wraps around the address space
}

TEST_F(DmaSpaceTest, TranslateOnlyInsideOneMapping) {
  EXPECT_EQ(dma_.Translate(0x10010, 16), low_.data() + 0x10);
  EXPECT_EQ(dma_.Translate(0x10ff0, 32), nullptr);  // crosses into the next mapping
  EXPECT_EQ(dma_.Translate(0x12000, 1), nullptr);
  dma_.Unmap(0x10000);
  EXPECT_EQ(dma_.Translate(0x10010, 16), nullptr);
}

TEST_F(DmaSpaceTest, NoBusMasterNoAccess) {
  dma_.set_bus_master(false);
  uint8_t byte = 0;
  EXPECT_FALSE(dma_.Read(0x10000, &byte, 1));
  EXPECT_EQ(dma_.Translate(0x10000, 1), nullptr);
  EXPECT_TRUE(dma_.last_fault()->bus_master_disabled);
}

}  // namespace
}  // namespace pci::sim
