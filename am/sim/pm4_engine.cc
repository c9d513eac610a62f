#include "am/sim/pm4_engine.h"

#include <algorithm>
#include <atomic>
#include <bit>
#include <cstring>
#include <vector>

#include "absl/strings/str_format.h"
#include "am/regs/gc.h"
#include "am/regs/gfx_srcid_constants.h"
#include "am/regs/ih_constants.h"
#include "am/sim/wait_condition.h"
#include "base/status_macros.h"

namespace am::sim {
namespace {

namespace pm4 = regs::pm4;
namespace gc = regs::gc;

// UTCL2 client ids in the GC hub's fault status (gfxhub_v3_0.c gfxhub_client_ids): the CP's compute fetcher (CPC)
// and the texture pipe (TCP), through which waves' vector memory accesses go.
constexpr uint32_t kCpcClientId = 5;
constexpr uint32_t kTcpClientId = 8;

// Linux pads rings with PACKET3(PACKET3_NOP, 0x3FFF) one dword at a time (gfx_v11_0 ring funcs .nop): the CP reads
// the maximum count as a header-only NOP.
constexpr uint32_t kSingleDwordNopCount = 0x3fff;

// INDIRECT_BUFFER control dword: IB_SIZE 19:0, CHAIN 20 (Mesa sid.h S_3F2_CHAIN), VALID 23 (nvd.h), VMID 27:24
// (gfx_v11_0_ring_emit_ib_compute), "inherit the vmid from the MQD" 30 (the same function, MES queues).
constexpr uint32_t kIbSizeMask = 0xfffff;
constexpr uint32_t kIbChain = 1u << 20;
constexpr uint32_t kIbVmidShift = 24;
constexpr uint32_t kIbInheritVmid = 1u << 30;

// PRED_EXEC: EXEC_COUNT 13:0 dwords follow, DEVICE_SELECT 31:24 one bit per XCC (tinygrad ops_amd pred_exec).
// Navi31 has one XCC, bit 0.
constexpr uint32_t kPredExecCountMask = 0x3fff;
constexpr uint32_t kPredExecThisXcc = 1u << 24;

// WRITE_DATA control dword fields beyond nvd.h's macros: DST_SEL 11:8.
constexpr uint32_t kWriteDataWrOneAddr = 1u << 16;

// The packets this engine executes are named; any other opcode is one it does not support.
const char* OpcodeName(uint32_t opcode) {
  const char* name = pm4::Packet3Name(opcode);
  return name != nullptr ? name : "unsupported";
}

}  // namespace

std::string HqdId::Name() const { return absl::StrFormat("me%d pipe%d queue%d", me, pipe, queue); }

absl::StatusOr<uint32_t> Pm4PacketDwords(uint32_t header) {
  switch (pm4::PacketType(header)) {
    case pm4::PACKET_TYPE2:
      return 1;
    case pm4::PACKET_TYPE3:
      if (pm4::Packet3Opcode(header) == pm4::PACKET3_NOP && pm4::PacketCount(header) == kSingleDwordNopCount) return 1;
      return pm4::PacketCount(header) + 2;
  }
  return absl::InvalidArgumentError(
      absl::StrFormat("PM4 header %#010x is a type-%d packet; the MEC executes type-3 packets (and type-2 filler)",
                      header, pm4::PacketType(header)));
}

Pm4Engine::Pm4Engine(const ModelContext& context, ShaderExecutor* executor, HqdId id, uint32_t vmid, Backoff backoff)
    : context_(context), executor_(executor), id_(id), vmid_(vmid), backoff_(std::move(backoff)) {
  // CP_ME1_PIPE0..3_INT_CNTL are consecutive (gc_11_0_0_offset.h 0x1e25..0x1e28).
  pipe_int_cntl_ = RegisterAddress<gc::CP_ME1_PIPE0_INT_CNTL>(context_.bases) + id_.pipe;
}

Pm4Engine::Status Pm4Engine::Fault(uint32_t source_id, const std::string& message) {
  context_.errors.Report("mec", absl::StrFormat("%s: %s; the queue stopped", id_.Name(), message));
  // Error interrupts are gated per pipe like the EOP interrupt (CP_ME1_PIPEn_INT_CNTL *_INT_ENABLE).
  const auto cntl = gc::CP_ME1_PIPE0_INT_CNTL::FromRaw(context_.registers.Peek(pipe_int_cntl_));
  const bool enabled = source_id == regs::ih::GFX_11_0_0__SRCID__CP_GPF ? cntl.gpf_int_enable() != 0
                                                                        : cntl.opcode_error_int_enable() != 0;
  if (enabled) PostInterrupt(source_id, 0);
  return Status::kFault;
}

Pm4Engine::Status Pm4Engine::WavesFaulted(const std::string& message) {
  context_.errors.Report("mec", absl::StrFormat("%s: %s; the queue stands at the dispatch", id_.Name(), message));
  return Status::kFault;
}

uint32_t Pm4Engine::ShRegister(uint64_t address) const {
  if (address < pm4::PACKET3_SET_SH_REG_START || address >= pm4::PACKET3_SET_SH_REG_END) return 0;
  return sh_[address - pm4::PACKET3_SET_SH_REG_START];
}

const MemoryClient& MecMemoryClient(uint32_t vmid) {
  static constexpr uint32_t kVmids = 16;
  static constexpr std::array<MemoryClient, kVmids> kClients = [] {
    std::array<MemoryClient, kVmids> clients;
    for (uint32_t v = 0; v < kVmids; ++v) clients[v] = {Hub::kGc, v, kCpcClientId, "mec"};
    return clients;
  }();
  return kClients[vmid % kVmids];
}
MemoryClient ShaderMemoryClient(uint32_t vmid) { return {Hub::kGc, vmid, kTcpClientId, "tcp"}; }

void Pm4Engine::PostInterrupt(uint32_t source_id, uint32_t context_id) {
  InterruptEntry entry;
  entry.client_id = regs::ih::SOC21_IH_CLIENTID_GRBM_CP;
  entry.source_id = source_id;
  entry.ring_id = id_.ring_id();
  entry.vmid = vmid_;
  // gfx_v11_0_eop_irq reads the RELEASE_MEM context id from src_data[0].
  entry.src_data[0] = context_id;
  context_.interrupts.Post(entry);
}

absl::StatusOr<uint32_t> Pm4Engine::ReadRegister(uint64_t address) {
  if (address >= context_.registers.size_dwords()) {
    return absl::OutOfRangeError(absl::StrFormat("register %#x is outside the register space (%#x dwords)", address,
                                                 context_.registers.size_dwords()));
  }
  return context_.registers.ReadDword(address);
}

absl::Status Pm4Engine::WriteRegister(uint64_t address, uint32_t value) {
  if (address >= context_.registers.size_dwords()) {
    return absl::OutOfRangeError(absl::StrFormat("register %#x is outside the register space (%#x dwords)", address,
                                                 context_.registers.size_dwords()));
  }
  context_.registers.WriteDword(address, value);
  return absl::OkStatus();
}

Pm4Engine::Status Pm4Engine::CheckCount(uint32_t opcode, std::span<const uint32_t> packet, uint32_t min_dwords,
                                        uint32_t max_dwords) {
  if (packet.size() >= min_dwords && packet.size() <= max_dwords) return Status::kDone;
  return Fault(regs::ih::GFX_11_0_0__SRCID__CP_BAD_OPCODE_ERROR,
               absl::StrFormat("%s packet of %d dwords (header %#010x); it takes %d to %d", OpcodeName(opcode),
                               packet.size(), packet[0], min_dwords, max_dwords));
}

Pm4Engine::Result Pm4Engine::ExecuteRingPacket(std::span<const uint32_t> packet) { return Execute(packet, 0); }

Pm4Engine::Result Pm4Engine::Execute(std::span<const uint32_t> packet, int ib_depth) {
  const uint32_t header = packet[0];
  if (pm4::PacketType(header) == pm4::PACKET_TYPE2) return {};
  const uint32_t opcode = pm4::Packet3Opcode(header);
  switch (opcode) {
    case pm4::PACKET3_NOP:
      return {};
    case pm4::PACKET3_WAIT_REG_MEM:
      return {WaitRegMem(packet)};
    case pm4::PACKET3_RELEASE_MEM:
      return {ReleaseMem(packet)};
    case pm4::PACKET3_ACQUIRE_MEM:
      // gfx_v11_0_emit_mem_sync: coher_cntl, size lo/hi, base lo/hi, poll interval, GCR_CNTL. The model has no
      // caches between the CP, the shaders and memory, so there is nothing to invalidate or write back.
      return {CheckCount(opcode, packet, 8, 8)};
    case pm4::PACKET3_EVENT_WRITE:
      // Compute events (CS_PARTIAL_FLUSH, cache flushes) order work the model already runs in order; the variant
      // with an address (count 2) is accepted for events that carry one.
      if (Status s = CheckCount(opcode, packet, 2, 4); s != Status::kDone) return {s};
      return {};
    case pm4::PACKET3_WRITE_DATA:
      return {WriteData(packet)};
    case pm4::PACKET3_COPY_DATA:
      return {CopyData(packet)};
    case pm4::PACKET3_DMA_DATA:
      return {DmaData(packet)};
    case pm4::PACKET3_SET_SH_REG:
      return {SetShReg(packet)};
    case pm4::PACKET3_SET_UCONFIG_REG:
      return {SetUconfigReg(packet)};
    case pm4::PACKET3_INDIRECT_BUFFER:
      return {RunIndirectBuffer(packet, ib_depth)};
    case pm4::PACKET3_DISPATCH_DIRECT:
      return {DispatchDirect(packet)};
    case pm4::PACKET3_SET_RESOURCES:
    case pm4::PACKET3_MAP_QUEUES:
    case pm4::PACKET3_UNMAP_QUEUES:
    case pm4::PACKET3_QUERY_STATUS:
      if (kiq_) return {kiq_(packet)};
      return {Fault(
          regs::ih::GFX_11_0_0__SRCID__CP_BAD_OPCODE_ERROR,
          absl::StrFormat("%s on a queue that is not the KIQ (RLC_CP_SCHEDULERS names the KIQ)", OpcodeName(opcode)))};
    case pm4::PACKET3_PRED_EXEC: {
      if (Status s = CheckCount(opcode, packet, 2, 2); s != Status::kDone) return {s};
      if (packet[1] & kPredExecThisXcc) return {};
      return {Status::kDone, packet[1] & kPredExecCountMask};
    }
  }
  return {Fault(regs::ih::GFX_11_0_0__SRCID__CP_BAD_OPCODE_ERROR,
                absl::StrFormat("opcode %#x (%s) in header %#010x is not executed by the MEC model", opcode,
                                OpcodeName(opcode), header))};
}

Pm4Engine::Status Pm4Engine::WaitRegMem(std::span<const uint32_t> packet) {
  if (Status s = CheckCount(pm4::PACKET3_WAIT_REG_MEM, packet, 7, 7); s != Status::kDone) return s;
  const uint32_t info = packet[1];
  const uint32_t function = info & 7;
  const bool memory = (info >> 4) & 1;
  const uint32_t operation = (info >> 6) & 3;
  const uint32_t reference = packet[4], mask = packet[5];
  if (function == 7) {
    return Fault(regs::ih::GFX_11_0_0__SRCID__CP_PM4_PKT_RSVD_BIT_ERROR,
                 "WAIT_REG_MEM compare function 7 is reserved (nvd.h defines 0..6)");
  }
  // Operation 1 (wr_wait_wr_reg) writes the reference to the first register, then polls the second: the HDP flush
  // handshake of gfx_v11_0_ring_emit_hdp_flush. It has no memory form.
  if (operation > 1 || (memory && operation != 0)) {
    return Fault(regs::ih::GFX_11_0_0__SRCID__CP_PM4_PKT_RSVD_BIT_ERROR,
                 absl::StrFormat("WAIT_REG_MEM operation %d on %s is not defined (nvd.h: 0 wait, 1 write-wait on "
                                 "registers)",
                                 operation, memory ? "memory" : "a register"));
  }
  uint64_t poll_register = packet[2];
  const uint64_t poll_address = packet[2] | (uint64_t{packet[3]} << 32);
  if (!memory && operation == 1) {
    if (absl::Status s = WriteRegister(packet[2], reference); !s.ok()) {
      return Fault(regs::ih::GFX_11_0_0__SRCID__CP_PRIV_REG_FAULT, absl::StrFormat("WAIT_REG_MEM: %s", s.message()));
    }
    poll_register = packet[3];
  }
  auto delay = kMinBackoff;
  while (true) {
    uint32_t value;
    if (memory) {
      // Mapped on every poll through the engine's UTCL1 (CachedMemory): memory the driver unmaps while the queue
      // waits (a TLB invalidation or a DMA unmapping ends the kept view) faults instead of being read through a
      // stale pointer.
      auto mapped = MapDword(memory_, client(), poll_address, Access::kRead);
      if (!mapped.ok()) {
        return Fault(regs::ih::GFX_11_0_0__SRCID__CP_GPF,
                     absl::StrFormat("WAIT_REG_MEM on memory: %s", mapped.status().message()));
      }
      value = std::atomic_ref<uint32_t>(**mapped).load(std::memory_order_acquire);
    } else {
      absl::StatusOr<uint32_t> read = ReadRegister(poll_register);
      if (!read.ok()) {
        return Fault(regs::ih::GFX_11_0_0__SRCID__CP_PRIV_REG_FAULT,
                     absl::StrFormat("WAIT_REG_MEM: %s", read.status().message()));
      }
      value = *read;
    }
    if (WaitConditionHolds(function, value & mask, reference)) return Status::kDone;
    if (!backoff_(delay)) return Status::kStopped;
    delay = std::min(delay * 2, kMaxBackoff);
  }
}

Pm4Engine::Status Pm4Engine::ReleaseMem(std::span<const uint32_t> packet) {
  // gfx_v11_0_ring_emit_fence: event dword, DATA_SEL/INT_SEL/DST_SEL dword, address lo/hi, data lo/hi, context id.
  if (Status s = CheckCount(pm4::PACKET3_RELEASE_MEM, packet, 8, 8); s != Status::kDone) return s;
  const uint32_t select = packet[2];
  const uint32_t data_sel = (select >> 29) & 7, int_sel = (select >> 24) & 7, dst_sel = (select >> 16) & 3;
  const uint64_t address = packet[3] | (uint64_t{packet[4]} << 32);
  const uint64_t data = packet[5] | (uint64_t{packet[6]} << 32);
  if (data_sel > 4 || int_sel > 2 || dst_sel > 1) {
    return Fault(regs::ih::GFX_11_0_0__SRCID__CP_PM4_PKT_RSVD_BIT_ERROR,
                 absl::StrFormat("RELEASE_MEM with DATA_SEL %d, INT_SEL %d, DST_SEL %d (nvd.h defines DATA_SEL 0..4, "
                                 "INT_SEL 0..2, DST_SEL 0..1)",
                                 data_sel, int_sel, dst_sel));
  }
  // The model runs every earlier packet to completion before this one, so the end-of-pipe event has been reached.
  const MemoryClient& client = this->client();
  absl::Status written = absl::OkStatus();
  if (data_sel == 1) {
    absl::StatusOr<uint32_t*> dword = MapDword(memory_, client, address, Access::kWrite);
    written = dword.status();
    if (dword.ok()) std::atomic_ref<uint32_t>(**dword).store(static_cast<uint32_t>(data), std::memory_order_release);
  } else if (data_sel >= 2) {
    // 3: the GPU clock counter; 4: the "system counter", which on this device is the same 100 MHz reference.
    const uint64_t value = data_sel == 2 ? data : context_.clock.Now();
    absl::StatusOr<uint64_t*> qword = MapQword(memory_, client, address, Access::kWrite);
    written = qword.status();
    if (qword.ok()) std::atomic_ref<uint64_t>(**qword).store(value, std::memory_order_release);
  }
  if (!written.ok()) {
    return Fault(regs::ih::GFX_11_0_0__SRCID__CP_GPF, absl::StrFormat("RELEASE_MEM: %s", written.message()));
  }
  // Per-queue EOP interrupts are enabled per pipe (gfx_v11_0_set_compute_eop_interrupt_state: TIME_STAMP_INT_ENABLE).
  // INT_SEL 2 interrupts "after write confirm": the write is visible to every reader before the pipe looks at the
  // enable, so a driver that turns the enable on and then reads the signal either sees the write or gets the
  // interrupt (am::CompletionInterrupts). The fence is that confirmation.
  if (int_sel != 0) {
    std::atomic_thread_fence(std::memory_order_seq_cst);
    if (PipeInterruptEnabled(gc::CP_ME1_PIPE0_INT_CNTL{}.time_stamp_int_enable(1).raw())) {
      PostInterrupt(regs::ih::GFX_11_0_0__SRCID__CP_EOP_INTERRUPT, packet[7]);
    }
  }
  return Status::kDone;
}

void Pm4Engine::PostQueryStatusInterrupt(uint32_t context_id) {
  if (PipeInterruptEnabled(gc::CP_ME1_PIPE0_INT_CNTL{}.cmp_query_status_int_enable(1).raw())) {
    PostInterrupt(regs::ih::GFX_11_0_0__SRCID__CP_COMPUTE_QUERY_STATUS, context_id);
  }
}

bool Pm4Engine::PipeInterruptEnabled(uint32_t mask) const {
  return (context_.registers.Peek(pipe_int_cntl_) & mask) != 0;
}

Pm4Engine::Status Pm4Engine::WriteData(std::span<const uint32_t> packet) {
  // Control, destination lo/hi, then the data (nvd.h WRITE_DATA_*).
  if (Status s = CheckCount(pm4::PACKET3_WRITE_DATA, packet, 5, packet.size()); s != Status::kDone) return s;
  const uint32_t control = packet[1];
  const uint32_t dst_sel = (control >> 8) & 0xf;
  const bool one_address = control & kWriteDataWrOneAddr;
  const std::span<const uint32_t> data = packet.subspan(4);
  if (dst_sel == 0) {
    for (size_t i = 0; i < data.size(); ++i) {
      if (absl::Status s = WriteRegister(packet[2] + (one_address ? 0 : i), data[i]); !s.ok()) {
        return Fault(regs::ih::GFX_11_0_0__SRCID__CP_PRIV_REG_FAULT, absl::StrFormat("WRITE_DATA: %s", s.message()));
      }
    }
    return Status::kDone;
  }
  // 1: memory through GRBM, 2: GL2, 5: memory directly; the model has one memory behind all of them.
  if (dst_sel != 1 && dst_sel != 2 && dst_sel != 5) {
    return Fault(regs::ih::GFX_11_0_0__SRCID__CP_PM4_PKT_RSVD_BIT_ERROR,
                 absl::StrFormat("WRITE_DATA DST_SEL %d is not a destination the MEC model writes (nvd.h: 0 "
                                 "register, 1 memory, 2 GL2, 3 GDS, 5 memory)",
                                 dst_sel));
  }
  const uint64_t address = packet[2] | (uint64_t{packet[3]} << 32);
  for (size_t i = 0; i < data.size(); ++i) {
    absl::StatusOr<uint32_t*> dword = MapDword(memory_, client(), address + (one_address ? 0 : 4 * i), Access::kWrite);
    if (!dword.ok()) {
      return Fault(regs::ih::GFX_11_0_0__SRCID__CP_GPF, absl::StrFormat("WRITE_DATA: %s", dword.status().message()));
    }
    std::atomic_ref<uint32_t>(**dword).store(data[i], std::memory_order_release);
  }
  return Status::kDone;
}

// COPY_DATA's control dword (tinygrad's autogen/am/pm4_nv.py PACKET3_COPY_DATA__*, from AMD's gfx11 PM4 header; the
// selector values as Linux uses them: gfx_v11_0_ring_emit_rreg copies register (0) to memory (5), tinygrad's
// AMDComputeQueue copies perf counters (4) to TC_L2 (2), gfx_v9_0_kiq_read_clock the GPU clock (9) with
// COUNT_SEL).
constexpr uint32_t kCopyDataSelMask = 0xf, kCopyDataSrcSelShift = 0, kCopyDataDstSelShift = 8;
constexpr uint32_t kCopyDataCountSel = 1u << 16;           // 64 bits instead of 32
constexpr uint32_t kCopyDataRegisterOffsetMask = 0x3ffff;  // SRC/DST_REG_OFFSET: a dword register address
enum CopyDataSel : uint32_t {
  kCopyDataRegister = 0,
  kCopyDataMemory = 1,  // memory through GRBM (source or destination)
  kCopyDataTcL2 = 2,
  kCopyDataGds = 3,
  kCopyDataPerf = 4,       // a performance-counter register
  kCopyDataImmediate = 5,  // as a source: the data in the packet; as a destination: memory
  kCopyDataGpuClock = 9,   // source only: the 64-bit GPU clock counter
};

Pm4Engine::Status Pm4Engine::CopyData(std::span<const uint32_t> packet) {
  // Control, source (register, address lo/hi or immediate data lo/hi), destination (register or address lo/hi).
  if (Status s = CheckCount(pm4::PACKET3_COPY_DATA, packet, 6, 6); s != Status::kDone) return s;
  const uint32_t control = packet[1];
  const uint32_t src_sel = (control >> kCopyDataSrcSelShift) & kCopyDataSelMask;
  const uint32_t dst_sel = (control >> kCopyDataDstSelShift) & kCopyDataSelMask;
  const bool wide = (control & kCopyDataCountSel) != 0;
  const uint64_t source = packet[2] | (uint64_t{packet[3]} << 32);
  const uint64_t destination = packet[4] | (uint64_t{packet[5]} << 32);
  const MemoryClient& client = this->client();
  auto fault = [&](absl::string_view what) {
    return Fault(regs::ih::GFX_11_0_0__SRCID__CP_GPF, absl::StrCat("COPY_DATA: ", what));
  };

  uint64_t value = 0;
  switch (src_sel) {
    case kCopyDataRegister:
    case kCopyDataPerf: {
      // Registers are 32 bits; COUNT_SEL reads the next one as the high half (a _LO/_HI pair).
      for (uint32_t i = 0; i < (wide ? 2u : 1u); ++i) {
        absl::StatusOr<uint32_t> read = ReadRegister((packet[2] & kCopyDataRegisterOffsetMask) + i);
        if (!read.ok()) {
          return Fault(regs::ih::GFX_11_0_0__SRCID__CP_PRIV_REG_FAULT,
                       absl::StrCat("COPY_DATA: ", read.status().message()));
        }
        value |= uint64_t{*read} << (32 * i);
      }
      break;
    }
    case kCopyDataMemory:
    case kCopyDataTcL2: {
      if (source % (wide ? 8 : 4) != 0) return fault(absl::StrFormat("source %#x is not aligned", source));
      absl::Status read = ReadMemory(memory_, client, source, {reinterpret_cast<uint8_t*>(&value), wide ? 8u : 4u});
      if (!read.ok()) return fault(read.message());
      break;
    }
    case kCopyDataImmediate:
      value = wide ? source : packet[2];
      break;
    case kCopyDataGpuClock:
      value = context_.clock.Now();
      break;
    default:
      return Fault(regs::ih::GFX_11_0_0__SRCID__CP_PM4_PKT_RSVD_BIT_ERROR,
                   absl::StrFormat("COPY_DATA SRC_SEL %d is not a source the MEC model reads (0 register, 1 and 2 "
                                   "memory, 4 perf counter, 5 immediate, 9 GPU clock)",
                                   src_sel));
  }

  switch (dst_sel) {
    case kCopyDataRegister:
    case kCopyDataPerf:
      for (uint32_t i = 0; i < (wide ? 2u : 1u); ++i) {
        if (absl::Status s =
                WriteRegister((packet[4] & kCopyDataRegisterOffsetMask) + i, static_cast<uint32_t>(value >> (32 * i)));
            !s.ok()) {
          return Fault(regs::ih::GFX_11_0_0__SRCID__CP_PRIV_REG_FAULT, absl::StrCat("COPY_DATA: ", s.message()));
        }
      }
      return Status::kDone;
    case kCopyDataMemory:
    case kCopyDataTcL2:
    case kCopyDataImmediate: {  // 5 as a destination is memory (gfx_v11_0_ring_emit_rreg)
      if (destination % (wide ? 8 : 4) != 0) {
        return fault(absl::StrFormat("destination %#x is not aligned", destination));
      }
      absl::Status written =
          WriteMemory(memory_, client, destination, {reinterpret_cast<const uint8_t*>(&value), wide ? 8u : 4u});
      if (!written.ok()) return fault(written.message());
      return Status::kDone;
    }
    default:
      return Fault(regs::ih::GFX_11_0_0__SRCID__CP_PM4_PKT_RSVD_BIT_ERROR,
                   absl::StrFormat("COPY_DATA DST_SEL %d is not a destination the MEC model writes (0 register, 1, 2 "
                                   "and 5 memory, 4 perf counter)",
                                   dst_sel));
  }
}

// DMA_DATA (nvd.h: control, source address or data, destination address, command | byte count). The selectors
// are nvd.h's: SRC_SEL 0 / 3 the source address (through SAS / through L2), 1 GDS, 2 DATA (a fill); DST_SEL 0 / 3
// the destination address, 1 GDS. BYTE_COUNT is the 26 bits below the command bits.
constexpr uint32_t kDmaDataSelMask = 0x3;
constexpr uint32_t kDmaDataSrcAddress = 0, kDmaDataSrcGds = 1, kDmaDataSrcData = 2, kDmaDataSrcAddressL2 = 3;
constexpr uint32_t kDmaDataDstAddress = 0, kDmaDataDstGds = 1, kDmaDataDstAddressL2 = 3;
constexpr uint32_t kDmaDataByteCountMask = pm4::PACKET3_DMA_DATA_CMD_SAS - 1;

Pm4Engine::Status Pm4Engine::DmaData(std::span<const uint32_t> packet) {
  if (Status s = CheckCount(pm4::PACKET3_DMA_DATA, packet, 7, 7); s != Status::kDone) return s;
  const uint32_t control = packet[1], command = packet[6];
  const uint32_t src_sel = (control >> std::countr_zero(pm4::PACKET3_DMA_DATA_SRC_SEL(1))) & kDmaDataSelMask;
  const uint32_t dst_sel = (control >> std::countr_zero(pm4::PACKET3_DMA_DATA_DST_SEL(1))) & kDmaDataSelMask;
  const uint64_t bytes = command & kDmaDataByteCountMask;
  const uint64_t source = packet[2] | (uint64_t{packet[3]} << 32);
  const uint64_t destination = packet[4] | (uint64_t{packet[5]} << 32);
  const bool fill = src_sel == kDmaDataSrcData;
  // GDS (SRC_SEL/DST_SEL 1) is refused: the model keeps no GDS storage (gfx_v11_0_set_gds_init's 4 KiB), and
  // amdgpu's only DMA_DATA to GDS is gfx_v9_0's EDC workaround. Register addressing (SAS/DAS) and non-incrementing
  // addresses (SAIC/DAIC) are refused too: no driver emits them and nvd.h does not say in what unit a register
  // address is given. Each refusal names the field, so a driver author sees which one the model lacks.
  const char* refused = nullptr;
  if (src_sel == kDmaDataSrcGds || dst_sel == kDmaDataDstGds) {
    refused = "GDS as source or destination (SRC_SEL/DST_SEL 1): the model has no GDS";
  } else if (src_sel != kDmaDataSrcAddress && src_sel != kDmaDataSrcAddressL2 && !fill) {
    refused = "a reserved SRC_SEL";
  } else if (dst_sel != kDmaDataDstAddress && dst_sel != kDmaDataDstAddressL2) {
    refused = "a reserved DST_SEL";
  } else if ((command & (pm4::PACKET3_DMA_DATA_CMD_SAS | pm4::PACKET3_DMA_DATA_CMD_DAS)) != 0) {
    refused = "a register as source or destination (SAS/DAS 1)";
  } else if ((command & (pm4::PACKET3_DMA_DATA_CMD_DAIC | (fill ? 0 : pm4::PACKET3_DMA_DATA_CMD_SAIC))) != 0) {
    refused = "a non-incrementing address (SAIC/DAIC 1)";
  }
  if (refused != nullptr) {
    return Fault(regs::ih::GFX_11_0_0__SRCID__CP_PM4_PKT_RSVD_BIT_ERROR,
                 absl::StrFormat("DMA_DATA control %#010x command %#010x: %s is not modelled; the MEC model copies and "
                                 "fills memory to memory only (SRC_SEL 0, 2, 3; DST_SEL 0, 3; no SAS, DAS, DAIC)",
                                 control, command, refused));
  }
  if (fill && (destination % 4 != 0 || bytes % 4 != 0)) {
    return Fault(regs::ih::GFX_11_0_0__SRCID__CP_GPF,
                 absl::StrFormat("DMA_DATA fill of %d bytes at %#x: not whole aligned dwords", bytes, destination));
  }
  const MemoryClient& client = this->client();
  std::vector<uint8_t> chunk;
  for (uint64_t done = 0; done < bytes;) {
    const uint64_t n = std::min<uint64_t>(bytes - done, 64 * 1024);
    chunk.resize(n);
    if (fill) {
      for (uint64_t i = 0; i < n; i += 4) std::memcpy(chunk.data() + i, &packet[2], 4);
    } else if (absl::Status read = ReadMemory(memory_, client, source + done, chunk); !read.ok()) {
      return Fault(regs::ih::GFX_11_0_0__SRCID__CP_GPF, absl::StrCat("DMA_DATA source: ", read.message()));
    }
    if (absl::Status written = WriteMemory(memory_, client, destination + done, chunk); !written.ok()) {
      return Fault(regs::ih::GFX_11_0_0__SRCID__CP_GPF, absl::StrCat("DMA_DATA destination: ", written.message()));
    }
    done += n;
  }
  return Status::kDone;
}

Pm4Engine::Status Pm4Engine::SetShReg(std::span<const uint32_t> packet) {
  if (Status s = CheckCount(pm4::PACKET3_SET_SH_REG, packet, 3, packet.size()); s != Status::kDone) return s;
  const uint32_t offset = packet[1] & 0xffff;
  const size_t values = packet.size() - 2;
  if (offset + values > sh_.size()) {
    return Fault(regs::ih::GFX_11_0_0__SRCID__CP_PRIV_REG_FAULT,
                 absl::StrFormat("SET_SH_REG of %d registers at offset %#x runs past the SH range (%#x registers "
                                 "from PACKET3_SET_SH_REG_START %#x)",
                                 values, offset, sh_.size(), pm4::PACKET3_SET_SH_REG_START));
  }
  std::copy(packet.begin() + 2, packet.end(), sh_.begin() + offset);
  return Status::kDone;
}

Pm4Engine::Status Pm4Engine::SetUconfigReg(std::span<const uint32_t> packet) {
  if (Status s = CheckCount(pm4::PACKET3_SET_UCONFIG_REG, packet, 3, packet.size()); s != Status::kDone) return s;
  const uint32_t offset = packet[1] & 0xffff;
  const size_t values = packet.size() - 2;
  constexpr uint32_t kRange = pm4::PACKET3_SET_UCONFIG_REG_END - pm4::PACKET3_SET_UCONFIG_REG_START;
  if (offset + values > kRange) {
    return Fault(regs::ih::GFX_11_0_0__SRCID__CP_PRIV_REG_FAULT,
                 absl::StrFormat("SET_UCONFIG_REG of %d registers at offset %#x runs past the UCONFIG range (%#x "
                                 "registers from PACKET3_SET_UCONFIG_REG_START %#x)",
                                 values, offset, kRange, pm4::PACKET3_SET_UCONFIG_REG_START));
  }
  // UCONFIG registers are the device's own (GRBM_GFX_INDEX, perfmon controls): they go to the register space.
  for (size_t i = 0; i < values; ++i) {
    if (absl::Status s = WriteRegister(pm4::PACKET3_SET_UCONFIG_REG_START + offset + i, packet[2 + i]); !s.ok()) {
      return Fault(regs::ih::GFX_11_0_0__SRCID__CP_PRIV_REG_FAULT, absl::StrFormat("SET_UCONFIG_REG: %s", s.message()));
    }
  }
  return Status::kDone;
}

Pm4Engine::Status Pm4Engine::DispatchDirect(std::span<const uint32_t> packet) {
  if (Status s = CheckCount(pm4::PACKET3_DISPATCH_DIRECT, packet, 5, 5); s != Status::kDone) return s;
  const regs::IpBases& bases = context_.bases;
  auto sh = [&](uint64_t address) { return ShRegister(address); };
  DispatchState state;
  state.program_address = ((uint64_t{sh(RegisterAddress<gc::COMPUTE_PGM_HI>(bases))} << 32) |
                           sh(RegisterAddress<gc::COMPUTE_PGM_LO>(bases)))
                          << 8;
  state.pgm_rsrc1 = sh(RegisterAddress<gc::COMPUTE_PGM_RSRC1>(bases));
  state.pgm_rsrc2 = sh(RegisterAddress<gc::COMPUTE_PGM_RSRC2>(bases));
  state.pgm_rsrc3 = sh(RegisterAddress<gc::COMPUTE_PGM_RSRC3>(bases));
  // COMPUTE_USER_DATA_0..15 are consecutive (gc_11_0_0_offset.h 0x1be0..0x1bef).
  const uint64_t user_data = RegisterAddress<gc::COMPUTE_USER_DATA_0>(bases);
  for (size_t i = 0; i < state.user_data.size(); ++i) state.user_data[i] = sh(user_data + i);
  state.start = {sh(RegisterAddress<gc::COMPUTE_START_X>(bases)), sh(RegisterAddress<gc::COMPUTE_START_Y>(bases)),
                 sh(RegisterAddress<gc::COMPUTE_START_Z>(bases))};
  state.num_thread = {sh(RegisterAddress<gc::COMPUTE_NUM_THREAD_X>(bases)),
                      sh(RegisterAddress<gc::COMPUTE_NUM_THREAD_Y>(bases)),
                      sh(RegisterAddress<gc::COMPUTE_NUM_THREAD_Z>(bases))};
  state.dimensions = {packet[1], packet[2], packet[3]};
  state.dispatch_initiator = packet[4];
  state.tmpring_size = sh(RegisterAddress<gc::COMPUTE_TMPRING_SIZE>(bases));
  state.resource_limits = sh(RegisterAddress<gc::COMPUTE_RESOURCE_LIMITS>(bases));
  state.memory = ShaderMemoryClient(vmid_);
  if (sh_mem_) state.sh_mem = sh_mem_(vmid_);
  state.reset_waves = reset_waves_;
  state.me = id_.me;
  state.pipe = id_.pipe;
  state.queue = id_.queue;
  if (executor_ == nullptr) {
    // No CP error source means "no shader engine": from the driver's side the CP could not execute the packet,
    // which is what CP_BAD_OPCODE_ERROR reports.
    return Fault(regs::ih::GFX_11_0_0__SRCID__CP_BAD_OPCODE_ERROR,
                 absl::StrFormat("DISPATCH_DIRECT %dx%dx%d of the program at %#x: no shader executor", packet[1],
                                 packet[2], packet[3], state.program_address));
  }
  if (absl::Status s = executor_->Dispatch(state, context_.memory); !s.ok()) {
    // Waves reset by a dequeue: the queue stops at this packet, as it does in a WAIT_REG_MEM (no device error).
    if (absl::IsCancelled(s)) return Status::kStopped;
    return WavesFaulted(
        absl::StrFormat("DISPATCH_DIRECT of the program at %#x failed: %s", state.program_address, s.message()));
  }
  return Status::kDone;
}

Pm4Engine::Status Pm4Engine::RunIndirectBuffer(std::span<const uint32_t> packet, int ib_depth) {
  // gfx_v11_0_ring_emit_ib_compute: address lo (dword aligned), address hi (16 bits), control.
  if (Status s = CheckCount(pm4::PACKET3_INDIRECT_BUFFER, packet, 4, 4); s != Status::kDone) return s;
  if (ib_depth + 1 > kMaxIbDepth) {
    return Fault(
        regs::ih::GFX_11_0_0__SRCID__CP_BAD_OPCODE_ERROR,
        absl::StrFormat("INDIRECT_BUFFER inside an IB%d: the CP fetches at most %d levels", ib_depth, kMaxIbDepth));
  }
  // One buffer per IB level, kept between packets so that running an IB allocates only when it grows.
  std::vector<uint32_t>& buffer = ib_buffers_[ib_depth];
  std::array<uint32_t, 4> chain_packet{};
  std::span<const uint32_t> ib_packet = packet;
  // Each pass runs one buffer; a chained INDIRECT_BUFFER at its end replaces it at the same level.
  while (true) {
    const uint32_t control = ib_packet[3];
    const uint64_t address = (ib_packet[1] & ~3u) | (uint64_t{ib_packet[2] & 0xffff} << 32);
    const uint32_t dwords = control & kIbSizeMask;
    // A queue with a VMID of its own (a user queue) runs its IBs there; a kernel queue (VMID 0) runs each IB in the
    // VMID its packet names, as Linux's kernel compute rings rely on; bit 30 asks for the queue's VMID explicitly.
    const uint32_t vmid = (vmid_ != 0 || (control & kIbInheritVmid)) ? vmid_ : (control >> kIbVmidShift) & 0xf;
    if (!(control & regs::pm4::INDIRECT_BUFFER_VALID)) {
      return Fault(
          regs::ih::GFX_11_0_0__SRCID__CP_PM4_PKT_RSVD_BIT_ERROR,
          absl::StrFormat("INDIRECT_BUFFER at %#x without INDIRECT_BUFFER_VALID (control %#010x)", address, control));
    }
    buffer.resize(dwords);
    if (ib_depth == 0) {
      last_ib_address_ = address;
      last_ib_vmid_ = vmid;
    }
    // Dword by dword: the host may already patch this IB for its next submission (a bound queue re-submitted).
    absl::Status read = ReadDwords(memory_, MecMemoryClient(vmid), address, std::span<uint32_t>(buffer));
    if (!read.ok()) {
      return Fault(regs::ih::GFX_11_0_0__SRCID__CP_GPF,
                   absl::StrFormat("INDIRECT_BUFFER of %d dwords at %#x: %s", dwords, address, read.message()));
    }
    bool chained = false;
    uint32_t offset = 0;
    while (offset < dwords) {
      absl::StatusOr<uint32_t> size = Pm4PacketDwords(buffer[offset]);
      if (!size.ok()) {
        return Fault(regs::ih::GFX_11_0_0__SRCID__CP_BAD_OPCODE_ERROR,
                     absl::StrFormat("IB at %#x, dword %d: %s", address, offset, size.status().message()));
      }
      if (*size > dwords - offset) {
        return Fault(regs::ih::GFX_11_0_0__SRCID__CP_BAD_OPCODE_ERROR,
                     absl::StrFormat("IB at %#x, dword %d: packet %#010x of %d dwords runs past the IB's end (%d "
                                     "dwords)",
                                     address, offset, buffer[offset], *size, dwords));
      }
      std::span<const uint32_t> inner(buffer.data() + offset, *size);
      if (pm4::PacketType(inner[0]) == pm4::PACKET_TYPE3 &&
          pm4::Packet3Opcode(inner[0]) == pm4::PACKET3_INDIRECT_BUFFER && inner.size() == 4 && (inner[3] & kIbChain)) {
        // The rest of this IB is abandoned for the chained one.
        std::copy(inner.begin(), inner.end(), chain_packet.begin());
        chained = true;
        break;
      }
      Result result = Execute(inner, ib_depth + 1);
      if (result.status != Status::kDone) return result.status;
      if (result.skip_dwords > dwords - offset - *size) {
        return Fault(regs::ih::GFX_11_0_0__SRCID__CP_BAD_OPCODE_ERROR,
                     absl::StrFormat("IB at %#x, dword %d: PRED_EXEC skips %d dwords past the IB's end (%d dwords)",
                                     address, offset, result.skip_dwords, dwords));
      }
      offset += *size + result.skip_dwords;
    }
    if (!chained) return Status::kDone;
    // A chain that loops forever is a hang the driver made, but the queue must still answer a dequeue.
    if (!backoff_(std::chrono::microseconds(0))) return Status::kStopped;
    ib_packet = std::span<const uint32_t>(chain_packet);
  }
}

}  // namespace am::sim
