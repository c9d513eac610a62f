#include "hcq/amd/queues.h"

#include <algorithm>

#include "absl/strings/str_format.h"
#include "am/regs/database.h"
#include "am/regs/gc.h"
#include "am/regs/nbio.h"
#include "am/regs/pm4.h"
#include "am/regs/sdma_constants.h"
#include "am/regs/sdma_packets.h"
#include "hcq/amd/amd_device.h"
#include "hcq/amd/amd_program.h"
#include "hcq/args_state.h"
#include "hcq/device.h"

namespace hcq::amd {
namespace {

namespace gc = am::regs::gc;
namespace pm4 = am::regs::pm4;
namespace sdma = am::regs::sdma;

constexpr uint32_t Lo(uint64_t v) { return static_cast<uint32_t>(v); }
constexpr uint32_t Hi(uint64_t v) { return static_cast<uint32_t>(v >> 32); }

// nvd.h WAIT_REG_MEM_FUNCTION: 3 "==", 5 ">=". Linux gfx_v11_0_wait_reg_mem polls every 0x20 clocks.
constexpr uint32_t kFunctionEqual = 3, kFunctionGreaterEqual = 5;
constexpr uint32_t kPollInterval = 0x20;
// RELEASE_MEM DATA_SEL (nvd.h comments): 1 the low 32 bits of data, 3 the GPU clock counter.
constexpr uint32_t kDataSel32 = 1, kDataSelClock = 3;
// gfx_v11_0_ring_emit_fence: write back and invalidate GL2/GLM after the end-of-pipe event, in sequence.
constexpr uint32_t kReleaseMemEvent =
    pm4::PACKET3_RELEASE_MEM_GCR_SEQ | pm4::PACKET3_RELEASE_MEM_GCR_GL2_WB | pm4::PACKET3_RELEASE_MEM_GCR_GLM_INV |
    pm4::PACKET3_RELEASE_MEM_GCR_GLM_WB | pm4::PACKET3_RELEASE_MEM_CACHE_POLICY(3) |
    pm4::PACKET3_RELEASE_MEM_EVENT_TYPE(pm4::CACHE_FLUSH_AND_INV_TS_EVENT) | pm4::PACKET3_RELEASE_MEM_EVENT_INDEX(5);
// gfx_v11_0_emit_mem_sync: invalidate every cache level and write back GL2/GLM.
constexpr uint32_t kAcquireMemGcr =
    pm4::PACKET3_ACQUIRE_MEM_GCR_CNTL_GL2_INV(1) | pm4::PACKET3_ACQUIRE_MEM_GCR_CNTL_GL2_WB(1) |
    pm4::PACKET3_ACQUIRE_MEM_GCR_CNTL_GLM_INV(1) | pm4::PACKET3_ACQUIRE_MEM_GCR_CNTL_GLM_WB(1) |
    pm4::PACKET3_ACQUIRE_MEM_GCR_CNTL_GL1_INV(1) | pm4::PACKET3_ACQUIRE_MEM_GCR_CNTL_GLV_INV(1) |
    pm4::PACKET3_ACQUIRE_MEM_GCR_CNTL_GLK_INV(1) | pm4::PACKET3_ACQUIRE_MEM_GCR_CNTL_GLI_INV(1);
// gfx_v11_0_ring_emit_hdp_flush: a MEC1 queue's bit in GPU_HDP_FLUSH_REQ/DONE is CP2 shifted by its pipe (0).
const uint32_t kHdpFlushMecPipe0 = am::regs::nbio::BIF_BX_PF0_GPU_HDP_FLUSH_DONE{}.cp2(1).raw();
// gfx_v11_0_ring_emit_ib_compute: INDIRECT_BUFFER_VALID and the size in dwords (bits 19:0).
constexpr uint32_t kIbSizeMask = 0xfffff;

enum ShIndex { kPgmLo, kRsrc1, kRsrc3, kTmpring, kUserData, kLimits, kStart, kScratchLo, kScratchHi };

}  // namespace

Pm4Queue::Pm4Queue(AmdDevice& device) : ComputeQueue(device), amd_(device) {
  auto g = device.am().Regs<am::regs::Ip::kGc>();
  sh_base_[kPgmLo] = static_cast<uint32_t>(g.AddressOf<gc::COMPUTE_PGM_LO>().value_or(0));
  sh_base_[kRsrc1] = static_cast<uint32_t>(g.AddressOf<gc::COMPUTE_PGM_RSRC1>().value_or(0));
  sh_base_[kRsrc3] = static_cast<uint32_t>(g.AddressOf<gc::COMPUTE_PGM_RSRC3>().value_or(0));
  sh_base_[kTmpring] = static_cast<uint32_t>(g.AddressOf<gc::COMPUTE_TMPRING_SIZE>().value_or(0));
  sh_base_[kUserData] = static_cast<uint32_t>(g.AddressOf<gc::COMPUTE_USER_DATA_0>().value_or(0));
  sh_base_[kLimits] = static_cast<uint32_t>(g.AddressOf<gc::COMPUTE_RESOURCE_LIMITS>().value_or(0));
  sh_base_[kStart] = static_cast<uint32_t>(g.AddressOf<gc::COMPUTE_START_X>().value_or(0));
  // Not among the typed registers: by name from the register database.
  const am::regs::IpBases& bases = device.am().bases();
  sh_base_[kScratchLo] = static_cast<uint32_t>(
      am::regs::ResolveAddress(bases, "COMPUTE_DISPATCH_SCRATCH_BASE_LO", am::regs::Ip::kGc).value_or(0));
  sh_base_[kScratchHi] = static_cast<uint32_t>(
      am::regs::ResolveAddress(bases, "COMPUTE_DISPATCH_SCRATCH_BASE_HI", am::regs::Ip::kGc).value_or(0));
  // COMPUTE_PGM_LO/HI, RSRC1/2, START_X..Z + NUM_THREAD_X..Z are consecutive (gc_11_0_0_offset.h).
  static_assert(gc::COMPUTE_PGM_HI::kOffset == gc::COMPUTE_PGM_LO::kOffset + 1);
  static_assert(gc::COMPUTE_PGM_RSRC2::kOffset == gc::COMPUTE_PGM_RSRC1::kOffset + 1);
  static_assert(gc::COMPUTE_NUM_THREAD_Z::kOffset == gc::COMPUTE_START_X::kOffset + 5);
}

void Pm4Queue::EmitWait(uint64_t address, Value value) {
  // gfx_v11_0_wait_reg_mem with a memory location: wait until *address >= value.
  const uint32_t at = Emit({pm4::Packet3(pm4::PACKET3_WAIT_REG_MEM, 5),
                            pm4::WAIT_REG_MEM_FUNCTION(kFunctionGreaterEqual) | pm4::WAIT_REG_MEM_MEM_SPACE(1) |
                                pm4::WAIT_REG_MEM_OPERATION(0) | pm4::WAIT_REG_MEM_ENGINE(0),
                            Lo(address), Hi(address), 0, 0xffffffff, kPollInterval});
  Set(at + 4, value);
}

void Pm4Queue::ReleaseMem(uint64_t address, uint32_t data_sel, Value value) {
  const uint32_t at = Emit({pm4::Packet3(pm4::PACKET3_RELEASE_MEM, 6), kReleaseMemEvent,
                            pm4::PACKET3_RELEASE_MEM_DATA_SEL(data_sel) | pm4::PACKET3_RELEASE_MEM_INT_SEL(0) |
                                pm4::PACKET3_RELEASE_MEM_DST_SEL(0),
                            Lo(address), Hi(address), 0, 0, 0});
  Set(at + 5, value);
}

void Pm4Queue::EmitSignal(uint64_t address, Value value) { ReleaseMem(address, kDataSel32, value); }
void Pm4Queue::EmitTimestamp(uint64_t address) { ReleaseMem(address, kDataSelClock, 0); }

ComputeQueue& Pm4Queue::memory_barrier() {
  // gfx_v11_0_ring_emit_hdp_flush: write the queue's bit to GPU_HDP_FLUSH_REQ, wait for it in _DONE.
  Emit({pm4::Packet3(pm4::PACKET3_WAIT_REG_MEM, 5),
        pm4::WAIT_REG_MEM_FUNCTION(kFunctionEqual) | pm4::WAIT_REG_MEM_MEM_SPACE(0) | pm4::WAIT_REG_MEM_OPERATION(1) |
            pm4::WAIT_REG_MEM_ENGINE(0),
        amd_.hdp_flush_request(), amd_.hdp_flush_done(), kHdpFlushMecPipe0, kHdpFlushMecPipe0, kPollInterval});
  // gfx_v11_0_emit_mem_sync.
  Emit({pm4::Packet3(pm4::PACKET3_ACQUIRE_MEM, 6), 0, 0xffffffff, 0xffffff, 0, 0, 0x0000000A, kAcquireMemGcr});
  return *this;
}

uint32_t Pm4Queue::SetShRegs(uint32_t first, std::initializer_list<uint32_t> values) {
  const uint32_t at = static_cast<uint32_t>(commands_.size());
  commands_.push_back(pm4::Packet3(pm4::PACKET3_SET_SH_REG, static_cast<uint32_t>(values.size())));
  commands_.push_back(first - pm4::PACKET3_SET_SH_REG_START);
  commands_.insert(commands_.end(), values);
  return at + 2;
}

absl::Status Pm4Queue::FillImplicitArguments(const am::ImplicitArguments& implicit, uint64_t descriptor,
                                             ArgsState& args, const Dims& global, const Dims& local) {
  using Kind = am::ImplicitArguments::Kind;
  implicit.WritePacketConstants({args.cpu(), args.size()}, args.va(), descriptor);
  for (const am::ImplicitArguments::Field& f : implicit.fields()) {
    const Value& groups = global[f.dimension];
    const Value& size = local[f.dimension];
    switch (f.kind) {
      case Kind::kBlockCount:
        args.set_field(f.offset, f.bytes, groups);
        break;
      case Kind::kGroupSize:
      case Kind::kPacketGroupSize:
        args.set_field(f.offset, f.bytes, size);
        break;
      case Kind::kRemainder:
        args.set_field(f.offset, f.bytes, uint32_t{0});
        break;
      case Kind::kGridDims:
      case Kind::kPacketDimensions: {
        // A dimension given by a variable counts as used: its extent is unknown until submit.
        std::array<bool, 3> used{};
        for (int i = 0; i < 3; ++i) {
          used[i] = global[i].is_variable() || local[i].is_variable() || global[i].constant() * local[i].constant() > 1;
        }
        args.set_field(f.offset, f.bytes, am::ImplicitArguments::GridDims(used));
        break;
      }
      case Kind::kPacketGridSize:
        // Work-items = workgroups x workgroup size: a patch scales one variable by the other, constant, factor.
        if (groups.is_variable() && size.is_variable()) {
          return absl::UnimplementedError(absl::StrFormat(
              "dimension %d has both its workgroup count and size as variables, but the kernel reads the dispatch "
              "packet's grid size (their product); make one of them a constant",
              f.dimension));
        }
        if (size.is_variable()) {
          args.set_field(f.offset, f.bytes, size, static_cast<uint32_t>(groups.constant()));
        } else {
          args.set_field(f.offset, f.bytes, groups, static_cast<uint32_t>(size.constant()));
        }
        break;
    }
  }
  return absl::OkStatus();
}

ComputeQueue& Pm4Queue::exec(const Program& program, ArgsState& args, const Dims& global, const Dims& local) {
  if (&program.device() != &device_) {
    Fail(absl::InvalidArgumentError(absl::StrFormat("exec of %s (loaded on %s) on a queue of %s", program.name(),
                                                    program.device().name(), device_.name())));
    return *this;
  }
  const auto& amd_program = static_cast<const AmdProgram&>(program);
  const KernelSetup& k = amd_program.setup();
  if (args.size() < program.args_size()) {
    Fail(absl::InvalidArgumentError(
        absl::StrFormat("%s: exec of %s with %d bytes of argument memory, it needs %d (allocate Program::args_size())",
                        device_.name(), program.name(), args.size(), program.args_size())));
    return *this;
  }
  if (absl::Status filled = FillImplicitArguments(amd_program.implicit(), k.descriptor, args, global, local);
      !filled.ok()) {
    Fail(absl::Status(filled.code(),
                      absl::StrFormat("%s: exec of %s: %s", device_.name(), program.name(), filled.message())));
    return *this;
  }
  AddArgs(&args);
  Signal profile_end;
  if (profiling_) {
    absl::StatusOr<std::pair<Signal, Signal>> span = device_.profiler().Begin(program.name(), "compute");
    if (!span.ok()) {
      Fail(span.status());
      return *this;
    }
    timestamp(span->first);
    profile_end = span->second;
  }
  SetShRegs(sh_base_[kPgmLo], {Lo(k.entry >> 8), Lo(k.entry >> 40)});
  SetShRegs(sh_base_[kRsrc1], {k.rsrc1, k.rsrc2});
  SetShRegs(sh_base_[kRsrc3], {k.rsrc3});
  SetShRegs(sh_base_[kTmpring], {k.tmpring_size});
  if (k.scratch_base != 0) {
    SetShRegs(sh_base_[kScratchLo], {Lo(k.scratch_base >> 8)});
    SetShRegs(sh_base_[kScratchHi], {Lo(k.scratch_base >> 40)});
  }
  // User SGPRs in hardware order; the kernarg pointer and the dispatch packet pointer (the packet follows the
  // kernel arguments) carry values baregpu provides.
  uint32_t user[16] = {};
  uint32_t n = 0;
  if (k.private_segment_buffer) n += 4;
  if (k.dispatch_ptr) {
    const uint64_t packet = args.va() + amd_program.implicit().dispatch_packet_offset();
    user[n] = Lo(packet), user[n + 1] = Hi(packet), n += 2;
  }
  if (k.queue_ptr) n += 2;
  if (k.kernarg_segment_ptr) user[n] = Lo(args.va()), user[n + 1] = Hi(args.va()), n += 2;
  const uint32_t user_at = SetShRegs(sh_base_[kUserData], {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0});
  std::copy(user, user + 16, commands_.begin() + user_at);
  SetShRegs(sh_base_[kLimits], {0});
  const uint32_t start_at = SetShRegs(sh_base_[kStart], {0, 0, 0, 1, 1, 1});
  for (int i = 0; i < 3; ++i) Set(start_at + 3 + i, local[i]);
  const uint32_t initiator =
      gc::COMPUTE_DISPATCH_INITIATOR{}.compute_shader_en(1).force_start_at_000(1).cs_w32_en(k.wave32 ? 1 : 0).raw();
  const uint32_t dispatch_at = Emit({pm4::Packet3(pm4::PACKET3_DISPATCH_DIRECT, 3), 1, 1, 1, initiator});
  for (int i = 0; i < 3; ++i) Set(dispatch_at + 1 + i, global[i]);
  // gfx_v11: a compute partial flush so the next command sees the dispatch's results.
  Emit({pm4::Packet3(pm4::PACKET3_EVENT_WRITE, 0), pm4::EVENT_TYPE(pm4::CS_PARTIAL_FLUSH) | pm4::EVENT_INDEX(4)});
  if (profile_end.valid()) timestamp(profile_end);
  return *this;
}

absl::Status Pm4Queue::WriteRing(std::span<const uint32_t> dwords) { return amd_.compute_ring().Write(dwords, amd_); }

absl::Status Pm4Queue::WriteIndirect(uint64_t va, uint32_t dwords) {
  // gfx_v11_0_ring_emit_ib_compute: address (dword aligned), high 16 bits, VALID | size; VMID 0 (the kernel
  // queue's own context).
  const uint32_t packet[4] = {pm4::Packet3(pm4::PACKET3_INDIRECT_BUFFER, 2), Lo(va) & ~3u, Hi(va) & 0xffff,
                              pm4::INDIRECT_BUFFER_VALID | (dwords & kIbSizeMask)};
  return amd_.compute_ring().Write(packet, amd_);
}

SdmaQueue::SdmaQueue(AmdDevice& device) : CopyQueue(device), amd_(device) {}

CopyQueue& SdmaQueue::copy(uint64_t destination, uint64_t source, uint64_t size) {
  const uint64_t largest = amd_.copy_packet_bytes();
  Signal profile_end;
  if (profiling_) {
    absl::StatusOr<std::pair<Signal, Signal>> span =
        device_.profiler().Begin(absl::StrFormat("copy %d bytes", size), "copy");
    if (!span.ok()) {
      Fail(span.status());
      return *this;
    }
    timestamp(span->first);
    profile_end = span->second;
  }
  for (uint64_t done = 0; done < size;) {
    const uint64_t piece = std::min(largest, size - done);
    // sdma_v6_0_emit_copy_buffer: COPY_LINEAR, count = bytes - 1.
    Emit({sdma::Header(sdma::SDMA_OP_COPY, sdma::SDMA_SUBOP_COPY_LINEAR), static_cast<uint32_t>(piece - 1), 0,
          Lo(source + done), Hi(source + done), Lo(destination + done), Hi(destination + done)});
    done += piece;
  }
  if (profile_end.valid()) timestamp(profile_end);
  return *this;
}

void SdmaQueue::EmitWait(uint64_t address, Value value) {
  // sdma_v6_0_ring_emit_wait_reg_mem on memory: POLL_REGMEM, function ">=" (5), retry forever (0xfff), interval 4.
  const uint32_t header = sdma::Header(sdma::SDMA_OP_POLL_REGMEM) |
                          (1u << sdma::SDMA_PKT_POLL_REGMEM_HEADER_mem_poll_shift) |
                          (kFunctionGreaterEqual << sdma::SDMA_PKT_POLL_REGMEM_HEADER_func_shift);
  const uint32_t at =
      Emit({header, Lo(address), Hi(address), 0, 0xffffffff,
            (4u << sdma::SDMA_PKT_POLL_REGMEM_DW5_interval_shift) |
                (sdma::SDMA_PKT_POLL_REGMEM_DW5_retry_count_mask << sdma::SDMA_PKT_POLL_REGMEM_DW5_retry_count_shift)});
  Set(at + 3, value);
}

void SdmaQueue::EmitSignal(uint64_t address, Value value) {
  // sdma_v6_0_ring_emit_fence: FENCE writes 32 bits.
  const uint32_t at = Emit({sdma::Header(sdma::SDMA_OP_FENCE), Lo(address), Hi(address), 0});
  Set(at + 3, value);
}

void SdmaQueue::EmitTimestamp(uint64_t address) {
  // TIMESTAMP GET_GLOBAL: the 100 MHz reference clock, as the compute queue's RELEASE_MEM DATA_SEL 3.
  Emit({sdma::Header(sdma::SDMA_OP_TIMESTAMP, sdma::SDMA_SUBOP_TIMESTAMP_GET_GLOBAL), Lo(address), Hi(address)});
}

void SdmaQueue::PadForBind() {
  // sdma_v6_0_ring_pad_ib: an IB is a whole number of 8-dword blocks, padded with one-dword NOPs.
  while (commands_.size() % 8 != 0) commands_.push_back(sdma::Header(sdma::SDMA_OP_NOP));
}

absl::Status SdmaQueue::WriteRing(std::span<const uint32_t> dwords) { return amd_.copy_ring().Write(dwords, amd_); }

absl::Status SdmaQueue::WriteIndirect(uint64_t va, uint32_t dwords) {
  // sdma_v6_0_ring_emit_ib: the INDIRECT packet (6 dwords) must end on an 8-dword boundary of the ring: NOPs first.
  const uint64_t ring_dwords = amd_.copy_ring().wptr() / 4;
  uint32_t n = 0;
  while ((ring_dwords + n + 6) % 8 != 0) indirect_[n++] = sdma::Header(sdma::SDMA_OP_NOP);
  const uint32_t packet[6] = {sdma::Header(sdma::SDMA_OP_INDIRECT), Lo(va), Hi(va), dwords, 0, 0};
  std::copy(packet, packet + 6, indirect_ + n);
  return amd_.copy_ring().Write(std::span<const uint32_t>(indirect_, n + 6), amd_);
}

}  // namespace hcq::amd
