#include "nv/gsp/cpu_sequencer.h"

#include <cstring>
#include <thread>

#include "absl/status/statusor.h"
#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "base/status_macros.h"
#include "nv/gsp/layouts.h"
#include "nv/regs/sequencer_constants.h"

namespace nv::gsp {
namespace {

namespace g = regs::gsp;

// rmgspseq.h GSP_SEQUENCER_PAYLOAD_SIZE_DWORDS: the payload dwords each opcode carries.
constexpr uint32_t kRegWriteDwords = 2;   // addr, val
constexpr uint32_t kRegModifyDwords = 3;  // addr, mask, val
constexpr uint32_t kRegPollDwords = 5;    // addr, mask, val, timeout, error
constexpr uint32_t kDelayUsDwords = 1;    // val
constexpr uint32_t kRegStoreDwords = 2;   // addr, index
// r535_gsp_msg_run_cpu_sequencer: "cmd->payload.regPoll.timeout ?: 4000000".
constexpr uint32_t kDefaultPollTimeoutUs = 4000000;

absl::StatusOr<uint32_t> PayloadDwords(uint32_t opcode) {
  switch (opcode) {
    case g::GSP_SEQ_BUF_OPCODE_REG_WRITE:
      return kRegWriteDwords;
    case g::GSP_SEQ_BUF_OPCODE_REG_MODIFY:
      return kRegModifyDwords;
    case g::GSP_SEQ_BUF_OPCODE_REG_POLL:
      return kRegPollDwords;
    case g::GSP_SEQ_BUF_OPCODE_DELAY_US:
      return kDelayUsDwords;
    case g::GSP_SEQ_BUF_OPCODE_REG_STORE:
      return kRegStoreDwords;
    case g::GSP_SEQ_BUF_OPCODE_CORE_RESET:
    case g::GSP_SEQ_BUF_OPCODE_CORE_START:
    case g::GSP_SEQ_BUF_OPCODE_CORE_WAIT_FOR_HALT:
    case g::GSP_SEQ_BUF_OPCODE_CORE_RESUME:
      return 0;
    default:
      return absl::InvalidArgumentError(absl::StrFormat("opcode %d is not a GSP_SEQ_BUF_OPCODE (rmgspseq.h)", opcode));
  }
}

}  // namespace

absl::StatusOr<SequencerRun> RunCpuSequencer(std::span<const uint8_t> payload, SequencerTarget& target) {
  rpc_run_cpu_sequencer_v17_00 header;
  if (payload.size() < sizeof(header)) {
    return absl::InvalidArgumentError(
        absl::StrFormat("CPU sequencer: %d bytes of parameters, less than rpc_run_cpu_sequencer_v17_00's %d",
                        payload.size(), sizeof(header)));
  }
  std::memcpy(&header, payload.data(), sizeof(header));
  const size_t buffer_dwords = (payload.size() - sizeof(header)) / 4;
  if (header.cmdIndex > buffer_dwords) {
    return absl::InvalidArgumentError(
        absl::StrFormat("CPU sequencer: cmdIndex %d dwords, but the event carries %d dwords of commands",
                        header.cmdIndex, buffer_dwords));
  }
  auto dword = [&](size_t index) {
    uint32_t value;
    std::memcpy(&value, payload.data() + sizeof(header) + index * 4, 4);
    return value;
  };
  SequencerRun run;
  size_t at = 0;
  while (at < header.cmdIndex) {
    const uint32_t opcode = dword(at);
    absl::StatusOr<uint32_t> size = PayloadDwords(opcode);
    if (!size.ok()) {
      return absl::InvalidArgumentError(
          absl::StrFormat("CPU sequencer, command at dword %d: %s", at, size.status().message()));
    }
    if (at + 1 + *size > header.cmdIndex) {
      return absl::InvalidArgumentError(
          absl::StrFormat("CPU sequencer, command at dword %d (opcode %d) needs %d payload dwords past cmdIndex %d", at,
                          opcode, *size, header.cmdIndex));
    }
    const size_t p = at + 1;
    switch (opcode) {
      case g::GSP_SEQ_BUF_OPCODE_REG_WRITE:
        target.Write32(dword(p), dword(p + 1));
        absl::StrAppendFormat(&run.summary, "wr32 %#x %#010x\n", dword(p), dword(p + 1));
        break;
      case g::GSP_SEQ_BUF_OPCODE_REG_MODIFY: {
        // nvkm_mask(device, addr, mask, val): the bits in mask take val's.
        const uint32_t address = dword(p), mask = dword(p + 1), value = dword(p + 2);
        target.Write32(address, (target.Read32(address) & ~mask) | (value & mask));
        absl::StrAppendFormat(&run.summary, "mask %#x %#010x %#010x\n", address, mask, value);
        break;
      }
      case g::GSP_SEQ_BUF_OPCODE_REG_POLL: {
        const uint32_t address = dword(p), mask = dword(p + 1), value = dword(p + 2);
        const uint32_t timeout_us = dword(p + 3) != 0 ? dword(p + 3) : kDefaultPollTimeoutUs;
        const absl::Time deadline = absl::Now() + absl::Microseconds(timeout_us);
        uint32_t read = target.Read32(address);
        while ((read & mask) != value) {
          if (absl::Now() > deadline) {
            return absl::DeadlineExceededError(absl::StrFormat(
                "CPU sequencer, REG_POLL at dword %d: %#x & %#010x never read %#010x in %d us (last read %#010x)", at,
                address, mask, value, timeout_us, read));
          }
          std::this_thread::yield();
          read = target.Read32(address);
        }
        absl::StrAppendFormat(&run.summary, "poll %#x %#010x %#010x\n", address, mask, value);
        break;
      }
      case g::GSP_SEQ_BUF_OPCODE_DELAY_US:
        std::this_thread::sleep_for(std::chrono::microseconds(dword(p)));
        absl::StrAppendFormat(&run.summary, "delay %d us\n", dword(p));
        break;
      case g::GSP_SEQ_BUF_OPCODE_REG_STORE: {
        // nouveau keeps the value in the event's own regSaveArea, which nothing reads afterwards; the slot is checked.
        const uint32_t slot = dword(p + 1);
        if (slot >= g::GSP_SEQ_BUF_REG_SAVE_SIZE) {
          return absl::InvalidArgumentError(
              absl::StrFormat("CPU sequencer, REG_STORE at dword %d: slot %d past the %d-entry save area", at, slot,
                              g::GSP_SEQ_BUF_REG_SAVE_SIZE));
        }
        header.regSaveArea[slot] = target.Read32(dword(p));
        absl::StrAppendFormat(&run.summary, "store %#x -> %d\n", dword(p), slot);
        break;
      }
      case g::GSP_SEQ_BUF_OPCODE_CORE_RESET:
        BAREGPU_RETURN_IF_ERROR(target.CoreReset());
        run.summary += "core reset\n";
        break;
      case g::GSP_SEQ_BUF_OPCODE_CORE_START:
        BAREGPU_RETURN_IF_ERROR(target.CoreStart());
        run.summary += "core start\n";
        break;
      case g::GSP_SEQ_BUF_OPCODE_CORE_WAIT_FOR_HALT:
        BAREGPU_RETURN_IF_ERROR(target.CoreWaitForHalt());
        run.summary += "core wait for halt\n";
        break;
      case g::GSP_SEQ_BUF_OPCODE_CORE_RESUME:
        BAREGPU_RETURN_IF_ERROR(target.CoreResume());
        run.summary += "core resume\n";
        break;
    }
    ++run.commands;
    at = p + *size;
  }
  return run;
}

}  // namespace nv::gsp
