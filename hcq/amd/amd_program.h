// A kernel of a gfx1100 code object in device memory, with what a dispatch needs from its kernel descriptor
// (amdhsa_kernel_descriptor_t, LLVM AMDGPUUsage "Kernel Descriptor"): the entry address, COMPUTE_PGM_RSRC1/2/3,
// which user SGPRs the kernel expects, LDS and scratch sizes, wave32.
#ifndef BAREGPU_HCQ_AMD_AMD_PROGRAM_H_
#define BAREGPU_HCQ_AMD_AMD_PROGRAM_H_

#include <cstdint>
#include <string>

#include "am/implicit_arguments.h"
#include "hcq/buffer.h"
#include "hcq/program.h"

namespace hcq::amd {

struct KernelSetup {
  uint64_t entry = 0;  // the kernel's first instruction (device address)
  uint32_t rsrc1 = 0, rsrc2 = 0, rsrc3 = 0;
  // The user SGPRs the descriptor enables, in the order the hardware loads them (AMDGPUUsage "Initial Kernel
  // Execution State"): private segment buffer (4), dispatch ptr (2), queue ptr (2), kernarg segment ptr (2),
  // dispatch id (2), flat scratch init (2), private segment size (1).
  bool private_segment_buffer = false, dispatch_ptr = false, queue_ptr = false, kernarg_segment_ptr = false,
       dispatch_id = false, flat_scratch_init = false, private_segment_size = false;
  bool wave32 = true;
  uint32_t private_segment_bytes = 0;  // scratch per work item
  uint32_t group_segment_bytes = 0;    // LDS per workgroup
  // Scratch: COMPUTE_TMPRING_SIZE (WAVES 11:0, WAVESIZE in 256-byte units 26:12) and the buffer that
  // COMPUTE_DISPATCH_SCRATCH_BASE_LO/HI point at (address >> 8); 0 without scratch.
  uint32_t tmpring_size = 0;
  uint64_t scratch_base = 0;
  uint64_t descriptor = 0;  // the kernel descriptor (device address): the dispatch packet's kernel_object
};

class AmdProgram final : public Program {
 public:
  AmdProgram(Device& device, std::string name, uint64_t kernarg_size, KernelSetup setup, am::ImplicitArguments implicit,
             Buffer image, Buffer scratch = Buffer())
      : Program(device, std::move(name), kernarg_size, implicit.size()),
        setup_(setup),
        implicit_(std::move(implicit)),
        image_(std::move(image)),
        scratch_(std::move(scratch)) {}
  ~AmdProgram() override;
  const KernelSetup& setup() const { return setup_; }
  // The hidden arguments and dispatch packet each launch fills.
  const am::ImplicitArguments& implicit() const { return implicit_; }

 private:
  KernelSetup setup_;
  am::ImplicitArguments implicit_;
  Buffer image_;
  Buffer scratch_;
};

}  // namespace hcq::amd

#endif  // BAREGPU_HCQ_AMD_AMD_PROGRAM_H_
