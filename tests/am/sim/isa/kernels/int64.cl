// 64-bit integer arithmetic: multiply, shifts, signed division, unsigned remainder, signed compare and a rotate.
// The compiler expands 64-bit division inline (there is no runtime library to call).
#include "common.h"

__attribute__((reqd_work_group_size(64, 1, 1))) __kernel void int64_ops(__global const ulong* a,
                                                                        __global const ulong* b, __global ulong* out,
                                                                        uint n) {
  uint i = GLOBAL_ID_X(64);
  if (i >= n) return;
  ulong x = a[i], y = b[i];
  out[4 * i + 0] = x * y + (x >> 7);
  out[4 * i + 1] = (ulong)((long)x / ((long)(y >> 1) | 1));  // divisor positive and odd: no overflow, no zero
  out[4 * i + 2] = x % ((y >> 32) | 1);
  out[4 * i + 3] = (long)x < (long)y ? (x << 13) | (x >> 51) : (x ^ y) - (y << 3);
}
