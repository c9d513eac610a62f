// v_mad_u64_u32 / v_mad_i64_i32 and their VOP3SD carry-out (RDNA3 ISA: { D1, D0 } = the 65-bit S0 * S1 + S2).
// One wave32, v0 = lane id l; row k of out[] (s[0:1]) holds out[k * 32 + l].
  v_lshlrev_b32 v10, 2, v0
  v_lshlrev_b32 v1, 27, v0                        // l * 2^27
  v_mov_b32 v2, 0
  v_mov_b32 v3, 0xc0000000                        // S2 = 0xc000000000000000
  v_mad_u64_u32 v[4:5], s4, -1, v1, v[2:3]        // (2^32 - 1) * l * 2^27 + 3 * 2^62
  global_store_b32 v10, v4, s[0:1]                // row 0: low dword
  global_store_b32 v10, v5, s[0:1] offset:128     // row 1: high dword
  v_mov_b32 v6, s4
  global_store_b32 v10, v6, s[0:1] offset:256     // row 2: the carry mask
  v_mad_i64_i32 v[4:5], s5, v0, -1, 5             // 5 - l
  global_store_b32 v10, v4, s[0:1] offset:384     // row 3
  global_store_b32 v10, v5, s[0:1] offset:512     // row 4
  v_mov_b32 v6, s5
  global_store_b32 v10, v6, s[0:1] offset:640     // row 5: bit 64 of the 65-bit signed sum
  v_mov_b32 v2, -1
  v_bfrev_b32 v3, -2                              // S2 = 0x7fffffffffffffff
  s_mov_b32 vcc_lo, -1
  v_mad_i64_i32 v[4:5], vcc_lo, 0x7fffffff, 0x7fffffff, v[2:3]   // (2^31 - 1)^2 + 2^63 - 1: past INT64_MAX
  global_store_b32 v10, v4, s[0:1] offset:768     // row 6
  global_store_b32 v10, v5, s[0:1] offset:896     // row 7
  v_mov_b32 v6, vcc_lo
  global_store_b32 v10, v6, s[0:1] offset:1024    // row 8
  s_endpgm
