// V_WMMA_* in wave32 (asm/wmma_wave64.s: wave64). s[0:1] = out, s[2:3] = in, s4 = EXEC for the WMMAs.
// in[] holds register images, four VGPRs per 512-byte slot: slot s, lane l, dword j at in[(s * 32 + l) * 4 + j].
// Slots 0-20 load v8-v91, slots 21-22 v172-v179 (what the WMMA into v[172:179] keeps). Inputs:
//   v[8:15] A f16, v[16:23] B f16, v[24:31] A bf16, v[32:39] B bf16, v[40:43] A iu8, v[44:47] B iu8,
//   v[48:49] A iu4, v[50:51] B iu4, v[52:59] C f32, v[60:67] C i32, v[68:75] and v[84:91] C f16 (packed),
//   v[76:83] C bf16 (packed).
// The results v68-v179 are stored to out[] the same way (slot s = v[68 + 4s : 71 + 4s]).
  v_lshlrev_b32 v1, 4, v0                          // lane * 16 bytes
  global_load_b128 v[8:11], v1, s[2:3]
  global_load_b128 v[12:15], v1, s[2:3] offset:512
  global_load_b128 v[16:19], v1, s[2:3] offset:1024
  global_load_b128 v[20:23], v1, s[2:3] offset:1536
  global_load_b128 v[24:27], v1, s[2:3] offset:2048
  global_load_b128 v[28:31], v1, s[2:3] offset:2560
  global_load_b128 v[32:35], v1, s[2:3] offset:3072
  global_load_b128 v[36:39], v1, s[2:3] offset:3584
  v_add_nc_u32 v1, 0x1000, v1
  global_load_b128 v[40:43], v1, s[2:3]
  global_load_b128 v[44:47], v1, s[2:3] offset:512
  global_load_b128 v[48:51], v1, s[2:3] offset:1024
  global_load_b128 v[52:55], v1, s[2:3] offset:1536
  global_load_b128 v[56:59], v1, s[2:3] offset:2048
  global_load_b128 v[60:63], v1, s[2:3] offset:2560
  global_load_b128 v[64:67], v1, s[2:3] offset:3072
  global_load_b128 v[68:71], v1, s[2:3] offset:3584
  v_add_nc_u32 v1, 0x1000, v1
  global_load_b128 v[72:75], v1, s[2:3]
  global_load_b128 v[76:79], v1, s[2:3] offset:512
  global_load_b128 v[80:83], v1, s[2:3] offset:1024
  global_load_b128 v[84:87], v1, s[2:3] offset:1536
  global_load_b128 v[88:91], v1, s[2:3] offset:2048
  global_load_b128 v[172:175], v1, s[2:3] offset:2560
  global_load_b128 v[176:179], v1, s[2:3] offset:3072
  s_waitcnt vmcnt(0)
  s_mov_b32 exec_lo, s4
  v_wmma_f32_16x16x16_f16 v[92:99], v[8:15], v[16:23], v[52:59]
  v_wmma_f32_16x16x16_bf16 v[100:107], v[24:31], v[32:39], v[52:59]
  v_wmma_f16_16x16x16_f16 v[68:75], v[8:15], v[16:23], v[68:75]                      // low halves
  v_wmma_f16_16x16x16_f16 v[84:91], v[8:15], v[16:23], v[84:91] op_sel:[0,0,1]       // high halves
  v_wmma_bf16_16x16x16_bf16 v[76:83], v[24:31], v[32:39], v[76:83]
  v_wmma_i32_16x16x16_iu8 v[108:115], v[40:43], v[44:47], v[60:67] neg_lo:[1,1,0]    // signed x signed
  v_wmma_i32_16x16x16_iu8 v[116:123], v[40:43], v[44:47], v[60:67]                   // unsigned x unsigned
  v_wmma_i32_16x16x16_iu8 v[124:131], v[40:43], v[44:47], v[60:67] neg_lo:[1,0,0] clamp
  v_wmma_i32_16x16x16_iu4 v[132:139], v[48:49], v[50:51], v[60:67] neg_lo:[1,1,0]
  v_wmma_i32_16x16x16_iu4 v[140:147], v[48:49], v[50:51], v[60:67] neg_lo:[0,1,0] clamp
  v_wmma_f32_16x16x16_f16 v[148:155], v[8:15], v[16:23], 1.0
  v_wmma_f32_16x16x16_f16 v[156:163], v[8:15], v[16:23], v[52:59] neg_lo:[1,0,1] neg_hi:[1,0,0]  // -A x B - C
  v_wmma_f32_16x16x16_f16 v[164:171], v[8:15], v[16:23], v[52:59] neg_lo:[0,1,0] neg_hi:[0,0,1]  // B even k: -B; |C|
  v_wmma_f16_16x16x16_f16 v[172:179], v[8:15], v[16:23], -2.0                        // low halves
  s_mov_b32 exec_lo, -1
  v_lshlrev_b32 v1, 4, v0
  global_store_b128 v1, v[68:71], s[0:1]
  global_store_b128 v1, v[72:75], s[0:1] offset:512
  global_store_b128 v1, v[76:79], s[0:1] offset:1024
  global_store_b128 v1, v[80:83], s[0:1] offset:1536
  global_store_b128 v1, v[84:87], s[0:1] offset:2048
  global_store_b128 v1, v[88:91], s[0:1] offset:2560
  global_store_b128 v1, v[92:95], s[0:1] offset:3072
  global_store_b128 v1, v[96:99], s[0:1] offset:3584
  v_add_nc_u32 v1, 0x1000, v1
  global_store_b128 v1, v[100:103], s[0:1]
  global_store_b128 v1, v[104:107], s[0:1] offset:512
  global_store_b128 v1, v[108:111], s[0:1] offset:1024
  global_store_b128 v1, v[112:115], s[0:1] offset:1536
  global_store_b128 v1, v[116:119], s[0:1] offset:2048
  global_store_b128 v1, v[120:123], s[0:1] offset:2560
  global_store_b128 v1, v[124:127], s[0:1] offset:3072
  global_store_b128 v1, v[128:131], s[0:1] offset:3584
  v_add_nc_u32 v1, 0x1000, v1
  global_store_b128 v1, v[132:135], s[0:1]
  global_store_b128 v1, v[136:139], s[0:1] offset:512
  global_store_b128 v1, v[140:143], s[0:1] offset:1024
  global_store_b128 v1, v[144:147], s[0:1] offset:1536
  global_store_b128 v1, v[148:151], s[0:1] offset:2048
  global_store_b128 v1, v[152:155], s[0:1] offset:2560
  global_store_b128 v1, v[156:159], s[0:1] offset:3072
  global_store_b128 v1, v[160:163], s[0:1] offset:3584
  v_add_nc_u32 v1, 0x1000, v1
  global_store_b128 v1, v[164:167], s[0:1]
  global_store_b128 v1, v[168:171], s[0:1] offset:512
  global_store_b128 v1, v[172:175], s[0:1] offset:1024
  global_store_b128 v1, v[176:179], s[0:1] offset:1536
  s_endpgm
