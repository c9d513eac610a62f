// sizeof/offsetof of the kernel structures the project redefines, as gcc lays them out from the Linux 6.12
// amdgpu headers (generated into am/regs/kernel_layouts.cc by tools/regs/generate.py). Tests check the
// project's own definitions against them.
#ifndef BAREGPU_AM_REGS_KERNEL_LAYOUTS_H_
#define BAREGPU_AM_REGS_KERNEL_LAYOUTS_H_

#include <cstddef>

#include "absl/types/span.h"

namespace am::regs {

struct KernelStruct {
  const char* type;    // as C names it: "struct v11_compute_mqd", "binary_header" (a typedef)
  const char* header;  // under drivers/gpu/drm/amd/
  size_t size;
};

struct KernelMember {
  const char* type;
  const char* member;  // members of anonymous unions/structs included; bitfields left out
  size_t offset;
  size_t size;  // 0 for a flexible array
};

absl::Span<const KernelStruct> KernelStructs();
absl::Span<const KernelMember> KernelMembers();

}  // namespace am::regs

#endif  // BAREGPU_AM_REGS_KERNEL_LAYOUTS_H_
