// VOP3 with DPP16 / DPP8 (the control word after the two VOP3 dwords): src0 comes from another lane, the VOP3
// modifiers (neg, abs, clamp, omod) and the third source still apply. One wave32, v0 = lane id l; row k of out[]
// (s[0:1]) holds out[k * 32 + l].
  v_lshlrev_b32 v40, 2, v0                        // byte offset of lane l
  v_mov_b32 v2, 100
  v_lshlrev_b32 v3, 8, v0                         // 256 l
  v_add3_u32_e64_dpp v1, v0, v2, v3 quad_perm:[1,0,3,2] row_mask:0xf bank_mask:0xf
  global_store_b32 v40, v1, s[0:1]                // row 0: (l ^ 1) + 100 + 256 l
  v_add3_u32_e64_dpp v1, v0, v2, v3 dpp8:[7,6,5,4,3,2,1,0]
  global_store_b32 v40, v1, s[0:1] offset:128     // row 1: (l ^ 7) + 100 + 256 l
  v_cvt_f32_u32 v4, v0                            // float(l)
  v_mov_b32 v5, -2.0
  v_mov_b32 v6, 0.5
  v_fma_f32_e64_dpp v1, -v4, |v5|, v6 row_shr:1 row_mask:0xf bank_mask:0xf bound_ctrl:1
  global_store_b32 v40, v1, s[0:1] offset:256     // row 2: -2 (l - 1) + 0.5; the first lane of a row reads 0
  v_mov_b32 v7, -10.0
  v_add_f32_e64_dpp v1, v4, v7 clamp mul:2 row_mirror row_mask:0xf bank_mask:0xf
  global_store_b32 v40, v1, s[0:1] offset:384     // row 3: clamp(2 (m - 10)), m the mirrored lane
  v_add_nc_u32 v8, 0xfffffff0, v0                 // l - 16
  v_mov_b32 v9, 8
  v_mov_b32 v1, 0xdead
  v_add_co_u32_e64_dpp v1, s3, v8, v9 row_shl:1 row_mask:0xf bank_mask:0xf
  global_store_b32 v40, v1, s[0:1] offset:512     // row 4: (l + 1 - 16) + 8; the last lane of a row is not written
  v_mov_b32 v1, s3
  global_store_b32 v40, v1, s[0:1] offset:640     // row 5: the carries
  v_mov_b32 v10, 0x40c00000                       // 6.0
  v_cmp_lt_f32_e64_dpp s4, v4, v10 quad_perm:[0,0,0,0] row_mask:0xf bank_mask:0xf
  v_mov_b32 v1, s4
  global_store_b32 v40, v1, s[0:1] offset:768     // row 6: float(l & ~3) < 6
  s_mov_b32 s6, 0xffff
  v_mov_b32 v12, 1000
  v_cndmask_b32_e64_dpp v1, v0, v12, s6 dpp8:[1,0,3,2,5,4,7,6]
  global_store_b32 v40, v1, s[0:1] offset:896     // row 7: l < 16 ? 1000 : l ^ 1
  v_mul_f32 v13, -v4, v4                          // -l^2
  v_mov_b32 v1, 0xdeadbeef
  v_sqrt_f32_e64_dpp v1, -v13 row_xmask:1 row_mask:0x5 bank_mask:0xa
  global_store_b32 v40, v1, s[0:1] offset:1024    // row 8: sqrt((l ^ 1)^2) in banks 1 and 3 of row 0
  v_mov_b32_e64_dpp v1, v0 row_share:3 row_mask:0xf bank_mask:0xf
  global_store_b32 v40, v1, s[0:1] offset:1152    // row 9: lane 3 of l's row
  // Rows 10-14: EXEC holds the even lanes only, so every source lane the swaps pick is inactive. v1 starts as
  // 0xdead in every lane; EXEC is whole again for each store.
.macro inactive_source_row offset, op:vararg
  v_mov_b32 v1, 0xdead
  s_mov_b32 exec_lo, 0x55555555
  \op
  s_mov_b32 exec_lo, -1
  global_store_b32 v40, v1, s[0:1] offset:\offset
.endm
  inactive_source_row 1280, v_add_nc_u32_e64_dpp v1, v0, v2 dpp8:[1,0,3,2,5,4,7,6]        // row 10: 0 + 100
  inactive_source_row 1408, v_add_nc_u32_e64_dpp v1, v0, v2 dpp8:[1,0,3,2,5,4,7,6] fi:1   // row 11: l + 1 + 100
  inactive_source_row 1536, v_add_nc_u32_e64_dpp v1, v0, v2 quad_perm:[1,0,3,2] row_mask:0xf bank_mask:0xf
  inactive_source_row 1664, v_add_nc_u32_e64_dpp v1, v0, v2 quad_perm:[1,0,3,2] row_mask:0xf bank_mask:0xf bound_ctrl:1
  inactive_source_row 1792, v_add_nc_u32_e64_dpp v1, v0, v2 quad_perm:[1,0,3,2] row_mask:0xf bank_mask:0xf fi:1
  // VOP3P with DPP.
  v_fma_mix_f32_e64_dpp v1, v4, v5, v6 quad_perm:[1,0,3,2] row_mask:0xf bank_mask:0xf
  global_store_b32 v40, v1, s[0:1] offset:1920    // row 15: float(l ^ 1) * -2 + 0.5 (f32 sources)
  v_cvt_f16_u16 v44, v0
  v_pack_b32_f16 v41, v44, 1.0                    // halves: l (low), 1.0 (high)
  v_mov_b32 v42, 0x42004000                       // halves: 2.0 (low), 3.0 (high)
  v_mov_b32 v43, 0.25
  v_dot2_f32_f16_e64_dpp v1, v41, v42, v43 dpp8:[7,6,5,4,3,2,1,0]
  global_store_b32 v40, v1, s[0:1] offset:2048    // row 16: 2 (l ^ 7) + 3 + 0.25
  s_endpgm
