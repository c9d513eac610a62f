#include "hcq/amd/queues.h"

#include <algorithm>

#include "absl/strings/str_format.h"
#include "am/regs/pm4_packets.h"
#include "am/regs/sdma_packets.h"
#include "hcq/amd/amd_device.h"
#include "hcq/amd/amd_program.h"
#include "hcq/args_state.h"
#include "hcq/device.h"

namespace hcq::amd {
namespace {

namespace pm4 = am::regs::pm4;
namespace sdma = am::regs::sdma;

// A constant's value now, a variable's placeholder (patched at submit).
uint32_t Now(const Value& value) { return value.is_variable() ? 0 : static_cast<uint32_t>(value.constant()); }
// An address now: a constant's, or 0 where a variable's halves are patched at submit.
uint64_t AddressNow(const Value& address) { return address.is_variable() ? 0 : address.constant(); }

}  // namespace

Pm4Queue::Pm4Queue(AmdDevice& device) : ComputeQueue(device), amd_(device) {}

void Pm4Queue::EmitWait(Value address, Value value) {
  const uint32_t at = Emit(pm4::WaitMemory::Encode(AddressNow(address), 0, pm4::Compare::kGreaterEqual));
  Set(at + pm4::WaitMemory::kReferenceDword, value);
  PatchAddress(at + pm4::WaitMemory::kAddressLoDword, at + pm4::WaitMemory::kAddressHiDword, address, kSignalAlignment);
}

void Pm4Queue::ReleaseMem(Value address, pm4::ReleaseData data_sel, Value value, uint64_t alignment,
                          pm4::ReleaseInterrupt interrupt) {
  const uint32_t at = Emit(pm4::ReleaseMem::Encode(AddressNow(address), data_sel, 0, interrupt));
  Set(at + pm4::ReleaseMem::kDataLoDword, value);
  PatchAddress(at + pm4::ReleaseMem::kAddressLoDword, at + pm4::ReleaseMem::kAddressHiDword, address, alignment);
}

// A signal asks for the end-of-pipe interrupt after its write, as amdgpu's fences (gfx_v11_0_ring_emit_fence with
// AMDGPU_FENCE_FLAG_INT) and tinygrad's signals do: the pipe raises it only while a sleeping wait holds it
// (am::CompletionInterrupts), and that wait wakes on it. Timestamps wake nobody.
void Pm4Queue::EmitSignal(Value address, Value value) {
  ReleaseMem(address, pm4::ReleaseData::kLow32, value, kSignalAlignment, pm4::ReleaseInterrupt::kAfterWriteConfirm);
}
void Pm4Queue::EmitTimestamp(Value address) {
  ReleaseMem(address, pm4::ReleaseData::kGpuClock, 0, kTimestampAlignment, pm4::ReleaseInterrupt::kNone);
}

ComputeQueue& Pm4Queue::memory_barrier() {
  Emit(amd_.am().gfx().HdpFlushPacket());
  Emit(pm4::AcquireMem::Encode());
  return *this;
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

namespace {

// The most work-items in a workgroup, in any dimension and in all (AMDGPUUsage: amdgpu-flat-work-group-size is at
// most 1024; ROCr reports HSA_AGENT_INFO_WORKGROUP_MAX_SIZE 1024 for gfx11; the SPI's COMPUTE_NUM_THREAD fields hold
// no more).
constexpr uint64_t kMaxWorkgroupItems = 1024;
// The most work-items in a dimension of the grid: hsa_kernel_dispatch_packet_t's grid_size_x/y/z are 32 bits, and so
// are the implicit arguments' hidden_block_count (workgroups) the kernels read.
constexpr uint64_t kMaxGridItems = 0xffffffff;

// Launch dimensions the hardware cannot run, refused when the exec is recorded (dimensions given by variables are
// the caller's to keep in range).
absl::Status CheckLaunchDims(const Dims& global, const Dims& local) {
  uint64_t items = 1;
  bool all_constant = true;
  for (int d = 0; d < 3; ++d) {
    if (local[d].is_variable()) {
      all_constant = false;
      continue;
    }
    const uint64_t size = local[d].constant();
    if (size == 0 || size > kMaxWorkgroupItems) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "workgroup size %d in dimension %d: each dimension takes 1 to %d work-items", size, d, kMaxWorkgroupItems));
    }
    items *= size;
    if (global[d].is_variable()) continue;
    const uint64_t groups = global[d].constant();
    if (groups == 0 || groups > kMaxGridItems / size) {
      return absl::InvalidArgumentError(
          absl::StrFormat("%d workgroups of %d work-items in dimension %d: the grid takes 1 to %d work-items per "
                          "dimension (at least one workgroup)",
                          groups, size, d, kMaxGridItems));
    }
  }
  if (all_constant && items > kMaxWorkgroupItems) {
    return absl::InvalidArgumentError(absl::StrFormat("a workgroup of %d x %d x %d = %d work-items: at most %d",
                                                      local[0].constant(), local[1].constant(), local[2].constant(),
                                                      items, kMaxWorkgroupItems));
  }
  return absl::OkStatus();
}

}  // namespace

