// GPU page table entry and directory bits for gfx11 (Navi3x). The single bits and masks are generated from Linux
// 6.12 drivers/gpu/drm/amd/amdgpu/amdgpu_vm.h into am/regs/vm_constants.h; the macros with arguments are here.
#ifndef BAREGPU_AM_REGS_VM_H_
#define BAREGPU_AM_REGS_VM_H_

#include <cstdint>

#include "am/regs/vm_constants.h"

namespace am::regs::vm {

// amdgpu_vm.h AMDGPU_PTE_FRAG(x): the fragment size (log2 of 4 KiB pages) in bits 11:7.
constexpr uint64_t PteFragment(uint64_t log2_pages) { return (log2_pages & 0x1f) << 7; }
constexpr uint64_t PteFragmentOf(uint64_t pte) { return (pte >> 7) & 0x1f; }

// amdgpu_vm.h AMDGPU_PTE_MTYPE_NV10(flags, mtype): the memory type in bits 50:48 (gfx10 and gfx11).
constexpr uint64_t PteWithMtypeNv10(uint64_t pte, uint64_t mtype) {
  return (pte & ~AMDGPU_PTE_MTYPE_NV10_MASK) | ((mtype << 48) & AMDGPU_PTE_MTYPE_NV10_MASK);
}

// amdgpu_vm.h AMDGPU_PDE_BFS(a): a PDE's block fragment size in bits 63:59 (gfx9 to gfx11).
constexpr uint64_t PdeBlockFragmentSize(uint64_t log2_pages) { return log2_pages << 59; }

}  // namespace am::regs::vm

#endif  // BAREGPU_AM_REGS_VM_H_
