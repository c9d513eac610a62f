// Shared by the corpus kernels: OpenCL C has no device library here (Debian ships no ROCm device libs), so work-item
// ids and barriers come from clang's AMDGPU builtins (the substitutions REFERENCES.md lists).
#ifndef BAREGPU_TESTS_AM_SIM_ISA_KERNELS_COMMON_H_
#define BAREGPU_TESTS_AM_SIM_ISA_KERNELS_COMMON_H_

// Every kernel fixes its workgroup size with reqd_work_group_size, so a global index needs no dispatch packet.
#define GLOBAL_ID_X(wg_size) (__builtin_amdgcn_workgroup_id_x() * (wg_size) + __builtin_amdgcn_workitem_id_x())

// barrier(CLK_LOCAL_MEM_FENCE): the workgroup release fence, the hardware barrier, the acquire fence.
#define WORKGROUP_BARRIER()                                \
  do {                                                     \
    __builtin_amdgcn_fence(__ATOMIC_RELEASE, "workgroup"); \
    __builtin_amdgcn_s_barrier();                          \
    __builtin_amdgcn_fence(__ATOMIC_ACQUIRE, "workgroup"); \
  } while (0)

#endif  // BAREGPU_TESTS_AM_SIM_ISA_KERNELS_COMMON_H_
