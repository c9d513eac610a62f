// The interpreter's fast paths (FastValu, whole-dword global/flat accesses) against its general path: every
// operation the fast path takes, on VGPR, SGPR, inline-constant and literal sources, under a full EXEC and
// under the partial one in s20, in one wave32. executor_test runs it with and without the fast paths and
// compares out[] bit for bit. s[0:1]: out, one row of 32 dwords per result (out[row * 32 + l]); s[2:3]: in,
// 160 bytes per lane (lane 26 starts the second page; the loads at offset 84 straddle it in lane 25).
// Lane l loads its first 8 dwords into v2..v9; v1 = 160l, v10 = 4l; s22 is the masks' old value.
.macro out reg
  global_store_b32 v10, \reg, s[0:1]
  s_add_u32 s0, s0, 128
  s_addc_u32 s1, s1, 0
.endm
// The destination's old value (kept in lanes EXEC leaves out), then the partial (or full) EXEC.
.macro begin
  v_mov_b32 v11, v9
  v_mov_b32 v12, v8
  v_mov_b32 v13, v7
  s_mov_b32 vcc_lo, s22
  s_mov_b32 s6, s22
  s_mov_b32 s8, s22
  s_mov_b32 exec_lo, s26
.endm
.macro end
  s_mov_b32 exec_lo, -1
.endm
// A mask as lane values: its low dword in every lane (and its high dword in the next row in wave64).
.macro out_mask lo, hi
  v_mov_b32 v14, \lo
  out v14
.endm
  v_lshlrev_b32 v10, 2, v0
  v_mul_u32_u24 v1, 0xa0, v0
  global_load_b128 v[2:5], v1, s[2:3]
  global_load_b128 v[6:9], v1, s[2:3] offset:16
  s_waitcnt vmcnt(0)
  s_mov_b32 s20, 0x9f3c5a61
  s_mov_b32 s22, 0x5ac3e1f0
  s_mov_b32 s4, 0x89abcdef
  s_mov_b32 s5, 0x7f7fffff
