// The SMU mailbox, spoken to through registers only, as Linux's smu_cmn.c does.
#include "am/sim/smu_model.h"

#include <vector>

#include "am/regs/mp1.h"
#include "am/regs/register_space.h"
#include "am/regs/smu_constants.h"
#include "am/regs/smu_tables.h"
#include "am/sim/navi31.h"
#include "gtest/gtest.h"
#include "tests/am/sim/model_fixture.h"

namespace am::sim {
namespace {

namespace smu = regs::smu;
using Mp1 = regs::IpRegisters<regs::Ip::kMp1, RegisterFile>;

class SmuModelTest : public ::testing::Test {
 protected:
  SmuModelTest()
      : storage_(uint32_t{1} << 18),  // MP1 segment 0 (0x16000) and its mailbox lie below 2^18 dwords
        registers_(storage_),
        model_(registers_, Navi31Bases()),
        mp1_(*Mp1::Create(registers_, Navi31Bases())) {}

  struct Answer {
    uint32_t response;
    uint32_t output;
  };
  // smu_cmn_send_smc_msg_with_param: clear the response, argument, message, then read the response.
  Answer Send(uint32_t message, uint32_t argument = 0) {
    mp1_.Write(regs::mp1::MP1_SMN_C2PMSG_90{}.set_raw(0));
    mp1_.Write(regs::mp1::MP1_SMN_C2PMSG_82{}.set_raw(argument));
    mp1_.Write(regs::mp1::MP1_SMN_C2PMSG_66{}.set_raw(message));
    return {mp1_.Read<regs::mp1::MP1_SMN_C2PMSG_90>().raw(), mp1_.Read<regs::mp1::MP1_SMN_C2PMSG_82>().raw()};
  }

