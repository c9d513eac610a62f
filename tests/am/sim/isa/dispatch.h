// A small kernel launcher for tests: loads a code object into a booted am::Device's VRAM, maps it and the test's
// buffers into context 0's page table (where the MEC queue's VMID 0 looks), and dispatches one kernel through PM4
// on the driver's compute ring (am::KernelDispatch encodes the launch, as for hcq), then waits for a RELEASE_MEM
// fence. hcq/amd is the real launch path; this one stays minimal and readable.
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
#include "am/kernel_dispatch.h"
#include "am/regs/gc.h"
#include "am/regs/gfx_srcid_constants.h"
#include "am/regs/pm4_packets.h"
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
    BAREGPU_ASSIGN_OR_RETURN(DeviceBuffer image,
                             Allocate(CodeBytesWithPrefetchGuard(object.image().size()), /*executable=*/true));
    if (image.va % object.image_alignment() != 0) {
      return absl::InternalError(
          absl::StrFormat("image VA %#x is not %#x-aligned", image.va, object.image_alignment()));
    }
    const std::vector<uint8_t> bytes = object.ImageAt(image.va);  // absolute relocations resolved
    std::memcpy(image.cpu.data(), bytes.data(), bytes.size());
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

    // The dispatch as hcq launches it (am::KernelDispatch): registers, user SGPRs, scratch for every wave slot.
    BAREGPU_ASSIGN_OR_RETURN(KernelDispatch dispatch, KernelDispatch::Create(device_, kernel, image_va));
    if (dispatch.scratch_bytes() != 0) {
      BAREGPU_ASSIGN_OR_RETURN(DeviceBuffer scratch, Allocate(dispatch.scratch_bytes()));
      dispatch.set_scratch(scratch.va);
    }
    std::vector<uint32_t> pm4;
    // Invalidate the shader caches before the kernel reads what the host wrote (gfx_v11_0_emit_mem_sync).
    const auto acquire = regs::pm4::AcquireMem::Encode();
    pm4.insert(pm4.end(), acquire.begin(), acquire.end());
    dispatch.Encode(pm4, kernarg.va, geometry.workgroups, geometry.workgroup_size, ++dispatch_id_);
    if (fence_.size == 0) {
      BAREGPU_ASSIGN_OR_RETURN(fence_, Allocate(4096));
    }
    const uint32_t sequence = ++sequence_;
    AppendFence(pm4, fence_.va, sequence);
    BAREGPU_RETURN_IF_ERROR(device_.gfx().ring().Write(pm4, Gfx::kTimeout));
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
    const auto fence =
        pm4::ReleaseMem::Encode(va, pm4::ReleaseData::kLow32, value, pm4::ReleaseInterrupt::kAfterWriteConfirm);
    p.insert(p.end(), fence.begin(), fence.end());
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
