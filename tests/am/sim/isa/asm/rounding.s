// MODE.FP_ROUND: the same operations under three round modes, one lane (v10 = 0). Each block stores 18 dwords at
// s[0:1] and moves s[0:1] on by 72 bytes. Block A runs under the dispatch's RSRC1.FLOAT_MODE, block B after
// s_round_mode, block C after s_setreg_imm32_b32 of MODE[3:0].
.macro rounded_ops
  v_add_f32 v1, 1.0, v32                          // 0: 1 + 2^-25
  global_store_b32 v10, v1, s[0:1]
  v_add_f32 v1, -1.0, v33                         // 1: -(1 + 2^-25)
  global_store_b32 v10, v1, s[0:1] offset:4
  v_mul_f32 v1, v20, v20                          // 2: (1 + 2^-23)^2
  global_store_b32 v10, v1, s[0:1] offset:8
  v_fma_f32 v1, v20, v20, -1.0                    // 3: 2^-22 + 2^-46
  global_store_b32 v10, v1, s[0:1] offset:12
  v_sqrt_f32 v1, 2.0                              // 4: sqrt(2)
  global_store_b32 v10, v1, s[0:1] offset:16
  v_cvt_f32_u32 v1, -1                            // 5: 2^32 - 1
  global_store_b32 v10, v1, s[0:1] offset:20
  v_add_f64 v[2:3], 1.0, v[22:23]                 // 6: 1 + 2^-54 (double)
  global_store_b64 v10, v[2:3], s[0:1] offset:24
  v_add_f64 v[2:3], -1.0, -v[22:23]               // 8: -(1 + 2^-54)
  global_store_b64 v10, v[2:3], s[0:1] offset:32
  v_cvt_f32_f64 v1, v[24:25]                      // 10: 1 + 2^-26 to single
  global_store_b32 v10, v1, s[0:1] offset:40
  v_add_f16 v1, 1.0, v26                          // 11: 1 + 2^-12 (half, low 16 bits)
  global_store_b32 v10, v1, s[0:1] offset:44
  v_add_f16 v1, -1.0, v27                         // 12: -(1 + 2^-12)
  global_store_b32 v10, v1, s[0:1] offset:48
  v_cvt_f16_f32 v1, v28                           // 13: 1 + 2^-12 from single to half
  global_store_b32 v10, v1, s[0:1] offset:52
  v_rndne_f32 v1, 0x40200000                      // 14: 2.5 to the even integer whatever the mode
  global_store_b32 v10, v1, s[0:1] offset:56
  v_pk_add_f16 v1, v30, v31                       // 15: 1 + 2^-12 (low half), -(1 + 2^-12) (high half)
  global_store_b32 v10, v1, s[0:1] offset:60
  v_dual_add_f32 v5, 1.0, v32 :: v_dual_mul_f32 v6, v21, v21   // 16, 17: VOPD, as rows 0 and 2
  global_store_b32 v10, v5, s[0:1] offset:64
  global_store_b32 v10, v6, s[0:1] offset:68
  s_add_u32 s0, s0, 72
  s_addc_u32 s1, s1, 0
.endm

  v_mov_b32 v10, 0
  v_mov_b32 v20, 0x3f800001                       // 1 + 2^-23
  v_mov_b32 v21, 0x3f800001
  v_mov_b32 v22, 0
  v_mov_b32 v23, 0x3c900000                       // 2^-54
  v_mov_b32 v24, 0x04000000
  v_mov_b32 v25, 0x3ff00000                       // 1 + 2^-26
  v_mov_b32 v26, 0x0c00                           // half 2^-12
  v_mov_b32 v27, 0x8c00                           // half -2^-12
  v_mov_b32 v28, 0x3f800800                       // single 1 + 2^-12
  v_mov_b32 v30, 0xbc003c00                       // halves 1.0 (low), -1.0 (high)
  v_mov_b32 v31, 0x8c000c00                       // halves 2^-12 (low), -2^-12 (high)
  v_mov_b32 v32, 0x33000000                       // 2^-25
  v_mov_b32 v33, 0xb3000000                       // -2^-25
  rounded_ops                                     // block A: RSRC1.FLOAT_MODE
  s_round_mode 0x9                                // block B: single +infinity, double/half -infinity
  rounded_ops
  s_setreg_imm32_b32 hwreg(HW_REG_MODE, 0, 4), 2  // block C: single -infinity, double/half nearest even
  rounded_ops
  s_endpgm
