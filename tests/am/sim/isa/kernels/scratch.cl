// A private array indexed by data: the compiler cannot keep it in registers, so it lives in scratch memory
// (flat scratch, architected on gfx11). Every element is written before the dynamic reads.
#include "common.h"

#define SLOTS 48

__attribute__((reqd_work_group_size(64, 1, 1))) __kernel void scratch(__global const uint* in, __global uint* out,
                                                                      uint n) {
  uint i = GLOBAL_ID_X(64);
  if (i >= n) return;
  uint x = in[i];
  uint slots[SLOTS];
  for (uint j = 0; j < SLOTS; ++j) slots[j] = x * (j + 1) ^ (j << 24);
  uint first = x % SLOTS, second = (x >> 8) % SLOTS;
  slots[first] += slots[second];
  out[i] = slots[first] ^ slots[(first + second) % SLOTS];
}
