// Workgroup ids: s[0:1] = out, s2 = workgroup id X (the first system SGPR after two user SGPRs), v0 = lane l.
// out[wg * 32 + l] = wg * 100 + l.
  s_lshl_b32 s3, s2, 7
  v_lshlrev_b32 v1, 2, v0
  v_add_nc_u32 v1, s3, v1
  s_mul_i32 s4, s2, 100
  v_add_nc_u32 v2, s4, v0
  global_store_b32 v1, v2, s[0:1]
  s_endpgm
