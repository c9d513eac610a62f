// Branch-heavy code: a data-dependent loop (Collatz steps, capped) so lanes of one wave leave it at different
// times, a switch on the input, and a branch on the lane's parity inside it.
#include "common.h"

__attribute__((reqd_work_group_size(64, 1, 1))) __kernel void divergence(__global const uint* in,
                                                                         __global uint* out, uint n) {
  uint i = GLOBAL_ID_X(64);
  if (i >= n) return;
  uint x = in[i];
  uint v = x % 1000 + 1;
  uint steps = 0;
  while (v != 1 && steps < 300) {
    v = (v & 1) ? 3 * v + 1 : v >> 1;
    ++steps;
  }
  uint r;
  switch (x & 3) {
    case 0:
      r = steps * 7;
      break;
    case 1:
      r = (i & 1) ? steps ^ x : steps + (x >> 8);
      break;
    case 2:
      r = x / (steps + 1);
      break;
    default:
      r = steps < 20 ? 0xffffffffu : x - steps;
      break;
  }
  out[i] = r;
}
