// FLAT with generic addresses: the aperture registers, and addresses inside the shared (LDS) and private (scratch)
// apertures. One wave32, v0 = lane id l, 512 bytes of LDS, 8 private bytes per lane; row k of out[] (s[0:1]) holds
// out[k * 32 + l].
.macro store_row row, vgpr
  global_store_b32 v10, \vgpr, s[0:1] offset:(\row * 128)
.endm
  v_lshlrev_b32 v10, 2, v0                        // byte offset of lane l
  s_mov_b64 s[2:3], src_shared_base
  s_mov_b64 s[4:5], src_private_base
  s_mov_b64 s[6:7], src_shared_limit
  s_mov_b32 s8, src_private_base                  // 32-bit reads
  s_mov_b32 s9, src_shared_limit
  v_mov_b32 v1, s2
  store_row 0, v1
  v_mov_b32 v1, s3
  store_row 1, v1
  v_mov_b32 v1, s4
  store_row 2, v1
  v_mov_b32 v1, s5
  store_row 3, v1
  v_mov_b32 v1, s6
  store_row 4, v1
  v_mov_b32 v1, s7
  store_row 5, v1
  v_mov_b32 v1, s8
  store_row 6, v1
  v_mov_b32 v1, s9
  store_row 7, v1
  // LDS through the shared aperture.
  v_mov_b32 v2, v10
  v_mov_b32 v3, s3
  v_add_nc_u32 v4, 1000, v0
  flat_store_b32 v[2:3], v4                       // LDS[4l] = 1000 + l
  s_waitcnt vmcnt(0) lgkmcnt(0)
  ds_load_b32 v5, v10
  s_waitcnt lgkmcnt(0)
  store_row 8, v5                                 // row 8: 1000 + l, read back by DS
  v_sub_nc_u32 v12, 31, v0
  v_lshlrev_b32 v12, 2, v12
  v_mov_b32 v13, s3
  flat_load_b32 v6, v[12:13]
  s_waitcnt vmcnt(0) lgkmcnt(0)
  store_row 9, v6                                 // row 9: 1000 + 31 - l
  v_mov_b32 v14, 256
  v_mov_b32 v15, s3
  v_mov_b32 v16, 1
  flat_atomic_add_u32 v7, v[14:15], v16 glc       // LDS[256] += 1 from every lane
  s_waitcnt vmcnt(0) lgkmcnt(0)
  store_row 10, v7                                // row 10: the old values, 0..31 once each
  v_mov_b32 v17, 0
  ds_load_b32 v7, v17 offset:256
  s_waitcnt lgkmcnt(0)
  store_row 11, v7                                // row 11: 32
  v_mov_b32 v8, 0xdead
  v_mov_b32 v14, 0x1000                           // past the 512 bytes of LDS
  flat_load_b32 v8, v[14:15]
  s_waitcnt vmcnt(0) lgkmcnt(0)
  store_row 12, v8                                // row 12: 0
  // Scratch through the private aperture.
  v_mov_b32 v18, 4
  v_mov_b32 v19, s5
  v_mul_u32_u24 v20, v0, 3
  flat_store_b32 v[18:19], v20                    // private offset 4 = 3l
  s_waitcnt vmcnt(0) lgkmcnt(0)
  scratch_load_b32 v21, off, off offset:4
  s_waitcnt vmcnt(0)
  store_row 13, v21                               // row 13: 3l, read back by SCRATCH
  v_add_nc_u32 v22, 500, v0
  scratch_store_b32 off, v22, off
  v_mov_b32 v24, 0
  v_mov_b32 v25, s5
  flat_load_b32 v23, v[24:25]
  s_waitcnt vmcnt(0) lgkmcnt(0)
  store_row 14, v23                               // row 14: 500 + l
  // A global address through FLAT.
  v_add_co_u32 v26, vcc_lo, s0, v10
  v_add_co_ci_u32_e64 v27, null, s1, 0, vcc_lo
  v_add_nc_u32 v28, 7, v0
  flat_store_b32 v[26:27], v28 offset:1920        // row 15: l + 7
  s_endpgm
