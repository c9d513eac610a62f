// v_min3/v_max3/v_med3 on 16-bit operands (u16, i16, f16): what clang emits for a reduction over bytes or halves
// (tinygrad's uint8 min of six values is v_min_u16 then two v_min3_u16). One lane; out[k] (s[0:1]) is row k.
  v_mov_b32 v10, 0
  v_mov_b32 v2, 0x38000                 // low half 0x8000: 32768 unsigned, -32768 signed; high half 3
  v_mov_b32 v3, 5
  v_mov_b32 v4, 0xffff0007              // low half 7; the high half must not leak in without op_sel
  v_mov_b32 v1, 0xaaaa0000              // a 16-bit result keeps the other half of its destination
  v_min3_u16 v1, v2, v3, v4             // row 0: 0xaaaa0005
  global_store_b32 v10, v1, s[0:1]
  v_max3_u16 v1, v2, v3, v4             // row 1: 0xaaaa8000
  global_store_b32 v10, v1, s[0:1] offset:4
  v_min3_i16 v1, v2, v3, v4             // row 2: 0xaaaa8000 (-32768)
  global_store_b32 v10, v1, s[0:1] offset:8
  v_max3_i16 v1, v2, v3, v4             // row 3: 0xaaaa0007
  global_store_b32 v10, v1, s[0:1] offset:12
  v_med3_u16 v1, v2, v3, v4             // row 4: 0xaaaa0007
  global_store_b32 v10, v1, s[0:1] offset:16
  v_med3_i16 v1, v2, v3, v4             // row 5: 0xaaaa0005
  global_store_b32 v10, v1, s[0:1] offset:20
  v_mov_b32 v1, 0xbbbb
  v_min3_u16 v1, v2, v3, v4 op_sel:[1,0,0,1]   // row 6: min(3, 5, 7) into the high half: 0x0003bbbb
  global_store_b32 v10, v1, s[0:1] offset:24
  v_mov_b32 v5, 0x3c00                  // 1.0
  v_mov_b32 v6, 0xc000                  // -2.0
  v_mov_b32 v7, 0x7e00                  // quiet NaN
  v_mov_b32 v8, 0x3800                  // 0.5
  v_mov_b32 v1, 0
  v_min3_f16 v1, v5, v6, v7             // row 7: a NaN operand is ignored, as by v_min_f16: -2.0 (0xc000)
  global_store_b32 v10, v1, s[0:1] offset:28
  v_max3_f16 v1, v5, v6, v7             // row 8: 1.0 (0x3c00)
  global_store_b32 v10, v1, s[0:1] offset:32
  v_med3_f16 v1, v5, v6, v8             // row 9: 0.5 (0x3800)
  global_store_b32 v10, v1, s[0:1] offset:36
  v_med3_f16 v1, v5, v6, v7             // row 10: with a NaN the ISA takes v_min3_f16: -2.0 (0xc000)
  global_store_b32 v10, v1, s[0:1] offset:40
  v_med3_f16 v1, 2.0, v5, -1.0          // row 11: f16 inline constants: 1.0 (0x3c00)
  global_store_b32 v10, v1, s[0:1] offset:44
  s_endpgm
