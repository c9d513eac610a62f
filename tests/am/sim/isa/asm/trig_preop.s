// v_trig_preop_f64: 53-bit segments of 2/pi scaled for the argument's exponent. One lane; out[] (s[0:1]) gets
// the six results as doubles.
  v_mov_b32 v10, 0
  v_trig_preop_f64 v[2:3], 1.0, 0
  global_store_b64 v10, v[2:3], s[0:1]
  v_trig_preop_f64 v[2:3], 1.0, 1
  global_store_b64 v10, v[2:3], s[0:1] offset:8
  v_trig_preop_f64 v[2:3], 1.0, 2
  global_store_b64 v10, v[2:3], s[0:1] offset:16
  v_trig_preop_f64 v[2:3], 0x46300000, 0          // 2^100: the segment starts 23 bits further
  global_store_b64 v10, v[2:3], s[0:1] offset:24
  v_trig_preop_f64 v[2:3], 0x7e700000, 3          // 2^1000: and is scaled up by 2^128
  global_store_b64 v10, v[2:3], s[0:1] offset:32
  v_trig_preop_f64 v[2:3], -4.0, 31               // past the 1201 bits the ISA defines: 0
  global_store_b64 v10, v[2:3], s[0:1] offset:40
  s_endpgm
