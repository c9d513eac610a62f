// A 2D fill: workgroups of 16x8 over a width x height grid, each element gets value + (y << 16 | x) so a
// misplaced store shows. Uses workgroup id Y and the packed work-item id Y.
__attribute__((reqd_work_group_size(16, 8, 1))) __kernel void fill(__global uint* out, uint width, uint height,
                                                                   uint value) {
  uint x = __builtin_amdgcn_workgroup_id_x() * 16 + __builtin_amdgcn_workitem_id_x();
  uint y = __builtin_amdgcn_workgroup_id_y() * 8 + __builtin_amdgcn_workitem_id_y();
  if (x < width && y < height) out[y * width + x] = value + ((y << 16) | x);
}