.macro valu
  begin
  v_add_nc_u32 v11, v2, v3
  end
  out v11
  begin
  v_add_nc_u32 v11, s4, v3
  end
  out v11
  begin
  v_add_nc_u32 v11, -7, v3
  end
  out v11
  begin
  v_add_nc_u32 v11, 0x12345678, v3
  end
  out v11
  begin
  v_add_nc_u32_e64 v11, v2, s4
  end
  out v11
  begin
  v_sub_nc_u32 v11, v2, v3
  end
  out v11
  begin
  v_sub_nc_u32 v11, s4, v3
  end
  out v11
  begin
  v_sub_nc_u32 v11, -7, v3
  end
  out v11
  begin
  v_sub_nc_u32 v11, 0x12345678, v3
  end
  out v11
  begin
  v_sub_nc_u32_e64 v11, v2, s4
  end
  out v11
  begin
  v_subrev_nc_u32 v11, v2, v3
  end
  out v11
  begin
  v_subrev_nc_u32 v11, s4, v3
  end
  out v11
  begin
  v_subrev_nc_u32 v11, -7, v3
  end
  out v11
  begin
  v_subrev_nc_u32 v11, 0x12345678, v3
  end
  out v11
  begin
  v_subrev_nc_u32_e64 v11, v2, s4
  end
  out v11
  begin
  v_and_b32 v11, v2, v3
  end
  out v11
  begin
  v_and_b32 v11, s4, v3
  end
  out v11
  begin
  v_and_b32 v11, -7, v3
  end
  out v11
  begin
  v_and_b32 v11, 0x12345678, v3
  end
  out v11
  begin
  v_and_b32_e64 v11, v2, s4
  end
  out v11
  begin
  v_or_b32 v11, v2, v3
  end
  out v11
  begin
  v_or_b32 v11, s4, v3
  end
  out v11
  begin
  v_or_b32 v11, -7, v3
  end
  out v11
  begin
  v_or_b32 v11, 0x12345678, v3
  end
  out v11
  begin
  v_or_b32_e64 v11, v2, s4
  end
  out v11
  begin
  v_xor_b32 v11, v2, v3
  end
  out v11
  begin
  v_xor_b32 v11, s4, v3
  end
  out v11
  begin
  v_xor_b32 v11, -7, v3
  end
  out v11
  begin
  v_xor_b32 v11, 0x12345678, v3
  end
  out v11
  begin
  v_xor_b32_e64 v11, v2, s4
  end
  out v11
  begin
  v_lshlrev_b32 v11, v2, v3
  end
  out v11
  begin
  v_lshlrev_b32 v11, s4, v3
  end
  out v11
  begin
  v_lshlrev_b32 v11, -7, v3
  end
  out v11
  begin
  v_lshlrev_b32 v11, 0x12345678, v3
  end
  out v11
  begin
  v_lshlrev_b32_e64 v11, v2, s4
  end
  out v11
  begin
  v_lshrrev_b32 v11, v2, v3
  end
  out v11
  begin
  v_lshrrev_b32 v11, s4, v3
  end
  out v11
  begin
  v_lshrrev_b32 v11, -7, v3
  end
  out v11
  begin
  v_lshrrev_b32 v11, 0x12345678, v3
  end
  out v11
  begin
  v_lshrrev_b32_e64 v11, v2, s4
  end
  out v11
  begin
  v_ashrrev_i32 v11, v2, v3
  end
  out v11
  begin
  v_ashrrev_i32 v11, s4, v3
  end
  out v11
  begin
  v_ashrrev_i32 v11, -7, v3
  end
  out v11
  begin
  v_ashrrev_i32 v11, 0x12345678, v3
  end
  out v11
  begin
  v_ashrrev_i32_e64 v11, v2, s4
  end
  out v11
  begin
  v_min_u32 v11, v2, v3
  end
  out v11
  begin
  v_min_u32 v11, s4, v3
  end
  out v11
  begin
  v_min_u32 v11, -7, v3
  end
  out v11
  begin
  v_min_u32 v11, 0x12345678, v3
  end
  out v11
  begin
  v_min_u32_e64 v11, v2, s4
  end
  out v11
  begin
  v_max_u32 v11, v2, v3
  end
  out v11
  begin
  v_max_u32 v11, s4, v3
  end
  out v11
  begin
  v_max_u32 v11, -7, v3
  end
  out v11
  begin
  v_max_u32 v11, 0x12345678, v3
  end
  out v11
  begin
  v_max_u32_e64 v11, v2, s4
  end
  out v11
  begin
  v_min_i32 v11, v2, v3
  end
  out v11
  begin
  v_min_i32 v11, s4, v3
  end
  out v11
  begin
  v_min_i32 v11, -7, v3
  end
  out v11
  begin
  v_min_i32 v11, 0x12345678, v3
  end
  out v11
  begin
  v_min_i32_e64 v11, v2, s4
  end
  out v11
  begin
  v_max_i32 v11, v2, v3
  end
  out v11
  begin
  v_max_i32 v11, s4, v3
  end
  out v11
  begin
  v_max_i32 v11, -7, v3
  end
  out v11
  begin
  v_max_i32 v11, 0x12345678, v3
  end
  out v11
  begin
  v_max_i32_e64 v11, v2, s4
  end
  out v11
  begin
  v_mul_u32_u24 v11, v2, v3
  end
  out v11
  begin
  v_mul_u32_u24 v11, s4, v3
  end
  out v11
  begin
  v_mul_u32_u24 v11, -7, v3
  end
  out v11
  begin
  v_mul_u32_u24 v11, 0x12345678, v3
  end
  out v11
  begin
  v_mul_u32_u24_e64 v11, v2, s4
  end
  out v11
  begin
  v_mov_b32 v11, v2
  end
  out v11
  begin
  v_mov_b32 v11, s4
  end
  out v11
  begin
  v_mov_b32 v11, 0x12345678
  end
  out v11
  begin
  v_mov_b32 v11, v11
  end
  out v11
  begin
  v_mov_b32_e64 v11, -3
  end
  out v11
  begin
  v_mul_lo_u32 v11, v2, v3
  end
  out v11
  begin
  v_mul_lo_u32 v11, s4, v3
  end
  out v11
  begin
  v_mul_lo_u32 v11, v2, 0x10001
  end
  out v11
  begin
  v_lshl_or_b32 v11, v2, v3, v4
  end
  out v11
  begin
  v_lshl_or_b32 v11, s4, v3, 5
  end
  out v11
  begin
  v_lshl_or_b32 v11, v2, 0x1234, v11
  end
  out v11
  begin
  v_lshl_add_u32 v11, v2, v3, v4
  end
  out v11
  begin
  v_lshl_add_u32 v11, s4, v3, 5
  end
  out v11
  begin
  v_lshl_add_u32 v11, v2, 0x1234, v11
  end
  out v11
  begin
  v_add_lshl_u32 v11, v2, v3, v4
  end
  out v11
  begin
  v_add_lshl_u32 v11, s4, v3, 5
  end
  out v11
  begin
  v_add_lshl_u32 v11, v2, 0x1234, v11
  end
  out v11
  begin
  v_add3_u32 v11, v2, v3, v4
  end
  out v11
  begin
  v_add3_u32 v11, s4, v3, 5
  end
  out v11
  begin
  v_add3_u32 v11, v2, 0x1234, v11
  end
  out v11
  begin
  v_and_or_b32 v11, v2, v3, v4
  end
  out v11
  begin
  v_and_or_b32 v11, s4, v3, 5
  end
  out v11
  begin
  v_and_or_b32 v11, v2, 0x1234, v11
  end
  out v11
  begin
  v_or3_b32 v11, v2, v3, v4
  end
  out v11
  begin
  v_or3_b32 v11, s4, v3, 5
  end
  out v11
  begin
  v_or3_b32 v11, v2, 0x1234, v11
  end
  out v11
  begin
  v_add_f32 v11, v2, v3
  end
  out v11
  begin
  v_add_f32 v11, v5, v6
  end
  out v11
  begin
  v_add_f32 v11, 0.5, v3
  end
  out v11
  begin
  v_add_f32 v11, s5, v6
  end
  out v11
  begin
  v_add_f32 v11, 0x3fc00000, v5
  end
  out v11
  begin
  v_add_f32_e64 v11, v6, s5
  end
  out v11
  begin
  v_sub_f32 v11, v2, v3
  end
  out v11
  begin
  v_sub_f32 v11, v5, v6
  end
  out v11
  begin
  v_sub_f32 v11, 0.5, v3
  end
  out v11
  begin
  v_sub_f32 v11, s5, v6
  end
  out v11
  begin
  v_sub_f32 v11, 0x3fc00000, v5
  end
  out v11
  begin
  v_sub_f32_e64 v11, v6, s5
  end
  out v11
  begin
  v_subrev_f32 v11, v2, v3
  end
  out v11
  begin
  v_subrev_f32 v11, v5, v6
  end
  out v11
  begin
  v_subrev_f32 v11, 0.5, v3
  end
  out v11
  begin
  v_subrev_f32 v11, s5, v6
  end
  out v11
  begin
  v_subrev_f32 v11, 0x3fc00000, v5
  end
  out v11
  begin
  v_subrev_f32_e64 v11, v6, s5
  end
  out v11
  begin
  v_mul_f32 v11, v2, v3
  end
  out v11
  begin
  v_mul_f32 v11, v5, v6
  end
  out v11
  begin
  v_mul_f32 v11, 0.5, v3
  end
  out v11
  begin
  v_mul_f32 v11, s5, v6
  end
  out v11
  begin
  v_mul_f32 v11, 0x3fc00000, v5
  end
  out v11
  begin
  v_mul_f32_e64 v11, v6, s5
  end
  out v11
  begin
  v_cmp_f_u32 vcc_lo, v2, v5
  end
  out_mask vcc_lo, vcc_hi
  begin
  v_cmp_f_u32_e64 s6, s4, v5
  end
  out_mask s6, s7
  begin
  v_cmp_lt_u32 vcc_lo, v2, v5
  end
  out_mask vcc_lo, vcc_hi
  begin
  v_cmp_lt_u32_e64 s6, s4, v5
  end
  out_mask s6, s7
  begin
  v_cmp_eq_u32 vcc_lo, v2, v5
  end
  out_mask vcc_lo, vcc_hi
  begin
  v_cmp_eq_u32_e64 s6, s4, v5
  end
  out_mask s6, s7
  begin
  v_cmp_le_u32 vcc_lo, v2, v5
  end
  out_mask vcc_lo, vcc_hi
  begin
  v_cmp_le_u32_e64 s6, s4, v5
  end
  out_mask s6, s7
  begin
  v_cmp_gt_u32 vcc_lo, v2, v5
  end
  out_mask vcc_lo, vcc_hi
  begin
  v_cmp_gt_u32_e64 s6, s4, v5
  end
  out_mask s6, s7
  begin
  v_cmp_ne_u32 vcc_lo, v2, v5
  end
  out_mask vcc_lo, vcc_hi
  begin
  v_cmp_ne_u32_e64 s6, s4, v5
  end
  out_mask s6, s7
  begin
  v_cmp_ge_u32 vcc_lo, v2, v5
  end
  out_mask vcc_lo, vcc_hi
  begin
  v_cmp_ge_u32_e64 s6, s4, v5
  end
  out_mask s6, s7
  begin
  v_cmp_t_u32 vcc_lo, v2, v5
  end
  out_mask vcc_lo, vcc_hi
  begin
  v_cmp_t_u32_e64 s6, s4, v5
  end
  out_mask s6, s7
  begin
  v_cmpx_lt_u32 v2, v5
  s_mov_b32 s28, exec_lo
  end
  out_mask s28, s29
  begin
  v_cmpx_eq_u32_e64 v2, v5
  s_mov_b32 s28, exec_lo
  end
  out_mask s28, s29
  begin
  v_cmp_f_i32 vcc_lo, v2, v5
  end
  out_mask vcc_lo, vcc_hi
  begin
  v_cmp_f_i32_e64 s6, s4, v5
  end
  out_mask s6, s7
  begin
  v_cmp_lt_i32 vcc_lo, v2, v5
  end
  out_mask vcc_lo, vcc_hi
  begin
  v_cmp_lt_i32_e64 s6, s4, v5
  end
  out_mask s6, s7
  begin
  v_cmp_eq_i32 vcc_lo, v2, v5
  end
  out_mask vcc_lo, vcc_hi
  begin
  v_cmp_eq_i32_e64 s6, s4, v5
  end
  out_mask s6, s7
  begin
  v_cmp_le_i32 vcc_lo, v2, v5
  end
  out_mask vcc_lo, vcc_hi
  begin
  v_cmp_le_i32_e64 s6, s4, v5
  end
  out_mask s6, s7
  begin
  v_cmp_gt_i32 vcc_lo, v2, v5
  end
  out_mask vcc_lo, vcc_hi
  begin
  v_cmp_gt_i32_e64 s6, s4, v5
  end
  out_mask s6, s7
  begin
  v_cmp_ne_i32 vcc_lo, v2, v5
  end
  out_mask vcc_lo, vcc_hi
  begin
  v_cmp_ne_i32_e64 s6, s4, v5
  end
  out_mask s6, s7
  begin
  v_cmp_ge_i32 vcc_lo, v2, v5
  end
  out_mask vcc_lo, vcc_hi
  begin
  v_cmp_ge_i32_e64 s6, s4, v5
  end
  out_mask s6, s7
  begin
  v_cmp_t_i32 vcc_lo, v2, v5
  end
  out_mask vcc_lo, vcc_hi
  begin
  v_cmp_t_i32_e64 s6, s4, v5
  end
  out_mask s6, s7
  begin
  v_cmpx_lt_i32 v2, v5
  s_mov_b32 s28, exec_lo
  end
  out_mask s28, s29
  begin
  v_cmpx_eq_i32_e64 v2, v5
  s_mov_b32 s28, exec_lo
  end
  out_mask s28, s29
  begin
  v_cmp_f_f32 vcc_lo, v2, v5
  end
  out_mask vcc_lo, vcc_hi
  begin
  v_cmp_f_f32_e64 s6, v6, v7
  end
  out_mask s6, s7
  begin
  v_cmp_lt_f32 vcc_lo, v2, v5
  end
  out_mask vcc_lo, vcc_hi
  begin
  v_cmp_lt_f32_e64 s6, v6, v7
  end
  out_mask s6, s7
  begin
  v_cmp_eq_f32 vcc_lo, v2, v5
  end
  out_mask vcc_lo, vcc_hi
  begin
  v_cmp_eq_f32_e64 s6, v6, v7
  end
  out_mask s6, s7
  begin
  v_cmp_le_f32 vcc_lo, v2, v5
  end
  out_mask vcc_lo, vcc_hi
  begin
  v_cmp_le_f32_e64 s6, v6, v7
  end
  out_mask s6, s7
  begin
  v_cmp_gt_f32 vcc_lo, v2, v5
  end
  out_mask vcc_lo, vcc_hi
  begin
  v_cmp_gt_f32_e64 s6, v6, v7
  end
  out_mask s6, s7
  begin
  v_cmp_lg_f32 vcc_lo, v2, v5
  end
  out_mask vcc_lo, vcc_hi
  begin
  v_cmp_lg_f32_e64 s6, v6, v7
  end
  out_mask s6, s7
  begin
  v_cmp_ge_f32 vcc_lo, v2, v5
  end
  out_mask vcc_lo, vcc_hi
  begin
  v_cmp_ge_f32_e64 s6, v6, v7
  end
  out_mask s6, s7
  begin
  v_cmp_o_f32 vcc_lo, v2, v5
  end
  out_mask vcc_lo, vcc_hi
  begin
  v_cmp_o_f32_e64 s6, v6, v7
  end
  out_mask s6, s7
  begin
  v_cmp_u_f32 vcc_lo, v2, v5
  end
  out_mask vcc_lo, vcc_hi
  begin
  v_cmp_u_f32_e64 s6, v6, v7
  end
  out_mask s6, s7
  begin
  v_cmp_nge_f32 vcc_lo, v2, v5
  end
  out_mask vcc_lo, vcc_hi
  begin
  v_cmp_nge_f32_e64 s6, v6, v7
  end
  out_mask s6, s7
  begin
  v_cmp_nlg_f32 vcc_lo, v2, v5
  end
  out_mask vcc_lo, vcc_hi
  begin
  v_cmp_nlg_f32_e64 s6, v6, v7
  end
  out_mask s6, s7
  begin
  v_cmp_ngt_f32 vcc_lo, v2, v5
  end
  out_mask vcc_lo, vcc_hi
  begin
  v_cmp_ngt_f32_e64 s6, v6, v7
  end
  out_mask s6, s7
  begin
  v_cmp_nle_f32 vcc_lo, v2, v5
  end
  out_mask vcc_lo, vcc_hi
  begin
  v_cmp_nle_f32_e64 s6, v6, v7
  end
  out_mask s6, s7
  begin
  v_cmp_neq_f32 vcc_lo, v2, v5
  end
  out_mask vcc_lo, vcc_hi
  begin
  v_cmp_neq_f32_e64 s6, v6, v7
  end
  out_mask s6, s7
  begin
  v_cmp_nlt_f32 vcc_lo, v2, v5
  end
  out_mask vcc_lo, vcc_hi
  begin
  v_cmp_nlt_f32_e64 s6, v6, v7
  end
  out_mask s6, s7
  begin
  v_cmp_t_f32 vcc_lo, v2, v5
  end
  out_mask vcc_lo, vcc_hi
  begin
  v_cmp_t_f32_e64 s6, v6, v7
  end
  out_mask s6, s7
  begin
  v_cmpx_lt_f32 v6, v7
  s_mov_b32 s28, exec_lo
  end
  out_mask s28, s29
  begin
  v_cmpx_nge_f32_e64 v2, v5
  s_mov_b32 s28, exec_lo
  end
  out_mask s28, s29
  begin
  v_cmp_lt_u32 vcc_lo, v2, v3
  v_cndmask_b32 v11, v4, v5, vcc_lo
  end
  out v11
  begin
  v_cndmask_b32_e64 v11, v4, s4, s22
  end
  out v11
  begin
  v_add_co_u32 v11, vcc_lo, v2, v3
  end
  out v11
  out_mask vcc_lo, vcc_hi
  begin
  v_add_co_u32 v11, s6, s4, v3
  end
  out v11
  out_mask s6, s7
  begin
  v_sub_co_u32 v11, s6, v2, v3
  end
  out v11
  out_mask s6, s7
  begin
  v_subrev_co_u32 v11, s6, v2, v3
  end
  out v11
  out_mask s6, s7
  begin
  v_add_co_ci_u32 v11, vcc_lo, v2, v3, vcc_lo
  end
  out v11
  out_mask vcc_lo, vcc_hi
  begin
  v_add_co_ci_u32_e64 v11, s8, v2, v3, s22
  end
  out v11
  out_mask s8, s9
  begin
  v_sub_co_ci_u32 v11, vcc_lo, v2, v3, vcc_lo
  end
  out v11
  out_mask vcc_lo, vcc_hi
  begin
  v_sub_co_ci_u32_e64 v11, s8, v2, v3, s22
  end
  out v11
  out_mask s8, s9
  begin
  v_subrev_co_ci_u32 v11, vcc_lo, v2, v3, vcc_lo
  end
  out v11
  out_mask vcc_lo, vcc_hi
  begin
  v_subrev_co_ci_u32_e64 v11, s8, s4, v3, s22
  end
  out v11
  out_mask s8, s9
  begin
  v_add_co_u32 v11, vcc_lo, v11, v3
  end
  out v11
  out_mask vcc_lo, vcc_hi
  begin
  v_sub_co_ci_u32 v11, vcc_lo, v3, v11, vcc_lo
  end
  out v11
  out_mask vcc_lo, vcc_hi
  begin
  v_add_nc_u32 v11, v11, v11
  end
  out v11
  begin
  v_lshl_or_b32 v11, v11, v3, v11
  end
  out v11
  begin
  v_mul_f32 v11, v11, v11
  end
  out v11
  begin
  v_lshlrev_b64 v[11:12], v2, v[3:4]
  end
  out v11
  out v12
  begin
  v_lshlrev_b64 v[11:12], 33, v[3:4]
  end
  out v11
  out v12
  begin
  v_lshlrev_b64 v[11:12], v2, s[4:5]
  end
  out v11
  out v12
  begin
  v_lshlrev_b64 v[12:13], v12, v[11:12]
  end
  out v12
  out v13
  // The fma forms (FastValu kFma*, FmaLanes) and, in wave32, VOPD pairs (RunFastVopd), session 14.
  begin
  v_fma_f32 v11, v2, v3, v4
  end
  out v11
  begin
  v_fma_f32 v11, v5, v6, v2
  end
  out v11
  begin
  v_fma_f32 v11, s5, v3, 1.0
  end
  out v11
  begin
  v_fma_f32 v11, v2, 0x3fc00000, v6
  end
  out v11
  begin
  v_fmac_f32 v11, v2, v3
  end
  out v11
  begin
  v_fmac_f32 v11, s5, v6
  end
  out v11
  begin
  v_fmac_f32_e64 v11, v5, 0.5
  end
  out v11
  begin
  v_fmac_f32 v11, v11, v11
  end
  out v11
  begin
  v_fmamk_f32 v11, v2, 0x40490fdb, v3
  end
  out v11
  begin
  v_fmamk_f32 v11, s5, 0x00000003, v6
  end
  out v11
  begin
  v_fmaak_f32 v11, v5, v6, 0xc0490fdb
  end
  out v11
  begin
  v_fmaak_f32 v11, v2, v3, 0x7fc00000
  end
  out v11
  begin
  v_dual_fmac_f32 v11, v2, v3 :: v_dual_mul_f32 v12, v5, v6
  end
  out v11
  out v12
  begin
  v_dual_fmaak_f32 v11, v2, v3, 0x3fc00000 :: v_dual_add_f32 v12, v5, v4
  end
  out v11
  out v12
  begin
  v_dual_fmamk_f32 v11, v5, 0x40490fdb, v3 :: v_dual_sub_f32 v12, v2, v4
  end
  out v11
  out v12
  begin
  v_dual_subrev_f32 v11, s5, v3 :: v_dual_mov_b32 v12, v6
  end
  out v11
  out v12
  begin
  v_dual_max_f32 v11, v2, v3 :: v_dual_min_f32 v12, v5, v6
  end
  out v11
  out v12
  begin
  v_dual_mul_dx9_zero_f32 v11, v2, v3 :: v_dual_cndmask_b32 v12, v5, v6
  end
  out v11
  out v12
  begin
  v_dual_mov_b32 v11, v2 :: v_dual_add_nc_u32 v12, v5, v6
  end
  out v11
  out v12
  begin
  v_dual_mul_f32 v11, 0.5, v3 :: v_dual_lshlrev_b32 v12, v5, v6
  end
  out v11
  out v12
  begin
  v_dual_sub_f32 v11, v2, v3 :: v_dual_and_b32 v12, v5, v4
  end
  out v11
  out v12
  begin
  v_dual_mov_b32 v11, v12 :: v_dual_mov_b32 v12, v11
  end
  out v11
  out v12
  begin
  v_dual_fmac_f32 v11, v11, v11 :: v_dual_fmac_f32 v12, v5, v12
  end
  out v11
  out v12
  begin
  v_dual_cndmask_b32 v11, 0x3fc00000, v3 :: v_dual_fmaak_f32 v12, v5, v4, 0x3fc00000
  end
  out v11
  out v12
  begin
  v_dual_mul_f32 v11, v2, v3 :: v_dual_fmamk_f32 v12, v5, 0x40490fdb, v4
  end
  out v11
  out v12
  begin
  v_dual_dot2acc_f32_f16 v11, v2, v3 :: v_dual_mov_b32 v12, v5
  end
  out v11
  out v12
