// A small kernel launcher for tests: loads a code object into a booted am::Device's VRAM, maps it and the test's
// buffers into context 0's page table (where the MEC queue's VMID 0 looks), and dispatches one kernel through PM4
// on the driver's compute ring, then waits for a RELEASE_MEM fence. hcq/amd implements the real launch path; this
// one stays minimal and readable.
//
// The register set and its order follow tinygrad's AMD backend (runtime/ops_amd.py, AMDComputeQueue.exec): program
// address, RSRC1/2 (with the LDS granules the CP takes from the dispatch), RSRC3, TMPRING_SIZE and the dispatch
// scratch base (gfx11's architected flat scratch), USER_DATA, RESOURCE_LIMITS, START/NUM_THREAD, DISPATCH_DIRECT
// with an initiator, then a CS partial flush. User SGPRs are laid out in AMDGPUUsage's "SGPR Register Set Up Order".
#ifndef BAREGPU_TESTS_AM_SIM_ISA_DISPATCH_H_
#define BAREGPU_TESTS_AM_SIM_ISA_DISPATCH_H_

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "am/code_object.h"
#include "am/device.h"
#include "am/gfx.h"
#include "am/ih.h"
#include "am/implicit_arguments.h"
#include "am/regs/database.h"
#include "am/regs/gc.h"
#include "am/regs/gfx_srcid_constants.h"
#include "am/regs/pm4.h"
#include "base/status_macros.h"

namespace am::sim::testing {

// VRAM mapped at a GPU virtual address, with the CPU's view of it through BAR0.
struct DeviceBuffer {
  uint64_t vram = 0;
  uint64_t va = 0;
  uint64_t size = 0;
  std::span<uint8_t> cpu;

