#include "am/kernel_dispatch.h"

#include "absl/strings/str_format.h"
#include "am/device.h"
#include "am/regs/database.h"
#include "am/regs/gc.h"
#include "am/regs/pm4_packets.h"
#include "base/status_macros.h"

namespace am {
namespace {

namespace gc = regs::gc;
namespace pm4 = regs::pm4;

// COMPUTE_TMPRING_SIZE's fields (gc_11_0_0_sh_mask.h, through the generated field table): WAVES, WAVESIZE.
constexpr uint32_t FieldMax(const regs::FieldSpec& field) { return field.mask >> field.shift; }
constexpr uint32_t kMaxTmpringWaves = FieldMax(gc::COMPUTE_TMPRING_SIZE::kFields[0]);
constexpr uint64_t kMaxWaveSizeUnits = FieldMax(gc::COMPUTE_TMPRING_SIZE::kFields[1]);
// COMPUTE_USER_DATA_0..15.
constexpr uint32_t kMaxUserSgprs = 16;

constexpr uint32_t Lo(uint64_t v) { return static_cast<uint32_t>(v); }
constexpr uint32_t Hi(uint64_t v) { return static_cast<uint32_t>(v >> 32); }

template <typename Register>
absl::StatusOr<uint32_t> AddressOf(Device& device) {
  auto g = device.Regs<regs::Ip::kGc>();
  std::optional<uint64_t> address = g.AddressOf<Register>();
  if (!address) return absl::FailedPreconditionError(absl::StrFormat("%s has no GC base", Register::kName));
  return static_cast<uint32_t>(*address);
}

// Appends SET_SH_REG of `values` from register `first`; returns the offset of the first value.
uint32_t SetShRegs(std::vector<uint32_t>& out, uint32_t first, std::initializer_list<uint32_t> values) {
  out.push_back(pm4::SetShReg::Header(static_cast<uint32_t>(values.size())));
  out.push_back(pm4::SetShReg::Offset(first));
  const uint32_t at = static_cast<uint32_t>(out.size());
  out.insert(out.end(), values);
  return at;
}

}  // namespace

absl::StatusOr<KernelDispatch> KernelDispatch::Create(Device& device, const CodeObject::Kernel& kernel,
                                                      uint64_t image_va) {
  const KernelDescriptor& d = kernel.descriptor;
  if (kernel.lds_size() > kMaxLdsBytes) {
    return absl::InvalidArgumentError(absl::StrFormat("kernel %s wants %d bytes of LDS, a gfx11 workgroup has %d",
                                                      kernel.name, kernel.lds_size(), kMaxLdsBytes));
  }
  // gfx11 has architected flat scratch: a kernel asking for the private segment buffer or flat scratch init was
  // built for another target.
  for (uint16_t unsupported :
       {KernelDescriptor::kEnableSgprPrivateSegmentBuffer, KernelDescriptor::kEnableSgprFlatScratchInit}) {
    if (d.has(unsupported)) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "kernel %s asks for user SGPR property %#x, which gfx11 (architected flat scratch) does not provide; "
          "compile it for gfx1100",
          kernel.name, unsupported));
    }
  }
  KernelDispatch k;
  auto& r = k.registers_;
  BAREGPU_ASSIGN_OR_RETURN(r.pgm_lo, AddressOf<gc::COMPUTE_PGM_LO>(device));
  BAREGPU_ASSIGN_OR_RETURN(r.rsrc1, AddressOf<gc::COMPUTE_PGM_RSRC1>(device));
  BAREGPU_ASSIGN_OR_RETURN(r.rsrc3, AddressOf<gc::COMPUTE_PGM_RSRC3>(device));
  BAREGPU_ASSIGN_OR_RETURN(r.tmpring, AddressOf<gc::COMPUTE_TMPRING_SIZE>(device));
  BAREGPU_ASSIGN_OR_RETURN(r.user_data, AddressOf<gc::COMPUTE_USER_DATA_0>(device));
  BAREGPU_ASSIGN_OR_RETURN(r.limits, AddressOf<gc::COMPUTE_RESOURCE_LIMITS>(device));
  BAREGPU_ASSIGN_OR_RETURN(r.start, AddressOf<gc::COMPUTE_START_X>(device));
  // Not among the typed registers (the generator's list): by name from the register database, once per program.
  BAREGPU_ASSIGN_OR_RETURN(uint64_t scratch_lo,
                           regs::ResolveAddress(device.bases(), "COMPUTE_DISPATCH_SCRATCH_BASE_LO", regs::Ip::kGc));
  BAREGPU_ASSIGN_OR_RETURN(uint64_t scratch_hi,
                           regs::ResolveAddress(device.bases(), "COMPUTE_DISPATCH_SCRATCH_BASE_HI", regs::Ip::kGc));
  if (scratch_hi != scratch_lo + 1) {
    return absl::InternalError("COMPUTE_DISPATCH_SCRATCH_BASE_LO/HI are not consecutive registers");
  }
  r.scratch_lo = static_cast<uint32_t>(scratch_lo);
  // Consecutive registers written by one SET_SH_REG each (gc_11_0_0_offset.h).
  static_assert(gc::COMPUTE_PGM_HI::kOffset == gc::COMPUTE_PGM_LO::kOffset + 1);
  static_assert(gc::COMPUTE_PGM_RSRC2::kOffset == gc::COMPUTE_PGM_RSRC1::kOffset + 1);
  static_assert(gc::COMPUTE_NUM_THREAD_Z::kOffset == gc::COMPUTE_START_X::kOffset + 5);

  k.entry_offset_ = kernel.entry_offset;
  k.descriptor_offset_ = kernel.descriptor_offset;
  k.set_image(image_va);
  k.rsrc1_ = d.compute_pgm_rsrc1;
  k.rsrc2_ = gc::COMPUTE_PGM_RSRC2::FromRaw(d.compute_pgm_rsrc2).lds_size(LdsSizeGranules(kernel.lds_size())).raw();
  k.rsrc3_ = d.compute_pgm_rsrc3;
  k.wave32_ = kernel.wave32();
  k.dispatch_ptr_ = d.has(KernelDescriptor::kEnableSgprDispatchPtr);
  k.queue_ptr_ = d.has(KernelDescriptor::kEnableSgprQueuePtr);
  k.kernarg_ptr_ = d.has(KernelDescriptor::kEnableSgprKernargSegmentPtr);
  k.dispatch_id_ = d.has(KernelDescriptor::kEnableSgprDispatchId);
  k.private_segment_size_ = d.has(KernelDescriptor::kEnableSgprPrivateSegmentSize);
  k.private_segment_bytes_ = kernel.scratch_size();
  k.implicit_ = ImplicitArguments::For(kernel);

  if (kernel.scratch_size() != 0) {
    // Every wave slot that may run the kernel gets a private segment: WAVESIZE is one wave's bytes in 256-byte
    // units, WAVES how many waves the buffer holds.
    const uint64_t wave_units =
        (uint64_t{kernel.scratch_size()} * kernel.wave_size() + kScratchGranule - 1) / kScratchGranule;
    if (wave_units > kMaxWaveSizeUnits) {
      return absl::InvalidArgumentError(
          absl::StrFormat("kernel %s needs %d bytes of scratch per work-item, more than COMPUTE_TMPRING_SIZE.WAVESIZE "
                          "holds (%d bytes per wave)",
                          kernel.name, kernel.scratch_size(), kMaxWaveSizeUnits * kScratchGranule));
    }
    const std::optional<GcInfo>& gc_info = device.discovery().discovery.gc;
    if (!gc_info || gc_info->total_cus() == 0) {
      return absl::FailedPreconditionError("discovery has no gc_info: the CU count that sizes scratch is unknown");
    }
    k.scratch_waves_ = std::min(gc_info->total_cus() * kScratchWavesPerCu, kMaxTmpringWaves);
    k.scratch_wave_units_ = static_cast<uint32_t>(wave_units);
    k.scratch_bytes_ = uint64_t{k.scratch_waves_} * wave_units * kScratchGranule;
  }
  return k;
}

