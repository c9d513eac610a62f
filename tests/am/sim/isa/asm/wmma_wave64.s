// V_WMMA_* in wave64 (assembled with +wavefrontsize64): C and D take 4 VGPRs, 4 rows each. s[0:1] = out,
// s[2:3] = in, s[4:5] = EXEC for the WMMAs. in[] holds register images, four VGPRs per 1024-byte slot: slot s,
// lane l, dword j at in[(s * 64 + l) * 4 + j]; slots 0-8 load v8-v43: v[8:15] A f16, v[16:23] B f16, v[24:27]
// C f32, v[28:31] C f16 (packed), v[32:35] A iu8, v[36:39] B iu8, v[40:43] C i32. The results v28-v51 are
// stored to out[] the same way (slot s = v[28 + 4s : 31 + 4s]).
  v_lshlrev_b32 v1, 4, v0                          // lane * 16 bytes
  global_load_b128 v[8:11], v1, s[2:3]
  global_load_b128 v[12:15], v1, s[2:3] offset:1024
  global_load_b128 v[16:19], v1, s[2:3] offset:2048
  global_load_b128 v[20:23], v1, s[2:3] offset:3072
  v_add_nc_u32 v1, 0x1000, v1
  global_load_b128 v[24:27], v1, s[2:3]
  global_load_b128 v[28:31], v1, s[2:3] offset:1024
  global_load_b128 v[32:35], v1, s[2:3] offset:2048
  global_load_b128 v[36:39], v1, s[2:3] offset:3072
  v_add_nc_u32 v1, 0x1000, v1
  global_load_b128 v[40:43], v1, s[2:3]
  s_waitcnt vmcnt(0)
  s_mov_b64 exec, s[4:5]
  v_wmma_f32_16x16x16_f16 v[44:47], v[8:15], v[16:23], v[24:27]
  v_wmma_f16_16x16x16_f16 v[28:31], v[8:15], v[16:23], v[28:31] op_sel:[0,0,1]       // high halves
  v_wmma_i32_16x16x16_iu8 v[48:51], v[32:35], v[36:39], v[40:43] neg_lo:[1,1,0]
  s_mov_b64 exec, -1
  v_lshlrev_b32 v1, 4, v0
  global_store_b128 v1, v[28:31], s[0:1]
  global_store_b128 v1, v[32:35], s[0:1] offset:1024
  global_store_b128 v1, v[36:39], s[0:1] offset:2048
  global_store_b128 v1, v[40:43], s[0:1] offset:3072
  v_add_nc_u32 v1, 0x1000, v1
  global_store_b128 v1, v[44:47], s[0:1]
  global_store_b128 v1, v[48:51], s[0:1] offset:1024
  s_endpgm
