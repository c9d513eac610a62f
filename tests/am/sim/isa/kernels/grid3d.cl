// A 3D grid: workgroups of 4x4x4 over width x height x depth; each element records its own coordinates, so a wrong
// workgroup id (X, Y or Z SGPR) or a wrong packed work-item id (v0 bits 9:0, 19:10, 29:20) shows as a wrong value.
__attribute__((reqd_work_group_size(4, 4, 4))) __kernel void grid3d(__global uint* out, uint width, uint height,
                                                                    uint depth, uint salt) {
  uint x = __builtin_amdgcn_workgroup_id_x() * 4 + __builtin_amdgcn_workitem_id_x();
  uint y = __builtin_amdgcn_workgroup_id_y() * 4 + __builtin_amdgcn_workitem_id_y();
  uint z = __builtin_amdgcn_workgroup_id_z() * 4 + __builtin_amdgcn_workitem_id_z();
  if (x < width && y < height && z < depth) out[(z * height + y) * width + x] = (x | (y << 10) | (z << 20)) ^ salt;
}
