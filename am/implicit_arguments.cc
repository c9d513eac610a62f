#include "am/implicit_arguments.h"

#include <cstring>

#include "absl/strings/string_view.h"
#include "base/bits.h"

namespace am {
namespace {

// AMDGPUUsage "Code Object V5 Metadata": the .value_kind of each hidden argument this launcher fills.
struct HiddenKind {
  absl::string_view value_kind;
  ImplicitArguments::Kind kind;
  uint8_t dimension;
};
constexpr HiddenKind kHiddenKinds[] = {
    {"hidden_block_count_x", ImplicitArguments::Kind::kBlockCount, 0},
    {"hidden_block_count_y", ImplicitArguments::Kind::kBlockCount, 1},
    {"hidden_block_count_z", ImplicitArguments::Kind::kBlockCount, 2},
    {"hidden_group_size_x", ImplicitArguments::Kind::kGroupSize, 0},
    {"hidden_group_size_y", ImplicitArguments::Kind::kGroupSize, 1},
    {"hidden_group_size_z", ImplicitArguments::Kind::kGroupSize, 2},
    {"hidden_remainder_x", ImplicitArguments::Kind::kRemainder, 0},
    {"hidden_remainder_y", ImplicitArguments::Kind::kRemainder, 1},
    {"hidden_remainder_z", ImplicitArguments::Kind::kRemainder, 2},
    {"hidden_grid_dims", ImplicitArguments::Kind::kGridDims, 0},
};

}  // namespace

ImplicitArguments ImplicitArguments::For(const CodeObject::Kernel& kernel) {
  ImplicitArguments implicit;
  for (const CodeObject::Kernel::Argument& argument : kernel.arguments) {
    for (const HiddenKind& hidden : kHiddenKinds) {
      if (argument.value_kind != hidden.value_kind) continue;
      // The metadata gives each field's size; a field of another width than the ABI's is left alone.
      const uint8_t bytes = hidden.kind == Kind::kBlockCount ? 4 : 2;
      if (argument.size == bytes) implicit.fields_.push_back({hidden.kind, hidden.dimension, bytes, argument.offset});
    }
  }
  implicit.size_ = kernel.kernarg_size();
  if (kernel.descriptor.has(KernelDescriptor::kEnableSgprDispatchPtr)) {
    implicit.has_dispatch_packet_ = true;
    implicit.dispatch_packet_offset_ = static_cast<uint32_t>(base::AlignUp(kernel.kernarg_size(), kAqlPacketAlignment));
    implicit.size_ = implicit.dispatch_packet_offset_ + sizeof(HsaKernelDispatchPacket);
    for (uint8_t d = 0; d < 3; ++d) {
      const uint32_t group_size = static_cast<uint32_t>(offsetof(HsaKernelDispatchPacket, workgroup_size_x)) + 2 * d;
      const uint32_t grid_size = static_cast<uint32_t>(offsetof(HsaKernelDispatchPacket, grid_size_x)) + 4 * d;
      implicit.fields_.push_back({Kind::kPacketGroupSize, d, 2, implicit.dispatch_packet_offset_ + group_size});
      implicit.fields_.push_back({Kind::kPacketGridSize, d, 4, implicit.dispatch_packet_offset_ + grid_size});
    }
    implicit.fields_.push_back(
        {Kind::kPacketDimensions, 0, 2,
         implicit.dispatch_packet_offset_ + static_cast<uint32_t>(offsetof(HsaKernelDispatchPacket, setup))});
  }
  implicit.private_segment_size_ = kernel.scratch_size();
  implicit.group_segment_size_ = kernel.lds_size();
  return implicit;
}

uint32_t ImplicitArguments::GridDims(const std::array<bool, 3>& dimension_used) {
  if (dimension_used[2]) return 3;
  return dimension_used[1] ? 2 : 1;
}

uint32_t ImplicitArguments::Value(const Field& field, const std::array<uint32_t, 3>& workgroups,
                                  const std::array<uint32_t, 3>& workgroup_size) {
  const uint8_t d = field.dimension;
  switch (field.kind) {
    case Kind::kBlockCount:
      return workgroups[d];
    case Kind::kGroupSize:
    case Kind::kPacketGroupSize:
      return workgroup_size[d];
    case Kind::kRemainder:
      return 0;
    case Kind::kGridDims:
    case Kind::kPacketDimensions: {
      std::array<bool, 3> used{};
      for (int i = 0; i < 3; ++i) used[i] = uint64_t{workgroups[i]} * workgroup_size[i] > 1;
      return GridDims(used);
    }
    case Kind::kPacketGridSize:
      return workgroups[d] * workgroup_size[d];
  }
  return 0;
}

void ImplicitArguments::WritePacketConstants(std::span<uint8_t> memory, uint64_t memory_address,
                                             uint64_t descriptor_address) const {
  if (!has_dispatch_packet_) return;
  HsaKernelDispatchPacket packet{};
  std::memcpy(&packet, memory.data() + dispatch_packet_offset_, sizeof(packet));
  packet.header = kHsaPacketTypeKernelDispatch;
  packet.private_segment_size = private_segment_size_;
  packet.group_segment_size = group_segment_size_;
  packet.kernel_object = descriptor_address;
  packet.kernarg_address = memory_address;
  std::memcpy(memory.data() + dispatch_packet_offset_, &packet, sizeof(packet));
}

void ImplicitArguments::Write(std::span<uint8_t> memory, uint64_t memory_address, uint64_t descriptor_address,
                              const std::array<uint32_t, 3>& workgroups,
                              const std::array<uint32_t, 3>& workgroup_size) const {
  WritePacketConstants(memory, memory_address, descriptor_address);
  for (const Field& field : fields_) {
    base::StoreField(memory.data() + field.offset, field.bytes, Value(field, workgroups, workgroup_size));
  }
}

}  // namespace am
