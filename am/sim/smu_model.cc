#include "am/sim/smu_model.h"

#include <algorithm>

#include "am/regs/mp1.h"
#include "am/regs/smu_constants.h"
#include "am/regs/smu_tables.h"

namespace am::sim {
namespace {

namespace smu = regs::smu;

// smu_cmn.c packs clock id and value (frequency or level index) into one argument: clock << 16 | value.
constexpr uint32_t ClockOf(uint32_t argument) { return argument >> 16; }
constexpr uint32_t ValueOf(uint32_t argument) { return argument & 0xffff; }
// GetDpmFreqByIndex with this index asks for the number of levels (smu_v13_0_get_dpm_level_count).
constexpr uint32_t kLevelCountQuery = 0xff;
// Bit 31 of a GetDpmFreqByIndex answer: the clock is fine-grained (smu_v13_0_get_fine_grained_status). The
// firmware sets it in every answer for such a clock, counts and frequencies alike: Linux
// (smu_v13_0_get_dpm_freq_by_index) and tinygrad (AM_SMU.read_clocks) both mask it off each of them.
constexpr uint32_t kFineGrainedFlag = 1u << 31;

// Which clocks the virtual pptable declares fine-grained (DpmDescriptor_t.SnapToDiscrete = 0): GFXCLK, as on
// RDNA3 boards, whose GFXCLK runs anywhere between its two levels (Fmin, Fmax: "NumDiscreteLevels: set to 2 when
// using fine grained DPM", smu13_driver_if_v13_0_0.h).
bool FineGrained(uint32_t clock) { return clock == smu::PPCLK_GFXCLK; }

}  // namespace

const std::array<std::vector<uint32_t>, regs::smu::PPCLK_COUNT>& SmuModel::DpmLevels() {
  static const auto* levels = new std::array<std::vector<uint32_t>, smu::PPCLK_COUNT>{{
      /*GFXCLK*/ {500, 2500},  // fine-grained: Fmin and Fmax only
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

SmuModel::SmuModel(RegisterFile& registers, const regs::IpBases& bases, ModelState* state, GpuMemory* memory)
    : registers_(registers),
      memory_(memory),
      own_state_(state == nullptr ? std::make_unique<ModelState>() : nullptr),
      state_(StateBlock<State>((state != nullptr ? *state : *own_state_).smu)) {
  message_register_ = RegisterAddress<regs::mp1::MP1_SMN_C2PMSG_66>(bases);
  argument_register_ = RegisterAddress<regs::mp1::MP1_SMN_C2PMSG_82>(bases);
  response_register_ = RegisterAddress<regs::mp1::MP1_SMN_C2PMSG_90>(bases);
  registers_.OnWrite(message_register_, "smu", [this](uint32_t message) { OnMessage(message); });
  debug_message_register_ = RegisterAddress<regs::mp1::MP1_SMN_C2PMSG_75>(bases);
  debug_argument_register_ = RegisterAddress<regs::mp1::MP1_SMN_C2PMSG_53>(bases);
  debug_response_register_ = RegisterAddress<regs::mp1::MP1_SMN_C2PMSG_54>(bases);
  registers_.OnWrite(debug_message_register_, "smu", [this](uint32_t message) { OnDebugMessage(message); });
  // The PMFW sets INTERRUPTS_ENABLED once it takes messages; smu_v13_0_check_fw_status reads it (through the RSMU
  // window: the register lies beyond BAR5) to tell a running SMU from a silent one. Read-only to the driver.
  registers_.OnRead(RegisterAddress<regs::mp1::MP1_FIRMWARE_FLAGS>(bases), "smu", [this](uint32_t) {
    return regs::mp1::MP1_FIRMWARE_FLAGS{}.interrupts_enabled(alive() ? 1 : 0).raw();
  });
}

void SmuModel::Reset() {
  base::MutexLock lock(&mu_);
  state_ = State{};
  no_response_ = false;
  mode1_reset_answered_.store(false, std::memory_order_relaxed);
}

void SmuModel::FirmwareLoaded(uint32_t version) {
  base::MutexLock lock(&mu_);
  state_.firmware_loaded = 1;
  state_.firmware_version = version;
}

bool SmuModel::alive() const {
  base::MutexLock lock(&mu_);
  return state_.firmware_loaded != 0;
}

void SmuModel::InjectNoResponse(bool enabled) {
  base::MutexLock lock(&mu_);
  no_response_ = enabled;
}

uint64_t SmuModel::enabled_features() const {
  base::MutexLock lock(&mu_);
  return state_.enabled_features;
}

uint32_t SmuModel::metrics_transfers() const {
  base::MutexLock lock(&mu_);
  return state_.metrics_counter;
}

std::optional<uint64_t> SmuModel::driver_table_address() const {
  base::MutexLock lock(&mu_);
  if (!state_.driver_table_set) return std::nullopt;
  return (uint64_t{state_.driver_table_high} << 32) | state_.driver_table_low;
}

std::pair<uint32_t, uint32_t> SmuModel::Limits(uint32_t clock) const {
  const std::vector<uint32_t>& levels = DpmLevels()[clock];
  return {state_.soft_min_mhz[clock] != 0 ? state_.soft_min_mhz[clock] : levels.front(),
          state_.soft_max_mhz[clock] != 0 ? state_.soft_max_mhz[clock] : levels.back()};
}

std::pair<uint32_t, uint32_t> SmuModel::soft_limits_mhz(uint32_t clock) const {
  base::MutexLock lock(&mu_);
  return clock < smu::PPCLK_COUNT ? Limits(clock) : std::pair<uint32_t, uint32_t>{0, 0};
}

// The metrics table at the driver table: clocks at their current soft maximum (the device is idle at the top of
// its allowed range), and plausible idle readings of an RX 7900 XTX (not measured from a board).
uint32_t SmuModel::TransferMetrics() {
  constexpr uint16_t kIdleEdgeCelsius = 40, kIdleHotspotCelsius = 45, kIdleSocketWatts = 20;
  if (memory_ == nullptr || !state_.driver_table_set) return smu::PPSMC_Result_CmdRejectedPrereq;
  regs::smu::SmuMetricsExternal table{};
  regs::smu::SmuMetrics& metrics = table.SmuMetrics;
  for (uint32_t clock = 0; clock < smu::PPCLK_COUNT; ++clock) metrics.CurrClock[clock] = Limits(clock).second;
  metrics.AverageGfxclkFrequencyTarget = static_cast<uint16_t>(Limits(smu::PPCLK_GFXCLK).second);
  metrics.AverageGfxclkFrequencyPreDs = metrics.AverageGfxclkFrequencyPostDs = metrics.AverageGfxclkFrequencyTarget;
  metrics.AverageMemclkFrequencyPreDs = metrics.AverageMemclkFrequencyPostDs =
      static_cast<uint16_t>(Limits(smu::PPCLK_UCLK).second);
  metrics.AverageFclkFrequencyPreDs = metrics.AverageFclkFrequencyPostDs =
      static_cast<uint16_t>(Limits(smu::PPCLK_FCLK).second);
  metrics.AvgTemperature[smu::TEMP_EDGE] = kIdleEdgeCelsius;
  metrics.AvgTemperature[smu::TEMP_HOTSPOT] = kIdleHotspotCelsius;
  metrics.AverageSocketPower = kIdleSocketWatts;
  metrics.MetricsCounter = ++state_.metrics_counter;
  const uint64_t address = (uint64_t{state_.driver_table_high} << 32) | state_.driver_table_low;
  const MemoryClient client{Hub::kMm, 0, 0, "smu"};
  absl::Status written =
      WriteMemory(*memory_, client, address, std::span(reinterpret_cast<const uint8_t*>(&table), sizeof(table)));
  return written.ok() ? smu::PPSMC_Result_OK : smu::PPSMC_Result_Failed;
}

bool SmuModel::TakeAnsweredMode1Reset() {
  // Every register access asks: the common answer costs one relaxed load.
  if (!mode1_reset_answered_.load(std::memory_order_relaxed)) return false;
  return mode1_reset_answered_.exchange(false, std::memory_order_acq_rel);
}

void SmuModel::OnMessage(uint32_t message) {
  Reply reply;
  {
    base::MutexLock lock(&mu_);
    if (!state_.firmware_loaded || no_response_) return;
    reply = Execute(message, registers_.Peek(argument_register_));
  }
  if (reply.output) registers_.Poke(argument_register_, *reply.output);
  registers_.Poke(response_register_, reply.result);
}

// The debug mailbox's one message (smu_v13_0_0_ppt.c defines it, next to the mailbox's registers, as 2). Linux
// sends it without waiting and then clears the response register; tinygrad clears it first and waits for
// PPSMC_Result_OK (1) there. The virtual SMU answers like its main mailbox: PPSMC_Result_OK, or
// PPSMC_Result_UnknownCmd for another id (the debug message set is not public).
constexpr uint32_t kDebugSmcMode1Reset = 2;

void SmuModel::OnDebugMessage(uint32_t message) {
  uint32_t result = smu::PPSMC_Result_UnknownCmd;
  {
    base::MutexLock lock(&mu_);
    if (!state_.firmware_loaded || no_response_) return;
    if (message == kDebugSmcMode1Reset) {
      // The argument is smu_v13_0_0_set_mode1_reset_param's: 0, or 1 << 16 for a RAS fatal-error reset; both reset.
      mode1_reset_answered_.store(true, std::memory_order_release);
      result = smu::PPSMC_Result_OK;
    }
  }
  registers_.Poke(debug_response_register_, result);
}

SmuModel::Reply SmuModel::Execute(uint32_t message, uint32_t argument) {
  const Reply ok{smu::PPSMC_Result_OK, std::nullopt};
  const Reply failed{smu::PPSMC_Result_Failed, std::nullopt};
  switch (message) {
    case smu::PPSMC_MSG_Mode1Reset:
      // smu_v13_0_0_mode1_reset's parameter: 0, or 1 << 16 for a RAS fatal-error reset (smu_v13_0_0_set_mode1_reset
      // _param); both reset the chip. The answer goes out first; the chip resets after it (TakeAnsweredMode1Reset).
      mode1_reset_answered_.store(true, std::memory_order_release);
      return ok;
    case smu::PPSMC_MSG_TestMessage:
      return {smu::PPSMC_Result_OK, argument + 1};
    case smu::PPSMC_MSG_GetSmuVersion:
      return {smu::PPSMC_Result_OK, state_.firmware_version};
    case smu::PPSMC_MSG_GetDriverIfVersion:
      return {smu::PPSMC_Result_OK, smu::SMU13_0_0_DRIVER_IF_VERSION};
    case smu::PPSMC_MSG_SetAllowedFeaturesMaskLow:
      state_.allowed_features = (state_.allowed_features & ~uint64_t{0xffffffff}) | argument;
      return ok;
    case smu::PPSMC_MSG_SetAllowedFeaturesMaskHigh:
      state_.allowed_features = (state_.allowed_features & 0xffffffff) | (uint64_t{argument} << 32);
      return ok;
    case smu::PPSMC_MSG_EnableAllSmuFeatures:
      state_.enabled_features = state_.allowed_features;
      return ok;
    case smu::PPSMC_MSG_DisableAllSmuFeatures:
      state_.enabled_features = 0;
      return ok;
    case smu::PPSMC_MSG_GetRunningSmuFeaturesLow:
      return {smu::PPSMC_Result_OK, static_cast<uint32_t>(state_.enabled_features)};
    case smu::PPSMC_MSG_GetRunningSmuFeaturesHigh:
      return {smu::PPSMC_Result_OK, static_cast<uint32_t>(state_.enabled_features >> 32)};
    case smu::PPSMC_MSG_SetDriverDramAddrHigh:
      state_.driver_table_high = argument;
      return ok;
    case smu::PPSMC_MSG_SetDriverDramAddrLow:
      state_.driver_table_low = argument;
      state_.driver_table_set = 1;
      return ok;
    case smu::PPSMC_MSG_GetDpmFreqByIndex: {
      const uint32_t clock = ClockOf(argument);
      if (clock >= smu::PPCLK_COUNT) return failed;
      const std::vector<uint32_t>& levels = DpmLevels()[clock];
      const uint32_t index = ValueOf(argument);
      const uint32_t flag = FineGrained(clock) ? kFineGrainedFlag : 0;
      if (index == kLevelCountQuery) return {smu::PPSMC_Result_OK, static_cast<uint32_t>(levels.size()) | flag};
      if (index >= levels.size()) return failed;
      return {smu::PPSMC_Result_OK, levels[index] | flag};
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
      (message == smu::PPSMC_MSG_SetSoftMinByFreq ? state_.soft_min_mhz : state_.soft_max_mhz)[clock] = mhz;
      return ok;
    }
    case smu::PPSMC_MSG_TransferTableSmu2Dram: {
      // smu_cmn_update_table: table id in bits 15:0, an argument in 31:16. Only the metrics table is modelled;
      // the others (pptable, watermarks, ...) fail as a table the firmware cannot produce.
      const uint32_t table = argument & 0xffff;
      if (table != smu::TABLE_SMU_METRICS) return failed;
      return {TransferMetrics(), std::nullopt};
    }
    default:
      return {smu::PPSMC_Result_UnknownCmd, std::nullopt};
  }
}

}  // namespace am::sim
