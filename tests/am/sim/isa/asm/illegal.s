// An encoding gfx1100 does not define (SOPP opcode 6) after a store that must happen.
  v_mov_b32 v0, 0
  v_mov_b32 v1, 0x55
  global_store_b32 v0, v1, s[0:1]
  .long 0xbf860000
  s_endpgm
