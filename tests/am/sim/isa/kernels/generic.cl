// Generic pointers to __local and __private memory: the callees take unqualified (generic, OpenCL 2.0) pointers,
// so the caller converts its LDS and private addresses into flat ones with the aperture bases (src_shared_base,
// src_private_base) and the callees access them with FLAT instructions.
#include "common.h"

__attribute__((noinline)) void put(uint* p, uint i, uint v) { p[i] = v; }
__attribute__((noinline)) uint get(const uint* p, uint i) { return p[i]; }

__attribute__((reqd_work_group_size(64, 1, 1))) __kernel void generic_pointers(__global const uint* in,
                                                                               __global uint* out, uint n) {
  __local uint tile[64];
  uint priv[4];
  uint t = __builtin_amdgcn_workitem_id_x();
  uint i = GLOBAL_ID_X(64);
  uint x = i < n ? in[i] : 0;
  put(tile, t, x * 3 + 1);
  for (uint j = 0; j < 4; ++j) put(priv, j, x ^ (j << 8));
  WORKGROUP_BARRIER();
  if (i < n) out[i] = get(tile, 63 - t) + get(priv, x & 3);
}
