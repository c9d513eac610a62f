// VOP3 operations tinygrad-style kernels may reach that the interpreter lacked (issue 24): v_maxmin/v_minmax_f16,
// v_mad_u16/i16 (with and without clamp), v_sad_u8/hi_u8/u16/u32, v_lerp_u8. One lane; out[k] (s[0:1]) is row k.
  v_mov_b32 v10, 0
  v_mov_b32 v5, 0x3c00                  // 1.0
  v_mov_b32 v6, 0xc000                  // -2.0
  v_mov_b32 v8, 0x3800                  // 0.5
  v_mov_b32 v1, 0xaaaa0000              // a 16-bit result keeps the other half of its destination
  v_maxmin_f16 v1, v5, v6, v8           // row 0: min(max(1, -2), 0.5) = 0.5: 0xaaaa3800
  global_store_b32 v10, v1, s[0:1]
  v_minmax_f16 v1, v5, v6, v8           // row 1: max(min(1, -2), 0.5) = 0.5 ... with 1.0 as the third: see row 2
  global_store_b32 v10, v1, s[0:1] offset:4
  v_minmax_f16 v1, v6, v8, v5           // row 2: max(min(-2, 0.5), 1) = 1.0: 0xaaaa3c00
  global_store_b32 v10, v1, s[0:1] offset:8
  v_mov_b32 v2, 300
  v_mov_b32 v3, 300
  v_mov_b32 v4, 7
  v_mad_u16 v1, v2, v3, v4              // row 3: 90007 wraps to 90007 - 65536 = 24471 (0x5f97): 0xaaaa5f97
  global_store_b32 v10, v1, s[0:1] offset:12
  v_mad_u16 v1, v2, v3, v4 clamp        // row 4: saturates: 0xaaaaffff
  global_store_b32 v10, v1, s[0:1] offset:16
  v_mov_b32 v7, 0xff9c                  // -100
  v_mad_i16 v1, v2, v7, v4              // row 5: -29993 (0x8ad7): 0xaaaa8ad7
  global_store_b32 v10, v1, s[0:1] offset:20
  v_mad_i16 v1, v2, v7, v4 clamp        // row 6: -29993 fits: the same
  global_store_b32 v10, v1, s[0:1] offset:24
  v_mad_i16 v1, v2, v3, v7 clamp        // row 7: 89900 saturates to 32767: 0xaaaa7fff
  global_store_b32 v10, v1, s[0:1] offset:28
  v_mov_b32 v2, 0x10ff0380
  v_mov_b32 v3, 0x20000490
  v_mov_b32 v4, 1000
  v_sad_u8 v1, v2, v3, v4               // row 8: 1000 + 16 + 255 + 1 + 16 = 1288
  global_store_b32 v10, v1, s[0:1] offset:32
  v_sad_hi_u8 v1, v2, v3, v4            // row 9: 1000 + (288 << 16) = 0x012003e8
  global_store_b32 v10, v1, s[0:1] offset:36
  v_sad_u16 v1, v2, v3, v4              // row 10: 1000 + |0x10ff - 0x2000| + |0x0380 - 0x0490| = 1000 + 3841 + 272 = 5113
  global_store_b32 v10, v1, s[0:1] offset:40
  v_sad_u32 v1, v3, v2, v4              // row 11: 1000 + 0x0f010110 = 0x0f0104f8
  global_store_b32 v10, v1, s[0:1] offset:44
  v_mov_b32 v2, 0x01ff0403
  v_mov_b32 v3, 0x02ff0605
  v_mov_b32 v4, 0x00000100              // rounding bit set for byte 1 only
  v_lerp_u8 v1, v2, v3, v4              // row 12: bytes (1+2+0)>>1=1, (255+255+0)>>1=255, (4+6+1)>>1=5, (3+5+0)>>1=4: 0x01ff0504
  global_store_b32 v10, v1, s[0:1] offset:48
  s_endpgm