.endm
  s_mov_b32 s26, -1
  valu
  s_mov_b32 s26, s20
  valu
// Vector memory under the partial EXEC: loads of 1..4 dwords from in + 160l + 0, 4, 6 (unaligned) and 84, FLAT
// loads, then stores of 1..4 dwords to 16 bytes per lane of out.
  begin
  v_mov_b32 v14, v6
  global_load_b32 v11, v1, s[2:3] offset:0
  s_waitcnt vmcnt(0)
  end
  out v11
  begin
  v_mov_b32 v14, v6
  global_load_b32 v11, v1, s[2:3] offset:4
  s_waitcnt vmcnt(0)
  end
  out v11
  begin
  v_mov_b32 v14, v6
  global_load_b32 v11, v1, s[2:3] offset:6
  s_waitcnt vmcnt(0)
  end
  out v11
  begin
  v_mov_b32 v14, v6
  global_load_b32 v11, v1, s[2:3] offset:84
  s_waitcnt vmcnt(0)
  end
  out v11
  begin
  v_mov_b32 v14, v6
  global_load_b64 v[11:12], v1, s[2:3] offset:0
  s_waitcnt vmcnt(0)
  end
  out v11
  out v12
  begin
  v_mov_b32 v14, v6
  global_load_b64 v[11:12], v1, s[2:3] offset:4
  s_waitcnt vmcnt(0)
  end
  out v11
  out v12
  begin
  v_mov_b32 v14, v6
  global_load_b64 v[11:12], v1, s[2:3] offset:6
  s_waitcnt vmcnt(0)
  end
  out v11
  out v12
  begin
  v_mov_b32 v14, v6
  global_load_b64 v[11:12], v1, s[2:3] offset:84
  s_waitcnt vmcnt(0)
  end
  out v11
  out v12
  begin
  v_mov_b32 v14, v6
  global_load_b96 v[11:13], v1, s[2:3] offset:0
  s_waitcnt vmcnt(0)
  end
  out v11
  out v12
  out v13
  begin
  v_mov_b32 v14, v6
  global_load_b96 v[11:13], v1, s[2:3] offset:4
  s_waitcnt vmcnt(0)
  end
  out v11
  out v12
  out v13
  begin
  v_mov_b32 v14, v6
  global_load_b96 v[11:13], v1, s[2:3] offset:6
  s_waitcnt vmcnt(0)
  end
  out v11
  out v12
  out v13
  begin
  v_mov_b32 v14, v6
  global_load_b96 v[11:13], v1, s[2:3] offset:84
  s_waitcnt vmcnt(0)
  end
  out v11
  out v12
  out v13
  begin
  v_mov_b32 v14, v6
  global_load_b128 v[11:14], v1, s[2:3] offset:0
  s_waitcnt vmcnt(0)
  end
  out v11
  out v12
  out v13
  out v14
  begin
  v_mov_b32 v14, v6
  global_load_b128 v[11:14], v1, s[2:3] offset:4
  s_waitcnt vmcnt(0)
  end
  out v11
  out v12
  out v13
  out v14
  begin
  v_mov_b32 v14, v6
  global_load_b128 v[11:14], v1, s[2:3] offset:6
  s_waitcnt vmcnt(0)
  end
  out v11
  out v12
  out v13
  out v14
  begin
  v_mov_b32 v14, v6
  global_load_b128 v[11:14], v1, s[2:3] offset:84
  s_waitcnt vmcnt(0)
  end
  out v11
  out v12
  out v13
  out v14
  v_add_co_u32 v14, vcc_lo, s2, v1
  v_add_co_ci_u32 v15, vcc_lo, s3, 0, vcc_lo
  begin
  flat_load_b32 v11, v[14:15] offset:8
  s_waitcnt vmcnt(0) lgkmcnt(0)
  end
  out v11
  begin
  flat_load_b128 v[11:14], v[14:15] offset:8
  s_waitcnt vmcnt(0) lgkmcnt(0)
  end
  out v11
  out v12
  out v13
  out v14
  v_lshlrev_b32 v16, 4, v0
  v_mov_b32 v17, 0
  s_mov_b32 exec_lo, s26
  global_store_b32 v16, v2, s[0:1]
  s_mov_b32 exec_lo, -1
  s_add_u32 s0, s0, 512
  s_addc_u32 s1, s1, 0
  s_mov_b32 exec_lo, s26
  global_store_b64 v16, v[2:3], s[0:1]
  s_mov_b32 exec_lo, -1
  s_add_u32 s0, s0, 512
  s_addc_u32 s1, s1, 0
  s_mov_b32 exec_lo, s26
  global_store_b96 v16, v[2:4], s[0:1]
  s_mov_b32 exec_lo, -1
  s_add_u32 s0, s0, 512
  s_addc_u32 s1, s1, 0
  s_mov_b32 exec_lo, s26
  global_store_b128 v16, v[2:5], s[0:1]
  s_mov_b32 exec_lo, -1
  s_add_u32 s0, s0, 512
  s_addc_u32 s1, s1, 0
  v_add_co_u32 v14, vcc_lo, s0, v16
  v_add_co_ci_u32 v15, vcc_lo, s1, 0, vcc_lo
  s_mov_b32 exec_lo, s26
  flat_store_b128 v[14:15], v[6:9]
  s_mov_b32 exec_lo, -1
  s_endpgm
