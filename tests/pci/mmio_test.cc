#include "pci/mmio.h"

#include <cstdint>
#include <vector>

#include "gtest/gtest.h"

namespace pci {
namespace {

class RecordingHandler : public MmioHandler {
 public:
  uint32_t Read32(uint64_t offset) override {
    log.push_back({false, offset, 0});
    return static_cast<uint32_t>(offset * 3);
  }
  void Write32(uint64_t offset, uint32_t value) override { log.push_back({true, offset, value}); }
  struct Access {
    bool write;
    uint64_t offset;
    uint32_t value;
  };
  std::vector<Access> log;
};

TEST(MmioTest, DirectWindowReadsAndWritesMemory) {
  alignas(8) uint32_t words[4] = {1, 2, 3, 4};
  Mmio mmio = Mmio::Direct(words, sizeof(words));
  EXPECT_EQ(mmio.Read32(4), 2u);
  mmio.Write32(8, 0xdeadbeef);
  EXPECT_EQ(words[2], 0xdeadbeefu);
  mmio.Write64(0, 0x1111111122222222);
  EXPECT_EQ(words[0], 0x22222222u);
  EXPECT_EQ(words[1], 0x11111111u);
  EXPECT_EQ(mmio.Read64(8), 0x00000004deadbeefu);
}

TEST(MmioTest, AccessesOutsideTheWindowReadAllOnesAndWriteNothing) {
  alignas(8) uint32_t words[2] = {7, 8};
  Mmio mmio = Mmio::Direct(words, sizeof(words));
  EXPECT_EQ(mmio.Read32(8), Mmio::kUnclaimedRead);
  EXPECT_EQ(mmio.Read32(UINT64_MAX - 1), Mmio::kUnclaimedRead);  // no wrap-around into the window
  EXPECT_EQ(mmio.Read32(2), Mmio::kUnclaimedRead);               // not naturally aligned
  EXPECT_EQ(mmio.Read64(4), ~uint64_t{0});
  mmio.Write32(8, 1);
  mmio.Write64(4, 1);
  EXPECT_EQ(words[0], 7u);
  EXPECT_EQ(words[1], 8u);
  Mmio empty;
  EXPECT_FALSE(empty.valid());
  EXPECT_EQ(empty.Read32(0), Mmio::kUnclaimedRead);
}

TEST(MmioTest, TrappedWindowHandsEveryAccessToTheHandlerLowDwordFirst) {
  RecordingHandler handler;
  Mmio mmio = Mmio::Trapped(&handler, 0x100);
  EXPECT_EQ(mmio.Read32(0x10), 0x30u);
  mmio.Write64(0x20, 0xaaaaaaaabbbbbbbb);
  EXPECT_EQ(mmio.Read64(0x40), (uint64_t{0x44 * 3} << 32) | 0x40 * 3);
  mmio.Write32(0x100, 5);  // outside: the handler never sees it
  ASSERT_EQ(handler.log.size(), 5u);
  EXPECT_TRUE(handler.log[1].write);
  EXPECT_EQ(handler.log[1].offset, 0x20u);
  EXPECT_EQ(handler.log[1].value, 0xbbbbbbbbu);
  EXPECT_EQ(handler.log[2].offset, 0x24u);
  EXPECT_EQ(handler.log[2].value, 0xaaaaaaaau);
}

}  // namespace
}  // namespace pci
