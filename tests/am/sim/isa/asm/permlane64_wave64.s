// V_PERMLANE64_B32 in wave64 (RDNA3 ISA pseudocode): lane l takes S0 of lane l ^ 32, for the lanes EXEC enables,
// whatever EXEC says of the source lane. 64 lanes; v0 is the lane. out[l] is the full-EXEC result, out[64 + l] the
// result with only lanes 0-31 enabled (lanes 32-63 keep 7).
  v_mul_u32_u24 v1, 10, v0
  v_lshlrev_b32 v3, 2, v0
  v_permlane64_b32 v2, v1
  global_store_b32 v3, v2, s[0:1]
  v_mov_b32 v4, 7
  s_mov_b32 exec_hi, 0
  v_permlane64_b32 v4, v1
  s_mov_b32 exec_hi, -1
  global_store_b32 v3, v4, s[0:1] offset:256
  s_endpgm
