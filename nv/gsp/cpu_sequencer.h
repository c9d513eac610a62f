// The CPU sequencer: register work GSP-RM asks the driver to do during its boot
// (NV_VGPU_MSG_EVENT_GSP_RUN_CPU_SEQUENCER, rpc_run_cpu_sequencer_v17_00), carried out as Linux 6.12 nouveau's
// r535_gsp_msg_run_cpu_sequencer does: register writes, masked modifies, polls, delays and stores through BAR0, and the
// GSP core's reset, start and wait for halt. Commands are an opcode dword followed by its payload (rmgspseq.h
// GSP_SEQUENCER_BUFFER_CMD, payload sizes GSP_SEQUENCER_PAYLOAD_SIZE_DWORDS); cmdIndex says how many dwords of the
// buffer are used.
#ifndef BAREGPU_NV_GSP_CPU_SEQUENCER_H_
#define BAREGPU_NV_GSP_CPU_SEQUENCER_H_

#include <cstdint>
#include <span>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace nv::gsp {

// What the commands act on: BAR0 and the GSP's core.
class SequencerTarget {
 public:
  virtual ~SequencerTarget() = default;
  virtual uint32_t Read32(uint32_t address) = 0;
  virtual void Write32(uint32_t address, uint32_t value) = 0;
  // CORE_RESET (nouveau: nvkm_falcon_reset, then FBIF_CTL.ALLOW_PHYS_NO_CTX and DMACTL 0), CORE_START (CPUCTL
  // STARTCPU, through the alias when enabled), CORE_WAIT_FOR_HALT (CPUCTL.HALTED within 2 s), CORE_RESUME (the
  // resume after a suspend: GSP reset, the LibOS arguments in its mailboxes, SEC2 started again).
  virtual absl::Status CoreReset() = 0;
  virtual absl::Status CoreStart() = 0;
  virtual absl::Status CoreWaitForHalt() = 0;
  virtual absl::Status CoreResume() = 0;
};

struct SequencerRun {
  int commands = 0;     // commands carried out
  std::string summary;  // one line per command, for traces ("wr32 0x110804 0x5e0c0de1")
};

// Runs the sequencer in `payload` (the event's parameters). A poll whose condition does not hold within its timeout
// (nouveau: the command's timeout in microseconds, 4 s when 0) is an error naming the register, mask, value and what
// it read, as is a truncated buffer, an unknown opcode or a REG_STORE slot past the save area; commands before the
// failing one have been carried out.
absl::StatusOr<SequencerRun> RunCpuSequencer(std::span<const uint8_t> payload, SequencerTarget& target);

}  // namespace nv::gsp

#endif  // BAREGPU_NV_GSP_CPU_SEQUENCER_H_
