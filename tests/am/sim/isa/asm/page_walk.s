// Stores whose lanes walk off the end of a mapped page: lane l at s[0:1] + 256l, so lane 16 is the first past a
// 4 KiB page. s2: EXEC; s3: 0 for global_store_b32 of 0x1000 + l, else global_store_b64 of { 0x1000 + l, its
// complement } at offset 252, which lane 15 stores across the end of the page.
  s_mov_b32 exec_lo, s2
  v_lshlrev_b32 v1, 8, v0
  v_add_nc_u32 v2, 0x1000, v0
  v_not_b32 v3, v2
  s_cmp_eq_u32 s3, 0
  s_cbranch_scc0 wide
  global_store_b32 v1, v2, s[0:1]
  s_endpgm
wide:
  global_store_b64 v1, v[2:3], s[0:1] offset:252
  s_endpgm
