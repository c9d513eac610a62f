// v_permlane16_b32 / v_permlanex16_b32 on a full wave32: S1 (lanes 0-7) and S2 (lanes 8-15) hold a 4-bit source
// lane per destination lane of each row of 16 (nibble i for lane i); permlanex16 reads the other row. Here lanes 0-7
// of a row take its lanes 7..0 and lanes 8-15 its lanes 15..8. out[l] (s[0:1]) is permlane16's result, out[32 + l]
// permlanex16's.
  v_lshlrev_b32 v10, 2, v0              // byte offset of lane l
  v_mul_u32_u24 v2, v0, 10              // v2 = 10 * l
  s_mov_b32 s4, 0x01234567              // lanes 0-7 read 7, 6, ..., 0 (nibble 0 is 7)
  s_mov_b32 s5, 0x89abcdef              // lanes 8-15 read 15, 14, ..., 8 (nibble 0 is 15)
  v_permlane16_b32 v1, v2, s4, s5
  global_store_b32 v10, v1, s[0:1]
  v_permlanex16_b32 v1, v2, s4, s5
  global_store_b32 v10, v1, s[0:1] offset:128
  s_endpgm
