#include "am/sim/gpu_memory.h"

#include <atomic>
#include <cstring>

#include "absl/strings/str_format.h"
#include "base/status_macros.h"

namespace am::sim {
namespace {

template <typename T>
absl::StatusOr<T*> MapAligned(GpuMemory& memory, const MemoryClient& client, uint64_t address, Access access) {
  if (address % sizeof(T) != 0) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s: address %#x is not %d-byte aligned", client.name, address, sizeof(T)));
  }
  BAREGPU_ASSIGN_OR_RETURN(std::span<uint8_t> view, memory.Map(client, address, sizeof(T), access));
  // An aligned item never crosses a page, so one piece holds it.
  return reinterpret_cast<T*>(view.data());
}

}  // namespace

absl::Status ReadMemory(GpuMemory& memory, const MemoryClient& client, uint64_t address, std::span<uint8_t> out,
                        Access access) {
  while (!out.empty()) {
    BAREGPU_ASSIGN_OR_RETURN(std::span<uint8_t> view, memory.Map(client, address, out.size(), access));
    std::memcpy(out.data(), view.data(), view.size());
    out = out.subspan(view.size());
    address += view.size();
  }
  return absl::OkStatus();
}

void CopyDwords(std::span<uint32_t> out, const uint8_t* from) {
  auto* words = reinterpret_cast<uint32_t*>(const_cast<uint8_t*>(from));
  for (size_t i = 0; i < out.size(); ++i) out[i] = std::atomic_ref<uint32_t>(words[i]).load(std::memory_order_relaxed);
}

absl::Status ReadDwords(GpuMemory& memory, const MemoryClient& client, uint64_t address, std::span<uint32_t> out,
                        Access access) {
  if (address % sizeof(uint32_t) != 0) {
    return absl::InvalidArgumentError(absl::StrFormat("%s: address %#x is not 4-byte aligned", client.name, address));
  }
  while (!out.empty()) {
    // Pieces end at page boundaries, so each holds whole dwords.
    BAREGPU_ASSIGN_OR_RETURN(std::span<uint8_t> view, memory.Map(client, address, out.size_bytes(), access));
    const size_t dwords = view.size() / sizeof(uint32_t);
    CopyDwords(out.first(dwords), view.data());
    out = out.subspan(dwords);
    address += view.size();
  }
  return absl::OkStatus();
}

absl::Status WriteMemory(GpuMemory& memory, const MemoryClient& client, uint64_t address,
                         std::span<const uint8_t> data) {
  while (!data.empty()) {
    BAREGPU_ASSIGN_OR_RETURN(std::span<uint8_t> view, memory.Map(client, address, data.size(), Access::kWrite));
    std::memcpy(view.data(), data.data(), view.size());
    data = data.subspan(view.size());
    address += view.size();
  }
  return absl::OkStatus();
}

absl::StatusOr<uint32_t*> MapDword(GpuMemory& memory, const MemoryClient& client, uint64_t address, Access access) {
  return MapAligned<uint32_t>(memory, client, address, access);
}

absl::StatusOr<uint64_t*> MapQword(GpuMemory& memory, const MemoryClient& client, uint64_t address, Access access) {
  return MapAligned<uint64_t>(memory, client, address, access);
}

}  // namespace am::sim
