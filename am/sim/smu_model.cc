#include "am/sim/smu_model.h"

#include <algorithm>

#include "am/regs/mp1.h"
#include "am/regs/smu_constants.h"

namespace am::sim {
namespace {

namespace smu = regs::smu;

// smu_cmn.c packs clock id and value (frequency or level index) into one argument: clock << 16 | value.
constexpr uint32_t ClockOf(uint32_t argument) { return argument >> 16; }
constexpr uint32_t ValueOf(uint32_t argument) { return argument & 0xffff; }
// GetDpmFreqByIndex with this index asks for the number of levels (smu_v13_0_get_dpm_level_count).
constexpr uint32_t kLevelCountQuery = 0xff;

}  // namespace

const std::array<std::vector<uint32_t>, regs::smu::PPCLK_COUNT>& SmuModel::DpmLevels() {
  static const auto* levels = new std::array<std::vector<uint32_t>, smu::PPCLK_COUNT>{{
      /*GFXCLK*/ {500, 1500, 2500},
      /*SOCCLK*/ {500, 960, 1200},
      /*UCLK*/ {96, 456, 772, 1250},
      /*FCLK*/ {400, 1000, 1700, 1940},
      /*DCLK_0*/ {500, 1500},
      /*VCLK_0*/ {500, 1500},
      /*DCLK_1*/ {500, 1500},
      /*VCLK_1*/ {500, 1500},
      /*DISPCLK*/ {300, 1500},
      /*DPPCLK*/ {300, 1500},
      /*DPREFCLK*/ {300, 1200},
      /*DCFCLK*/ {300, 1200},
      /*DTBCLK*/ {300, 600},
  }};
  return *levels;
}

SmuModel::SmuModel(RegisterFile& registers, const regs::IpBases& bases) : registers_(registers) {
  message_register_ = RegisterAddress<regs::mp1::MP1_SMN_C2PMSG_66>(bases);
  argument_register_ = RegisterAddress<regs::mp1::MP1_SMN_C2PMSG_82>(bases);
  response_register_ = RegisterAddress<regs::mp1::MP1_SMN_C2PMSG_90>(bases);
  registers_.OnWrite(message_register_, "smu", [this](uint32_t message) { OnMessage(message); });
  Reset();
}

void SmuModel::Reset() {
  base::MutexLock lock(&mu_);
  firmware_version_.reset();
  no_response_ = false;
  allowed_features_ = enabled_features_ = 0;
  driver_table_high_ = 0;
  driver_table_low_.reset();
  for (uint32_t clock = 0; clock < smu::PPCLK_COUNT; ++clock) {
    soft_limits_[clock] = {DpmLevels()[clock].front(), DpmLevels()[clock].back()};
  }
}

void SmuModel::FirmwareLoaded(uint32_t version) {
  base::MutexLock lock(&mu_);
  firmware_version_ = version;
}

bool SmuModel::alive() const {
  base::MutexLock lock(&mu_);
  return firmware_version_.has_value();
}

void SmuModel::InjectNoResponse(bool enabled) {
  base::MutexLock lock(&mu_);
  no_response_ = enabled;
}

uint64_t SmuModel::enabled_features() const {
  base::MutexLock lock(&mu_);
  return enabled_features_;
}

std::optional<uint64_t> SmuModel::driver_table_address() const {
  base::MutexLock lock(&mu_);
  if (!driver_table_low_) return std::nullopt;
  return (uint64_t{driver_table_high_} << 32) | *driver_table_low_;
}

std::pair<uint32_t, uint32_t> SmuModel::soft_limits_mhz(uint32_t clock) const {
  base::MutexLock lock(&mu_);
  return clock < smu::PPCLK_COUNT ? soft_limits_[clock] : std::pair<uint32_t, uint32_t>{0, 0};
}

void SmuModel::OnMessage(uint32_t message) {
  if (message == smu::PPSMC_MSG_Mode1Reset) {
    {
      base::MutexLock lock(&mu_);
      if (!firmware_version_ || no_response_) return;
    }
    // The reset takes the SMU down with the rest of the chip: no answer is written (Linux waits a fixed time).
    if (mode1_reset_) mode1_reset_();
    return;
  }
  Reply reply;
  {
    base::MutexLock lock(&mu_);
    if (!firmware_version_ || no_response_) return;
    reply = Execute(message, registers_.Peek(argument_register_));
  }
  if (reply.output) registers_.Poke(argument_register_, *reply.output);
  registers_.Poke(response_register_, reply.result);
}

SmuModel::Reply SmuModel::Execute(uint32_t message, uint32_t argument) {
  const Reply ok{smu::PPSMC_Result_OK, std::nullopt};
  const Reply failed{smu::PPSMC_Result_Failed, std::nullopt};
  switch (message) {
    case smu::PPSMC_MSG_TestMessage:
      return {smu::PPSMC_Result_OK, argument + 1};
    case smu::PPSMC_MSG_GetSmuVersion:
      return {smu::PPSMC_Result_OK, *firmware_version_};
    case smu::PPSMC_MSG_GetDriverIfVersion:
      return {smu::PPSMC_Result_OK, smu::SMU13_0_0_DRIVER_IF_VERSION};
    case smu::PPSMC_MSG_SetAllowedFeaturesMaskLow:
      allowed_features_ = (allowed_features_ & ~uint64_t{0xffffffff}) | argument;
      return ok;
    case smu::PPSMC_MSG_SetAllowedFeaturesMaskHigh:
      allowed_features_ = (allowed_features_ & 0xffffffff) | (uint64_t{argument} << 32);
      return ok;
    case smu::PPSMC_MSG_EnableAllSmuFeatures:
      enabled_features_ = allowed_features_;
      return ok;
    case smu::PPSMC_MSG_DisableAllSmuFeatures:
      enabled_features_ = 0;
      return ok;
    case smu::PPSMC_MSG_GetRunningSmuFeaturesLow:
      return {smu::PPSMC_Result_OK, static_cast<uint32_t>(enabled_features_)};
    case smu::PPSMC_MSG_GetRunningSmuFeaturesHigh:
      return {smu::PPSMC_Result_OK, static_cast<uint32_t>(enabled_features_ >> 32)};
    case smu::PPSMC_MSG_SetDriverDramAddrHigh:
      driver_table_high_ = argument;
      return ok;
    case smu::PPSMC_MSG_SetDriverDramAddrLow:
      driver_table_low_ = argument;
      return ok;
    case smu::PPSMC_MSG_GetDpmFreqByIndex: {
      const uint32_t clock = ClockOf(argument);
      if (clock >= smu::PPCLK_COUNT) return failed;
      const std::vector<uint32_t>& levels = DpmLevels()[clock];
      const uint32_t index = ValueOf(argument);
      if (index == kLevelCountQuery) return {smu::PPSMC_Result_OK, static_cast<uint32_t>(levels.size())};
      if (index >= levels.size()) return failed;
      return {smu::PPSMC_Result_OK, levels[index]};
    }
    case smu::PPSMC_MSG_GetMinDpmFreq:
    case smu::PPSMC_MSG_GetMaxDpmFreq: {
      const uint32_t clock = ClockOf(argument);
      if (clock >= smu::PPCLK_COUNT) return failed;
      const std::vector<uint32_t>& levels = DpmLevels()[clock];
      return {smu::PPSMC_Result_OK, message == smu::PPSMC_MSG_GetMinDpmFreq ? levels.front() : levels.back()};
    }
    case smu::PPSMC_MSG_SetSoftMinByFreq:
    case smu::PPSMC_MSG_SetSoftMaxByFreq: {
      const uint32_t clock = ClockOf(argument);
      if (clock >= smu::PPCLK_COUNT) return failed;
      const std::vector<uint32_t>& levels = DpmLevels()[clock];
      // The firmware clamps a request into the clock's DPM range.
      const uint32_t mhz = std::clamp(ValueOf(argument), levels.front(), levels.back());
      auto& [low, high] = soft_limits_[clock];
      (message == smu::PPSMC_MSG_SetSoftMinByFreq ? low : high) = mhz;
      return ok;
    }
    case smu::PPSMC_MSG_TransferTableSmu2Dram:
      // Needs the driver table address and a memory path to it (GMC model); refused until both exist.
      if (!driver_table_low_ || argument >= smu::TABLE_COUNT) return {smu::PPSMC_Result_CmdRejectedPrereq, {}};
      return failed;
    default:
      return {smu::PPSMC_Result_UnknownCmd, std::nullopt};
  }
}

}  // namespace am::sim
