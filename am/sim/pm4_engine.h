// The packet processor of one MEC compute queue: executes PM4 type-3 packets (nvd.h opcodes and field encodings,
// am/regs/pm4_constants.h) as the gfx11 MEC firmware does for a compute queue, against the device's memory (through
// the queue's VM context), registers, interrupt ring and clock. It keeps the queue's compute state (the SH
// registers SET_SH_REG writes) and hands it to the shader executor on DISPATCH_DIRECT.
//
// The ring is not its business (am/sim/compute_queue.h fetches packets from it); indirect buffers are: it reads them
// itself, chained or nested, and checks every packet against the end of its buffer. Anything the MEC would refuse —
// an unknown opcode, a packet running past its buffer, a reserved field value, a memory fault — stops the queue:
// the step reports kFault after logging a device error and posting the CP's error interrupt.
#ifndef BAREGPU_AM_SIM_PM4_ENGINE_H_
#define BAREGPU_AM_SIM_PM4_ENGINE_H_

#include <array>
#include <chrono>
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "am/regs/pm4.h"
#include "am/sim/cached_memory.h"
#include "am/sim/model_context.h"
#include "am/sim/shader_executor.h"

namespace am::sim {

// One hardware queue descriptor of the CP: micro engine (1 = MEC1), pipe, queue, as GRBM_GFX_CNTL selects them.
struct HqdId {
  uint32_t me = 1;
  uint32_t pipe = 0;
  uint32_t queue = 0;
  // The IH entry's RING_ID for this queue, packed as gfx_v11_0_eop_irq unpacks it (me bits 3:2, pipe 1:0,
  // queue 6:4).
  uint32_t ring_id() const { return (queue << 4) | (me << 2) | pipe; }
  std::string Name() const;
};

// How the MEC reaches memory for a queue in `vmid` (4 bits: CP_HQD_VMID.VMID, the INDIRECT_BUFFER control's VMID):
// the GC hub, with the UTCL2 client id of the CP's compute fetcher (CPC, index 5 of gfxhub_v3_0.c's
// gfxhub_client_ids) for the fault status. A reference into one constant table: a client built per access on the
// caller's stack is read back by the translation cache with wider loads than it was stored with, a failed store
// forward on each of the engine's accesses (issue 24).
const MemoryClient& MecMemoryClient(uint32_t vmid);
// The waves of a dispatch: their memory accesses fault as the TCP's (the model does not tell scalar loads, which go
// through the SQC, or instruction fetches apart).
MemoryClient ShaderMemoryClient(uint32_t vmid);

// How many dwords the packet starting with `header` occupies, header included. Type-2 filler and the one-dword
// NOP that Linux pads rings with (PACKET3(NOP, 0x3FFF), amdgpu_ring's nop for gfx11) take one; type 0 and 1 are
// not accepted by the MEC.
absl::StatusOr<uint32_t> Pm4PacketDwords(uint32_t header);

class Pm4Engine {
 public:
  enum class Status {
    kDone,     // the packet completed; the queue moves past it
    kStopped,  // a wait was interrupted by a dequeue: the packet did not complete and runs again on resume
    kFault,    // the queue must stop (device error logged, error interrupt posted)
  };
  struct Result {
    Status status = Status::kDone;
    // PRED_EXEC that deselected this XCC: the following dwords of the stream are skipped without being parsed.
    uint32_t skip_dwords = 0;
  };

  // Waits up to `delay` for a reason to re-check a WAIT_REG_MEM condition (the queue's wake-up); returns false when
  // the queue must stop instead. The engine never spins: it backs off from kMinBackoff to kMaxBackoff.
  using Backoff = std::function<bool(std::chrono::microseconds delay)>;
  static constexpr std::chrono::microseconds kMinBackoff{10};
  static constexpr std::chrono::microseconds kMaxBackoff{2000};
  // Indirect buffers nest at most this deep (IB1 and IB2, as the CP has IB1/IB2 fetchers: CP_IB1_*/CP_IB2_*).
  static constexpr int kMaxIbDepth = 2;

  Pm4Engine(const ModelContext& context, ShaderExecutor* executor, HqdId id, uint32_t vmid, Backoff backoff);

  // Executes one complete packet (header and all its dwords) read from the queue's ring.
  Result ExecuteRingPacket(std::span<const uint32_t> packet);
  // Starts fetching the first line of the last indirect buffer the ring ran (a bound HCQ queue runs the same one
  // at every submit), as the CP fetches ahead; no translation, no fault.
  void PrefetchLastIndirectBuffer() const {
    if (const uint8_t* p = memory_.Lookup(MecMemoryClient(last_ib_vmid_), last_ib_address_, Access::kRead)) {
      __builtin_prefetch(p);
    }
  }

