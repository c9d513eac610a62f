// The SMU (MP1 13.0.0) block: the message mailbox (C2PMSG_66 message, C2PMSG_82 argument, C2PMSG_90 response, as
// smu_cmn.c drives it), the driver table in VRAM, all features enabled, the DPM levels of the main clocks, metrics
// and mode1 reset. The SMU answers only once the PSP has loaded its firmware.
#ifndef BAREGPU_AM_SMU_H_
#define BAREGPU_AM_SMU_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "am/ip_block.h"
#include "am/regs/smu_tables.h"
#include "base/mutex.h"

namespace am {

class Device;

class Smu final : public IpBlock {
 public:
  static constexpr absl::Duration kTimeout = absl::Seconds(1);
  // SMU13_MODE1_RESET_WAIT_TIME_IN_MS (pm/swsmu/inc/smu_v13_0.h): how long the chip takes to reset after the SMU
  // answered the Mode1Reset message.
  static constexpr absl::Duration kMode1ResetWait = absl::Milliseconds(500);

  explicit Smu(Device& device) : device_(device) {}
  absl::string_view name() const override { return "smu"; }
  absl::Status InitSw() override;
  absl::Status InitHw() override;

  // One message; the SMU's output argument on success. Errors name the message and the PPSMC_Result. Thread-safe:
  // one message at a time goes through the mailbox (amdgpu's smu->message_lock), so a debug endpoint's thread may
  // read metrics beside the driver.
  absl::StatusOr<uint32_t> Send(uint32_t message, uint32_t argument = 0);
  // TransferTableSmu2Dram of the metrics table and its copy, under the mailbox lock (the table is shared too).
  absl::StatusOr<regs::smu::SmuMetrics> Metrics();
  // DPM levels (MHz) of a PPCLK_* clock.
  absl::StatusOr<std::vector<uint32_t>> DpmLevels(uint32_t clock);
  // PPSMC_MSG_Mode1Reset: the SMU answers, then the whole chip resets; returns after kMode1ResetWait. The caller
  // turns bus mastering off before and restores the PCI state after (Device::ResetChip).
  absl::Status Mode1Reset();
  // Whether the SMU's firmware runs and takes messages: MP1_FIRMWARE_FLAGS.INTERRUPTS_ENABLED, as
  // smu_v13_0_check_fw_status reads it. Nothing is sent, so a silent SMU costs no timeout.
  bool FirmwareRunning();

  uint32_t firmware_version() const { return firmware_version_; }

 private:
  absl::StatusOr<uint32_t> SendLocked(uint32_t message, uint32_t argument) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mailbox_mu_);

  Device& device_;
  base::Mutex mailbox_mu_;
  uint64_t driver_table_ = 0;  // VRAM
  uint32_t firmware_version_ = 0;
};

}  // namespace am

#endif  // BAREGPU_AM_SMU_H_
