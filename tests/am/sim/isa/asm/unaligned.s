// Unaligned accesses, which SH_MEM_CONFIG.ALIGNMENT_MODE decides about (RDNA3 ISA 3.3.3). One lane; s[0:1] = in
// (bytes 0, 1, 2, ...), s[2:3] = out; 512 bytes of LDS.
  v_mov_b32 v0, 0
  global_load_b32 v1, v0, s[0:1] offset:1
  s_waitcnt vmcnt(0)
  global_store_b32 v0, v1, s[2:3]                 // out[0]: the dword at in + 1, or at in + 0 aligned down
  v_mov_b32 v2, 0x44332211
  v_mov_b32 v3, 0xccbbaa99
  ds_store_b32 v0, v2                             // LDS bytes 11 22 33 44 99 aa bb cc
  ds_store_b32 v0, v3 offset:4
  ds_load_b32 v4, v0 offset:2
  s_waitcnt lgkmcnt(0)
  global_store_b32 v0, v4, s[2:3] offset:4        // out[1]: LDS bytes 2..5, or 0..3 aligned down
  s_endpgm