  template <typename T>
  std::span<T> as() const {
    return {reinterpret_cast<T*>(cpu.data()), cpu.size() / sizeof(T)};
  }
};

struct LaunchGeometry {
  std::array<uint32_t, 3> workgroups{1, 1, 1};
  std::array<uint32_t, 3> workgroup_size{1, 1, 1};
};

// Everything one dispatch programs, in device terms.
struct DispatchSetup {
  uint64_t program_address = 0;  // the kernel's first instruction (256-byte aligned)
  uint32_t rsrc1 = 0, rsrc2 = 0, rsrc3 = 0;
  uint32_t tmpring_size = 0;
  uint64_t scratch_base = 0;
  std::vector<uint32_t> user_sgprs;
  LaunchGeometry geometry;
  bool wave32 = true;
};

// SET_SH_REG of consecutive registers starting at `first` (a GC segment-0 typed register).
template <typename First>
void AppendSetShReg(const regs::IpBases& bases, std::vector<uint32_t>& pm4, std::initializer_list<uint32_t> values) {
  const uint64_t address = *bases.Resolve(First::kIp, 0, First::kSegment, First::kOffset);
  pm4.push_back(regs::pm4::Packet3(regs::pm4::PACKET3_SET_SH_REG, static_cast<uint32_t>(values.size())));
  pm4.push_back(static_cast<uint32_t>(address - regs::pm4::PACKET3_SET_SH_REG_START));
  pm4.insert(pm4.end(), values);
}

inline absl::StatusOr<std::vector<uint32_t>> BuildDispatchPackets(const regs::IpBases& bases,
                                                                  const DispatchSetup& setup) {
  namespace gc = regs::gc;
  namespace pm4 = regs::pm4;
  std::vector<uint32_t> p;
  // Invalidate the shader caches before the kernel reads what the host wrote (gfx_v11_0_emit_mem_sync's packet).
  p.insert(p.end(), {pm4::Packet3(pm4::PACKET3_ACQUIRE_MEM, 6), 0, 0xffffffff, 0xffffff, 0, 0, 0x0000000a,
                     pm4::PACKET3_ACQUIRE_MEM_GCR_CNTL_GLK_INV(1) | pm4::PACKET3_ACQUIRE_MEM_GCR_CNTL_GLV_INV(1) |
                         pm4::PACKET3_ACQUIRE_MEM_GCR_CNTL_GL1_INV(1) | pm4::PACKET3_ACQUIRE_MEM_GCR_CNTL_GL2_INV(1)});
  AppendSetShReg<gc::COMPUTE_PGM_LO>(bases, p,
                                     {static_cast<uint32_t>(setup.program_address >> 8),
                                      gc::COMPUTE_PGM_HI{}.data(setup.program_address >> 40).raw()});
  AppendSetShReg<gc::COMPUTE_PGM_RSRC1>(bases, p, {setup.rsrc1, setup.rsrc2});
  AppendSetShReg<gc::COMPUTE_PGM_RSRC3>(bases, p, {setup.rsrc3});
  AppendSetShReg<gc::COMPUTE_TMPRING_SIZE>(bases, p, {setup.tmpring_size});
  // COMPUTE_DISPATCH_SCRATCH_BASE_LO/HI are not typed registers yet: resolved by name.
  BAREGPU_ASSIGN_OR_RETURN(uint64_t scratch_register,
                           regs::ResolveAddress(bases, "COMPUTE_DISPATCH_SCRATCH_BASE_LO", regs::Ip::kGc));
  p.insert(p.end(), {pm4::Packet3(pm4::PACKET3_SET_SH_REG, 2),
                     static_cast<uint32_t>(scratch_register - pm4::PACKET3_SET_SH_REG_START),
                     static_cast<uint32_t>(setup.scratch_base >> 8), static_cast<uint32_t>(setup.scratch_base >> 40)});
  if (setup.user_sgprs.size() > 16) return absl::InvalidArgumentError("more than 16 user SGPRs");
  if (!setup.user_sgprs.empty()) {
    const uint64_t user_data =
        *bases.Resolve(regs::Ip::kGc, 0, gc::COMPUTE_USER_DATA_0::kSegment, gc::COMPUTE_USER_DATA_0::kOffset);
    p.push_back(pm4::Packet3(pm4::PACKET3_SET_SH_REG, static_cast<uint32_t>(setup.user_sgprs.size())));
    p.push_back(static_cast<uint32_t>(user_data - pm4::PACKET3_SET_SH_REG_START));
    p.insert(p.end(), setup.user_sgprs.begin(), setup.user_sgprs.end());
  }
  AppendSetShReg<gc::COMPUTE_RESOURCE_LIMITS>(bases, p, {0});
  const auto& size = setup.geometry.workgroup_size;
  AppendSetShReg<gc::COMPUTE_START_X>(bases, p,
                                      {0, 0, 0, gc::COMPUTE_NUM_THREAD_X{}.num_thread_full(size[0]).raw(),
                                       gc::COMPUTE_NUM_THREAD_Y{}.num_thread_full(size[1]).raw(),
                                       gc::COMPUTE_NUM_THREAD_Z{}.num_thread_full(size[2]).raw()});
  const auto& groups = setup.geometry.workgroups;
  p.insert(p.end(), {pm4::Packet3(pm4::PACKET3_DISPATCH_DIRECT, 3), groups[0], groups[1], groups[2],
                     gc::COMPUTE_DISPATCH_INITIATOR{}
                         .compute_shader_en(1)
                         .force_start_at_000(1)
                         .cs_w32_en(setup.wave32 ? 1 : 0)
                         .raw()});
  p.insert(p.end(),
           {pm4::Packet3(pm4::PACKET3_EVENT_WRITE, 0), pm4::EVENT_TYPE(pm4::CS_PARTIAL_FLUSH) | pm4::EVENT_INDEX(4)});
  return p;
}

class KernelLauncher {
 public:
  explicit KernelLauncher(Device& device) : device_(device) {}
  ~KernelLauncher() {
    for (const DeviceBuffer& b : buffers_) {
      (void)device_.memory().Unmap(b.va);
      (void)device_.memory().FreeVram(b.vram);
    }
  }

  absl::StatusOr<DeviceBuffer> Allocate(uint64_t size, bool executable = false) {
    const uint64_t rounded = std::max<uint64_t>((size + 4095) & ~uint64_t{4095}, 4096);
    DeviceBuffer b;
    b.size = rounded;
    BAREGPU_ASSIGN_OR_RETURN(b.vram, device_.memory().AllocVram(rounded, 4096));
    BAREGPU_ASSIGN_OR_RETURN(b.va, device_.memory().MapVram(b.vram, rounded, {.executable = executable}));
    BAREGPU_ASSIGN_OR_RETURN(b.cpu, device_.memory().CpuView(b.vram, rounded));
    BAREGPU_RETURN_IF_ERROR(device_.memory().Flush());
    buffers_.push_back(b);
    return b;
  }

