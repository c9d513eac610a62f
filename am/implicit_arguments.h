// What a kernel launch provides besides the caller's explicit arguments: the hidden arguments of code object V5
// that the kernel's metadata lists (AMDGPUUsage "Code Object V5 Metadata": hidden_block_count_*,
// hidden_group_size_*, hidden_remainder_*, hidden_grid_dims; what __builtin_amdgcn_workgroup_size_x and OpenCL's
// get_local_size / get_num_groups read), and for a kernel that enables the dispatch pointer an HSA kernel dispatch
// packet placed after its arguments. Every launcher (hcq's AMD backend, the corpus tests) lays them out from here.
//
// Hidden arguments not listed in Kind (printf and hostcall buffers, heap, default queue, completion action,
// multigrid sync, queue pointer, dynamic LDS size) are left zero: baregpu runs no host services for kernels, so a
// kernel that uses printf finds a null buffer.
#ifndef BAREGPU_AM_IMPLICIT_ARGUMENTS_H_
#define BAREGPU_AM_IMPLICIT_ARGUMENTS_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "am/code_object.h"

namespace am {

// hsa_kernel_dispatch_packet_t, the AQL packet a kernel reads through its dispatch pointer (HSA Platform System
// Architecture Specification 1.2, "Kernel Dispatch Packet"; hsa_kernel_dispatch_packet_t in hsa.h).
struct HsaKernelDispatchPacket {
  uint16_t header;
  uint16_t setup;  // dimensions in bits 1:0
  uint16_t workgroup_size_x, workgroup_size_y, workgroup_size_z;
  uint16_t reserved0;
  uint32_t grid_size_x, grid_size_y, grid_size_z;  // in work-items
  uint32_t private_segment_size;
  uint32_t group_segment_size;
  uint64_t kernel_object;
  uint64_t kernarg_address;
  uint64_t reserved2;
  uint64_t completion_signal;
};
static_assert(sizeof(HsaKernelDispatchPacket) == 64);
static_assert(offsetof(HsaKernelDispatchPacket, workgroup_size_x) == 4);
static_assert(offsetof(HsaKernelDispatchPacket, grid_size_x) == 12);
static_assert(offsetof(HsaKernelDispatchPacket, private_segment_size) == 24);
static_assert(offsetof(HsaKernelDispatchPacket, kernel_object) == 32);
static_assert(offsetof(HsaKernelDispatchPacket, kernarg_address) == 40);
inline constexpr uint16_t kHsaPacketTypeKernelDispatch = 2;  // HSA_PACKET_TYPE_KERNEL_DISPATCH, header bits 7:0
inline constexpr uint64_t kAqlPacketAlignment = 64;          // HSA_PACKET_ALIGN_BYTES (hsa.h)

class ImplicitArguments {
 public:
  // What a field holds, for dimension d of a launch of `workgroups` x `workgroup_size`.
  enum class Kind : uint8_t {
    kBlockCount,        // hidden_block_count_d: workgroups[d]
    kGroupSize,         // hidden_group_size_d: workgroup_size[d]
    kRemainder,         // hidden_remainder_d: 0 (launches are whole workgroups)
    kGridDims,          // hidden_grid_dims: the highest dimension with more than one work-item, 1 at least
    kPacketGroupSize,   // dispatch packet workgroup_size_d: workgroup_size[d]
    kPacketGridSize,    // dispatch packet grid_size_d: workgroups[d] * workgroup_size[d]
    kPacketDimensions,  // dispatch packet setup (dimensions in bits 1:0): as kGridDims
  };
  struct Field {
    Kind kind;
    uint8_t dimension;  // 0..2 (x, y, z)
    uint8_t bytes;      // 2 or 4
    uint32_t offset;    // in the argument memory
  };

  // The layout for `kernel`: its metadata's hidden arguments and, when the descriptor enables the dispatch
  // pointer, the packet after the kernel arguments (64-byte aligned, as AQL packets are).
  static ImplicitArguments For(const CodeObject::Kernel& kernel);

  std::span<const Field> fields() const { return fields_; }
  bool has_dispatch_packet() const { return has_dispatch_packet_; }
  uint32_t dispatch_packet_offset() const { return dispatch_packet_offset_; }
  // Bytes of argument memory one launch needs: the kernel arguments (hidden ones included) and the packet.
  uint64_t size() const { return size_; }

  // A field's value for a launch of `workgroups` x `workgroup_size`.
  static uint32_t Value(const Field& field, const std::array<uint32_t, 3>& workgroups,
                        const std::array<uint32_t, 3>& workgroup_size);
  // hidden_grid_dims for the extents of a launch (a dimension counts when it has more than one work-item).
  static uint32_t GridDims(const std::array<bool, 3>& dimension_used);
  // Writes the packet's launch-independent members at dispatch_packet_offset() (no-op without a packet).
  void WritePacketConstants(std::span<uint8_t> memory, uint64_t memory_address, uint64_t descriptor_address) const;
  // Writes every field and the packet for a launch with constant dimensions. `memory` holds size() bytes.
  void Write(std::span<uint8_t> memory, uint64_t memory_address, uint64_t descriptor_address,
             const std::array<uint32_t, 3>& workgroups, const std::array<uint32_t, 3>& workgroup_size) const;

 private:
  std::vector<Field> fields_;
  bool has_dispatch_packet_ = false;
  uint32_t dispatch_packet_offset_ = 0;
  uint64_t size_ = 0;
  uint32_t private_segment_size_ = 0, group_segment_size_ = 0;
};

}  // namespace am

#endif  // BAREGPU_AM_IMPLICIT_ARGUMENTS_H_
