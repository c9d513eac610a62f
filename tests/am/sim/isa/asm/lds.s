// LDS and s_barrier across the two waves of a 64-thread workgroup (wave32). s[0:1] = out. Each work-item writes
// LDS[t] = 2t, meets the others at the barrier, then reads LDS[63 - t]; one atomic counter in LDS word 64 counts
// the work-items.
  v_lshlrev_b32 v1, 2, v0                     // t * 4 (v0 = t, 0..63)
  v_lshlrev_b32 v2, 1, v0                     // 2t
  ds_store_b32 v1, v2
  v_mov_b32 v3, 1
  v_mov_b32 v4, 0
  ds_add_u32 v4, v3 offset:256
  s_waitcnt lgkmcnt(0)
  s_barrier
  v_sub_nc_u32 v5, 63, v0
  v_lshlrev_b32 v5, 2, v5
  ds_load_b32 v6, v5                          // 2 (63 - t)
  ds_load_2addr_b32 v[7:8], v4 offset0:64 offset1:1   // words 64 (the count) and 1 (2)
  s_waitcnt lgkmcnt(0)
  global_store_b32 v1, v6, s[0:1]             // row 0 (64 entries): 2 (63 - t)
  global_store_b32 v1, v7, s[0:1] offset:256  // row 1: 64
  global_store_b32 v1, v8, s[0:1] offset:512  // row 2: 2
  s_endpgm
