// The SMU (MP1 13.0.0) message mailbox of the virtual Navi31, as Linux's smu_cmn.c drives it: the driver clears
// the response register C2PMSG_90, writes the argument to C2PMSG_82 and the message id to C2PMSG_66; the SMU
// answers in C2PMSG_90 (PPSMC_Result_*) and leaves any output in C2PMSG_82. Message ids and results from
// smu_v13_0_0_ppsmc.h, clock and feature ids from smu13_driver_if_v13_0_0.h (am/regs/smu*_constants.h).
//
// Until the PSP has loaded the SMU's firmware (pmfw), nothing answers: the response register stays 0 and the
// driver's wait times out, as on the hardware; MP1_FIRMWARE_FLAGS.INTERRUPTS_ENABLED says whether it runs. Its state
// (firmware, features, driver table, clock limits) is kept in the device's persistent model state, so a second process
// finds the SMU as the first left it. TransferTableSmu2Dram writes the metrics table (SmuMetricsExternal_t) to the
// driver table's MC address through the MMHUB.
//
// Beside it, the debug mailbox smu_v13_0_0_set_smu_mailbox_registers names for MP1 13.0.0 and 13.0.10: argument in
// C2PMSG_53, message in C2PMSG_75, response in C2PMSG_54 (smu_cmn.c __smu_cmn_send_debug_msg). It takes
// DEBUGSMC_MSG_Mode1Reset, which Linux sends there for 13.0.10 and tinygrad's AM driver for 13.0.0.
#ifndef BAREGPU_AM_SIM_SMU_MODEL_H_
#define BAREGPU_AM_SIM_SMU_MODEL_H_

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "am/regs/ip_bases.h"
#include "am/regs/smu_driver_if_constants.h"
#include "am/sim/gpu_memory.h"
#include "am/sim/model_state.h"
#include "am/sim/register_file.h"
#include "base/mutex.h"

namespace am::sim {

class SmuModel {
 public:
  // Without `state` the model keeps its state to itself (tests of the mailbox alone); without `memory`
  // TransferTableSmu2Dram has no path to the driver table and fails.
  SmuModel(RegisterFile& registers, const regs::IpBases& bases, ModelState* state = nullptr,
           GpuMemory* memory = nullptr);

  // The PSP loaded SMU firmware of this version: the mailbox comes alive.
  void FirmwareLoaded(uint32_t version);
  bool alive() const;

  // Fault injection: the SMU stops answering (the response register is never written).
  void InjectNoResponse(bool enabled);
  // A Mode1Reset message is answered like any other (smu_v13_0_0_mode1_reset sends it with
  // smu_cmn_send_smc_msg_with_param, which waits for the answer) and then the chip resets. True once per answered
  // reset: the device resets everything, this model included, right after the register access during which this
  // returned true (so the first access after the answer, e.g. the driver's read of it, still sees it).
  bool TakeAnsweredMode1Reset();
  // Power-on state: no firmware, no features, default clock limits.
  void Reset();

  // For tests and tools.
  uint64_t enabled_features() const;
  uint32_t metrics_transfers() const;
  std::optional<uint64_t> driver_table_address() const;
  std::pair<uint32_t, uint32_t> soft_limits_mhz(uint32_t clock) const;

  // DPM levels in MHz per PPCLK id: plausible values for an RX 7900 XTX (GFXCLK up to its 2.5 GHz boost, UCLK
  // 1250 MHz for 20 Gbps GDDR6), not measured from a board.
  static const std::array<std::vector<uint32_t>, regs::smu::PPCLK_COUNT>& DpmLevels();

 private:
  struct Reply {
    uint32_t result;
    std::optional<uint32_t> output;
  };
  // Kept in ModelState::smu; all zeros is the power-on state (a zero clock limit means the DPM range's end).
  struct State {
    uint32_t firmware_loaded;
    uint32_t firmware_version;
    uint64_t allowed_features;
    uint64_t enabled_features;
    uint32_t driver_table_high;
    uint32_t driver_table_low;
    uint32_t driver_table_set;
    uint32_t metrics_counter;
    uint32_t soft_min_mhz[regs::smu::PPCLK_COUNT];
    uint32_t soft_max_mhz[regs::smu::PPCLK_COUNT];
  };

  void OnMessage(uint32_t message);
  void OnDebugMessage(uint32_t message);
  Reply Execute(uint32_t message, uint32_t argument) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  uint32_t TransferMetrics() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  std::pair<uint32_t, uint32_t> Limits(uint32_t clock) const ABSL_SHARED_LOCKS_REQUIRED(mu_);

  RegisterFile& registers_;
  GpuMemory* memory_;
  uint64_t debug_message_register_ = 0, debug_argument_register_ = 0, debug_response_register_ = 0;
  uint64_t message_register_ = 0, argument_register_ = 0, response_register_ = 0;

  // Set by an answered Mode1Reset, taken by the next register access. Not persistent: a process that ends between
  // the answer and its next access takes the reset with it (the chip would have reset on its own).
  std::atomic<bool> mode1_reset_answered_{false};
  mutable base::Mutex mu_;
  std::unique_ptr<ModelState> own_state_;
  State& state_ ABSL_GUARDED_BY(mu_);
  bool no_response_ ABSL_GUARDED_BY(mu_) = false;
};

}  // namespace am::sim

#endif  // BAREGPU_AM_SIM_SMU_MODEL_H_
