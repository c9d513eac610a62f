// Vector float operations, one wave32, v0 = lane id l; row k of out[] (s[0:1]) holds out[k * 32 + l].
  v_lshlrev_b32 v10, 2, v0
  v_cvt_f32_u32 v1, v0                  // f = l
  v_mul_f32 v2, 0.5, v1
  v_add_f32 v2, 1.0, v2                 // row 0: l / 2 + 1
  global_store_b32 v10, v2, s[0:1]
  v_fma_f32 v2, v1, v1, -v1             // row 1: l*l - l
  global_store_b32 v10, v2, s[0:1] offset:128
  v_sqrt_f32 v2, v1                     // row 2: sqrt(l)
  global_store_b32 v10, v2, s[0:1] offset:256
  v_sub_f32 v2, 2.0, v1
  v_cvt_i32_f32 v2, v2                  // row 3: trunc(2 - l) as int
  global_store_b32 v10, v2, s[0:1] offset:384
  v_cmp_lt_f32 vcc_lo, 0x41200000, v1   // 10.0 < l
  v_cndmask_b32 v2, -1.0, 4.0, vcc_lo   // row 4: l > 10 ? 4.0 : -1.0
  global_store_b32 v10, v2, s[0:1] offset:512
  v_cvt_f16_f32 v3, v1
  v_add_f16 v3, v3, 0.5
  v_cvt_f32_f16 v2, v3                  // row 5: l + 0.5 through half precision
  global_store_b32 v10, v2, s[0:1] offset:640
  v_pk_add_f16 v4, v3, v3               // both halves: 2l + 1 (low), 0 (high: v3's high half is 0)
  global_store_b32 v10, v4, s[0:1] offset:768   // row 6: packed halves
  v_mov_b32 v14, v1
  v_dual_mul_f32 v5, v1, v1 :: v_dual_add_f32 v6, v14, v14
  global_store_b32 v10, v5, s[0:1] offset:896   // row 7: l*l
  global_store_b32 v10, v6, s[0:1] offset:1024  // row 8: 2l
  v_rcp_f32 v2, 4.0                     // row 9: 0.25
  global_store_b32 v10, v2, s[0:1] offset:1152
  v_add_f32 v7, 1.0, v1                 // d = l + 1
  v_div_scale_f32 v8, null, v7, v7, 1.0
  v_rcp_f32 v9, v8
  v_div_scale_f32 v11, vcc_lo, 1.0, v7, 1.0
  v_fma_f32 v12, -v8, v9, 1.0
  v_fmac_f32 v9, v12, v9
  v_mul_f32 v12, v11, v9
  v_fma_f32 v13, -v8, v12, v11
  v_fmac_f32 v12, v13, v9
  v_fma_f32 v8, -v8, v12, v11
  v_div_fmas_f32 v8, v8, v9, v12
  v_div_fixup_f32 v2, v8, v7, 1.0       // row 10: 1 / (l + 1), correctly rounded
  global_store_b32 v10, v2, s[0:1] offset:1280
  v_cmp_class_f32 vcc_lo, v2, 0x100     // positive normal
  v_cndmask_b32 v2, 0, 1, vcc_lo        // row 11: 1
  global_store_b32 v10, v2, s[0:1] offset:1408
  // VOP3 v_cndmask_b32 takes the float input modifiers as bit operations on the selected value: LLVM folds
  // x * (c ? -1.0 : 1.0) into one (tinygrad's sin sign fix-up).
  v_cmp_lt_f32 vcc_lo, 0x41200000, v1   // 10.0 < l
  v_cndmask_b32_e64 v2, v1, -v1, vcc_lo // row 12: l > 10 ? -l : l
  global_store_b32 v10, v2, s[0:1] offset:1536
  v_add_f32 v16, 1.0, v1
  v_xor_b32 v16, 0x80000000, v16        // -(l + 1)
  v_cndmask_b32_e64 v2, |v16|, v1, vcc_lo  // row 13: l > 10 ? l : |-(l + 1)|
  global_store_b32 v10, v2, s[0:1] offset:1664
  v_cndmask_b32_e64 v2, v1, -|v16|, vcc_lo // row 14: l > 10 ? -(l + 1) : l
  global_store_b32 v10, v2, s[0:1] offset:1792
  v_mov_b32 v2, 0
  v_cndmask_b16 v2, v3, -v3, vcc_lo     // row 15: l > 10 ? -(l + 0.5) : l + 0.5, as a half in the low 16 bits
  global_store_b32 v10, v2, s[0:1] offset:1920
  s_endpgm