  // The KIQ's scheduling packets (SET_RESOURCES, MAP_QUEUES, UNMAP_QUEUES, QUERY_STATUS) go to `handler`; on any
  // other queue they are opcodes the MEC refuses.
  using KiqHandler = std::function<Status(std::span<const uint32_t> packet)>;
  void set_kiq_handler(KiqHandler handler) { kiq_ = std::move(handler); }

  // Where a dispatch finds SH_MEM_CONFIG/SH_MEM_BASES of a VMID (the GFX model's banked registers). Without one,
  // dispatches run with their power-on values.
  using ShMemSource = std::function<ShMemRegisters(uint32_t vmid)>;
  void set_sh_mem_source(ShMemSource source) { sh_mem_ = std::move(source); }
  // The queue's reset-waves flag, handed to every dispatch (DispatchState::reset_waves).
  void set_reset_waves(const std::atomic<bool>* flag) { reset_waves_ = flag; }

  const HqdId& id() const { return id_; }
  uint32_t vmid() const { return vmid_; }
  // The MEC's memory client for the queue's VMID.
  const MemoryClient& client() const { return MecMemoryClient(vmid_); }

  // Logs a device error for this queue, posts a CP error interrupt with `source_id`, and returns kFault.
  Status Fault(uint32_t source_id, const std::string& message);
  // A dispatch whose waves faulted: the queue stands at it (the waves never finish, as halted waves do not) and a
  // device error is logged, but the CP itself reports nothing: the packet was fine, the SQ raised its own interrupt.
  Status WavesFaulted(const std::string& message);

  // Posts CP_COMPUTE_QUERY_STATUS with `context_id` in src_data[0] when this queue's pipe has
  // CP_ME1_PIPEn_INT_CNTL.CMP_QUERY_STATUS_INT_ENABLE set (the KIQ's QUERY_STATUS commands 0 and 3).
  void PostQueryStatusInterrupt(uint32_t context_id);

  // The SH register at absolute dword address `address` (0 outside the SH range), as SET_SH_REG left it.
  uint32_t ShRegister(uint64_t address) const;

 private:
  Result Execute(std::span<const uint32_t> packet, int ib_depth);
  Status RunIndirectBuffer(std::span<const uint32_t> packet, int ib_depth);
  Status WaitRegMem(std::span<const uint32_t> packet);
  Status ReleaseMem(std::span<const uint32_t> packet);
  Status WriteData(std::span<const uint32_t> packet);
  Status CopyData(std::span<const uint32_t> packet);
  Status DmaData(std::span<const uint32_t> packet);
  Status SetShReg(std::span<const uint32_t> packet);
  Status SetUconfigReg(std::span<const uint32_t> packet);
  Status DispatchDirect(std::span<const uint32_t> packet);
  Status CheckCount(uint32_t opcode, std::span<const uint32_t> packet, uint32_t min_dwords, uint32_t max_dwords);

  absl::StatusOr<uint32_t> ReadRegister(uint64_t address);
  absl::Status WriteRegister(uint64_t address, uint32_t value);
  bool PipeInterruptEnabled(uint32_t mask) const;
  void PostInterrupt(uint32_t source_id, uint32_t context_id);

  const ModelContext& context_;
  // The engine's own accesses (fences, polls, indirect buffers, copies) through its UTCL1; shaders get the GMC
  // itself, since their waves run on other threads.
  CachedMemory memory_{context_.memory};
  ShaderExecutor* executor_;
  HqdId id_;
  uint32_t vmid_;
  Backoff backoff_;
  KiqHandler kiq_;
  ShMemSource sh_mem_;
  const std::atomic<bool>* reset_waves_ = nullptr;
  uint64_t pipe_int_cntl_;
  // SET_SH_REG's range, PACKET3_SET_SH_REG_START..END (absolute dword addresses, as Linux's SOC15_REG_OFFSET).
  std::array<uint32_t, regs::pm4::PACKET3_SET_SH_REG_END - regs::pm4::PACKET3_SET_SH_REG_START> sh_{};
  std::array<std::vector<uint32_t>, kMaxIbDepth> ib_buffers_;
  uint64_t last_ib_address_ = 0;  // the ring's last INDIRECT_BUFFER, for PrefetchLastIndirectBuffer
  uint32_t last_ib_vmid_ = 0;
};

}  // namespace am::sim

#endif  // BAREGPU_AM_SIM_PM4_ENGINE_H_
