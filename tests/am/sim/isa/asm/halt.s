// s_trap and s_sethalt with no trap handler and no debugger. One lane; s[0:1] = out, s2 selects the path
// (0: s_trap, else s_sethalt). out[0], out[1] are written before the stop, out[2] never.
  v_mov_b32 v10, 0
  v_mov_b32 v1, 0x55
  global_store_b32 v10, v1, s[0:1]
  s_cmp_eq_u32 s2, 0
  s_cbranch_scc0 sethalt
  s_trap 3                                        // llvm.debugtrap, no debugger: continues
  v_mov_b32 v1, 0x66
  global_store_b32 v10, v1, s[0:1] offset:4
  s_trap 2                                        // llvm.trap: the wave stops here
  v_mov_b32 v1, 0x77
  global_store_b32 v10, v1, s[0:1] offset:8
  s_endpgm
sethalt:
  s_sethalt 0                                     // not halted: continues
  v_mov_b32 v1, 0x66
  global_store_b32 v10, v1, s[0:1] offset:4
  s_sethalt 1                                     // halted for good
  v_mov_b32 v1, 0x77
  global_store_b32 v10, v1, s[0:1] offset:8
  s_endpgm
