// Scalar ALU: results stored by lane 0 to out[] (s[0:1] = out). Expected values are worked out in
// executor_test.cc from the RDNA3 ISA's descriptions.
  s_mov_b32 s2, 7
  s_add_u32 s3, s2, 0xfffffffe      // 5, SCC = carry = 1
  s_cselect_b32 s4, 1, 2            // 1
  s_mul_i32 s5, s2, -3              // -21
  s_lshl_b64 s[6:7], 1, 40          // s6 = 0, s7 = 0x100
  s_mov_b32 s8, 0x80008
  s_bfe_u32 s8, 0xabcd1234, s8      // offset 8, width 8: 0x12
  s_movk_i32 s9, 0x8000             // 0xffff8000
  s_cmp_lt_i32 s9, 0                // SCC = 1
  s_cselect_b32 s10, 64, -16        // 64
  s_ctz_i32_b32 s11, 0x80           // 7
  s_bcnt1_i32_b32 s12, 0xff         // 8
  s_sub_u32 s13, 3, 5               // 0xfffffffe, SCC = borrow = 1
  s_subb_u32 s14, 10, 0             // 10 - 0 - 1 = 9
  s_ashr_i32 s15, -64, 3            // -8
  s_max_i32 s16, -5, 3              // 3
  s_and_not1_b32 s17, 0xff, 0x0f    // 0xf0
  s_lshl2_add_u32 s18, 3, 100       // 112
  s_mul_hi_u32 s19, 0x80000000, 6   // 3
  s_sext_i32_i8 s20, 0x80           // -128
  s_brev_b32 s21, 1                 // 0x80000000
  v_mov_b32 v0, 0
  v_mov_b32 v1, s3
  global_store_b32 v0, v1, s[0:1]
  v_mov_b32 v1, s4
  global_store_b32 v0, v1, s[0:1] offset:4
  v_mov_b32 v1, s5
  global_store_b32 v0, v1, s[0:1] offset:8
  v_mov_b32 v1, s6
  v_mov_b32 v2, s7
  global_store_b64 v0, v[1:2], s[0:1] offset:12
  v_mov_b32 v1, s8
  global_store_b32 v0, v1, s[0:1] offset:20
  v_mov_b32 v1, s9
  global_store_b32 v0, v1, s[0:1] offset:24
  v_mov_b32 v1, s10
  global_store_b32 v0, v1, s[0:1] offset:28
  v_mov_b32 v1, s11
  global_store_b32 v0, v1, s[0:1] offset:32
  v_mov_b32 v1, s12
  global_store_b32 v0, v1, s[0:1] offset:36
  v_mov_b32 v1, s13
  global_store_b32 v0, v1, s[0:1] offset:40
  v_mov_b32 v1, s14
  global_store_b32 v0, v1, s[0:1] offset:44
  v_mov_b32 v1, s15
  global_store_b32 v0, v1, s[0:1] offset:48
  v_mov_b32 v1, s16
  global_store_b32 v0, v1, s[0:1] offset:52
  v_mov_b32 v1, s17
  global_store_b32 v0, v1, s[0:1] offset:56
  v_mov_b32 v1, s18
  global_store_b32 v0, v1, s[0:1] offset:60
  v_mov_b32 v1, s19
  global_store_b32 v0, v1, s[0:1] offset:64
  v_mov_b32 v1, s20
  global_store_b32 v0, v1, s[0:1] offset:68
  v_mov_b32 v1, s21
  global_store_b32 v0, v1, s[0:1] offset:72
  s_endpgm