  // Copies the code object's image into VRAM (executable pages) and returns its base address.
  absl::StatusOr<uint64_t> Load(const CodeObject& object) {
    BAREGPU_ASSIGN_OR_RETURN(DeviceBuffer image, Allocate(object.image().size(), /*executable=*/true));
    if (image.va % object.image_alignment() != 0) {
      return absl::InternalError(
          absl::StrFormat("image VA %#x is not %#x-aligned", image.va, object.image_alignment()));
    }
    std::memcpy(image.cpu.data(), object.image().data(), object.image().size());
    return image.va;
  }

  // Dispatches `kernel` of a code object loaded at `image_va` with `args` as its explicit kernel arguments (the
  // hidden arguments of code object V5 and the dispatch packet filled as am::ImplicitArguments lays them out), and
  // waits for it. A device error (IH event other than the fence's EOP) ends the wait with an error naming it.
  absl::Status Launch(uint64_t image_va, const CodeObject::Kernel& kernel, std::span<const uint8_t> args,
                      const LaunchGeometry& geometry, absl::Duration timeout = absl::Seconds(30)) {
    const KernelDescriptor& d = kernel.descriptor;
    if (args.size() > d.kernarg_size) {
      return absl::InvalidArgumentError(absl::StrFormat("%d bytes of arguments for kernel %s, whose kernarg_size is %d",
                                                        args.size(), kernel.name, d.kernarg_size));
    }
    const ImplicitArguments implicit = ImplicitArguments::For(kernel);
    BAREGPU_ASSIGN_OR_RETURN(DeviceBuffer kernarg, Allocate(std::max<uint64_t>(implicit.size(), 16)));
    std::memcpy(kernarg.cpu.data(), args.data(), args.size());
    implicit.Write(kernarg.cpu, kernarg.va, image_va + kernel.descriptor_offset, geometry.workgroups,
                   geometry.workgroup_size);

    uint64_t total_waves = 1;
    uint32_t threads = 1;
    for (int i = 0; i < 3; ++i) {
      total_waves *= geometry.workgroups[i];
      threads *= geometry.workgroup_size[i];
    }
    total_waves *= (threads + kernel.wave_size() - 1) / kernel.wave_size();

    DispatchSetup setup;
    setup.program_address = image_va + kernel.entry_offset;
    setup.rsrc1 = d.compute_pgm_rsrc1;
    setup.rsrc2 = regs::gc::COMPUTE_PGM_RSRC2::FromRaw(d.compute_pgm_rsrc2)
                      .lds_size(LdsSizeGranules(d.group_segment_fixed_size))
                      .raw();
    setup.rsrc3 = d.compute_pgm_rsrc3;
    setup.geometry = geometry;
    setup.wave32 = kernel.wave32();
    if (d.enable_private_segment() && d.private_segment_fixed_size > 0) {
      // One slot per wave of the dispatch; WAVESIZE counts 256-byte units per wave (tinygrad's
      // _ensure_has_local_memory, gfx10+ granularity).
      const uint64_t wave_units = (uint64_t{d.private_segment_fixed_size} * kernel.wave_size() + 255) / 256;
      const uint64_t waves = std::min<uint64_t>(total_waves, 0xfff);
      BAREGPU_ASSIGN_OR_RETURN(DeviceBuffer scratch, Allocate(waves * wave_units * 256));
      setup.scratch_base = scratch.va;
      setup.tmpring_size =
          regs::gc::COMPUTE_TMPRING_SIZE{}.waves(waves).wavesize(static_cast<uint32_t>(wave_units)).raw();
    }
    // User SGPRs in AMDGPUUsage's order. gfx1100 has architected flat scratch: no private segment buffer and no
    // flat scratch init. There is no AQL queue: the queue pointer is 0, as hcq's launches give it (code object V4
    // kernels at -O0 ask for it without reading through it; one that did would fault, decoded).
    const uint64_t packet_va = kernarg.va + implicit.dispatch_packet_offset();
    auto push64 = [&](uint64_t v) {
      setup.user_sgprs.push_back(static_cast<uint32_t>(v));
      setup.user_sgprs.push_back(static_cast<uint32_t>(v >> 32));
    };
    for (uint16_t unsupported :
         {KernelDescriptor::kEnableSgprPrivateSegmentBuffer, KernelDescriptor::kEnableSgprFlatScratchInit}) {
      if (d.has(unsupported)) {
        return absl::UnimplementedError(
            absl::StrFormat("kernel %s asks for user SGPR property %#x, which this launcher does not provide",
                            kernel.name, unsupported));
      }
    }
    if (d.has(KernelDescriptor::kEnableSgprDispatchPtr)) push64(packet_va);
    if (d.has(KernelDescriptor::kEnableSgprQueuePtr)) push64(0);
    if (d.has(KernelDescriptor::kEnableSgprKernargSegmentPtr)) push64(kernarg.va);
    if (d.has(KernelDescriptor::kEnableSgprDispatchId)) push64(++dispatch_id_);
    if (d.has(KernelDescriptor::kEnableSgprPrivateSegmentSize))
      setup.user_sgprs.push_back(d.private_segment_fixed_size);

    BAREGPU_ASSIGN_OR_RETURN(std::vector<uint32_t> pm4, BuildDispatchPackets(device_.bases(), setup));
    if (fence_.size == 0) {
      BAREGPU_ASSIGN_OR_RETURN(fence_, Allocate(4096));
    }
    const uint32_t sequence = ++sequence_;
    AppendFence(pm4, fence_.va, sequence);
    BAREGPU_RETURN_IF_ERROR(device_.gfx().Submit(pm4));
    return WaitForFence(sequence, kernel.name, timeout);
  }

