// The launch's shape as a kernel without reqd_work_group_size reads it: the hidden arguments of code object V5
// through the implicit argument pointer (AMDGPUUsage "Code Object V5 Implicit Kernel Arguments": block counts at
// 0/4/8, group sizes at 12/14/16, remainders at 18/20/22, grid dimensions at 64; __builtin_amdgcn_workgroup_size_x
// reads the group size or the remainder), and the HSA dispatch packet through the dispatch pointer (workgroup sizes
// at 4, grid sizes at 12/16/20, kernarg address at 40). Work-item 0 of each workgroup writes one record of
// RECORD_WORDS words; a launcher that fills a field wrong, or not at all, shows in that word. Built as code object
// V4 too (-DCODE_OBJECT_V4): V4 has no block counts or grid dimensions among its hidden arguments, so those come
// from the packet, and __builtin_amdgcn_workgroup_size_x reads the packet.
#define RECORD_WORDS 12

__kernel void launch_dims(__global uint* out, uint salt) {
  if (__builtin_amdgcn_workitem_id_x() | __builtin_amdgcn_workitem_id_y() | __builtin_amdgcn_workitem_id_z()) return;
  const __constant uint* packet = (const __constant uint*)__builtin_amdgcn_dispatch_ptr();
  const __constant ushort* packet16 = (const __constant ushort*)packet;
#ifdef CODE_OBJECT_V4
  const uint bx = packet[3] / packet16[2], by = packet[4] / packet16[3], bz = packet[5] / packet16[4];
  const uint dims = packet16[1] & 3;
#else
  const __constant uint* hidden = (const __constant uint*)__builtin_amdgcn_implicitarg_ptr();
  const __constant ushort* hidden16 = (const __constant ushort*)hidden;
  const uint bx = hidden[0], by = hidden[1], bz = hidden[2];
  const uint dims = hidden16[64 / 2];
#endif
  const uint group =
      (__builtin_amdgcn_workgroup_id_z() * by + __builtin_amdgcn_workgroup_id_y()) * bx + __builtin_amdgcn_workgroup_id_x();
  __global uint* r = out + group * RECORD_WORDS;
  r[0] = bx;
  r[1] = by;
  r[2] = bz;
  r[3] = __builtin_amdgcn_workgroup_size_x();
  r[4] = __builtin_amdgcn_workgroup_size_y();
  r[5] = __builtin_amdgcn_workgroup_size_z();
  r[6] = dims;
  r[7] = packet[3];
  r[8] = packet[4];
  r[9] = packet[5];
  r[10] = packet16[2];
  const ulong kernarg = *(const __constant ulong*)(packet + 10);
  r[11] = (kernarg == (ulong)__builtin_amdgcn_kernarg_segment_ptr() ? 1u : 0u) ^ salt;
}
