#include "am/sim/register_file.h"

#include <vector>

#include "am/regs/nbio.h"
#include "am/regs/register_space.h"
#include "gtest/gtest.h"

namespace am::sim {
namespace {

TEST(RegisterFileTest, UnhookedRegistersArePlainStorage) {
  std::vector<uint32_t> storage(1024);
  RegisterFile registers(storage);
  registers.WriteDword(10, 0x1234);
  EXPECT_EQ(registers.ReadDword(10), 0x1234u);
  EXPECT_EQ(storage[10], 0x1234u);
  EXPECT_EQ(registers.ReadDword(5000), 0xffffffffu);  // outside the register space: unclaimed
  registers.WriteDword(5000, 1);                      // and dropped
}

TEST(RegisterFileTest, HooksGiveRegistersBehaviourAndTheTraceNamesTheModel) {
  std::vector<uint32_t> storage(1024);
  RegisterFile registers(storage);
  uint32_t written = 0;
  registers.OnWrite(20, "psp", [&](uint32_t value) { written = value; });
  registers.OnRead(21, "smu", [](uint32_t stored) { return stored | 0x80000000; });
  registers.EnableTrace(true);
  registers.WriteDword(20, 7);
  registers.WriteDword(21, 1);
  EXPECT_EQ(registers.ReadDword(21), 0x80000001u);
  EXPECT_EQ(registers.ReadDword(22), 0u);
  EXPECT_EQ(written, 7u);
  auto trace = registers.TakeTrace();
  ASSERT_EQ(trace.size(), 4u);
  EXPECT_STREQ(trace[0].model, "psp");
  EXPECT_TRUE(trace[0].write);
  EXPECT_STREQ(trace[2].model, "smu");
  EXPECT_EQ(trace[2].value, 0x80000001u);
  EXPECT_STREQ(trace[3].model, "storage");
  EXPECT_TRUE(registers.TakeTrace().empty());
}

TEST(RegisterFileTest, TypedRegistersWorkOnIt) {
  std::vector<uint32_t> storage(0x2000);
  RegisterFile registers(storage);
  regs::IpBases bases;
  ASSERT_TRUE(bases.SetBase(regs::Ip::kNbio, 0, 2, 0xd20).ok());
  auto nbio = regs::IpRegisters<regs::Ip::kNbio, RegisterFile>::Create(registers, bases);
  ASSERT_TRUE(nbio.ok());
  nbio->Write(regs::nbio::RCC_DEV0_EPF0_RCC_CONFIG_MEMSIZE{}.set_raw(24576));
  EXPECT_EQ(storage[0xd20 + regs::nbio::RCC_DEV0_EPF0_RCC_CONFIG_MEMSIZE::kOffset], 24576u);
}

}  // namespace
}  // namespace am::sim
