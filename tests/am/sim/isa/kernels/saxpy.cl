// y = a * x + y with one rounding (an explicit fma, so the host reference can match bit for bit). The float
// argument first puts a pointer at kernarg offset 8 (alignment padding after a 4-byte value).
#include "common.h"

__attribute__((reqd_work_group_size(128, 1, 1))) __kernel void saxpy(float a, __global const float* x,
                                                                     __global float* y, uint n) {
  uint i = GLOBAL_ID_X(128);
  if (i < n) y[i] = __builtin_fmaf(a, x[i], y[i]);
}
