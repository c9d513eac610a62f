// A workgroup sum: 256 work-items (8 waves of 32) load into LDS and halve the active range each step, with a
// workgroup barrier between steps; work-item 0 writes the workgroup's sum.
#include "common.h"

__attribute__((reqd_work_group_size(256, 1, 1))) __kernel void reduce_sum(__global const uint* in,
                                                                          __global uint* partial, uint n) {
  __local uint tile[256];
  uint t = __builtin_amdgcn_workitem_id_x();
  uint i = GLOBAL_ID_X(256);
  tile[t] = i < n ? in[i] : 0;
  WORKGROUP_BARRIER();
  for (uint stride = 128; stride > 0; stride >>= 1) {
    if (t < stride) tile[t] += tile[t + stride];
    WORKGROUP_BARRIER();
  }
  if (t == 0) partial[__builtin_amdgcn_workgroup_id_x()] = tile[0];
}
