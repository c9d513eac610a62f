// Vector memory, one wave32, v0 = lane id l. s[0:1] = out, s[2:3] = in (64 bytes: bytes 0..63), s[4:5] = counter.
  v_lshlrev_b32 v10, 2, v0
  v_mov_b32 v11, 0
  global_load_u8 v1, v0, s[2:3]               // byte l of in: l
  global_store_b32 v10, v1, s[0:1]            // row 0: l
  global_load_i16 v1, v11, s[2:3] offset:62   // bytes 62, 63 = 0x3f3e, positive
  global_store_b32 v10, v1, s[0:1] offset:128 // row 1: 0x3f3e
  global_load_b64 v[2:3], v11, s[2:3] offset:8  // bytes 8..15
  global_store_b32 v10, v3, s[0:1] offset:256 // row 2: 0x0f0e0d0c
  v_mov_b32 v4, 1
  global_atomic_add_u32 v5, v11, v4, s[4:5] glc   // returns the old count: each lane a distinct 0..31
  global_store_b32 v10, v5, s[0:1] offset:384 // row 3: a permutation of 0..31
  v_mov_b32 v6, s0
  v_mov_b32 v7, s1
  v_add_co_u32 v6, vcc_lo, v6, v10
  v_add_co_ci_u32 v7, vcc_lo, 0, v7, vcc_lo
  v_mul_u32_u24 v1, v0, v0
  global_store_b32 v[6:7], v1, off offset:512 // row 4: l*l, through a 64-bit VGPR address
  v_add_nc_u32 v1, 1000, v0
  scratch_store_b32 off, v1, off offset:4     // private: each lane its own word 1
  v_mov_b32 v1, 0
  scratch_load_b32 v1, off, off offset:4
  global_store_b32 v10, v1, s[0:1] offset:640 // row 5: 1000 + l
  global_store_b16 v10, v0, s[0:1] offset:768 // row 6: low half l, high half untouched (0xaaaa pattern)
  s_endpgm
