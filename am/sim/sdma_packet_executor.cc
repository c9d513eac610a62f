#include "am/sim/sdma_packet_executor.h"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <type_traits>

#include "absl/strings/str_format.h"
#include "am/regs/database.h"
#include "am/regs/gc.h"
#include "am/regs/gfx_srcid_constants.h"
#include "am/regs/ih_constants.h"
#include "am/regs/sdma_constants.h"
#include "am/regs/sdma_packets.h"
#include "am/sim/wait_condition.h"
#include "base/status_macros.h"

namespace am::sim {
namespace {

namespace sdma = regs::sdma;

// One field of a packet dword, by its sdma_v6_0_0_pkt_open.h name: PKT_FIELD(dw, FENCE_HEADER_mtype).
#define PKT_FIELD(dword, NAME) (((dword) >> sdma::SDMA_PKT_##NAME##_shift) & sdma::SDMA_PKT_##NAME##_mask)

template <typename Packet>
constexpr uint64_t Dwords() {
  return sizeof(Packet) / sizeof(uint32_t);
}
// The fixed part of the longest packet the model decodes (ATOMIC); WRITE's data and NOP's padding follow.
constexpr uint64_t kMaxFixedDwords = std::max(Dwords<sdma::Atomic>(), Dwords<sdma::GenPtePde>());
// VM_INVALIDATION's engine fields are 5 bits wide; the all-ones value names no engine (Linux's SDMA VM flush
// patches pass 0x1f for the hub they do not invalidate: sdma_v6_0 "single packet invalidation", amd-gfx 2023-04).
constexpr uint32_t kNoInvalidateEngine = sdma::SDMA_PKT_VM_INVALIDATION_HEADER_gfx_eng_id_mask;
// Each hub has 18 invalidation engines (VM_INVALIDATE_ENG0..17_REQ in the GC and MMHUB register headers).
constexpr uint32_t kInvalidateEngines = 18;
// SDMA_PKT_GCR_REQ: header and four payload dwords (sdma_v6_0_ring_emit_mem_sync writes five).
constexpr uint64_t kGcrReqDwords = 5;
// POLL_REGMEM's RETRY_COUNT of 0xfff (the field's maximum), which Linux (sdma_v6_0_ring_emit_hdp_flush,
// _emit_reg_wait) and tinygrad (AMDCopyQueue.wait) use for waits that must not give up, retries forever.
constexpr uint32_t kRetryForever = sdma::SDMA_PKT_POLL_REGMEM_DW5_retry_count_mask;
// The interval field's unit is not in the public headers: polls re-check on the model's own back-off, from
// 1 us doubling to 100 us, short enough for a signal's latency and long enough not to spin a core.
constexpr std::chrono::nanoseconds kFirstBackOff = std::chrono::microseconds(1);
constexpr std::chrono::nanoseconds kMaxBackOff = std::chrono::microseconds(100);
// Ring id of the trap: queue in bits 3:0, instance in bits 7:4 (sdma_v6_0_process_trap_irq). Only queue 0 (the
// gfx queue Linux and tinygrad run) is modelled.
constexpr uint32_t kQueue = 0;

// TC_OP atomic encodings (soc21_enum.h enum TC_OP): bits 4:0 the operation, bit 5 set for 64-bit, bit 6 set for
// the variant without return. These are the 32-bit returning ones.
enum TcAtomic : uint32_t {
  kSwap = 0x07,     // TC_OP_ATOMIC_SWAP_RTN_32
  kCmpSwap = 0x08,  // TC_OP_ATOMIC_CMPSWAP_RTN_32
  kAdd = 0x0f,      // TC_OP_ATOMIC_ADD_RTN_32
  kSub = 0x10,      // TC_OP_ATOMIC_SUB_RTN_32
  kSmin = 0x11,     // TC_OP_ATOMIC_SMIN_RTN_32
  kUmin = 0x12,     // TC_OP_ATOMIC_UMIN_RTN_32
  kSmax = 0x13,     // TC_OP_ATOMIC_SMAX_RTN_32
  kUmax = 0x14,     // TC_OP_ATOMIC_UMAX_RTN_32
  kAnd = 0x15,      // TC_OP_ATOMIC_AND_RTN_32
  kOr = 0x16,       // TC_OP_ATOMIC_OR_RTN_32
  kXor = 0x17,      // TC_OP_ATOMIC_XOR_RTN_32
  kInc = 0x18,      // TC_OP_ATOMIC_INC_RTN_32
  kDec = 0x19,      // TC_OP_ATOMIC_DEC_RTN_32
};
constexpr uint32_t kTcOpKindMask = 0x1f;
constexpr uint32_t kTcOp64Bit = 0x20;
// The floating-point atomics (FCMPSWAP, FMIN, FMAX and their FLUSH_DENORM forms, FADD_FLUSH_DENORM).
constexpr bool IsFloatAtomic(uint32_t kind) {
  return kind == 0x01 || kind == 0x02 || kind == 0x03 || kind == 0x09 || kind == 0x0a || kind == 0x0b || kind == 0x0d;
}

// Everything GpuMemory refuses is a memory fault, whatever code the GMC chose for it.
absl::Status Fault(const absl::Status& status) { return status.ok() ? status : absl::AbortedError(status.message()); }
template <typename T>
absl::StatusOr<T> Fault(absl::StatusOr<T> result) {
  if (!result.ok()) return absl::AbortedError(result.status().message());
  return result;
}

template <typename... Args>
absl::Status Malformed(const absl::FormatSpec<Args...>& format, const Args&... args) {
  return absl::InvalidArgumentError(absl::StrFormat(format, args...));
}

uint64_t Address(uint32_t lo, uint32_t hi) { return (uint64_t{hi} << 32) | lo; }

// New value of an integer TC atomic (the GPU's wrapping INC/DEC: RDNA3 ISA, BUFFER_ATOMIC_INC/DEC).
template <typename T>
T Apply(uint32_t kind, T old, T src) {
  using S = std::make_signed_t<T>;
  switch (kind) {
    case kSwap:
      return src;
    case kAdd:
      return old + src;
    case kSub:
      return old - src;
    case kSmin:
      return static_cast<T>(std::min(static_cast<S>(old), static_cast<S>(src)));
    case kUmin:
      return std::min(old, src);
    case kSmax:
      return static_cast<T>(std::max(static_cast<S>(old), static_cast<S>(src)));
    case kUmax:
      return std::max(old, src);
    case kAnd:
      return old & src;
    case kOr:
      return old | src;
    case kXor:
      return old ^ src;
    case kInc:
      return old >= src ? 0 : old + 1;
    case kDec:
      return (old == 0 || old > src) ? src : old - 1;
    default:
      return old;
  }
}

// Fills `out` with the 4-byte `pattern`, starting `phase` bytes into it, at memcpy speed.
void FillPattern(std::span<uint8_t> out, uint32_t pattern, uint64_t phase) {
  uint8_t bytes[8];
  std::memcpy(bytes, &pattern, 4);
  std::memcpy(bytes + 4, &pattern, 4);
  const size_t seed = std::min<size_t>(4, out.size());
  std::memcpy(out.data(), bytes + phase % 4, seed);
  // Doubling copies from the already-filled prefix keep the phase, since every length copied is a multiple of 4.
  for (size_t filled = seed; filled < out.size();) {
    const size_t n = std::min(filled, out.size() - filled);
    std::memcpy(out.data() + filled, out.data(), n);
    filled += n;
  }
}

}  // namespace

SdmaPacketExecutor::SdmaPacketExecutor(const ModelContext& context, const SdmaEngineInfo& engine,
                                       EngineControl& control)
    : context_(context), engine_(engine), control_(control) {}

void SdmaPacketExecutor::PostInterrupt(uint32_t source_id, uint32_t context) {
  InterruptEntry entry;
  entry.client_id = regs::ih::SOC21_IH_CLIENTID_GFX;
  entry.source_id = source_id;
  entry.ring_id = (static_cast<uint32_t>(engine_.instance) << 4) | kQueue;
  entry.src_data[0] = context;
  context_.interrupts.Post(entry);
}

absl::Status SdmaPacketExecutor::Fetch(const CommandStream& stream, uint64_t offset, std::span<uint32_t> out) {
  auto* bytes = reinterpret_cast<uint8_t*>(out.data());
  const uint64_t length = out.size_bytes();
  const uint64_t position = stream.is_ring ? offset & (stream.size - 1) : offset;
  const uint64_t first = std::min(length, stream.size - position);
  BAREGPU_RETURN_IF_ERROR(Fault(ReadMemory(context_.memory, stream.client, stream.base + position, {bytes, first})));
  // A ring packet may wrap around the ring's end.
  if (first < length) {
    BAREGPU_RETURN_IF_ERROR(
        Fault(ReadMemory(context_.memory, stream.client, stream.base, {bytes + first, length - first})));
  }
  return absl::OkStatus();
}

absl::StatusOr<uint64_t> SdmaPacketExecutor::Execute(const CommandStream& stream, uint64_t offset, uint64_t available) {
  uint32_t packet[kMaxFixedDwords];
  if (available < 4) return 4;
  BAREGPU_RETURN_IF_ERROR(Fetch(stream, offset, {packet, 1}));
  const uint32_t header = packet[0];
  const uint32_t op = PKT_FIELD(header, COPY_LINEAR_HEADER_op);
  const uint32_t sub_op = PKT_FIELD(header, COPY_LINEAR_HEADER_sub_op);

  uint64_t dwords = 0;
  switch (op) {
    case sdma::SDMA_OP_NOP:
      dwords = 1 + PKT_FIELD(header, NOP_HEADER_count);
      break;
    case sdma::SDMA_OP_COPY:
      dwords = Dwords<sdma::CopyLinear>();
      break;
    case sdma::SDMA_OP_WRITE: {
      // The data's length is in the fourth dword.
      const uint64_t count_offset = offsetof(sdma::WriteUntiled, dw_3);
      if (available < count_offset + 4) return count_offset + 4;
      BAREGPU_RETURN_IF_ERROR(Fetch(stream, offset + count_offset, {packet + 3, 1}));
      dwords = Dwords<sdma::WriteUntiled>() + PKT_FIELD(packet[3], WRITE_UNTILED_DW_3_count);
      break;
    }
    case sdma::SDMA_OP_INDIRECT:
      dwords = Dwords<sdma::Indirect>();
      break;
    case sdma::SDMA_OP_FENCE:
      dwords = Dwords<sdma::Fence>();
      break;
    case sdma::SDMA_OP_TRAP:
      dwords = Dwords<sdma::Trap>();
      break;
    case sdma::SDMA_OP_POLL_REGMEM:
      dwords = sub_op == sdma::SDMA_SUBOP_VM_INVALIDATION ? Dwords<sdma::VmInvalidation>() : Dwords<sdma::PollRegmem>();
      break;
    case sdma::SDMA_OP_ATOMIC:
      dwords = Dwords<sdma::Atomic>();
      break;
    case sdma::SDMA_OP_CONST_FILL:
      dwords = Dwords<sdma::ConstantFill>();
      break;
    case sdma::SDMA_OP_TIMESTAMP:
      dwords = Dwords<sdma::TimestampGet>();
      break;
    case sdma::SDMA_OP_GCR_REQ:
      dwords = kGcrReqDwords;
      break;
    case sdma::SDMA_OP_SRBM_WRITE:
      dwords = Dwords<sdma::SrbmWrite>();
      break;
    case sdma::SDMA_OP_COND_EXE:
      dwords = Dwords<sdma::CondExe>();
      break;
    case sdma::SDMA_OP_PTEPDE:
      if (sub_op == sdma::SDMA_SUBOP_PTEPDE_GEN) {
        dwords = Dwords<sdma::GenPtePde>();
      } else if (sub_op == sdma::SDMA_SUBOP_PTEPDE_COPY) {
        dwords = Dwords<sdma::PtepdeCopy>();
      } else if (sub_op == sdma::SDMA_SUBOP_PTEPDE_RMW) {
        dwords = Dwords<sdma::PtepdeRmw>();
      } else if (sub_op == sdma::SDMA_SUBOP_PTEPDE_COPY_BACKWARDS) {
        dwords = Dwords<sdma::PtepdeCopyBackwards>();
      } else {
        return Malformed("PTEPDE sub-op %#x (header %#010x) is not GEN, COPY, RMW or COPY_BACKWARDS", sub_op, header);
      }
      break;
    case sdma::SDMA_OP_SEM:
      dwords = Dwords<sdma::Semaphore>();
      break;
    case sdma::SDMA_OP_PRE_EXE:
      dwords = Dwords<sdma::PreExe>();
      break;
    case sdma::SDMA_OP_GPUVM_INV:
      dwords = Dwords<sdma::GpuvmInv>();
      break;
    case sdma::SDMA_OP_DUMMY_TRAP:
      dwords = Dwords<sdma::DummyTrap>();
      break;
    default:
      return Malformed("unknown SDMA opcode %#x (header %#010x)", op, header);
  }
  const uint64_t bytes = dwords * 4;
  if (stream.is_ring && bytes > stream.size) {
    return Malformed("packet of %d dwords (header %#010x) is larger than the %d-dword ring", dwords, header,
                     stream.size / 4);
  }
  if (bytes > available) return bytes;
  BAREGPU_RETURN_IF_ERROR(Fetch(stream, offset, {packet, std::min(dwords, kMaxFixedDwords)}));

  const MemoryClient& client = stream.client;
  switch (op) {
    case sdma::SDMA_OP_NOP:
      break;
    case sdma::SDMA_OP_COPY:
      if (sub_op != sdma::SDMA_SUBOP_COPY_LINEAR) {
        return absl::UnimplementedError(absl::StrFormat(
            "COPY sub-op %#x (header %#010x): only COPY_LINEAR is modelled by the virtual Navi31", sub_op, header));
      }
      BAREGPU_RETURN_IF_ERROR(CopyLinear(client, packet));
      break;
    case sdma::SDMA_OP_WRITE:
      if (sub_op != sdma::SDMA_SUBOP_WRITE_LINEAR) {
        return absl::UnimplementedError(absl::StrFormat(
            "WRITE sub-op %#x (header %#010x): only WRITE_LINEAR is modelled by the virtual Navi31", sub_op, header));
      }
      BAREGPU_RETURN_IF_ERROR(Write(stream, offset, packet));
      break;
    case sdma::SDMA_OP_INDIRECT:
      BAREGPU_RETURN_IF_ERROR(Indirect(stream, packet));
      break;
    case sdma::SDMA_OP_FENCE:
      BAREGPU_RETURN_IF_ERROR(Fence(client, packet));
      break;
    case sdma::SDMA_OP_TRAP:
      BAREGPU_RETURN_IF_ERROR(Trap(packet));
      break;
    case sdma::SDMA_OP_SRBM_WRITE:
      SrbmWrite(packet);
      break;
    case sdma::SDMA_OP_POLL_REGMEM:
      if (sub_op == sdma::SDMA_SUBOP_VM_INVALIDATION) {
        BAREGPU_RETURN_IF_ERROR(VmInvalidation(packet));
        break;
      }
      if (sub_op != 0) {
        return absl::UnimplementedError(absl::StrFormat(
            "POLL_REGMEM sub-op %#x (header %#010x) is not modelled by the virtual Navi31", sub_op, header));
      }
      BAREGPU_RETURN_IF_ERROR(PollRegmem(client, packet));
      break;
    case sdma::SDMA_OP_ATOMIC:
      BAREGPU_RETURN_IF_ERROR(Atomic(client, packet));
      break;
    case sdma::SDMA_OP_CONST_FILL:
      BAREGPU_RETURN_IF_ERROR(ConstantFill(client, packet));
      break;
    case sdma::SDMA_OP_TIMESTAMP:
      BAREGPU_RETURN_IF_ERROR(Timestamp(client, packet));
      break;
    case sdma::SDMA_OP_GCR_REQ:
      break;  // Caches: the model's memory is coherent, nothing to write back.
    case sdma::SDMA_OP_COND_EXE: {
      BAREGPU_ASSIGN_OR_RETURN(const bool run, CondExe(client, packet));
      if (!run) {
        // The guarded dwords are skipped whole, so they must all be there (a ring waits for them).
        const uint64_t skipped = bytes + uint64_t{PKT_FIELD(packet[4], COND_EXE_EXEC_COUNT_exec_count)} * 4;
        if (stream.is_ring && skipped > stream.size) {
          return Malformed("COND_EXE skips %d dwords, more than the %d-dword ring", (skipped - bytes) / 4,
                           stream.size / 4);
        }
        return skipped;
      }
      break;
    }
    case sdma::SDMA_OP_PTEPDE:
      if (sub_op == sdma::SDMA_SUBOP_PTEPDE_GEN) {
        BAREGPU_RETURN_IF_ERROR(GenPtePde(client, packet));
      } else if (sub_op == sdma::SDMA_SUBOP_PTEPDE_COPY) {
        BAREGPU_RETURN_IF_ERROR(PtepdeCopy(client, packet));
      } else if (sub_op == sdma::SDMA_SUBOP_PTEPDE_RMW) {
        BAREGPU_RETURN_IF_ERROR(PtepdeRmw(client, packet));
      } else {
        return PtepdeCopyBackwards(packet);
      }
      break;
    case sdma::SDMA_OP_SEM:
      return Semaphore(packet);
    case sdma::SDMA_OP_PRE_EXE:
      return PreExe(packet);
    case sdma::SDMA_OP_GPUVM_INV:
      return GpuvmInv(packet);
    case sdma::SDMA_OP_DUMMY_TRAP:
      DummyTrap(packet);
      break;
  }
  return bytes;
}

absl::Status SdmaPacketExecutor::CopyLinear(const MemoryClient& client, const uint32_t* p) {
  const auto& packet = *reinterpret_cast<const sdma::CopyLinear*>(p);
  if (PKT_FIELD(packet.header, COPY_LINEAR_HEADER_tmz) != 0 ||
      PKT_FIELD(packet.header, COPY_LINEAR_HEADER_broadcast) != 0) {
    return absl::UnimplementedError(absl::StrFormat(
        "COPY_LINEAR with TMZ or BROADCAST (header %#010x) is not modelled by the virtual Navi31", packet.header));
  }
  uint64_t remaining = uint64_t{PKT_FIELD(packet.count, COPY_LINEAR_COUNT_count)} + 1;
  uint64_t src = Address(packet.src_addr_lo, packet.src_addr_hi);
  uint64_t dst = Address(packet.dst_addr_lo, packet.dst_addr_hi);
  // Whole contiguous pieces at a time: as fast as memcpy over what the page tables map contiguously.
  while (remaining > 0) {
    BAREGPU_ASSIGN_OR_RETURN(std::span<uint8_t> from,
                             Fault(context_.memory.Map(client, src, remaining, Access::kRead)));
    BAREGPU_ASSIGN_OR_RETURN(std::span<uint8_t> to,
                             Fault(context_.memory.Map(client, dst, from.size(), Access::kWrite)));
    const size_t n = std::min(from.size(), to.size());
    if (n == 0) return absl::AbortedError(absl::StrFormat("empty mapping at %#x", dst));
    const bool overlap = from.data() < to.data() + n && to.data() < from.data() + n;
    if (overlap) {
      std::memmove(to.data(), from.data(), n);
    } else {
      std::memcpy(to.data(), from.data(), n);
    }
    src += n;
    dst += n;
    remaining -= n;
  }
  return absl::OkStatus();
}

absl::Status SdmaPacketExecutor::Write(const CommandStream& stream, uint64_t offset, const uint32_t* p) {
  const auto& packet = *reinterpret_cast<const sdma::WriteUntiled*>(p);
  uint64_t dst = Address(packet.dst_addr_lo, packet.dst_addr_hi);
  if (dst % 4 != 0) return Malformed("WRITE_LINEAR destination %#x is not dword-aligned", dst);
  uint64_t remaining = uint64_t{PKT_FIELD(packet.dw_3, WRITE_UNTILED_DW_3_count)} + 1;
  uint64_t source = offset + offsetof(sdma::WriteUntiled, data0);
  uint32_t chunk[256];
  while (remaining > 0) {
    const uint64_t n = std::min<uint64_t>(remaining, std::size(chunk));
    BAREGPU_RETURN_IF_ERROR(Fetch(stream, source, {chunk, n}));
    BAREGPU_RETURN_IF_ERROR(
        Fault(WriteMemory(context_.memory, stream.client, dst, {reinterpret_cast<const uint8_t*>(chunk), n * 4})));
    source += n * 4;
    dst += n * 4;
    remaining -= n;
  }
  return absl::OkStatus();
}

absl::Status SdmaPacketExecutor::Indirect(const CommandStream& stream, const uint32_t* p) {
  const auto& packet = *reinterpret_cast<const sdma::Indirect*>(p);
  // The queue has one set of IB registers (SDMA0_QUEUE0_IB_BASE_LO/HI, _IB_SIZE, _IB_RPTR): one IB level.
  if (!stream.is_ring) return Malformed("INDIRECT inside an IB: SDMA runs one IB level");
  if (regs::gc::SDMA0_QUEUE0_IB_CNTL::FromRaw(context_.registers.Peek(engine_.ib_cntl)).ib_enable() == 0) {
    return Malformed("INDIRECT while SDMA%d_QUEUE0_IB_CNTL.IB_ENABLE is 0", engine_.instance);
  }
  const uint64_t base = Address(packet.base_lo, packet.base_hi);
  // SDMA0_QUEUE0_IB_BASE_LO holds address bits 31:5 (Linux: "base must be 32 byte aligned").
  if (base % 32 != 0) return Malformed("INDIRECT base %#x is not 32-byte aligned", base);
  CommandStream ib;
  ib.base = base;
  ib.size = uint64_t{PKT_FIELD(packet.ib_size, INDIRECT_IB_SIZE_ib_size)} * 4;
  ib.is_ring = false;
  ib.client = stream.client;
  ib.client.vmid = PKT_FIELD(packet.header, INDIRECT_HEADER_vmid);
  for (uint64_t offset = 0; offset < ib.size;) {
    if (!control_.Checkpoint()) return absl::CancelledError("queue stopped inside an IB");
    absl::StatusOr<uint64_t> bytes = Execute(ib, offset, ib.size - offset);
    if (!bytes.ok()) {
      return base::Annotate(bytes.status(),
                            absl::StrFormat("in the IB at %#x (vmid %d), offset %#x", base, ib.client.vmid, offset));
    }
    if (*bytes > ib.size - offset) {
      return Malformed("packet at offset %#x of the IB at %#x needs %d bytes, past the IB's end (IB_SIZE %d dwords)",
                       offset, base, *bytes, ib.size / 4);
    }
    offset += *bytes;
  }
  return absl::OkStatus();
}

absl::Status SdmaPacketExecutor::Fence(const MemoryClient& client, const uint32_t* p) {
  const auto& packet = *reinterpret_cast<const sdma::Fence*>(p);
  const uint64_t address = Address(packet.addr_lo, packet.addr_hi);
  // Linux WARNs unless "zero in first two bits".
  if (address % 4 != 0) return Malformed("FENCE address %#x is not dword-aligned", address);
  BAREGPU_ASSIGN_OR_RETURN(uint32_t * fence, Fault(MapDword(context_.memory, client, address, Access::kWrite)));
  std::atomic_ref<uint32_t>(*fence).store(packet.data, std::memory_order_release);
  return absl::OkStatus();
}

// SRBM_WRITE (sdma_v6_0_ring_emit_wreg, Linux's SDMA VM flush): the register at the packet's dword address takes
// the bytes BYTE_EN selects; the register's model sees the write as it would a BAR access.
void SdmaPacketExecutor::SrbmWrite(const uint32_t* packet) {
  const uint64_t address = PKT_FIELD(packet[1], SRBM_WRITE_ADDR_addr);
  const uint32_t byte_enable = PKT_FIELD(packet[0], SRBM_WRITE_HEADER_byte_en);
  uint32_t mask = 0;
  for (int byte = 0; byte < 4; ++byte) {
    if (byte_enable & (1u << byte)) mask |= 0xffu << (8 * byte);
  }
  const uint32_t data = PKT_FIELD(packet[2], SRBM_WRITE_DATA_data);
  const uint32_t value = mask == 0xffffffff ? data : (context_.registers.Peek(address) & ~mask) | (data & mask);
  context_.registers.WriteDword(address, value);
}

absl::Status SdmaPacketExecutor::Trap(const uint32_t* p) {
  const auto& packet = *reinterpret_cast<const sdma::Trap*>(p);
  // SDMAn_CNTL.TRAP_ENABLE gates the trap interrupt (Linux sets it in sdma_v6_0_set_trap_irq_state, tinygrad at
  // init). The packets before have completed, their writes visible to every reader, before the engine looks at the
  // enable: a driver that turns it on and then reads a FENCE's signal either sees the write or gets the interrupt.
  std::atomic_thread_fence(std::memory_order_seq_cst);
  if (regs::gc::SDMA0_CNTL::FromRaw(context_.registers.Peek(engine_.cntl)).trap_enable() == 0) {
    return absl::OkStatus();
  }
  PostInterrupt(regs::ih::GFX_11_0_0__SRCID__SDMA_TRAP, PKT_FIELD(packet.int_context, TRAP_INT_CONTEXT_int_context));
  return absl::OkStatus();
}

bool SdmaPacketExecutor::BackOff(std::chrono::nanoseconds& delay) {
  if (!control_.Sleep(delay)) return false;
  delay = std::min(delay * 2, kMaxBackOff);
  return true;
}

absl::Status SdmaPacketExecutor::PollRegmem(const MemoryClient& client, const uint32_t* p) {
  const auto& packet = *reinterpret_cast<const sdma::PollRegmem*>(p);
  const uint32_t function = PKT_FIELD(packet.header, POLL_REGMEM_HEADER_func);
  const bool memory = PKT_FIELD(packet.header, POLL_REGMEM_HEADER_mem_poll) != 0;
  const bool hdp_flush = PKT_FIELD(packet.header, POLL_REGMEM_HEADER_hdp_flush) != 0;
  const uint32_t retries = PKT_FIELD(packet.dw5, POLL_REGMEM_DW5_retry_count);
  if (function > 6)
    return Malformed("POLL_REGMEM function %d is reserved (0-6: always, <, <=, ==, !=, >=, >)", function);
  if (hdp_flush && memory) return Malformed("POLL_REGMEM with both HDP_FLUSH and MEM_POLL");

  const uint64_t address = Address(packet.addr_lo, packet.addr_hi);
  uint64_t register_address = 0;
  if (memory) {
    if (address % 4 != 0) return Malformed("POLL_REGMEM memory address %#x is not dword-aligned", address);
  } else {
    // Registers by byte address: Linux emits `reg << 2` (sdma_v6_0_ring_emit_reg_wait, _emit_hdp_flush).
    if (packet.addr_lo % 4 != 0) {
      return Malformed("POLL_REGMEM register address %#x is not dword-aligned", packet.addr_lo);
    }
    register_address = packet.addr_lo / 4;
    if (hdp_flush) {
      // HDP flush: write the reference to the request register (ADDR_HI), then poll the done register (ADDR_LO).
      if (packet.addr_hi % 4 != 0) {
        return Malformed("POLL_REGMEM HDP flush request register %#x is not dword-aligned", packet.addr_hi);
      }
      context_.registers.WriteDword(packet.addr_hi / 4, packet.value);
    }
  }
  // Memory is translated again on every check: the driver may remap it while the engine waits.
  auto read = [&]() -> absl::StatusOr<uint32_t> {
    if (!memory) return context_.registers.ReadDword(register_address);
    BAREGPU_ASSIGN_OR_RETURN(uint32_t * location, Fault(MapDword(context_.memory, client, address, Access::kRead)));
    return std::atomic_ref<uint32_t>(*location).load(std::memory_order_acquire);
  };

  std::chrono::nanoseconds delay = kFirstBackOff;
  for (uint32_t attempt = 0;; ++attempt) {
    BAREGPU_ASSIGN_OR_RETURN(const uint32_t value, read());
    if (WaitConditionHolds(function, value & packet.mask, packet.value)) return absl::OkStatus();
    if (retries != kRetryForever && attempt >= retries) break;
    if (!BackOff(delay)) return absl::CancelledError("queue stopped during POLL_REGMEM");
  }
  // Retries exhausted: the engine reports the poll timeout and moves on to the next packet.
  PostInterrupt(regs::ih::GFX_11_0_0__SRCID__SDMA_POLL_TIMEOUT);
  context_.errors.Report(engine_.name,
                         absl::StrFormat("POLL_REGMEM on %s %#x timed out after %d retries (function %d, reference "
                                         "%#x, mask %#x)",
                                         memory ? "memory" : "register", memory ? address : register_address, retries,
                                         function, packet.value, packet.mask));
  return absl::OkStatus();
}

absl::Status SdmaPacketExecutor::Timestamp(const MemoryClient& client, const uint32_t* p) {
  const uint32_t sub_op = PKT_FIELD(p[0], TIMESTAMP_GET_HEADER_sub_op);
  std::atomic_ref<uint64_t> offset(*engine_.timestamp_offset);
  const uint64_t now = context_.clock.Now();
  if (sub_op == sdma::SDMA_SUBOP_TIMESTAMP_SET) {
    const auto& packet = *reinterpret_cast<const sdma::TimestampSet*>(p);
    offset.store(Address(packet.init_data_lo, packet.init_data_hi) - now, std::memory_order_relaxed);
    return absl::OkStatus();
  }
  uint64_t stamp = 0;
  if (sub_op == sdma::SDMA_SUBOP_TIMESTAMP_GET) {
    stamp = now + offset.load(std::memory_order_relaxed);
  } else if (sub_op == sdma::SDMA_SUBOP_TIMESTAMP_GET_GLOBAL) {
    stamp = now;
  } else {
    return Malformed("TIMESTAMP sub-op %#x is not SET (0), GET (1) or GET_GLOBAL (2)", sub_op);
  }
  const auto& packet = *reinterpret_cast<const sdma::TimestampGet*>(p);
  // WRITE_ADDR_LO holds address bits 31:3: the stamp is a naturally aligned qword.
  const uint64_t address = Address(PKT_FIELD(packet.write_addr_lo, TIMESTAMP_GET_WRITE_ADDR_LO_write_addr_31_3)
                                       << sdma::SDMA_PKT_TIMESTAMP_GET_WRITE_ADDR_LO_write_addr_31_3_shift,
                                   packet.write_addr_hi);
  BAREGPU_ASSIGN_OR_RETURN(uint64_t * target, Fault(MapQword(context_.memory, client, address, Access::kWrite)));
  std::atomic_ref<uint64_t>(*target).store(stamp, std::memory_order_release);
  return absl::OkStatus();
}

absl::StatusOr<bool> SdmaPacketExecutor::CondExe(const MemoryClient& client, const uint32_t* p) {
  const auto& packet = *reinterpret_cast<const sdma::CondExe*>(p);
  const uint64_t address = Address(packet.addr_lo, packet.addr_hi);
  if (address % 4 != 0) return Malformed("COND_EXE address %#x is not dword-aligned", address);
  uint32_t value = 0;
  BAREGPU_RETURN_IF_ERROR(
      Fault(ReadMemory(context_.memory, client, address, {reinterpret_cast<uint8_t*>(&value), sizeof(value)})));
  return value == packet.reference;
}

absl::Status SdmaPacketExecutor::GenPtePde(const MemoryClient& client, const uint32_t* p) {
  const auto& packet = *reinterpret_cast<const sdma::GenPtePde*>(p);
  uint64_t destination = Address(packet.dst_addr_lo, packet.dst_addr_hi);
  if (destination % 8 != 0) return Malformed("PTEPDE_GEN destination %#x is not 8-byte aligned", destination);
  const uint64_t flags = Address(packet.mask_lo, packet.mask_hi);
  const uint64_t step = Address(packet.incr_lo, packet.incr_hi);
  uint64_t address = Address(packet.init_addr_lo, packet.init_addr_hi);
  uint64_t remaining = uint64_t{packet.count} + 1;
  uint64_t entries[256];
  while (remaining > 0) {
    const uint64_t n = std::min<uint64_t>(remaining, std::size(entries));
    for (uint64_t i = 0; i < n; ++i, address += step) entries[i] = address | flags;
    BAREGPU_RETURN_IF_ERROR(
        Fault(WriteMemory(context_.memory, client, destination, {reinterpret_cast<const uint8_t*>(entries), n * 8})));
    destination += n * 8;
    remaining -= n;
  }
  return absl::OkStatus();
}

// PTEPDE_COPY: count + 1 entries from src to dst, each with MASK ORed in. Decision (no public user; gem5 panics
// on it): MASK is read as in PTEPDE_GEN, where sdma_v6_0_vm_set_pte_pde puts the PTE flags into the same-named
// dwords, and COUNT as every other SDMA count (entries - 1). PTEPDE_OP and TMZ have no public meaning: refused.
absl::Status SdmaPacketExecutor::PtepdeCopy(const MemoryClient& client, const uint32_t* p) {
  const auto& packet = *reinterpret_cast<const sdma::PtepdeCopy*>(p);
  if (PKT_FIELD(packet.header, PTEPDE_COPY_HEADER_ptepde_op) != 0 || PKT_FIELD(packet.header, PTEPDE_COPY_HEADER_tmz)) {
    return absl::UnimplementedError(absl::StrFormat(
        "PTEPDE_COPY with PTEPDE_OP or TMZ (header %#010x) is not modelled by the virtual Navi31", packet.header));
  }
  uint64_t source = Address(packet.src_addr_lo, packet.src_addr_hi);
  uint64_t destination = Address(packet.dst_addr_lo, packet.dst_addr_hi);
  if (source % 8 != 0 || destination % 8 != 0) {
    return Malformed("PTEPDE_COPY source %#x or destination %#x is not 8-byte aligned", source, destination);
  }
  const uint64_t flags = Address(packet.mask_dw0, packet.mask_dw1);
  uint64_t remaining = uint64_t{PKT_FIELD(packet.count, PTEPDE_COPY_COUNT_count)} + 1;
  uint64_t entries[256];
  while (remaining > 0) {
    const uint64_t n = std::min<uint64_t>(remaining, std::size(entries));
    std::span<uint8_t> bytes{reinterpret_cast<uint8_t*>(entries), n * 8};
    BAREGPU_RETURN_IF_ERROR(Fault(ReadMemory(context_.memory, client, source, bytes)));
    for (uint64_t i = 0; i < n; ++i) entries[i] |= flags;
    BAREGPU_RETURN_IF_ERROR(Fault(WriteMemory(context_.memory, client, destination, bytes)));
    source += n * 8;
    destination += n * 8;
    remaining -= n;
  }
  return absl::OkStatus();
}

// PTEPDE_RMW: each of the entries at ADDR becomes (entry & ~MASK) | (VALUE & MASK). Decisions (no public user):
// MASK selects the bits VALUE replaces, as the header's other masks select what takes part (POLL_REGMEM's MASK,
// SRBM_WRITE's BYTE_EN); NUM_OF_PTE counts entries - 1, as every other SDMA count. GPA (a guest physical address)
// is refused; the cache and snoop attributes have no effect on the model's coherent memory.
absl::Status SdmaPacketExecutor::PtepdeRmw(const MemoryClient& client, const uint32_t* p) {
  const auto& packet = *reinterpret_cast<const sdma::PtepdeRmw*>(p);
  if (PKT_FIELD(packet.header, PTEPDE_RMW_HEADER_gpa) != 0) {
    return absl::UnimplementedError(
        absl::StrFormat("PTEPDE_RMW with GPA (header %#010x) is not modelled by the virtual Navi31", packet.header));
  }
  uint64_t address = Address(packet.addr_lo, packet.addr_hi);
  if (address % 8 != 0) return Malformed("PTEPDE_RMW address %#x is not 8-byte aligned", address);
  const uint64_t mask = Address(packet.mask_lo, packet.mask_hi);
  const uint64_t value = Address(packet.value_lo, packet.value_hi);
  const uint64_t count = uint64_t{PKT_FIELD(packet.count, PTEPDE_RMW_COUNT_num_of_pte)} + 1;
  for (uint64_t i = 0; i < count; ++i, address += 8) {
    if (i % 256 == 0 && !control_.Checkpoint()) return absl::CancelledError("queue stopped during PTEPDE_RMW");
    BAREGPU_ASSIGN_OR_RETURN(uint64_t * entry, Fault(MapQword(context_.memory, client, address, Access::kWrite)));
    std::atomic_ref<uint64_t> target(*entry);
    uint64_t old = target.load(std::memory_order_acquire);
    while (!target.compare_exchange_weak(old, (old & ~mask) | (value & mask), std::memory_order_acq_rel)) {
    }
  }
  return absl::OkStatus();
}

// PTEPDE_COPY_BACKWARDS is decoded but not run: the header gives PTE_SIZE, DIRECTION, per-dword masks of the first
// and last 32-byte transfer and a count of transfers, but no public source says which end the addresses name,
// what PTE_SIZE's values mean or whether the count is of transfers - 1 (no driver emits the packet; gem5 panics).
absl::Status SdmaPacketExecutor::PtepdeCopyBackwards(const uint32_t* p) {
  const auto& packet = *reinterpret_cast<const sdma::PtepdeCopyBackwards*>(p);
  return absl::UnimplementedError(absl::StrFormat(
      "PTEPDE_COPY_BACKWARDS is not modelled: src %#x, dst %#x, PTE_SIZE %d, DIRECTION %d, PTEPDE_OP %d, "
      "first/last transfer dword masks %#04x/%#04x, COUNT %d 32-byte transfers; no public source defines where the "
      "copy starts or what PTE_SIZE selects",
      Address(packet.src_addr_lo, packet.src_addr_hi), Address(packet.dst_addr_lo, packet.dst_addr_hi),
      PKT_FIELD(packet.header, PTEPDE_COPY_BACKWARDS_HEADER_pte_size),
      PKT_FIELD(packet.header, PTEPDE_COPY_BACKWARDS_HEADER_direction),
      PKT_FIELD(packet.header, PTEPDE_COPY_BACKWARDS_HEADER_ptepde_op),
      PKT_FIELD(packet.mask_bit_for_dw, PTEPDE_COPY_BACKWARDS_MASK_BIT_FOR_DW_mask_first_xfer),
      PKT_FIELD(packet.mask_bit_for_dw, PTEPDE_COPY_BACKWARDS_MASK_BIT_FOR_DW_mask_last_xfer),
      PKT_FIELD(packet.count_in_32b_xfer, PTEPDE_COPY_BACKWARDS_COUNT_IN_32B_XFER_count)));
}

// SEM is decoded but not run: sdma_v6_0_0_pkt_open.h gives only WRITE_ONE, SIGNAL, MAILBOX and the address; the
// only public meaning (amdgpu cikd.h, SDMA 2.0: SIGNAL 0 wait / 1 signal, WRITE_ONE 0 increment / 1 write 1) does
// not say what a wait waits for or does to the semaphore, and no driver emits the packet for SDMA 4.0 or later.
absl::Status SdmaPacketExecutor::Semaphore(const uint32_t* p) {
  const auto& packet = *reinterpret_cast<const sdma::Semaphore*>(p);
  const bool signal = PKT_FIELD(packet.header, SEMAPHORE_HEADER_signal) != 0;
  return absl::UnimplementedError(absl::StrFormat(
      "SEM is not modelled: %s on the semaphore at %#x (WRITE_ONE %d, MAILBOX %d); what a wait waits for is not "
      "public",
      signal ? "signal" : "wait", Address(packet.addr_lo, packet.addr_hi),
      PKT_FIELD(packet.header, SEMAPHORE_HEADER_write_one), PKT_FIELD(packet.header, SEMAPHORE_HEADER_mailbox)));
}

// PRE_EXE is decoded but not run: the header gives DEV_SEL and EXEC_COUNT only; what DEV_SEL is compared with is
// not public and no driver emits the packet.
absl::Status SdmaPacketExecutor::PreExe(const uint32_t* p) {
  const auto& packet = *reinterpret_cast<const sdma::PreExe*>(p);
  return absl::UnimplementedError(absl::StrFormat(
      "PRE_EXE is not modelled: DEV_SEL %#x guarding %d dwords; what DEV_SEL selects is not public",
      PKT_FIELD(packet.header, PRE_EXE_HEADER_dev_sel), PKT_FIELD(packet.exec_count, PRE_EXE_EXEC_COUNT_exec_count)));
}

// GPUVM_INV is decoded but not run: its payload has a VM_INVALIDATE_ENG*_REQ's fields but names no hub and no
// invalidation engine, so the model cannot tell whose translations it drops or where its ack goes. Linux flushes
// from SDMA with SRBM_WRITE + POLL_REGMEM (6.12) or POLL_REGMEM's VM_INVALIDATION sub-op (later patches), both
// modelled.
absl::Status SdmaPacketExecutor::GpuvmInv(const uint32_t* p) {
  const auto& packet = *reinterpret_cast<const sdma::GpuvmInv*>(p);
  return absl::UnimplementedError(absl::StrFormat(
      "GPUVM_INV is not modelled: PER_VMID_INV_REQ %#06x, FLUSH_TYPE %d, page %#x; the packet names no hub or "
      "invalidation engine (use POLL_REGMEM's VM_INVALIDATION or SRBM_WRITE to an engine's REQ)",
      PKT_FIELD(packet.payload1, GPUVM_INV_PAYLOAD1_per_vmid_inv_req),
      PKT_FIELD(packet.payload1, GPUVM_INV_PAYLOAD1_flush_type),
      (uint64_t{PKT_FIELD(packet.payload3, GPUVM_INV_PAYLOAD3_page_va_47_43)} << 43) |
          (uint64_t{PKT_FIELD(packet.payload2, GPUVM_INV_PAYLOAD2_page_va_42_12)} << 12)));
}

// DUMMY_TRAP: a TRAP's interrupt without a TRAP's ordering. Decision (no public user): its INT_CONTEXT field is
// TRAP's, so it raises SDMA_TRAP with that context, gated by SDMAn_CNTL.TRAP_ENABLE like TRAP.
void SdmaPacketExecutor::DummyTrap(const uint32_t* p) {
  const auto& packet = *reinterpret_cast<const sdma::DummyTrap*>(p);
  if (regs::gc::SDMA0_CNTL::FromRaw(context_.registers.Peek(engine_.cntl)).trap_enable() == 0) return;
  PostInterrupt(regs::ih::GFX_11_0_0__SRCID__SDMA_TRAP,
                PKT_FIELD(packet.int_context, DUMMY_TRAP_INT_CONTEXT_int_context));
}

// POLL_REGMEM's VM_INVALIDATION sub-op: the single-packet TLB flush of amdgpu's SDMA patches (sdma_v6_0 "single
// packet invalidation", amd-gfx 2023-04; sdma_v*_emit_tlb_inv): "the same result as" writing INVALIDATEREQ to the
// engine's VM_INVALIDATE_ENGn_REQ and waiting for INVALIDATEACK in its _ACK, done here through the engines'
// registers so the GMC model's invalidation runs. GFX_ENG_ID names a GC hub engine, MM_ENG_ID an MMHUB one, 0x1f
// neither. The address range (Linux: everything) is not modelled: the model's engines drop whole VMIDs.
absl::Status SdmaPacketExecutor::VmInvalidation(const uint32_t* p) {
  const auto& packet = *reinterpret_cast<const sdma::VmInvalidation*>(p);
  const uint32_t engines[] = {PKT_FIELD(packet.header, VM_INVALIDATION_HEADER_gfx_eng_id),
                              PKT_FIELD(packet.header, VM_INVALIDATION_HEADER_mm_eng_id)};
  const char* const hubs[] = {"GCVM", "MMVM"};
  const regs::Ip ips[] = {regs::Ip::kGc, regs::Ip::kMmhub};
  const uint32_t ack_bits = PKT_FIELD(packet.addressrangehi, VM_INVALIDATION_ADDRESSRANGEHI_invalidateack);
  for (int hub = 0; hub < 2; ++hub) {
    if (engines[hub] != kNoInvalidateEngine && engines[hub] >= kInvalidateEngines) {
      return Malformed("VM_INVALIDATION %s engine %d: the hub has engines 0-%d (0x1f for none)", hubs[hub],
                       engines[hub], kInvalidateEngines - 1);
    }
  }
  if (engines[0] == kNoInvalidateEngine && engines[1] == kNoInvalidateEngine) {
    return Malformed("VM_INVALIDATION names no engine (GFX_ENG_ID and MM_ENG_ID both 0x1f)");
  }
  for (int hub = 0; hub < 2; ++hub) {
    if (engines[hub] == kNoInvalidateEngine) continue;
    auto address = [&](const char* what) {
      return regs::ResolveAddress(context_.bases,
                                  absl::StrFormat("%s_INVALIDATE_ENG%d_%s", hubs[hub], engines[hub], what), ips[hub]);
    };
    absl::StatusOr<uint64_t> req = address("REQ"), ack = address("ACK");
    if (!req.ok() || !ack.ok()) {
      return absl::FailedPreconditionError(
          absl::StrFormat("VM_INVALIDATION: %s engine %d has no register address", hubs[hub], engines[hub]));
    }
    context_.registers.WriteDword(*req, packet.invalidatereq);
    std::chrono::nanoseconds delay = kFirstBackOff;
    while ((context_.registers.ReadDword(*ack) & ack_bits) != ack_bits) {
      if (!BackOff(delay)) return absl::CancelledError("queue stopped waiting for a VM_INVALIDATION ack");
    }
  }
  return absl::OkStatus();
}

absl::Status SdmaPacketExecutor::Atomic(const MemoryClient& client, const uint32_t* p) {
  const auto& packet = *reinterpret_cast<const sdma::Atomic*>(p);
  const uint32_t operation = PKT_FIELD(packet.header, ATOMIC_HEADER_atomic_op);
  const uint32_t kind = operation & kTcOpKindMask;
  const bool wide = (operation & kTcOp64Bit) != 0;
  const bool loop = PKT_FIELD(packet.header, ATOMIC_HEADER_loop) != 0;
  if (IsFloatAtomic(kind)) {
    return absl::UnimplementedError(
        absl::StrFormat("floating-point ATOMIC operation %#x is not modelled by the virtual Navi31", operation));
  }
  if (kind != kSwap && kind != kCmpSwap && (kind < kAdd || kind > kDec)) {
    return Malformed("ATOMIC operation %#x is not an atomic TC_OP", operation);
  }
  const uint64_t address = Address(packet.addr_lo, packet.addr_hi);
  const uint64_t src = Address(packet.src_data_lo, packet.src_data_hi);
  const uint64_t cmp = Address(packet.cmp_data_lo, packet.cmp_data_hi);
  if (address % (wide ? 8 : 4) != 0) {
    return Malformed("ATOMIC address %#x is not %d-byte aligned", address, wide ? 8 : 4);
  }

  // One attempt; CMPSWAP with LOOP set repeats until the compare succeeds.
  auto run = [&](auto* location, auto source, auto compare) -> absl::Status {
    using T = std::remove_pointer_t<decltype(location)>;
    std::atomic_ref<T> target(*location);
    std::chrono::nanoseconds delay = kFirstBackOff;
    for (;;) {
      T old = target.load(std::memory_order_acquire);
      if (kind == kCmpSwap) {
        if (old == static_cast<T>(compare) &&
            target.compare_exchange_strong(old, static_cast<T>(source), std::memory_order_acq_rel)) {
          return absl::OkStatus();
        }
        if (!loop) return absl::OkStatus();
        if (!BackOff(delay)) return absl::CancelledError("queue stopped during a looping ATOMIC CMPSWAP");
        continue;
      }
      while (
          !target.compare_exchange_weak(old, Apply<T>(kind, old, static_cast<T>(source)), std::memory_order_acq_rel)) {
      }
      return absl::OkStatus();
    }
  };
  if (wide) {
    BAREGPU_ASSIGN_OR_RETURN(uint64_t * location, Fault(MapQword(context_.memory, client, address, Access::kWrite)));
    return run(location, src, cmp);
  }
  BAREGPU_ASSIGN_OR_RETURN(uint32_t * location, Fault(MapDword(context_.memory, client, address, Access::kWrite)));
  return run(location, static_cast<uint32_t>(src), static_cast<uint32_t>(cmp));
}

absl::Status SdmaPacketExecutor::ConstantFill(const MemoryClient& client, const uint32_t* p) {
  const auto& packet = *reinterpret_cast<const sdma::ConstantFill*>(p);
  // FILLSIZE: the pattern is the data's low 2^FILLSIZE bytes (Linux's byte-count fills leave it 0); the data
  // dword holds at most 4 bytes, so 3 cannot be.
  const uint32_t fill_size = PKT_FIELD(packet.header, CONSTANT_FILL_HEADER_fillsize);
  uint32_t pattern = packet.data;
  if (fill_size == 0) {
    pattern = (packet.data & 0xff) * 0x01010101u;
  } else if (fill_size == 1) {
    pattern = (packet.data & 0xffff) * 0x00010001u;
  } else if (fill_size == 3) {
    return Malformed("CONSTANT_FILL with FILLSIZE 3: the data dword holds at most 4 bytes");
  }
  uint64_t dst = Address(packet.dst_addr_lo, packet.dst_addr_hi);
  const uint64_t total = uint64_t{PKT_FIELD(packet.count, CONSTANT_FILL_COUNT_count)} + 1;
  for (uint64_t done = 0; done < total;) {
    BAREGPU_ASSIGN_OR_RETURN(std::span<uint8_t> to,
                             Fault(context_.memory.Map(client, dst, total - done, Access::kWrite)));
    if (to.empty()) return absl::AbortedError(absl::StrFormat("empty mapping at %#x", dst));
    FillPattern(to, pattern, done);
    dst += to.size();
    done += to.size();
  }
  return absl::OkStatus();
}

}  // namespace am::sim
