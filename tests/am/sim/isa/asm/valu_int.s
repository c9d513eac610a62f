// Vector integer operations, one wave32, v0 = lane id l; row k of out[] (s[0:1]) holds out[k * 32 + l].
  v_lshlrev_b32 v10, 2, v0              // byte offset of lane l
  v_mad_u32_u24 v1, v0, 3, 5            // row 0: 3l + 5
  global_store_b32 v10, v1, s[0:1]
  v_subrev_nc_u32 v1, 10, v0            // row 1: l - 10
  global_store_b32 v10, v1, s[0:1] offset:128
  v_add_nc_u32 v2, 1, v0
  v_mul_hi_u32 v1, v2, 0x80000000       // row 2: (l + 1) / 2
  global_store_b32 v10, v1, s[0:1] offset:256
  v_cmp_gt_u32 vcc_lo, 16, v0
  v_mov_b32 v3, 111
  v_cndmask_b32 v1, 64, v3, vcc_lo      // row 3: l < 16 ? 111 : 64
  global_store_b32 v10, v1, s[0:1] offset:384
  v_add_co_u32 v4, vcc_lo, -1, v0       // 0xffffffff + l
  v_add_co_ci_u32 v5, vcc_lo, 0, 0, vcc_lo // carry: l > 0
  global_store_b32 v10, v5, s[0:1] offset:512   // row 4
  v_lshlrev_b32 v6, 4, v0
  v_bfe_i32 v1, v6, 4, 3                // row 5: bits 2:0 of l, sign-extended
  global_store_b32 v10, v1, s[0:1] offset:640
  v_mov_b32 v1, 0
  s_mov_b32 s10, exec_lo
  v_cmpx_gt_u32 8, v0                   // only lanes l < 8 stay active
  v_mov_b32 v1, 77
  s_mov_b32 exec_lo, s10
  global_store_b32 v10, v1, s[0:1] offset:768   // row 6: l < 8 ? 77 : 0
  v_readlane_b32 s11, v0, 5
  v_mov_b32 v1, 0
  v_writelane_b32 v1, s11, 9            // row 7: lane 9 gets 5, others 0
  global_store_b32 v10, v1, s[0:1] offset:896
  v_mad_u64_u32 v[2:3], null, v0, 0x10000000, 7   // l * 2^28 + 7
  global_store_b32 v10, v3, s[0:1] offset:1024  // row 8: high dword = l >> 4
  v_lshlrev_b64 v[2:3], 31, v[0:1]      // v1 is 0 here except lane 9 (5)
  global_store_b32 v10, v3, s[0:1] offset:1152  // row 9: (v1 << 31 | l >> 1) high dword
  v_mbcnt_lo_u32_b32 v1, -1, 0          // row 10: l (lanes below)
  global_store_b32 v10, v1, s[0:1] offset:1280
  v_mov_b32_dpp v1, v0 quad_perm:[1,0,3,2] row_mask:0xf bank_mask:0xf   // row 11: l ^ 1
  global_store_b32 v10, v1, s[0:1] offset:1408
  s_endpgm