ComputeQueue& Pm4Queue::exec(const Program& program, ArgsState& args, const Dims& global, const Dims& local) {
  if (absl::Status dims = CheckLaunchDims(global, local); !dims.ok()) {
    Fail(absl::InvalidArgumentError(
        absl::StrFormat("%s: exec of %s: %s", device_.name(), program.name(), dims.message())));
    return *this;
  }
  if (&program.device() != &device_) {
    Fail(absl::InvalidArgumentError(absl::StrFormat("exec of %s (loaded on %s) on a queue of %s", program.name(),
                                                    program.device().name(), device_.name())));
    return *this;
  }
  const auto& amd_program = static_cast<const AmdProgram&>(program);
  if (args.size() < program.args_size()) {
    Fail(absl::InvalidArgumentError(
        absl::StrFormat("%s: exec of %s with %d bytes of argument memory, it needs %d (allocate Program::args_size())",
                        device_.name(), program.name(), args.size(), program.args_size())));
    return *this;
  }
  if (absl::Status filled =
          FillImplicitArguments(amd_program.implicit(), amd_program.dispatch().descriptor_va(), args, global, local);
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
  const std::array<uint32_t, 3> groups{Now(global[0]), Now(global[1]), Now(global[2])};
  const std::array<uint32_t, 3> size{Now(local[0]), Now(local[1]), Now(local[2])};
  const uint32_t base = static_cast<uint32_t>(commands_.size());
  const am::KernelDispatch::Patchable at = amd_program.dispatch().Encode(commands_, args.va(), groups, size);
  for (int i = 0; i < 3; ++i) {
    if (local[i].is_variable()) Set(base + at.workgroup_size[i], local[i]);
    if (global[i].is_variable()) Set(base + at.workgroups[i], global[i]);
  }
  if (profile_end.valid()) timestamp(profile_end);
  return *this;
}

absl::Status Pm4Queue::WriteRing(std::span<const uint32_t> dwords) {
  return amd_.compute_ring().Write(dwords, amd_.wait_timeout());
}

absl::Status Pm4Queue::PrepareBind() {
  // INDIRECT_BUFFER's size field has 20 bits: a longer command buffer runs as several IBs, split between packets
  // (a packet may not straddle two IBs).
  ib_pieces_.clear();
  uint32_t piece = 0;
  for (uint32_t at = 0; at < commands_.size();) {
    const uint32_t header = commands_[at];
    if (pm4::PacketType(header) != pm4::PACKET_TYPE3) {
      return absl::InternalError(
          absl::StrFormat("%s: bind: dword %d of the queue is no type-3 header (%#010x)", device_.name(), at, header));
    }
    const uint32_t length = pm4::PacketCount(header) + 2;
    if (at + length - piece > pm4::IndirectBuffer::kMaxDwords) {
      ib_pieces_.push_back({piece, at - piece});
      piece = at;
    }
    at += length;
  }
  ib_pieces_.push_back({piece, static_cast<uint32_t>(commands_.size()) - piece});
  const uint64_t ring_dwords = ib_pieces_.size() * pm4::IndirectBuffer::kDwords;
  if (ring_dwords >= amd_.compute_ring().size_units()) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s: bind: %d dwords need %d indirect buffers, more than the "
                        "compute ring holds; split the queue",
                        device_.name(), commands_.size(), ib_pieces_.size()));
  }
  indirect_.assign(ring_dwords, 0);
  indirect_va_ = kNotEncoded;
  return absl::OkStatus();
}

