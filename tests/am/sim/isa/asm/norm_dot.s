// VALU operations gfx1100 has that the interpreter lacked until session 14 (issue 24): the normalized and
// packed conversions, the 16-bit and integer dot products, the DX9 multiply-adds, v_pk_fmac_f16, f16 sin/cos/
// frexp/div_fixup, v_cvt_pk_u8_f32, v_msad_u8, v_cvt_off_f32_i4, v_swap_b32, v_permlane64_b32, VOPD's dot2acc,
// the M0-relative moves, v_mullit_f32, the cube-map operations and the quad SADs. One lane; out[k] (s[0:1]) is row k. The expected values are in
// executor_test.cc (NormalizedConversionsAndDotProducts) with how each was worked out.
  v_mov_b32 v10, 0
  // Rows 0-4: v_cvt_pk_norm_{i16,u16}_f32 (S0 -> bits 15:0, S1 -> bits 31:16).
  v_mov_b32 v2, 0.5
  v_mov_b32 v3, -0.5
  v_cvt_pk_norm_i16_f32 v1, v2, v3            // row 0: ties 16383.5 and -16383.5
  global_store_b32 v10, v1, s[0:1]
  v_mov_b32 v2, 2.0
  v_mov_b32 v3, 0xff800000                    // -inf
  v_cvt_pk_norm_i16_f32 v1, v2, v3            // row 1: clamped to +-1
  global_store_b32 v10, v1, s[0:1] offset:4
  v_mov_b32 v2, 0x7fc00000                    // NaN
  v_mov_b32 v3, 0.25
  v_cvt_pk_norm_i16_f32 v1, v2, v3            // row 2
  global_store_b32 v10, v1, s[0:1] offset:8
  v_mov_b32 v2, 0.5
  v_mov_b32 v3, 2.0
  v_cvt_pk_norm_u16_f32 v1, v2, v3            // row 3: tie 32767.5, clamp
  global_store_b32 v10, v1, s[0:1] offset:12
  v_mov_b32 v2, -1.0
  v_mov_b32 v3, 0x3dcccccd                    // 0.1f
  v_cvt_pk_norm_u16_f32 v1, v2, v3            // row 4
  global_store_b32 v10, v1, s[0:1] offset:16
  // Rows 5-7: the f16 forms, one with op_sel picking S0's high half.
  v_mov_b32 v5, 0xb8003800                    // f16 {0.5, -0.5}
  v_mov_b32 v6, 0xbc00                        // f16 -1.0
  v_cvt_pk_norm_i16_f16 v1, v5, v6            // row 5
  global_store_b32 v10, v1, s[0:1] offset:20
  v_mov_b32 v6, 0x3c00                        // f16 1.0
  v_cvt_pk_norm_i16_f16 v1, v5, v6 op_sel:[1,0,0] // row 6: S0 = -0.5
  global_store_b32 v10, v1, s[0:1] offset:24
  v_mov_b32 v5, 0x7c00                        // f16 +inf
  v_mov_b32 v6, 0x3555                        // f16 0.333251953125
  v_cvt_pk_norm_u16_f16 v1, v5, v6            // row 7
  global_store_b32 v10, v1, s[0:1] offset:28
  // Rows 8-10: v_cvt_pk_{i16,u16}_f32 (truncate, saturate, NaN 0).
  v_mov_b32 v2, 0xc71c4080                    // -40000.5
  v_mov_b32 v3, 0x42f7cccd                    // 123.9
  v_cvt_pk_i16_f32 v1, v2, v3                 // row 8
  global_store_b32 v10, v1, s[0:1] offset:32
  v_mov_b32 v2, 0x4788b800                    // 70000.0
  v_mov_b32 v3, -4.0
  v_cvt_pk_u16_f32 v1, v2, v3                 // row 9
  global_store_b32 v10, v1, s[0:1] offset:36
  v_mov_b32 v2, 0x7fc00000                    // NaN
  v_mov_b32 v3, 0x477ffee6                    // 65534.9
  v_cvt_pk_u16_f32 v1, v2, v3                 // row 10
  global_store_b32 v10, v1, s[0:1] offset:40
  // Rows 11-13: VOP1 16-bit results keep the destination's high half.
  v_mov_b32 v1, 0xaaaa0000
  v_mov_b32 v2, 0xb800                        // f16 -0.5
  v_cvt_norm_i16_f16 v1, v2                   // row 11
  global_store_b32 v10, v1, s[0:1] offset:44
  v_mov_b32 v2, 0x7e00                        // f16 NaN
  v_cvt_norm_u16_f16 v1, v2                   // row 12
  global_store_b32 v10, v1, s[0:1] offset:48
  v_mov_b32 v2, 0x0123ff80                    // i16 {-128, 291}
  v_sat_pk_u8_i16 v1, v2                      // row 13
  global_store_b32 v10, v1, s[0:1] offset:52
  // Rows 14-18: v_dot2_f16_f16 / v_dot2_bf16_bf16, rounded at every step.
  v_mov_b32 v1, 0xaaaa0000
  v_mov_b32 v2, 0x3c003c03                    // f16 {1 + 3 * 2^-10, 1}
  v_mov_b32 v3, 0xbc003c03                    // f16 {1 + 3 * 2^-10, -1}
  v_mov_b32 v4, 0
  v_dot2_f16_f16 v1, v2, v3, v4               // row 14
  global_store_b32 v10, v1, s[0:1] offset:56
  v_mov_b32 v4, 0x3c000000                    // S2 = f16 1.0 in the high half
  v_mov_b32 v1, 0x0000bbbb
  v_dot2_f16_f16 v1, v2, v3, v4 op_sel:[0,0,1,1] // row 15: S2 and D in high halves
  global_store_b32 v10, v1, s[0:1] offset:60
  v_mov_b32 v1, 0xaaaa0000
  v_mov_b32 v2, 0x7bff                        // f16 {65504, 0}
  v_mov_b32 v3, 0x4000                        // f16 {2, 0}
  v_mov_b32 v4, 0
  v_dot2_f16_f16 v1, v2, v3, v4               // row 16: overflows to +inf
  global_store_b32 v10, v1, s[0:1] offset:64
  v_mov_b32 v2, 0x0400                        // f16 {2^-14, 0}
  v_mov_b32 v3, 0x3800                        // f16 {0.5, 0}
  v_dot2_f16_f16 v1, v2, v3, v4               // row 17: a denormal result, kept (FLOAT_MODE 0xf0)
  global_store_b32 v10, v1, s[0:1] offset:68
  v_mov_b32 v2, 0x3f803f83                    // bf16 {1 + 3 * 2^-7, 1}
  v_mov_b32 v3, 0xbf803f83                    // bf16 {1 + 3 * 2^-7, -1}
  v_dot2_bf16_bf16 v1, v2, v3, v4             // row 18
  global_store_b32 v10, v1, s[0:1] offset:72
  // Row 19: v_dot2acc_f32_f16 (VOP2, D accumulates).
  v_mov_b32 v1, 1.0
  v_mov_b32 v2, 0x42004000                    // f16 {2, 3}
  v_mov_b32 v3, 0xbc003800                    // f16 {0.5, -1}
  v_dot2acc_f32_f16 v1, v2, v3                // row 19
  global_store_b32 v10, v1, s[0:1] offset:76
  // Rows 20-23: DX9 multiply-adds.
  v_mov_b32 v2, 0
  v_mov_b32 v3, 0x7f800000                    // +inf
  v_mov_b32 v4, 0x40a00000                    // 5.0
  v_fma_dx9_zero_f32 v1, v2, v3, v4           // row 20: 0 * inf counts as 0
  global_store_b32 v10, v1, s[0:1] offset:80
  v_fma_dx9_zero_f32 v1, 2.0, 0x40400000, 1.0 // row 21: an ordinary fma
  global_store_b32 v10, v1, s[0:1] offset:84
  v_mov_b32 v2, 0x7fc00000                    // NaN
  v_mov_b32 v3, 0
  v_fma_dx9_zero_f32 v1, v2, v3, 1.0          // row 22: NaN * 0 counts as 0
  global_store_b32 v10, v1, s[0:1] offset:88
  v_mov_b32 v1, 0x40200000                    // 2.5
  v_mov_b32 v2, 0x7f800000
  v_fmac_dx9_zero_f32 v1, v2, v3              // row 23: inf * 0 + 2.5
  global_store_b32 v10, v1, s[0:1] offset:92
  // Row 24: v_pk_fmac_f16.
  v_mov_b32 v1, 0x40003c00                    // f16 {1, 2}
  v_mov_b32 v2, 0x38004000                    // f16 {2, 0.5}
  v_mov_b32 v3, 0xc4004200                    // f16 {3, -4}
  v_pk_fmac_f16 v1, v2, v3                    // row 24
  global_store_b32 v10, v1, s[0:1] offset:96
  // Rows 25-30: f16 transcendental helpers (high half kept).
  v_mov_b32 v1, 0xaaaa0000
  v_mov_b32 v2, 0x3400                        // f16 0.25 revolutions
  v_sin_f16 v1, v2                            // row 25
  global_store_b32 v10, v1, s[0:1] offset:100
  v_mov_b32 v2, 0x3800                        // f16 0.5 revolutions
  v_cos_f16 v1, v2                            // row 26
  global_store_b32 v10, v1, s[0:1] offset:104
  v_mov_b32 v2, 0x4a00                        // f16 12.0
  v_frexp_mant_f16 v1, v2                     // row 27
  global_store_b32 v10, v1, s[0:1] offset:108
  v_frexp_exp_i16_f16 v1, v2                  // row 28
  global_store_b32 v10, v1, s[0:1] offset:112
  v_mov_b32 v2, 0x4000                        // quotient f16 2.0
  v_mov_b32 v3, 0                             // denominator +0
  v_mov_b32 v4, 0x3c00                        // numerator 1.0
  v_div_fixup_f16 v1, v2, v3, v4              // row 29: x / 0
  global_store_b32 v10, v1, s[0:1] offset:116
  v_mov_b32 v2, 0xc200                        // quotient -3.0
  v_mov_b32 v3, 0x4000                        // 2.0
  v_mov_b32 v4, 0x4600                        // 6.0
  v_div_fixup_f16 v1, v2, v3, v4              // row 30: the quotient's magnitude with the sign of 6 / 2
  global_store_b32 v10, v1, s[0:1] offset:120
  // Rows 31-35: bytes and offsets.
  v_mov_b32 v2, 0x43960000                    // 300.0
  v_mov_b32 v4, 0x11223344
  v_cvt_pk_u8_f32 v1, v2, 2, v4               // row 31: saturates into byte 2
  global_store_b32 v10, v1, s[0:1] offset:124
  v_mov_b32 v2, 0x40fccccd                    // 7.9
  v_cvt_pk_u8_f32 v1, v2, 1, v4               // row 32: truncates into byte 1
  global_store_b32 v10, v1, s[0:1] offset:128
  v_mov_b32 v2, 0x10ff0380
  v_mov_b32 v3, 0x20000490
  v_mov_b32 v4, 1000
  v_msad_u8 v1, v2, v3, v4                    // row 33: byte 2 of S1 is 0: skipped
  global_store_b32 v10, v1, s[0:1] offset:132
  v_mov_b32 v2, 0xfffffff9                    // low nibble 9: -7
  v_cvt_off_f32_i4 v1, v2                     // row 34
  global_store_b32 v10, v1, s[0:1] offset:136
  v_mov_b32 v2, 7
  v_cvt_off_f32_i4 v1, v2                     // row 35
  global_store_b32 v10, v1, s[0:1] offset:140
  // Rows 36-38: v_swap_b32, v_permlane64_b32 (wave32: a move), v_pipeflush (nothing).
  v_mov_b32 v1, 111
  v_mov_b32 v2, 222
  v_swap_b32 v1, v2
  v_pipeflush
  global_store_b32 v10, v1, s[0:1] offset:144 // row 36: 222
  global_store_b32 v10, v2, s[0:1] offset:148 // row 37: 111
  v_mov_b32 v3, 333
  v_permlane64_b32 v3, v2
  global_store_b32 v10, v3, s[0:1] offset:152 // row 38: 333 (a NOP in wave32)
  // Rows 39-46: VOP3P.
  v_mov_b32 v2, 0xfffe0003                    // i16 {3, -2}
  v_mov_b32 v3, 0x00070004                    // i16 {4, 7}
  v_mov_b32 v4, 0x0001fff0                    // i16 {-16, 1}
  v_pk_mad_i16 v1, v2, v3, v4                 // row 39
  global_store_b32 v10, v1, s[0:1] offset:156
  v_mov_b32 v2, 0x40404000                    // bf16 {2, 3}
  v_mov_b32 v3, 0xbf803f00                    // bf16 {0.5, -1}
  v_mov_b32 v4, 0x41200000                    // 10.0
  v_dot2_f32_bf16 v1, v2, v3, v4              // row 40
  global_store_b32 v10, v1, s[0:1] offset:160
  v_mov_b32 v2, 0xff020304
  v_mov_b32 v3, 0x02ff0506
  v_mov_b32 v4, 7
  v_dot4_u32_u8 v1, v2, v3, v4                // row 41
  global_store_b32 v10, v1, s[0:1] offset:164
  v_dot4_i32_iu8 v1, v2, v3, v4 neg_lo:[1,1,0] // row 42: both signed
  global_store_b32 v10, v1, s[0:1] offset:168
  v_dot4_i32_iu8 v1, v2, v3, v4 neg_lo:[1,0,0] // row 43: S0 signed, S1 unsigned
  global_store_b32 v10, v1, s[0:1] offset:172
  v_mov_b32 v2, 0x12345678
  v_mov_b32 v3, 0x11111111
  v_mov_b32 v4, 0
  v_dot8_u32_u4 v1, v2, v3, v4                // row 44
  global_store_b32 v10, v1, s[0:1] offset:176
  v_mov_b32 v2, 0xf0000001
  v_mov_b32 v3, 0x20000003
  v_mov_b32 v4, 5
  v_dot8_i32_iu4 v1, v2, v3, v4 neg_lo:[1,1,0] // row 45
  global_store_b32 v10, v1, s[0:1] offset:180
  v_mov_b32 v2, -1
  v_mov_b32 v4, 0xffffff00
  v_dot4_u32_u8 v1, v2, v2, v4                // row 46: wraps
  global_store_b32 v10, v1, s[0:1] offset:184
  v_dot4_u32_u8 v1, v2, v2, v4 clamp          // row 47: saturates
  global_store_b32 v10, v1, s[0:1] offset:188
  v_mov_b32 v2, 0x80808080
  v_mov_b32 v4, 0x7fffffff
  v_dot4_i32_iu8 v1, v2, v2, v4 neg_lo:[1,1,0] clamp // row 48: saturates
  global_store_b32 v10, v1, s[0:1] offset:192
  // Row 49-50: VOPD v_dual_dot2acc_f32_f16 beside a move.
  v_mov_b32 v1, 1.0
  v_mov_b32 v2, 0x42004000                    // f16 {2, 3}
  v_mov_b32 v3, 0xbc003800                    // f16 {0.5, -1}
  v_mov_b32 v5, 77
  v_dual_dot2acc_f32_f16 v1, v2, v3 :: v_dual_mov_b32 v4, v5
  global_store_b32 v10, v1, s[0:1] offset:196 // row 49
  global_store_b32 v10, v4, s[0:1] offset:200 // row 50
  // Rows 51-56: M0-relative moves. v20..v25 = 20..25.
  v_mov_b32 v20, 20
  v_mov_b32 v21, 21
  v_mov_b32 v22, 22
  v_mov_b32 v23, 23
  v_mov_b32 v24, 24
  v_mov_b32 v25, 25
  s_mov_b32 m0, 2
  v_movrels_b32 v1, v20                       // v1 = v22
  global_store_b32 v10, v1, s[0:1] offset:204 // row 51: 22
  v_movreld_b32 v20, v21                      // v22 = v21
  global_store_b32 v10, v22, s[0:1] offset:208 // row 52: 21
  v_movrelsd_b32 v21, v22                     // v23 = v24
  global_store_b32 v10, v23, s[0:1] offset:212 // row 53: 24
  s_mov_b32 m0, 0x00030001                    // source + 1, destination + 3
  v_movrelsd_2_b32 v20, v20                   // v23 = v21
  global_store_b32 v10, v23, s[0:1] offset:216 // row 54: 21
  v_swaprel_b32 v21, v20                      // v24 <-> v21: v24 = 21, v21 = 24
  global_store_b32 v10, v24, s[0:1] offset:220 // row 55: 21
  global_store_b32 v10, v21, s[0:1] offset:224 // row 56: 24
  // Rows 57-59: v_mullit_f32.
  v_mullit_f32 v1, 2.0, 0x40400000, 1.0       // row 57: 6
  global_store_b32 v10, v1, s[0:1] offset:228
  v_mullit_f32 v1, 2.0, 0x40400000, 0         // row 58: S2 <= 0: -MAX_FLOAT
  global_store_b32 v10, v1, s[0:1] offset:232
  v_mov_b32 v2, 0xff800000                    // -inf
  v_mullit_f32 v1, 2.0, v2, 1.0               // row 59: S1 = -inf: -MAX_FLOAT
  global_store_b32 v10, v1, s[0:1] offset:236
  // Rows 60-62: which NaN an fma with NaN operands gives (the interpreter's rule, FmaF32: the first NaN operand in
  // S0, S1, S2 order, quietened).
  v_mov_b32 v2, 0x7f800001                    // signalling NaN, payload 1
  v_mov_b32 v3, 0xffc00123                    // quiet NaN, negative, payload 0x123
  v_mov_b32 v4, 0x7fc00456                    // quiet NaN, payload 0x456
  v_fma_f32 v1, v2, v3, v4                    // row 60: S0's, quietened
  global_store_b32 v10, v1, s[0:1] offset:240
  v_fma_f32 v1, 1.0, v3, v4                   // row 61: S1's
  global_store_b32 v10, v1, s[0:1] offset:244
  v_mov_b32 v1, v4
  v_fmac_f32 v1, 2.0, v2                      // row 62: S1's (S0 is 2.0), not the accumulator's
  global_store_b32 v10, v1, s[0:1] offset:248
  // Rows 63-70: cube-map coordinates of (x, y, z).
  v_mov_b32 v2, 1.0
  v_mov_b32 v3, 0xc0400000                    // -3.0
  v_mov_b32 v4, 2.0
  v_cubeid_f32 v1, v2, v3, v4                 // row 63: y major, negative: face 3
  global_store_b32 v10, v1, s[0:1] offset:252
  v_cubesc_f32 v1, v2, v3, v4                 // row 64: x
  global_store_b32 v10, v1, s[0:1] offset:256
  v_cubetc_f32 v1, v2, v3, v4                 // row 65: y < 0: -z
  global_store_b32 v10, v1, s[0:1] offset:260
  v_cubema_f32 v1, v2, v3, v4                 // row 66: 2y
  global_store_b32 v10, v1, s[0:1] offset:264
  v_cubeid_f32 v1, 1.0, 2.0, -4.0             // row 67: z major, negative: face 5
  global_store_b32 v10, v1, s[0:1] offset:268
  v_cubesc_f32 v1, 1.0, 2.0, -4.0             // row 68: z < 0: -x
  global_store_b32 v10, v1, s[0:1] offset:272
  v_mov_b32 v2, 0xc0a00000                    // -5.0
  v_cubeid_f32 v1, v2, 1.0, 2.0               // row 69: x major, negative: face 1
  global_store_b32 v10, v1, s[0:1] offset:276
  v_cubesc_f32 v1, v2, 1.0, 2.0               // row 70: x < 0: z
  global_store_b32 v10, v1, s[0:1] offset:280
  // Rows 71-82: quad sums of absolute differences. S0 bytes 01..08, S2 parts 1, 2, 3, 4.
  v_mov_b32 v2, 0x04030201
  v_mov_b32 v3, 0x08070605
  v_mov_b32 v4, 0x00020001
  v_mov_b32 v5, 0x00040003
  v_mov_b32 v1, 0x04030201                    // the reference
  v_qsad_pk_u16_u8 v[12:13], v[2:3], v1, v[4:5]
  global_store_b32 v10, v12, s[0:1] offset:284 // row 71
  global_store_b32 v10, v13, s[0:1] offset:288 // row 72
  v_mov_b32 v1, 0x04000201                    // reference byte 2 is 0: skipped by the M forms
  v_mqsad_pk_u16_u8 v[12:13], v[2:3], v1, v[4:5]
  global_store_b32 v10, v12, s[0:1] offset:292 // row 73
  global_store_b32 v10, v13, s[0:1] offset:296 // row 74
  v_mov_b32 v1, 0x04030201
  v_mov_b32 v4, 0xfffe0001                    // part 1 = 0xfffe: its sum wraps in 16 bits
  v_qsad_pk_u16_u8 v[12:13], v[2:3], v1, v[4:5]
  global_store_b32 v10, v12, s[0:1] offset:300 // row 75
  global_store_b32 v10, v13, s[0:1] offset:304 // row 76
  v_mov_b32 v1, 0x04000201
  v_mov_b32 v6, 100
  v_mov_b32 v7, 200
  v_mov_b32 v8, -1
  v_mov_b32 v9, 400
  v_mqsad_u32_u8 v[12:15], v[2:3], v1, v[6:9]
  global_store_b32 v10, v12, s[0:1] offset:308 // row 77
  global_store_b32 v10, v13, s[0:1] offset:312 // row 78
  global_store_b32 v10, v14, s[0:1] offset:316 // row 79
  global_store_b32 v10, v15, s[0:1] offset:320 // row 80
  s_endpgm
