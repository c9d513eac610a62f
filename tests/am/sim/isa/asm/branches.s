// Control flow: a scalar loop, divergent if/else under EXEC, and a per-lane loop. One wave32, v0 = l.
// s[0:1] = out.
  v_lshlrev_b32 v10, 2, v0
  s_mov_b32 s2, 0                   // sum of 1..10 by a scalar loop
  s_mov_b32 s3, 1
loop:
  s_add_u32 s2, s2, s3
  s_add_u32 s3, s3, 1
  s_cmp_le_u32 s3, 10
  s_cbranch_scc1 loop
  v_mov_b32 v1, s2                  // row 0: 55
  global_store_b32 v10, v1, s[0:1]
  v_and_b32 v2, 1, v0
  v_cmp_eq_u32 vcc_lo, 0, v2        // even lanes
  s_and_saveexec_b32 s4, vcc_lo
  s_cbranch_execz odd
  v_mul_u32_u24 v1, 10, v0          // even: 10 l
odd:
  s_xor_b32 exec_lo, exec_lo, s4    // the other lanes
  s_cbranch_execz join
  v_sub_nc_u32 v1, 0, v0            // odd: -l
join:
  s_or_b32 exec_lo, exec_lo, s4
  global_store_b32 v10, v1, s[0:1] offset:128   // row 1
  v_mov_b32 v3, v0                  // per-lane loop: count halvings of l until 0
  v_mov_b32 v4, 0
  s_mov_b32 s5, exec_lo
halve:
  v_cmp_ne_u32 vcc_lo, 0, v3
  s_and_b32 exec_lo, exec_lo, vcc_lo
  s_cbranch_execz done
  v_lshrrev_b32 v3, 1, v3
  v_add_nc_u32 v4, 1, v4
  s_branch halve
done:
  s_mov_b32 exec_lo, s5
  global_store_b32 v10, v4, s[0:1] offset:256   // row 2: bit length of l
  s_endpgm
