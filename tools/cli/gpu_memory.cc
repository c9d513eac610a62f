#include "tools/cli/gpu_memory.h"

#include <algorithm>
#include <cstring>
#include <optional>
#include <string>

#include "absl/strings/str_format.h"
#include "am/regs/database.h"
#include "am/regs/gc.h"
#include "base/status_macros.h"
#include "tools/cli/page_walk.h"

namespace cli {
namespace {

namespace gc = am::regs::gc;

// gfxhub_v3_0_init_system_aperture_regs: FB_LOCATION_BASE/TOP and FB_OFFSET hold address bits 47:24,
// SYSTEM_APERTURE_LOW/HIGH_ADDR bits 47:18.
constexpr int kFbShift = 24;
constexpr int kApertureShift = 18;
constexpr int kPageShift = 12;
constexpr uint64_t kPageSize = uint64_t{1} << kPageShift;
constexpr uint32_t kContexts = 16;
// Reads longer than this are refused: a tool reads rings (at most 2^20 dwords, CP_HQD_PQ_CONTROL.QUEUE_SIZE) and
// indirect buffers (at most 2^20 - 1 dwords, the INDIRECT_BUFFER size field), never more.
constexpr uint64_t kMaxReadDwords = uint64_t{1} << 20;

}  // namespace

absl::StatusOr<uint32_t> GpuMemoryReader::Gc(const char* name) {
  BAREGPU_ASSIGN_OR_RETURN(uint64_t address, am::regs::ResolveAddress(bases_, name, am::regs::Ip::kGc));
  return io_.ReadDword(address);
}

absl::StatusOr<std::optional<uint64_t>> GpuMemoryReader::SystemAperture(uint64_t address) {
  BAREGPU_ASSIGN_OR_RETURN(uint32_t low, Gc("GCMC_VM_SYSTEM_APERTURE_LOW_ADDR"));
  BAREGPU_ASSIGN_OR_RETURN(uint32_t high, Gc("GCMC_VM_SYSTEM_APERTURE_HIGH_ADDR"));
  BAREGPU_ASSIGN_OR_RETURN(uint32_t base, Gc("GCMC_VM_FB_LOCATION_BASE"));
  BAREGPU_ASSIGN_OR_RETURN(uint32_t top, Gc("GCMC_VM_FB_LOCATION_TOP"));
  BAREGPU_ASSIGN_OR_RETURN(uint32_t offset, Gc("GCMC_VM_FB_OFFSET"));
  const uint64_t aperture_low = uint64_t{gc::GCMC_VM_SYSTEM_APERTURE_LOW_ADDR::FromRaw(low).logical_addr()}
                                << kApertureShift;
  const uint64_t aperture_high =
      (uint64_t{gc::GCMC_VM_SYSTEM_APERTURE_HIGH_ADDR::FromRaw(high).logical_addr()} << kApertureShift) |
      ((uint64_t{1} << kApertureShift) - 1);
  const uint64_t fb_low = uint64_t{gc::GCMC_VM_FB_LOCATION_BASE::FromRaw(base).fb_base()} << kFbShift;
  const uint64_t fb_high =
      (uint64_t{gc::GCMC_VM_FB_LOCATION_TOP::FromRaw(top).fb_top()} << kFbShift) | ((uint64_t{1} << kFbShift) - 1);
  if (address < aperture_low || address > aperture_high || address < fb_low || address > fb_high) {
    return std::nullopt;
  }
  return address - fb_low + (uint64_t{gc::GCMC_VM_FB_OFFSET::FromRaw(offset).fb_offset()} << kFbShift);
}

absl::StatusOr<uint64_t> GpuMemoryReader::Walk(uint32_t vmid, uint64_t address) {
  // The one page walk `pt` and `mem` print (page_walk.h); this reader needs only where it ends.
  BAREGPU_ASSIGN_OR_RETURN(const VmContext context, ReadVmContext(device_, vmid));
  BAREGPU_ASSIGN_OR_RETURN(const PageWalk walk, WalkPageTable(device_, context, address));
  if (!walk.translation.has_value()) {
    return absl::NotFoundError(absl::StrFormat("%#x in VM context %d: %s", address, vmid, walk.outcome));
  }
  if (walk.translation->system) {
    return absl::UnimplementedError(
        absl::StrFormat("%#x maps to system memory (bus address %#x), which this reader does not follow", address,
                        walk.translation->address));
  }
  return walk.translation->address;
}

absl::StatusOr<uint64_t> GpuMemoryReader::Translate(uint32_t vmid, uint64_t address) {
  if (vmid >= kContexts) return absl::InvalidArgumentError(absl::StrFormat("VMID %d: the GPU has 0..15", vmid));
  if (vmid == 0) {
    BAREGPU_ASSIGN_OR_RETURN(std::optional<uint64_t> physical, SystemAperture(address));
    if (physical.has_value()) return *physical;
  }
  return Walk(vmid, address);
}

absl::StatusOr<std::vector<uint32_t>> GpuMemoryReader::ReadDwords(uint32_t vmid, uint64_t address, uint64_t count) {
  if (address % 4 != 0) return absl::InvalidArgumentError(absl::StrFormat("%#x is not dword aligned", address));
  if (count > kMaxReadDwords) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%d dwords at %#x: a tool reads at most %d at once", count, address, kMaxReadDwords));
  }
  std::vector<uint32_t> dwords(count);
  uint64_t done = 0;
  while (done < count) {
    const uint64_t at = address + done * 4;
    BAREGPU_ASSIGN_OR_RETURN(uint64_t physical, Translate(vmid, at));
    const uint64_t in_page = std::min<uint64_t>(count - done, (kPageSize - (at & (kPageSize - 1))) / 4);
    if (physical > vram_.size() || vram_.size() - physical < in_page * 4) {
      return absl::OutOfRangeError(
          absl::StrFormat("%#x translates to VRAM %#x, beyond BAR0's %#x bytes", at, physical, vram_.size()));
    }
    std::memcpy(dwords.data() + done, vram_.data() + physical, in_page * 4);
    done += in_page;
  }
  return dwords;
}

}  // namespace cli
