// c = a + b, one element per work-item; the last workgroup is partly masked off by the bounds check.
#include "common.h"

__attribute__((reqd_work_group_size(64, 1, 1))) __kernel void vector_add(__global const float* a,
                                                                         __global const float* b, __global float* c,
                                                                         uint n) {
  uint i = GLOBAL_ID_X(64);
  if (i < n) c[i] = a[i] + b[i];
}
