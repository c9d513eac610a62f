; A gfx1100 kernel whose relocatable object (llc-19 -filetype=obj) needs every kind of relocation a loader of
; LLVM's output meets: R_AMDGPU_REL64 (kernel descriptor -> code), R_AMDGPU_REL32_LO/HI (the code's s_getpc
; addressing of @table) and R_AMDGPU_ABS64 (@table's pointer to @values, which depends on the load address).
target triple = "amdgcn-amd-amdhsa"

@values = internal addrspace(1) global [4 x i32] [i32 11, i32 22, i32 33, i32 44], align 16
@table = internal addrspace(1) global ptr addrspace(1) @values, align 8

; out[i] = (*table)[i] for the work-items of one workgroup.
define amdgpu_kernel void @indirect(ptr addrspace(1) %out) {
  %values = load ptr addrspace(1), ptr addrspace(1) @table, align 8
  %id = call i32 @llvm.amdgcn.workitem.id.x()
  %from = getelementptr i32, ptr addrspace(1) %values, i32 %id
  %value = load i32, ptr addrspace(1) %from, align 4
  %to = getelementptr i32, ptr addrspace(1) %out, i32 %id
  store i32 %value, ptr addrspace(1) %to, align 4
  ret void
}

declare i32 @llvm.amdgcn.workitem.id.x()
