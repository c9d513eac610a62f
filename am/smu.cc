#include "am/smu.h"

#include <cstring>

#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "am/device.h"
#include "am/regs/mp1.h"
#include "am/regs/smu_constants.h"
#include "am/regs/smu_driver_if_constants.h"
#include "base/status_macros.h"

namespace am {
namespace {

namespace mp1 = regs::mp1;
namespace smu = regs::smu;

// smu_v13_0_get_dpm_level_count asks GetDpmFreqByIndex for index 0xff to learn the number of levels.
constexpr uint32_t kLevelCountQuery = 0xff;
// smu_v13_0_get_fine_grained_status: bit 31 of GetDpmFreqByIndex's answer flags a fine-grained clock (its levels
// are only the ends of a continuous range); smu_v13_0_get_dpm_freq_by_index masks it off every answer, counts too.
constexpr uint32_t kFineGrainedFlag = 1u << 31;
constexpr uint64_t kDriverTableBytes = 64 << 10;

std::string ResultName(uint32_t result) {
  switch (result) {
    case smu::PPSMC_Result_OK:
      return "PPSMC_Result_OK";
    case smu::PPSMC_Result_Failed:
      return "PPSMC_Result_Failed";
    case smu::PPSMC_Result_UnknownCmd:
      return "PPSMC_Result_UnknownCmd";
    case smu::PPSMC_Result_CmdRejectedPrereq:
      return "PPSMC_Result_CmdRejectedPrereq";
    case smu::PPSMC_Result_CmdRejectedBusy:
      return "PPSMC_Result_CmdRejectedBusy";
    default:
      return absl::StrFormat("result %#x", result);
  }
}

}  // namespace

absl::Status Smu::InitSw() {
  BAREGPU_ASSIGN_OR_RETURN(driver_table_, device_.memory().AllocBoot(kDriverTableBytes, 4096));
  return absl::OkStatus();
}

absl::StatusOr<uint32_t> Smu::Send(uint32_t message, uint32_t argument) {
  base::MutexLock lock(&mailbox_mu_);
  return SendLocked(message, argument);
}

absl::StatusOr<uint32_t> Smu::SendLocked(uint32_t message, uint32_t argument) {
  auto regs = device_.Regs<regs::Ip::kMp1>();
  regs.Write(mp1::MP1_SMN_C2PMSG_90{}.set_raw(0));
  regs.Write(mp1::MP1_SMN_C2PMSG_82{}.set_raw(argument));
  regs.Write(mp1::MP1_SMN_C2PMSG_66{}.set_raw(message));
  const uint64_t response = *regs.AddressOf<mp1::MP1_SMN_C2PMSG_90>();
  const absl::Time deadline = absl::Now() + kTimeout;
  uint32_t result = 0;
  while ((result = device_.io().ReadDword(response)) == 0) {
    if (absl::Now() > deadline) {
      return absl::DeadlineExceededError(absl::StrFormat(
          "the SMU did not answer message %#x (argument %#x) within %s: C2PMSG_90 stays 0 (is its firmware loaded?)",
          message, argument, absl::FormatDuration(kTimeout)));
    }
  }
  if (result != smu::PPSMC_Result_OK) {
    return absl::FailedPreconditionError(
        absl::StrFormat("the SMU refused message %#x (argument %#x): %s", message, argument, ResultName(result)));
  }
  return regs.Read<mp1::MP1_SMN_C2PMSG_82>().raw();
}

absl::Status Smu::InitHw() {
  BAREGPU_ASSIGN_OR_RETURN(firmware_version_, Send(smu::PPSMC_MSG_GetSmuVersion));
  const uint64_t table = device_.McAddress(driver_table_);
  BAREGPU_RETURN_IF_ERROR(Send(smu::PPSMC_MSG_SetDriverDramAddrHigh, static_cast<uint32_t>(table >> 32)).status());
  BAREGPU_RETURN_IF_ERROR(Send(smu::PPSMC_MSG_SetDriverDramAddrLow, static_cast<uint32_t>(table)).status());
  BAREGPU_RETURN_IF_ERROR(Send(smu::PPSMC_MSG_SetAllowedFeaturesMaskLow, 0xffffffff).status());
  BAREGPU_RETURN_IF_ERROR(Send(smu::PPSMC_MSG_SetAllowedFeaturesMaskHigh, 0xffffffff).status());
  BAREGPU_RETURN_IF_ERROR(Send(smu::PPSMC_MSG_EnableAllSmuFeatures).status());
  for (uint32_t clock : {smu::PPCLK_GFXCLK, smu::PPCLK_UCLK}) BAREGPU_RETURN_IF_ERROR(DpmLevels(clock).status());
  return absl::OkStatus();
}

absl::StatusOr<std::vector<uint32_t>> Smu::DpmLevels(uint32_t clock) {
  BAREGPU_ASSIGN_OR_RETURN(uint32_t count, Send(smu::PPSMC_MSG_GetDpmFreqByIndex, clock << 16 | kLevelCountQuery));
  count &= ~kFineGrainedFlag;
  // No clock of the pptable has more levels than GFXCLK (smu13_driver_if_v13_0_0.h's NUM_*_DPM_LEVELS): a larger
  // count is a broken answer, not a loop bound.
  if (count > smu::NUM_GFXCLK_DPM_LEVELS) {
    return absl::DataLossError(absl::StrFormat("the SMU says clock %d has %d DPM levels; a pptable holds at most %d",
                                               clock, count, smu::NUM_GFXCLK_DPM_LEVELS));
  }
  std::vector<uint32_t> levels;
  for (uint32_t i = 0; i < count; ++i) {
    BAREGPU_ASSIGN_OR_RETURN(uint32_t mhz, Send(smu::PPSMC_MSG_GetDpmFreqByIndex, clock << 16 | i));
    levels.push_back(mhz & ~kFineGrainedFlag);
  }
  return levels;
}

absl::StatusOr<regs::smu::SmuMetrics> Smu::Metrics() {
  base::MutexLock lock(&mailbox_mu_);
  BAREGPU_RETURN_IF_ERROR(SendLocked(smu::PPSMC_MSG_TransferTableSmu2Dram, smu::TABLE_SMU_METRICS).status());
  BAREGPU_ASSIGN_OR_RETURN(std::span<uint8_t> table,
                           device_.memory().CpuView(driver_table_, sizeof(regs::smu::SmuMetrics)));
  regs::smu::SmuMetrics metrics;
  std::memcpy(&metrics, table.data(), sizeof(metrics));
  return metrics;
}

bool Smu::FirmwareRunning() {
  return device_.Regs<regs::Ip::kMp1>().Read<mp1::MP1_FIRMWARE_FLAGS>().interrupts_enabled() != 0;
}

absl::Status Smu::Mode1Reset() {
  // smu_v13_0_0_mode1_reset for MP1 13.0.0: parameter 0 (1 << 16 only for a RAS fatal-error reset), sent like any
  // message and answered before the chip goes down; then the reset takes its time (SMU13_MODE1_RESET_WAIT_TIME_IN_MS,
  // pm/swsmu/inc/smu_v13_0.h), during which nothing may touch the chip.
  BAREGPU_RETURN_IF_ERROR(Send(smu::PPSMC_MSG_Mode1Reset, 0).status());
  absl::SleepFor(kMode1ResetWait);
  return absl::OkStatus();
}

}  // namespace am