  // Every IH event seen while waiting (EOP fences included).
  const std::vector<IhEvent>& events() const { return events_; }
  // The fence value the last launch asked for, and what the fence holds now.
  uint32_t last_sequence() const { return sequence_; }
  uint32_t fence_value() const {
    return std::atomic_ref<uint32_t>(*reinterpret_cast<uint32_t*>(fence_.cpu.data())).load();
  }

 private:
  static void AppendFence(std::vector<uint32_t>& p, uint64_t va, uint32_t value) {
    namespace pm4 = regs::pm4;
    p.insert(p.end(), {pm4::Packet3(pm4::PACKET3_RELEASE_MEM, 6),
                       pm4::PACKET3_RELEASE_MEM_EVENT_TYPE(pm4::CACHE_FLUSH_AND_INV_TS_EVENT) |
                           pm4::PACKET3_RELEASE_MEM_EVENT_INDEX(5),
                       pm4::PACKET3_RELEASE_MEM_DATA_SEL(1) | pm4::PACKET3_RELEASE_MEM_INT_SEL(2),
                       static_cast<uint32_t>(va), static_cast<uint32_t>(va >> 32), value, 0, 0});
  }

  absl::Status WaitForFence(uint32_t sequence, absl::string_view kernel, absl::Duration timeout) {
    const absl::Time deadline = absl::Now() + timeout;
    while (true) {
      const bool landed = fence_value() == sequence;
      std::vector<std::string> errors;
      for (IhEvent& event : device_.ih().Drain()) {
        if (event.source_id != regs::ih::GFX_11_0_0__SRCID__CP_EOP_INTERRUPT) errors.push_back(event.description);
        events_.push_back(std::move(event));
      }
      if (!errors.empty()) {
        return absl::AbortedError(absl::StrFormat("dispatch of %s stopped: %s", kernel, absl::StrJoin(errors, "; ")));
      }
      if (landed) return absl::OkStatus();
      if (absl::Now() > deadline) {
        return absl::DeadlineExceededError(
            absl::StrFormat("dispatch of %s: the fence (%d) never landed within %s; it reads %d", kernel, sequence,
                            absl::FormatDuration(timeout), fence_value()));
      }
      absl::SleepFor(absl::Microseconds(100));
    }
  }

  Device& device_;
  std::vector<DeviceBuffer> buffers_;
  DeviceBuffer fence_;
  uint32_t sequence_ = 0;
  uint64_t dispatch_id_ = 0;
  std::vector<IhEvent> events_;
};

}  // namespace am::sim::testing

#endif  // BAREGPU_TESTS_AM_SIM_ISA_DISPATCH_H_
