; tinygrad's LLVM IR for gfx1100 (AMDLLVMRenderer; the tinygrad vendored in ../shared/vendor/tinygrad, session 14),
; kernel r_256_16_256: the first of the two kernels of t.sum() for a float32 tensor of 2^20 elements, rendered by tools/tinygrad/instruction_survey.py --objects (DEV=NULL:AMDLLVM:gfx1100).
; Output of tinygrad, kept as it rendered it; compile_llvm_ir.py compiles it as tinygrad does.
@local_0 = internal unnamed_addr addrspace(3) global [16 x float] undef, align 16
define amdgpu_kernel void @r_256_16_256(float* noalias align 32 %data0, float* noalias align 32 %data1) #0
{
  %reg_0 = alloca [1 x float]
  %reg_1 = alloca [1 x float]
  %local_0 = addrspacecast [16 x float] addrspace(3)* @local_0 to [16 x float]*
  %v0 = tail call i32 @llvm.amdgcn.workgroup.id.x(); 
  %v1 = tail call i32 @llvm.amdgcn.workitem.id.x(); 
  %v2 = getelementptr inbounds float, float* %reg_0, i32 0
  %v3 = shl i32 %v0, 12
  %v4 = shl i32 %v1, 8
  store float 0.0, float* %v2
  br label %loop_entry_0
loop_entry_0:
  br label %loop_latch_0
loop_latch_0:
  %v6 = phi i32 [ 0, %loop_entry_0 ], [ %v6phi, %loop_footer_0 ]
  %v6phi = add i32 %v6, 1
  %v6cmp = icmp ult i32 %v6, 256
  br i1 %v6cmp, label %loop_body_0, label %loop_exit_0
loop_body_0:
  %v7 = add nsw i32 %v4, %v6
  %v8 = add nsw i32 %v7, %v3
  %v9 = getelementptr inbounds float, float* %data1, i32 %v8
  %v10 = load float, float* %v9
  %v11 = getelementptr inbounds float, float* %reg_0, i32 0
  %v12 = load float, float* %v11
  %v13 = fadd nsz arcp contract afn float %v12, %v10
  store float %v13, float* %v11
  br label %loop_footer_0
loop_footer_0:
  br label %loop_latch_0
loop_exit_0:
  %v16 = getelementptr inbounds float, float* %reg_0, i32 0
  %v17 = load float, float* %v16
  %v18 = getelementptr inbounds float, float* %local_0, i32 %v1
  store float %v17, float* %v18
fence syncscope("workgroup") release
tail call void @llvm.amdgcn.s.barrier()
fence syncscope("workgroup") acquire

  %v21 = getelementptr inbounds float, float* %reg_1, i32 0
  store float 0.0, float* %v21
  br label %loop_entry_102
loop_entry_102:
  br label %loop_latch_102
loop_latch_102:
  %v23 = phi i32 [ 0, %loop_entry_102 ], [ %v23phi, %loop_footer_102 ]
  %v23phi = add i32 %v23, 1
  %v23cmp = icmp ult i32 %v23, 16
  br i1 %v23cmp, label %loop_body_102, label %loop_exit_102
loop_body_102:
  %v24 = getelementptr inbounds float, float* %local_0, i32 %v23
  %v25 = load float, float* %v24
  %v26 = getelementptr inbounds float, float* %reg_1, i32 0
  %v27 = load float, float* %v26
  %v28 = fadd nsz arcp contract afn float %v27, %v25
  store float %v28, float* %v26
  br label %loop_footer_102
loop_footer_102:
  br label %loop_latch_102
loop_exit_102:
  %v31 = getelementptr inbounds float, float* %reg_1, i32 0
  %v32 = load float, float* %v31
  %v33 = getelementptr inbounds float, float* %data0, i32 %v0
  %v34 = icmp eq i32 %v1, 0
  br i1 %v34, label %ifbody_v35, label %ifskip_v35
ifbody_v35:
  store float %v32, float* %v33
  br label %ifskip_v35
ifskip_v35:
  ret void
}
attributes #0 = { alwaysinline nounwind "no-builtins" "amdgpu-flat-work-group-size"="1,16" "no-trapping-math"="true" }