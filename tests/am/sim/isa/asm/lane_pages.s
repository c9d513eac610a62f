// Wide global loads and stores whose lanes interleave over 8 pages, as tinygrad's matmul reads rows of a matrix:
// lane l at s[0:1] + (l % 8) * s7 + 16 * (l / 8) + s6. s[2:3]: out, where every lane (EXEC or not) stores
// v[10:13] at out + 16l afterwards; v[10:13] start as 0xdead0000 | l, 0xbeef0000 | l, 0xcafe0000 | l,
// 0xf00d0000 | l (a load's untouched lanes keep them, a store stores them). s4: EXEC. s8: the access, 0-2
// global_load_b64/b96/b128 with a 64-bit VGPR address, 3-5 global_store_b64/b96/b128 with one, 6 global_load_quad
// and 7 global_store_b128 with an SGPR base.
  v_and_b32 v1, 7, v0
  v_mul_u32_u24 v1, s7, v1
  v_lshrrev_b32 v2, 3, v0
  v_lshl_add_u32 v1, v2, 4, v1
  v_add_nc_u32 v1, s6, v1
  v_mov_b32 v3, 0
  v_add_co_u32 v2, vcc_lo, s0, v1
  v_add_co_ci_u32_e32 v3, vcc_lo, s1, v3, vcc_lo
  v_or_b32 v10, 0xdead0000, v0
  v_or_b32 v11, 0xbeef0000, v0
  v_or_b32 v12, 0xcafe0000, v0
  v_or_b32 v13, 0xf00d0000, v0
  v_lshlrev_b32 v20, 4, v0
  s_mov_b32 exec_lo, s4
  s_cmp_eq_u32 s8, 0
  s_cbranch_scc1 load_pair
  s_cmp_eq_u32 s8, 1
  s_cbranch_scc1 load_triple
  s_cmp_eq_u32 s8, 2
  s_cbranch_scc1 load_quad
  s_cmp_eq_u32 s8, 3
  s_cbranch_scc1 store_pair
  s_cmp_eq_u32 s8, 4
  s_cbranch_scc1 store_triple
  s_cmp_eq_u32 s8, 5
  s_cbranch_scc1 store_quad
  s_cmp_eq_u32 s8, 6
  s_cbranch_scc1 load_b128_saddr
  global_store_b128 v1, v[10:13], s[0:1]
  s_branch out
load_pair:
  global_load_b64 v[10:11], v[2:3], off
  s_branch out
load_triple:
  global_load_b96 v[10:12], v[2:3], off
  s_branch out
load_quad:
  global_load_b128 v[10:13], v[2:3], off
  s_branch out
store_pair:
  global_store_b64 v[2:3], v[10:11], off
  s_branch out
store_triple:
  global_store_b96 v[2:3], v[10:12], off
  s_branch out
store_quad:
  global_store_b128 v[2:3], v[10:13], off
  s_branch out
load_b128_saddr:
  global_load_b128 v[10:13], v1, s[0:1]
out:
  s_waitcnt vmcnt(0)
  s_mov_b32 exec_lo, -1
  global_store_b128 v20, v[10:13], s[2:3]
  s_endpgm
