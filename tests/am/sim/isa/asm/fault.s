// A store through the pointer in s[0:1], which the test leaves unmapped; the store after it must not happen.
  v_mov_b32 v0, 0
  v_mov_b32 v1, 0x1234
  global_store_b32 v0, v1, s[0:1]
  global_store_b32 v0, v1, s[2:3]
  s_endpgm
