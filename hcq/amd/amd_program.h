// A kernel of a gfx1100 code object in device memory: its image, its scratch, and how the MEC launches it
// (am::KernelDispatch: descriptor, user SGPRs, scratch sizing, hidden arguments).
#ifndef BAREGPU_HCQ_AMD_AMD_PROGRAM_H_
#define BAREGPU_HCQ_AMD_AMD_PROGRAM_H_

#include <cstdint>
#include <string>

#include "am/kernel_dispatch.h"
#include "hcq/buffer.h"
#include "hcq/program.h"

namespace hcq::amd {

class AmdProgram final : public Program {
 public:
  AmdProgram(Device& device, std::string name, uint64_t kernarg_size, am::KernelDispatch dispatch, Buffer image,
             Buffer scratch = Buffer(), ProgramMetadata metadata = {})
      : Program(device, std::move(name), kernarg_size, dispatch.implicit().size(), std::move(metadata)),
        dispatch_(std::move(dispatch)),
        image_(std::move(image)),
        scratch_(std::move(scratch)) {}
  ~AmdProgram() override;
  const am::KernelDispatch& dispatch() const { return dispatch_; }
  // The hidden arguments and dispatch packet each launch fills.
  const am::ImplicitArguments& implicit() const { return dispatch_.implicit(); }

 private:
  am::KernelDispatch dispatch_;
  Buffer image_;
  Buffer scratch_;
};

}  // namespace hcq::amd

#endif  // BAREGPU_HCQ_AMD_AMD_PROGRAM_H_
