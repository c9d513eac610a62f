// am::KernelDispatch: how the MEC launches one kernel of a gfx1100 code object loaded at a device address — what
// the kernel descriptor (amdhsa_kernel_descriptor_t, LLVM AMDGPUUsage "Kernel Descriptor") asks of a dispatch, the
// scratch it needs, the hidden arguments a launch fills (am::ImplicitArguments), and the PM4 that launches it.
// HCQ (hcq/amd) and the test launcher both dispatch through it.
//
// The register set and its order follow tinygrad's AMD backend (AMDComputeQueue.exec): program address,
// RSRC1/2 (with the LDS granules the CP takes from the dispatch, not from the descriptor), RSRC3, TMPRING_SIZE and
// the dispatch scratch base (gfx11's architected flat scratch), USER_DATA, RESOURCE_LIMITS, START/NUM_THREAD,
// DISPATCH_DIRECT with an initiator, then a CS partial flush. User SGPRs are laid out in AMDGPUUsage's "SGPR
// Register Set Up Order".
#ifndef BAREGPU_AM_KERNEL_DISPATCH_H_
#define BAREGPU_AM_KERNEL_DISPATCH_H_

#include <array>
#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "am/code_object.h"
#include "am/implicit_arguments.h"

namespace am {

class Device;

// The SQ prefetches instructions past the one it executes: with SH_MEM_CONFIG.INITIAL_INST_PREFETCH 3 (what
// gfx_v11_0 programs) up to three instruction cache lines of 128 bytes past the line of the last instruction, so
// the pages there must be mapped executable too. LLVM pads every gfx11 code object's text the same way
// (AMDGPUTargetAsmStreamer::EmitCodeEnd: align to a 128-byte line, then 3 lines of s_code_end, "to support
// prefetch mode 3"); images from other producers may not carry it, so the loader maps it after the image.
inline constexpr uint64_t kInstructionCacheLineBytes = 128;
inline constexpr uint64_t kInstructionPrefetchLines = 3;
// The bytes to map executable for a code image of `image_bytes`: the image up to its last line, plus the guard.
constexpr uint64_t CodeBytesWithPrefetchGuard(uint64_t image_bytes) {
  return (image_bytes + kInstructionCacheLineBytes - 1) / kInstructionCacheLineBytes * kInstructionCacheLineBytes +
         kInstructionPrefetchLines * kInstructionCacheLineBytes;
}

class KernelDispatch {
 public:
  // COMPUTE_TMPRING_SIZE.WAVESIZE counts 256-byte units of scratch per wave (gfx11).
  static constexpr uint64_t kScratchGranule = 256;
  // Wave slots per CU that may hold a scratch-using wave (tinygrad sizes scratch for 32 per CU as well).
  static constexpr uint32_t kScratchWavesPerCu = 32;

  // The dispatch of `kernel`, whose code object's image is at `image_va`, on `device` (register addresses from its
  // discovered bases, scratch sized for its CUs). Refuses what the MEC cannot run (LDS beyond a workgroup's,
  // scratch beyond WAVESIZE, user SGPRs gfx11 does not provide).
  static absl::StatusOr<KernelDispatch> Create(Device& device, const CodeObject::Kernel& kernel, uint64_t image_va);

  // Scratch memory a launch needs (every wave slot of the device gets a private segment); 0 without scratch.
  uint64_t scratch_bytes() const { return scratch_bytes_; }
  // Where that scratch memory is (a device address, 256-byte aligned).
  void set_scratch(uint64_t va);
  // Where the code object's image is (Create's image_va may be 0 to check a kernel before loading it).
  void set_image(uint64_t image_va);

  const ImplicitArguments& implicit() const { return implicit_; }
  uint64_t descriptor_va() const { return descriptor_va_; }
  uint64_t entry_va() const { return entry_va_; }
  bool wave32() const { return wave32_; }

  // Where in the encoded launch the values a caller may patch later sit (offsets in dwords from the start of what
  // Encode appended): the work-items per workgroup and the workgroup counts, x, y, z.
  struct Patchable {
    std::array<uint32_t, 3> workgroup_size;
    std::array<uint32_t, 3> workgroups;
  };
  // Appends the launch's PM4 to `out` (its capacity reused: no allocation once warm). `kernarg_va` is the launch's
  // argument memory (the dispatch packet, for kernels that read one, at implicit().dispatch_packet_offset()).
  Patchable Encode(std::vector<uint32_t>& out, uint64_t kernarg_va, const std::array<uint32_t, 3>& workgroups,
                   const std::array<uint32_t, 3>& workgroup_size, uint64_t dispatch_id = 0) const;

 private:
  KernelDispatch() = default;

  // Absolute dword addresses of the COMPUTE_* registers a launch writes.
  struct Registers {
    uint32_t pgm_lo, rsrc1, rsrc3, tmpring, scratch_lo, user_data, limits, start;
  };
  Registers registers_{};
  uint64_t entry_offset_ = 0, descriptor_offset_ = 0;  // in the image
  uint64_t entry_va_ = 0, descriptor_va_ = 0;
  uint32_t rsrc1_ = 0, rsrc2_ = 0, rsrc3_ = 0, tmpring_size_ = 0;
  uint64_t scratch_base_ = 0, scratch_bytes_ = 0;
  uint32_t scratch_waves_ = 0, scratch_wave_units_ = 0;
  bool wave32_ = true;
  // User SGPRs the descriptor enables (AMDGPUUsage order).
  bool dispatch_ptr_ = false, queue_ptr_ = false, kernarg_ptr_ = false, dispatch_id_ = false,
       private_segment_size_ = false;
  uint32_t private_segment_bytes_ = 0;
  ImplicitArguments implicit_;
};

}  // namespace am

#endif  // BAREGPU_AM_KERNEL_DISPATCH_H_
