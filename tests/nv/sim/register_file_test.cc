#include "nv/sim/register_file.h"

#include <cstdint>
#include <vector>

#include "gtest/gtest.h"

namespace nv::sim {
namespace {

// A register the host may change only in its low byte and a falcon in all of it, as a priv level mask would allow.
constexpr RegisterFile::Register kScratch = {"TEST_SCRATCH", 0x11223344, 0x000000ff, 0xffffffff};

TEST(RegisterFileTest, OnlyClaimedRegistersAnswer) {
  std::vector<uint32_t> storage(16);
  RegisterFile file(storage);
  file.Claim(0x8, kScratch);
  EXPECT_FALSE(file.Read(0x4).has_value());
  EXPECT_EQ(file.Write(0x4, 1, PrivSource::kHost), RegisterFile::WriteResult::kUnclaimed);
  EXPECT_EQ(storage[1], 0u);  // nothing stored for an unclaimed write
  ASSERT_NE(file.Find(0x8), nullptr);
  EXPECT_STREQ(file.Find(0x8)->name, "TEST_SCRATCH");
  // Claims past the storage are ignored: 16 dwords end at byte 0x40.
  file.Claim(0x40, kScratch);
  EXPECT_EQ(file.Find(0x40), nullptr);
}

TEST(RegisterFileTest, PowerOnSetsEveryClaimedRegister) {
  std::vector<uint32_t> storage(16, 0xdeadbeef);
  RegisterFile file(storage);
  file.Claim(0x8, kScratch);
  file.PowerOn();
  EXPECT_EQ(file.Read(0x8), 0x11223344u);
  EXPECT_EQ(storage[3], 0xdeadbeefu);  // unclaimed storage untouched
}

TEST(RegisterFileTest, EachSideChangesOnlyItsBits) {
  std::vector<uint32_t> storage(16);
  RegisterFile file(storage);
  file.Claim(0x8, kScratch);
  file.PowerOn();
  // Host: 0xaabbccdd asks to change all four bytes; only the low one (0x44 -> 0xdd) may change.
  EXPECT_EQ(file.Write(0x8, 0xaabbccdd, PrivSource::kHost), RegisterFile::WriteResult::kProtected);
  EXPECT_EQ(file.Read(0x8), 0x112233ddu);
  // Writing back the protected bits unchanged is no violation.
  EXPECT_EQ(file.Write(0x8, 0x11223300, PrivSource::kHost), RegisterFile::WriteResult::kStored);
  EXPECT_EQ(file.Read(0x8), 0x11223300u);
  EXPECT_EQ(file.Write(0x8, 0xaabbccdd, PrivSource::kFalcon), RegisterFile::WriteResult::kStored);
  EXPECT_EQ(file.Read(0x8), 0xaabbccddu);
}

}  // namespace
}  // namespace nv::sim
