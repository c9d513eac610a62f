// A 64-bin histogram: each workgroup counts into LDS with LDS atomics, then adds its bins into the global
// histogram with global atomics; the largest value seen goes to *max_value through a global atomic max.
#include "common.h"

#define BINS 64
#define PER_ITEM 4

__attribute__((reqd_work_group_size(128, 1, 1))) __kernel void histogram(__global const uint* in,
                                                                         __global uint* bins,
                                                                         __global uint* max_value, uint n) {
  __local uint local_bins[BINS];
  uint t = __builtin_amdgcn_workitem_id_x();
  if (t < BINS) local_bins[t] = 0;
  WORKGROUP_BARRIER();
  uint first = (__builtin_amdgcn_workgroup_id_x() * 128 * PER_ITEM) + t;
  uint largest = 0;
  for (uint j = 0; j < PER_ITEM; ++j) {
    uint i = first + j * 128;
    if (i < n) {
      uint v = in[i];
      __atomic_fetch_add(&local_bins[v % BINS], 1u, __ATOMIC_RELAXED);
      largest = v > largest ? v : largest;
    }
  }
  __atomic_fetch_max(max_value, largest, __ATOMIC_RELAXED);
  WORKGROUP_BARRIER();
  if (t < BINS) __atomic_fetch_add(&bins[t], local_bins[t], __ATOMIC_RELAXED);
}
