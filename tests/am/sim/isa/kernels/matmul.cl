// C = A * B (row-major, M x K times K x N, all multiples of 16) in 16x16 tiles staged through LDS. Each product
// accumulates with an explicit fma in k order, which the host reference repeats exactly.
#include "common.h"

#define TILE 16

__attribute__((reqd_work_group_size(TILE, TILE, 1))) __kernel void matmul(__global const float* A,
                                                                          __global const float* B, __global float* C,
                                                                          uint M, uint N, uint K) {
  __local float a_tile[TILE][TILE];
  __local float b_tile[TILE][TILE];
  uint tx = __builtin_amdgcn_workitem_id_x(), ty = __builtin_amdgcn_workitem_id_y();
  uint col = __builtin_amdgcn_workgroup_id_x() * TILE + tx;
  uint row = __builtin_amdgcn_workgroup_id_y() * TILE + ty;
  float acc = 0.0f;
  for (uint k0 = 0; k0 < K; k0 += TILE) {
    a_tile[ty][tx] = A[row * K + k0 + tx];
    b_tile[ty][tx] = B[(k0 + ty) * N + col];
    WORKGROUP_BARRIER();
    for (uint k = 0; k < TILE; ++k) acc = __builtin_fmaf(a_tile[ty][k], b_tile[k][tx], acc);
    WORKGROUP_BARRIER();
  }
  if (row < M) C[row * N + col] = acc;
}