absl::Status Pm4Queue::WriteIndirect(uint64_t va, uint32_t dwords) {
  // gfx_v11_0_ring_emit_ib_compute per piece, VMID 0 (the kernel queue's own context); one ring write for all.
  if (ib_pieces_.empty() || ib_pieces_.back().offset + ib_pieces_.back().dwords != dwords) {
    return absl::InternalError(absl::StrFormat("%s: the bound queue changed since bind", device_.name()));
  }
  if (va != indirect_va_) {
    for (size_t i = 0; i < ib_pieces_.size(); ++i) {
      const auto packet = pm4::IndirectBuffer::Encode(va + uint64_t{ib_pieces_[i].offset} * 4, ib_pieces_[i].dwords);
      std::copy(packet.begin(), packet.end(), indirect_.begin() + i * pm4::IndirectBuffer::kDwords);
    }
    indirect_va_ = va;
  }
  return amd_.compute_ring().Write(indirect_, amd_.wait_timeout());
}

SdmaQueue::SdmaQueue(AmdDevice& device) : CopyQueue(device), amd_(device) {}

CopyQueue& SdmaQueue::copy(Value destination, Value source, uint64_t size) {
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
    const Value to = destination.plus(done), from = source.plus(done);
    const uint32_t at = Emit(sdma::EncodeCopyLinear(AddressNow(to), AddressNow(from), piece));
    // COPY_LINEAR copies bytes: any alignment.
    PatchAddress(at + sdma::kCopyDestinationLoDword, at + sdma::kCopyDestinationHiDword, to, 1);
    PatchAddress(at + sdma::kCopySourceLoDword, at + sdma::kCopySourceHiDword, from, 1);
    done += piece;
  }
  if (profile_end.valid()) timestamp(profile_end);
  return *this;
}

void SdmaQueue::EmitWait(Value address, Value value) {
  const uint32_t at = Emit(sdma::EncodePollMemory(AddressNow(address), 0, sdma::PollCompare::kGreaterEqual));
  Set(at + sdma::kPollReferenceDword, value);
  PatchAddress(at + sdma::kPollAddressLoDword, at + sdma::kPollAddressHiDword, address, kSignalAlignment);
}

void SdmaQueue::EmitSignal(Value address, Value value) {
  const uint32_t at = Emit(sdma::EncodeFence(AddressNow(address), 0));
  Set(at + sdma::kFenceDataDword, value);
  PatchAddress(at + sdma::kFenceAddressLoDword, at + sdma::kFenceAddressHiDword, address, kSignalAlignment);
  // Then a TRAP, as sdma_v6_0_ring_emit_fence follows a fence that wants an interrupt: the engine raises it only
  // while a sleeping wait holds it (am::CompletionInterrupts). Its context is amdgpu's for fences, 0.
  Emit(sdma::EncodeTrap(0));
}

void SdmaQueue::EmitTimestamp(Value address) {
  const uint32_t at = Emit(sdma::EncodeTimestampGlobal(AddressNow(address)));
  PatchAddress(at + sdma::kTimestampAddressLoDword, at + sdma::kTimestampAddressHiDword, address, kTimestampAlignment);
}

absl::Status SdmaQueue::PrepareBind() {
  // sdma_v6_0_ring_pad_ib: an IB is a whole number of 8-dword blocks, padded with one-dword NOPs.
  while (commands_.size() % sdma::kIndirectAlignDwords != 0) commands_.push_back(sdma::EncodeNop());
  if (commands_.size() > sdma::kMaxIndirectDwords) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s: bind: %d dwords of SDMA packets exceed one indirect buffer (%d dwords, the 20-bit ib_size); split the "
        "copies over several queues",
        device_.name(), commands_.size(), sdma::kMaxIndirectDwords));
  }
  return absl::OkStatus();
}

absl::Status SdmaQueue::WriteRing(std::span<const uint32_t> dwords) {
  return amd_.copy_ring().Write(dwords, amd_.wait_timeout());
}

absl::Status SdmaQueue::WriteIndirect(uint64_t va, uint32_t dwords) {
  // sdma_v6_0_ring_emit_ib: the INDIRECT packet must end on an 8-dword boundary of the ring (NOPs first).
  return amd_.copy_ring().Write(sdma::EncodeIndirect(va, dwords), amd_.wait_timeout(), sdma::kIndirectAlignDwords,
                                sdma::EncodeNop());
}

}  // namespace hcq::amd