void KernelDispatch::set_image(uint64_t image_va) {
  entry_va_ = image_va + entry_offset_;
  descriptor_va_ = image_va + descriptor_offset_;
}

void KernelDispatch::set_scratch(uint64_t va) {
  scratch_base_ = va;
  tmpring_size_ = gc::COMPUTE_TMPRING_SIZE{}.waves(scratch_waves_).wavesize(scratch_wave_units_).raw();
  rsrc2_ = gc::COMPUTE_PGM_RSRC2::FromRaw(rsrc2_).scratch_en(1).raw();
}

KernelDispatch::Patchable KernelDispatch::Encode(std::vector<uint32_t>& out, uint64_t kernarg_va,
                                                 const std::array<uint32_t, 3>& workgroups,
                                                 const std::array<uint32_t, 3>& workgroup_size,
                                                 uint64_t dispatch_id) const {
  const uint32_t base = static_cast<uint32_t>(out.size());
  const auto& r = registers_;
  SetShRegs(out, r.pgm_lo, {Lo(entry_va_ >> 8), gc::COMPUTE_PGM_HI{}.data(Lo(entry_va_ >> 40)).raw()});
  SetShRegs(out, r.rsrc1, {rsrc1_, rsrc2_});
  SetShRegs(out, r.rsrc3, {rsrc3_});
  SetShRegs(out, r.tmpring, {tmpring_size_});
  if (scratch_base_ != 0) SetShRegs(out, r.scratch_lo, {Lo(scratch_base_ >> 8), Lo(scratch_base_ >> 40)});
  // User SGPRs in hardware order. There is no AQL queue: the queue pointer is 0 (code object V4 kernels at -O0
  // ask for it without reading through it).
  uint32_t user[kMaxUserSgprs] = {};
  uint32_t n = 0;
  auto push64 = [&](uint64_t v) { user[n] = Lo(v), user[n + 1] = Hi(v), n += 2; };
  if (dispatch_ptr_) push64(kernarg_va + implicit_.dispatch_packet_offset());
  if (queue_ptr_) push64(0);
  if (kernarg_ptr_) push64(kernarg_va);
  if (dispatch_id_) push64(dispatch_id);
  if (private_segment_size_) user[n++] = private_segment_bytes_;
  if (n > 0) {
    out.push_back(pm4::SetShReg::Header(n));
    out.push_back(pm4::SetShReg::Offset(r.user_data));
    out.insert(out.end(), user, user + n);
  }
  SetShRegs(out, r.limits, {0});
  Patchable patchable;
  const uint32_t start = SetShRegs(out, r.start,
                                   {0, 0, 0, gc::COMPUTE_NUM_THREAD_X{}.num_thread_full(workgroup_size[0]).raw(),
                                    gc::COMPUTE_NUM_THREAD_Y{}.num_thread_full(workgroup_size[1]).raw(),
                                    gc::COMPUTE_NUM_THREAD_Z{}.num_thread_full(workgroup_size[2]).raw()});
  for (uint32_t i = 0; i < 3; ++i) patchable.workgroup_size[i] = start + 3 + i - base;
  const uint32_t dispatch = static_cast<uint32_t>(out.size());
  const auto packet = pm4::DispatchDirect::Encode(
      workgroups[0], workgroups[1], workgroups[2],
      gc::COMPUTE_DISPATCH_INITIATOR{}.compute_shader_en(1).force_start_at_000(1).cs_w32_en(wave32_ ? 1 : 0).raw());
  out.insert(out.end(), packet.begin(), packet.end());
  for (uint32_t i = 0; i < 3; ++i) patchable.workgroups[i] = dispatch + pm4::DispatchDirect::kGroupsDword + i - base;
  // A compute partial flush, so the next command sees the dispatch's results.
  const auto flush = pm4::EventWrite::CsPartialFlush();
  out.insert(out.end(), flush.begin(), flush.end());
  return patchable;
}

}  // namespace am
