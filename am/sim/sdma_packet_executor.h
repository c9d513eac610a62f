// The packet side of one SDMA 6.0 engine of the virtual Navi31: decodes the packet at an offset of a ring or IB
// (layouts of Linux 6.12 sdma_v6_0_0_pkt_open.h: am/regs/sdma_packets.h, am/regs/sdma_constants.h) and carries
// it out through the GPU's memory (GpuMemory, so every access goes through the GMC's translation), registers and
// interrupt ring. The queue around it (ring pointers, doorbells, the thread) is SdmaModel's.
//
// Why a packet did not complete travels as an absl::Status, so that its message names the packet:
//   kInvalidArgument  malformed: an unknown opcode, a size that cannot be, a misaligned address — the engine
//                     refuses it and stops the queue;
//   kAborted          a memory access the GMC refused (the GMC has latched the fault);
//   kUnimplemented    a real SDMA 6.0 packet the model does not implement (tiled copies, semaphores, ...);
//   kCancelled        the queue was disabled while the packet waited (POLL_REGMEM, a looping ATOMIC, a hang).
#ifndef BAREGPU_AM_SIM_SDMA_PACKET_EXECUTOR_H_
#define BAREGPU_AM_SIM_SDMA_PACKET_EXECUTOR_H_

#include <chrono>
#include <cstdint>
#include <span>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "am/sim/model_context.h"

namespace am::sim {

// Where packets come from: a queue's ring, which wraps at its power-of-two size, or an IB, which is linear.
struct CommandStream {
  uint64_t base = 0;  // GPU address
  uint64_t size = 0;  // bytes
  bool is_ring = true;
  MemoryClient client;
};

// How the executor waits without spinning, and learns that its queue is being stopped.
class EngineControl {
 public:
  virtual ~EngineControl() = default;
  // Sleeps for up to `duration`; false when the queue is being stopped (return at once then).
  virtual bool Sleep(std::chrono::nanoseconds duration) = 0;
  // Returns once no hang is injected; false when the queue is being stopped.
  virtual bool Checkpoint() = 0;
};

// What the executor knows of its engine: which one it is and the registers that gate what packets do.
struct SdmaEngineInfo {
  int instance = 0;
  const char* name = "sdma0";
  uint64_t cntl = 0;     // SDMAn_CNTL (TRAP_ENABLE)
  uint64_t ib_cntl = 0;  // SDMAn_QUEUE0_IB_CNTL (IB_ENABLE)
  // TIMESTAMP_SET moves the engine's local timestamp: local = GpuClock + offset. Lives in the model's persistent
  // state (accessed through std::atomic_ref).
  uint64_t* timestamp_offset = nullptr;
};

class SdmaPacketExecutor {
 public:
  SdmaPacketExecutor(const ModelContext& context, const SdmaEngineInfo& engine, EngineControl& control);

  // Executes the packet at byte `offset` of `stream`, of which `available` bytes (from `offset`) hold commands.
  // Returns the packet's size in bytes. A size larger than `available` means nothing was executed: the packet
  // is not all there yet (a ring waits for the driver's next wptr; in an IB it is malformed).
  absl::StatusOr<uint64_t> Execute(const CommandStream& stream, uint64_t offset, uint64_t available);

  // Posts an interrupt from this engine's queue 0 in the form sdma_v6_0_process_trap_irq decodes: client
  // SOC21_IH_CLIENTID_GFX, ring_id = instance << 4 | queue, src_data[0] = the trap's context.
  void PostInterrupt(uint32_t source_id, uint32_t context = 0);

 private:
  absl::Status Fetch(const CommandStream& stream, uint64_t offset, std::span<uint32_t> out);
  absl::Status CopyLinear(const MemoryClient& client, const uint32_t* packet);
  // Whether COND_EXE's guarded dwords run: the dword at its address equals its reference.
  absl::StatusOr<bool> CondExe(const MemoryClient& client, const uint32_t* packet);
  absl::Status GenPtePde(const MemoryClient& client, const uint32_t* packet);
  absl::Status PtepdeCopy(const MemoryClient& client, const uint32_t* packet);
  absl::Status PtepdeRmw(const MemoryClient& client, const uint32_t* packet);
  // The packets the model decodes but does not run: each returns kUnimplemented naming the packet's fields.
  absl::Status PtepdeCopyBackwards(const uint32_t* packet);
  absl::Status Semaphore(const uint32_t* packet);
  absl::Status PreExe(const uint32_t* packet);
  absl::Status GpuvmInv(const uint32_t* packet);
  void DummyTrap(const uint32_t* packet);
  absl::Status VmInvalidation(const uint32_t* packet);
  absl::Status Write(const CommandStream& stream, uint64_t offset, const uint32_t* packet);
  absl::Status Indirect(const CommandStream& stream, const uint32_t* packet);
  absl::Status Fence(const MemoryClient& client, const uint32_t* packet);
  void SrbmWrite(const uint32_t* packet);
  absl::Status Trap(const uint32_t* packet);
  absl::Status PollRegmem(const MemoryClient& client, const uint32_t* packet);
  absl::Status Timestamp(const MemoryClient& client, const uint32_t* packet);
  absl::Status Atomic(const MemoryClient& client, const uint32_t* packet);
  absl::Status ConstantFill(const MemoryClient& client, const uint32_t* packet);
  // Waits the poll back-off; false when the queue is being stopped.
  bool BackOff(std::chrono::nanoseconds& delay);

  ModelContext context_;
  SdmaEngineInfo engine_;
  EngineControl& control_;
};

}  // namespace am::sim

#endif  // BAREGPU_AM_SIM_SDMA_PACKET_EXECUTOR_H_