  std::vector<uint32_t> storage_;
  RegisterFile registers_;
  SmuModel model_;
  Mp1 mp1_;
};

TEST_F(SmuModelTest, SilentUntilThePspLoadsItsFirmware) {
  EXPECT_EQ(Send(smu::PPSMC_MSG_GetSmuVersion).response, 0u);
  model_.FirmwareLoaded(0x00504e00);
  auto answer = Send(smu::PPSMC_MSG_GetSmuVersion);
  EXPECT_EQ(answer.response, smu::PPSMC_Result_OK);
  EXPECT_EQ(answer.output, 0x00504e00u);
}

// The debug mailbox (C2PMSG_53 argument, C2PMSG_75 message, C2PMSG_54 response) as tinygrad's AM driver uses it for
// MP1 13.0.0's mode1 reset: silent before the PMFW runs, then DEBUGSMC_MSG_Mode1Reset (2) is answered and the chip
// resets after the answer; another id is unknown.
TEST_F(SmuModelTest, TheDebugMailboxTakesMode1Reset) {
  auto send_debug = [&](uint32_t message) {
    mp1_.Write(regs::mp1::MP1_SMN_C2PMSG_54{}.set_raw(0));
    mp1_.Write(regs::mp1::MP1_SMN_C2PMSG_53{}.set_raw(0));
    mp1_.Write(regs::mp1::MP1_SMN_C2PMSG_75{}.set_raw(message));
    return mp1_.Read<regs::mp1::MP1_SMN_C2PMSG_54>().raw();
  };
  EXPECT_EQ(send_debug(2), 0u);
  EXPECT_FALSE(model_.TakeAnsweredMode1Reset());
  model_.FirmwareLoaded(1);
  EXPECT_EQ(send_debug(7), smu::PPSMC_Result_UnknownCmd);
  EXPECT_FALSE(model_.TakeAnsweredMode1Reset());
  EXPECT_EQ(send_debug(2), smu::PPSMC_Result_OK);
  EXPECT_TRUE(model_.TakeAnsweredMode1Reset());
  // The main mailbox is untouched by it.
  EXPECT_EQ(mp1_.Read<regs::mp1::MP1_SMN_C2PMSG_90>().raw(), 0u);
}

TEST_F(SmuModelTest, FeaturesAreEnabledFromTheAllowedMask) {
  model_.FirmwareLoaded(1);
  EXPECT_EQ(Send(smu::PPSMC_MSG_SetAllowedFeaturesMaskLow, 0xffff0000).response, smu::PPSMC_Result_OK);
  EXPECT_EQ(Send(smu::PPSMC_MSG_SetAllowedFeaturesMaskHigh, 0x3).response, smu::PPSMC_Result_OK);
  EXPECT_EQ(Send(smu::PPSMC_MSG_EnableAllSmuFeatures).response, smu::PPSMC_Result_OK);
  EXPECT_EQ(Send(smu::PPSMC_MSG_GetRunningSmuFeaturesLow).output, 0xffff0000u);
  EXPECT_EQ(Send(smu::PPSMC_MSG_GetRunningSmuFeaturesHigh).output, 0x3u);
  EXPECT_EQ(model_.enabled_features(), 0x3ffff0000u);
}

TEST_F(SmuModelTest, DpmTablesAnswerLevelCountsAndFrequencies) {
  model_.FirmwareLoaded(1);
  const uint32_t uclk = smu::PPCLK_UCLK << 16;
  auto count = Send(smu::PPSMC_MSG_GetDpmFreqByIndex, uclk | 0xff);
  EXPECT_EQ(count.response, smu::PPSMC_Result_OK);
  ASSERT_EQ(count.output, SmuModel::DpmLevels()[smu::PPCLK_UCLK].size());
  uint32_t previous = 0;
  for (uint32_t i = 0; i < count.output; ++i) {
    auto level = Send(smu::PPSMC_MSG_GetDpmFreqByIndex, uclk | i);
    EXPECT_EQ(level.response, smu::PPSMC_Result_OK);
    EXPECT_GT(level.output, previous);  // levels rise
    previous = level.output;
  }
  EXPECT_EQ(Send(smu::PPSMC_MSG_GetDpmFreqByIndex, uclk | count.output).response, smu::PPSMC_Result_Failed);
  EXPECT_EQ(Send(smu::PPSMC_MSG_GetDpmFreqByIndex, smu::PPCLK_COUNT << 16).response, smu::PPSMC_Result_Failed);
}

TEST_F(SmuModelTest, SoftLimitsAreClampedToTheDpmRange) {
  model_.FirmwareLoaded(1);
  const uint32_t gfx = smu::PPCLK_GFXCLK << 16;
  EXPECT_EQ(Send(smu::PPSMC_MSG_SetSoftMinByFreq, gfx | 1000).response, smu::PPSMC_Result_OK);
  EXPECT_EQ(Send(smu::PPSMC_MSG_SetSoftMaxByFreq, gfx | 0xffff).response, smu::PPSMC_Result_OK);
  auto [low, high] = model_.soft_limits_mhz(smu::PPCLK_GFXCLK);
  EXPECT_EQ(low, 1000u);
  EXPECT_EQ(high, SmuModel::DpmLevels()[smu::PPCLK_GFXCLK].back());
}

TEST_F(SmuModelTest, DriverTableAddressIsAssembledFromTwoMessages) {
  model_.FirmwareLoaded(1);
  EXPECT_FALSE(model_.driver_table_address().has_value());
  Send(smu::PPSMC_MSG_SetDriverDramAddrHigh, 0x8);
  Send(smu::PPSMC_MSG_SetDriverDramAddrLow, 0x1000);
  EXPECT_EQ(model_.driver_table_address(), uint64_t{0x800001000});
}

TEST_F(SmuModelTest, UnknownMessagesGetTheRealErrorCode) {
  model_.FirmwareLoaded(1);
  EXPECT_EQ(Send(smu::PPSMC_Message_Count).response, smu::PPSMC_Result_UnknownCmd);
  EXPECT_EQ(Send(0xdead).response, smu::PPSMC_Result_UnknownCmd);
}

TEST_F(SmuModelTest, InjectedSilenceLeavesTheResponseAtZero) {
  model_.FirmwareLoaded(1);
  model_.InjectNoResponse(true);
  EXPECT_EQ(Send(smu::PPSMC_MSG_TestMessage, 5).response, 0u);
  model_.InjectNoResponse(false);
  auto answer = Send(smu::PPSMC_MSG_TestMessage, 5);
  EXPECT_EQ(answer.response, smu::PPSMC_Result_OK);
  EXPECT_EQ(answer.output, 6u);
}

// smu_v13_0_0_mode1_reset sends Mode1Reset like any message and waits for the answer; the chip resets after it.
TEST_F(SmuModelTest, Mode1ResetIsAnsweredAndThenDue) {
  EXPECT_EQ(Send(smu::PPSMC_MSG_Mode1Reset).response, 0u) << "no firmware, no answer";
  EXPECT_FALSE(model_.TakeAnsweredMode1Reset());
  model_.FirmwareLoaded(1);
  EXPECT_EQ(Send(smu::PPSMC_MSG_Mode1Reset).response, smu::PPSMC_Result_OK);
  EXPECT_TRUE(model_.TakeAnsweredMode1Reset());
  EXPECT_FALSE(model_.TakeAnsweredMode1Reset()) << "one reset per answer";
}

// Bit 31 of every GetDpmFreqByIndex answer for a fine-grained clock (smu_v13_0_get_fine_grained_status), which
// Linux and tinygrad mask off counts and frequencies alike; a discrete clock has it clear.
TEST_F(SmuModelTest, FineGrainedGfxclkAnswersCarryBit31) {
  model_.FirmwareLoaded(1);
  const uint32_t gfx = smu::PPCLK_GFXCLK << 16;
  auto count = Send(smu::PPSMC_MSG_GetDpmFreqByIndex, gfx | 0xff);
  ASSERT_EQ(count.response, smu::PPSMC_Result_OK);
  EXPECT_EQ(count.output, 0x80000000u | 2) << "NumDiscreteLevels is 2 (Fmin, Fmax) for fine-grained DPM";
  EXPECT_EQ(Send(smu::PPSMC_MSG_GetDpmFreqByIndex, gfx | 1).output,
            0x80000000u | SmuModel::DpmLevels()[smu::PPCLK_GFXCLK].back());
  // An unmasked count as an index is past the levels: what a driver that forgets the mask asks next.
  EXPECT_EQ(Send(smu::PPSMC_MSG_GetDpmFreqByIndex, gfx | 2).response, smu::PPSMC_Result_Failed);
  EXPECT_EQ(Send(smu::PPSMC_MSG_GetDpmFreqByIndex, smu::PPCLK_UCLK << 16 | 0xff).output & 0x80000000u, 0u);
}

// TransferTableSmu2Dram writes SmuMetricsExternal_t to the driver table through the MMHUB; the state the driver set
// survives a new model on the same persistent state (a second process).
TEST(SmuModelWithMemoryTest, MetricsTableLandsAtTheDriverTableAndStateIsPersistent) {
  testing::ModelFixture fixture;
  constexpr uint64_t kDriverTable = 0x80'0010'0000;
  std::span<uint8_t> table = fixture.memory().Place(kDriverTable, sizeof(regs::smu::SmuMetricsExternal));
  auto mp1 = fixture.Regs<regs::Ip::kMp1>();
  auto send = [&](uint32_t message, uint32_t argument) {
    mp1.Write(regs::mp1::MP1_SMN_C2PMSG_90{}.set_raw(0));
    mp1.Write(regs::mp1::MP1_SMN_C2PMSG_82{}.set_raw(argument));
    mp1.Write(regs::mp1::MP1_SMN_C2PMSG_66{}.set_raw(message));
    return mp1.Read<regs::mp1::MP1_SMN_C2PMSG_90>().raw();
  };
  {
    SmuModel model(fixture.registers(), fixture.bases(), &fixture.state(), &fixture.memory());
    model.FirmwareLoaded(0x00504e00);
    EXPECT_EQ(send(smu::PPSMC_MSG_TransferTableSmu2Dram, smu::TABLE_SMU_METRICS), smu::PPSMC_Result_CmdRejectedPrereq);
    EXPECT_EQ(send(smu::PPSMC_MSG_SetDriverDramAddrHigh, kDriverTable >> 32), smu::PPSMC_Result_OK);
    EXPECT_EQ(send(smu::PPSMC_MSG_SetDriverDramAddrLow, static_cast<uint32_t>(kDriverTable)), smu::PPSMC_Result_OK);
    EXPECT_EQ(send(smu::PPSMC_MSG_SetSoftMaxByFreq, smu::PPCLK_GFXCLK << 16 | 1500), smu::PPSMC_Result_OK);
    EXPECT_EQ(send(smu::PPSMC_MSG_TransferTableSmu2Dram, smu::TABLE_SMU_METRICS), smu::PPSMC_Result_OK);
    EXPECT_EQ(send(smu::PPSMC_MSG_TransferTableSmu2Dram, smu::TABLE_PPTABLE), smu::PPSMC_Result_Failed);
  }
  regs::smu::SmuMetricsExternal metrics;
  std::memcpy(&metrics, table.data(), sizeof(metrics));
  EXPECT_EQ(metrics.SmuMetrics.CurrClock[smu::PPCLK_GFXCLK], 1500u);
  EXPECT_EQ(metrics.SmuMetrics.AverageGfxclkFrequencyTarget, 1500u);
  EXPECT_EQ(metrics.SmuMetrics.MetricsCounter, 1u);
  EXPECT_GT(metrics.SmuMetrics.AvgTemperature[smu::TEMP_EDGE], 0u);

  SmuModel reopened(fixture.registers(), fixture.bases(), &fixture.state(), &fixture.memory());
  EXPECT_TRUE(reopened.alive());
  EXPECT_EQ(reopened.driver_table_address(), kDriverTable);
  EXPECT_EQ(reopened.soft_limits_mhz(smu::PPCLK_GFXCLK).second, 1500u);
  EXPECT_EQ(send(smu::PPSMC_MSG_TransferTableSmu2Dram, smu::TABLE_SMU_METRICS), smu::PPSMC_Result_OK);
  std::memcpy(&metrics, table.data(), sizeof(metrics));
  EXPECT_EQ(metrics.SmuMetrics.MetricsCounter, 2u);
}

}  // namespace
}  // namespace am::sim
