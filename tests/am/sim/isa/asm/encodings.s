// Instructions the compiler rarely emits, one per encoding feature: the decoder test compares each with
// llvm-objdump-19. Not executed.
v_add_f32_e64 v0, -v1, |v2| clamp mul:2
v_pk_add_f16 v0, v1, v2 op_sel:[1,0] op_sel_hi:[0,1] neg_lo:[1,0] neg_hi:[0,1]
v_readfirstlane_b32 s0, v1
v_mov_b32_e64 v0, 1.0
v_mov_b32 v0, 0x1234
v_mov_b32 v0, 0.15915494
s_mov_b32 s0, 0x12345
s_mov_b32 s0, -5
s_movk_i32 s0, 0x1234
s_waitcnt vmcnt(0)
s_waitcnt_depctr 0xfffe
s_getreg_b32 s0, hwreg(HW_REG_MODE)
s_setreg_imm32_b32 hwreg(HW_REG_MODE, 4, 4), 0xf
v_fmamk_f32 v1, v2, 0x40000000, v3
v_dual_mov_b32 v1, s2 :: v_dual_add_f32 v2, v4, v5
ds_load_2addr_b32 v[1:2], v0 offset1:1
ds_add_rtn_u32 v0, v1, v2 offset:8
global_atomic_add_u32 v0, v1, v2, s[0:1] glc
global_load_b32 v2, v1, s[2:3] offset:-16
buffer_load_b32 v0, v1, s[0:3], 0 offen offset:4
scratch_load_b32 v0, off, off offset:4
s_load_b32 s2, s[0:1], s3 offset:0x10
v_cndmask_b32_e64 v0, v1, v2, s3
v_cmpx_gt_u32_e64 v1, v2
v_mov_b32_dpp v0, v1 quad_perm:[1,0,3,2] row_mask:0xf bank_mask:0xf
v_add_f32_dpp v0, v1, v2 row_shr:1 row_mask:0xf bank_mask:0xf bound_ctrl:1
v_mov_b32_dpp v0, v1 dpp8:[1,0,3,2,5,4,7,6]
v_cvt_f64_i32_e32 v[0:1], v2
v_add_f64 v[0:1], v[2:3], 1.0
v_mul_lo_u32 v0, v1, v2
v_swap_b32 v1, v2
s_sendmsg sendmsg(MSG_INTERRUPT)
s_delay_alu instid0(SALU_CYCLE_1)
v_mad_u64_u32 v[0:1], null, v2, v3, v[4:5]
v_fma_f16 v0, v1, v2, v3 op_sel:[0,1,0,1]
v_mov_b32_dpp v0, v1 dpp8:[1,0,3,2,5,4,7,6] fi:1
v_add_f32_dpp v0, -v1, |v2| row_ror:3 row_mask:0x3 bank_mask:0x5 fi:1
v_add3_u32_e64_dpp v5, v1, v2, v3 dpp8:[7,6,5,4,3,2,1,0] fi:1
v_fma_f32_e64_dpp v5, -v1, |v2|, -|v3| row_half_mirror row_mask:0xf bank_mask:0xf fi:1
v_cmpx_gt_u32_e64_dpp v1, v2 quad_perm:[1,0,3,2] row_mask:0xf bank_mask:0xf
v_add_f16_e64_dpp v5, v1, v2 clamp div:2 row_shr:15 row_mask:0xf bank_mask:0xf
v_max3_f32_e64_dpp v5, v1, v2, s3 row_share:3 row_mask:0xf bank_mask:0xf
v_cndmask_b32_e64_dpp v5, v1, v2, vcc_lo quad_perm:[3,2,1,0] row_mask:0xf bank_mask:0xf bound_ctrl:1
v_sub_co_u32_e64_dpp v5, s8, v1, v2 row_xmask:15 row_mask:0xf bank_mask:0xf
v_cvt_f32_i32_e64_dpp v5, v1 mul:4 row_shl:15 row_mask:0xf bank_mask:0xf
s_mov_b32 s0, src_private_limit
s_trap 0xfe
s_trap 64
s_trap 65
v_fma_mix_f32_e64_dpp v0, v1, v2, v3 quad_perm:[1,0,3,2] row_mask:0xf bank_mask:0xf
v_fma_mix_f32_e64_dpp v0, -v1, |v2|, v3 op_sel:[1,0,0] op_sel_hi:[1,0,1] clamp row_shr:2 row_mask:0x5 bank_mask:0xf bound_ctrl:1 fi:1
v_fma_mixlo_f16_e64_dpp v0, v1, v2, v3 op_sel_hi:[1,1,1] dpp8:[7,6,5,4,3,2,1,0]
v_dot2_f32_f16_e64_dpp v0, v1, v2, v3 neg_lo:[1,0,0] neg_hi:[0,1,0] dpp8:[1,0,3,2,5,4,7,6] fi:1
v_dot2_f32_f16_e64_dpp v0, v1, v2, v3 quad_perm:[3,2,1,0] row_mask:0xf bank_mask:0xf
v_fma_mix_f32 v0, -v1, |v2|, -|v3| op_sel:[0,1,0] op_sel_hi:[1,1,0] clamp
v_fma_mixhi_f16 v0, v1, s2, 1.0 op_sel_hi:[0,1,1]
