#include "am/sim/doorbell_router.h"

#include <atomic>

#include "am/regs/gc.h"
#include "gtest/gtest.h"
#include "tests/am/sim/model_fixture.h"

namespace am::sim {
namespace {

TEST(DoorbellRouterTest, StoresAndWakesOnlyTheSubscribedSlot) {
  DoorbellRouter router(1024);
  int woken = 0;
  const int token = router.Subscribe(16, /*is_64bit=*/false, [&] { ++woken; });
  router.Write(17, 5);
  EXPECT_EQ(woken, 0);
  router.Write(16, 0x40);
  EXPECT_EQ(woken, 1);
  EXPECT_EQ(router.Read(16), 0x40u);
  router.Unsubscribe(token);
  router.Write(16, 0x80);
  EXPECT_EQ(woken, 1);
  EXPECT_EQ(router.Read(16), 0x80u);
}

TEST(DoorbellRouterTest, SixtyFourBitDoorbellCoversBothDwords) {
  DoorbellRouter router(1024);
  int woken = 0;
  router.Subscribe(8, /*is_64bit=*/true, [&] { ++woken; });
  router.Write(8, 0x1000);
  router.Write(9, 0x2);
  EXPECT_EQ(woken, 2);
  EXPECT_EQ(router.Read64(8), 0x2'0000'1000u);
}

TEST(DoorbellRouterTest, SixtyFourBitWriteStoresBothDwordsAndWakesOnce) {
  DoorbellRouter router(1024);
  int woken = 0, other = 0;
  router.Subscribe(8, /*is_64bit=*/true, [&] { ++woken; });
  router.Subscribe(10, /*is_64bit=*/true, [&] { ++other; });
  router.Write64(8, 0x3'0000'0040);
  EXPECT_EQ(woken, 1);
  EXPECT_EQ(other, 0);
  EXPECT_EQ(router.Read(8), 0x40u);
  EXPECT_EQ(router.Read(9), 0x3u);
  router.InjectDrop(1);
  router.Write64(8, 0x80);  // lost whole: one write, one drop
  EXPECT_EQ(woken, 1);
  EXPECT_EQ(router.Read64(8), 0x3'0000'0040u);
  EXPECT_EQ(router.dropped(), 1u);
  router.Write64(1023, 1);  // its high dword would be past the aperture
  EXPECT_EQ(router.Read(1023), 0u);
}

TEST(DoorbellRouterTest, InjectedDropLosesTheWriteAndTheWakeUp) {
  DoorbellRouter router(1024);
  int woken = 0;
  router.Subscribe(3, false, [&] { ++woken; });
  router.InjectDrop(1);
  router.Write(3, 7);
  EXPECT_EQ(woken, 0);
  EXPECT_EQ(router.Read(3), 0u);
  EXPECT_EQ(router.dropped(), 1u);
  router.Write(3, 9);
  EXPECT_EQ(woken, 1);
  EXPECT_EQ(router.Read(3), 9u);
}

TEST(DoorbellRouterTest, OutOfApertureIndexIsIgnored) {
  DoorbellRouter router(4);
  router.Write(4, 1);
  EXPECT_EQ(router.Read(4), 0u);
  EXPECT_EQ(router.Read64(3), 0u);
}

TEST(GpuMemoryTest, HelpersCrossPiecesAndFaultOutsideMappings) {
  testing::FlatMemory memory;
  std::span<uint8_t> a = memory.Place(0x1000, 16);
  std::span<uint8_t> b = memory.Place(0x1010, 16);
  const MemoryClient client{Hub::kGc, 0, 0, "test"};
  std::vector<uint8_t> data(32);
  for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<uint8_t>(i + 1);
  ASSERT_TRUE(WriteMemory(memory, client, 0x1000, data).ok());
  EXPECT_EQ(a[15], 16);
  EXPECT_EQ(b[0], 17);
  std::vector<uint8_t> back(32);
  ASSERT_TRUE(ReadMemory(memory, client, 0x1000, back).ok());
  EXPECT_EQ(back, data);
  EXPECT_FALSE(ReadMemory(memory, client, 0x1008, std::span<uint8_t>(back.data(), 32)).ok());
  EXPECT_EQ(memory.faults(), 1);
  EXPECT_FALSE(MapDword(memory, client, 0x1002, Access::kRead).ok());  // unaligned
  auto dword = MapDword(memory, client, 0x1004, Access::kWrite);
  ASSERT_TRUE(dword.ok());
  EXPECT_EQ(**dword, 0x08070605u);
}

TEST(ModelFixtureTest, RegistersResolveThroughNavi31Bases) {
  testing::ModelFixture fixture;
  auto gc = fixture.Regs<regs::Ip::kGc>();
  gc.Write(regs::gc::SCRATCH_REG0{}.set_raw(0x1234));
  EXPECT_EQ(gc.Read<regs::gc::SCRATCH_REG0>().raw(), 0x1234u);
}

}  // namespace
}  // namespace am::sim
