// float16: scalar half arithmetic (each statement rounds once to half, so the host can reproduce it), a
// half -> float conversion, and packed half2 arithmetic.
#pragma OPENCL EXTENSION cl_khr_fp16 : enable
#include "common.h"

__attribute__((reqd_work_group_size(64, 1, 1))) __kernel void half_ops(__global const half* a, __global const half* b,
                                                                       __global half* out, __global float* wide,
                                                                       uint n) {
  uint i = GLOBAL_ID_X(64);
  if (i >= n) return;
  half x = a[i], y = b[i];
  half product = x * y;
  half sum = product + x;
  half result = sum > y ? sum : y - x;
  out[i] = result;
  wide[i] = (float)result * 3.0f;
}

__attribute__((reqd_work_group_size(64, 1, 1))) __kernel void half2_ops(__global const half2* a,
                                                                        __global const half2* b,
                                                                        __global half2* out, uint n) {
  uint i = GLOBAL_ID_X(64);
  if (i >= n) return;
  half2 x = a[i], y = b[i];
  half2 product = x * y;
  out[i] = product - y;
}
