#include "tools/cli/gpu_memory.h"

#include <algorithm>
#include <cstring>
#include <optional>
#include <string>

#include "absl/strings/str_format.h"
#include "am/regs/database.h"
#include "am/regs/gc.h"
#include "am/regs/vm.h"
#include "base/status_macros.h"

namespace cli {
namespace {

namespace gc = am::regs::gc;
namespace vm = am::regs::vm;

// gfxhub_v3_0_init_system_aperture_regs: FB_LOCATION_BASE/TOP and FB_OFFSET hold address bits 47:24,
// SYSTEM_APERTURE_LOW/HIGH_ADDR bits 47:18.
constexpr int kFbShift = 24;
constexpr int kApertureShift = 18;
constexpr uint64_t kAddressMask = 0x0000'ffff'ffff'f000;     // amdgpu_vm.h: entry address bits 47:12
constexpr uint64_t kPdeAddressMask = 0x0000'ffff'ffff'ffc0;  // gmc_v11_0_get_vm_pde: a table is 64-byte aligned
constexpr int kPageShift = 12;
constexpr uint64_t kPageSize = uint64_t{1} << kPageShift;
constexpr int kLevelBits = 9;  // entries per directory: 2^9 (amdgpu_vm_pt_num_entries)
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

absl::StatusOr<uint64_t> GpuMemoryReader::ReadVram64(uint64_t offset) {
  if (offset > vram_.size() || vram_.size() - offset < sizeof(uint64_t)) {
    return absl::OutOfRangeError(
        absl::StrFormat("page-table entry at VRAM %#x is beyond BAR0's %#x bytes", offset, vram_.size()));
  }
  uint64_t entry;
  std::memcpy(&entry, vram_.data() + offset, sizeof(entry));
  return entry;
}

absl::StatusOr<uint64_t> GpuMemoryReader::Walk(uint32_t vmid, uint64_t address) {
  const std::string context = absl::StrFormat("GCVM_CONTEXT%d_", vmid);
  auto reg = [&](const std::string& suffix) { return Gc((context + suffix).c_str()); };
  BAREGPU_ASSIGN_OR_RETURN(uint32_t cntl_raw, reg("CNTL"));
  BAREGPU_ASSIGN_OR_RETURN(uint32_t base_lo, reg("PAGE_TABLE_BASE_ADDR_LO32"));
  BAREGPU_ASSIGN_OR_RETURN(uint32_t base_hi, reg("PAGE_TABLE_BASE_ADDR_HI32"));
  BAREGPU_ASSIGN_OR_RETURN(uint32_t start_lo, reg("PAGE_TABLE_START_ADDR_LO32"));
  BAREGPU_ASSIGN_OR_RETURN(uint32_t start_hi, reg("PAGE_TABLE_START_ADDR_HI32"));
  BAREGPU_ASSIGN_OR_RETURN(uint32_t end_lo, reg("PAGE_TABLE_END_ADDR_LO32"));
  BAREGPU_ASSIGN_OR_RETURN(uint32_t end_hi, reg("PAGE_TABLE_END_ADDR_HI32"));
  const auto cntl = gc::GCVM_CONTEXT0_CNTL::FromRaw(cntl_raw);
  if (!cntl.enable_context()) {
    return absl::FailedPreconditionError(
        absl::StrFormat("VM context %d is disabled (GCVM_CONTEXT%d_CNTL)", vmid, vmid));
  }
  // START and END are page numbers; END names the context's last page.
  const uint64_t start = ((uint64_t{start_hi} << 32) | start_lo) << kPageShift;
  const uint64_t end = ((((uint64_t{end_hi} << 32) | end_lo) << kPageShift)) | (kPageSize - 1);
  if (address < start || address > end) {
    return absl::OutOfRangeError(
        absl::StrFormat("%#x is outside VM context %d's range 0x%x..0x%x", address, vmid, start, end));
  }
  const int depth = static_cast<int>(cntl.page_table_depth());
  const int ptb_bits = kLevelBits + static_cast<int>(cntl.page_table_block_size());
  const uint64_t relative = address - start;
  const uint64_t base = (uint64_t{base_hi} << 32) | base_lo;
  uint64_t table = base & kAddressMask;
  bool system = (base & vm::AMDGPU_PTE_SYSTEM) != 0;
  for (int level = depth; level >= 0; --level) {
    const bool leaf_level = level == 0;
    const int shift = kPageShift + (leaf_level ? 0 : ptb_bits + kLevelBits * (level - 1));
    const int bits = leaf_level ? ptb_bits : kLevelBits;
    // The root covers the whole range (its index is not masked); a lower table has 2^bits entries.
    const uint64_t index = level == depth ? relative >> shift : (relative >> shift) & ((uint64_t{1} << bits) - 1);
    if (system) {
      return absl::UnimplementedError(
          absl::StrFormat("the level-%d table for %#x is in system memory (%#x), which a tool cannot read through BAR0",
                          level, address, table));
    }
    BAREGPU_ASSIGN_OR_RETURN(uint64_t entry, ReadVram64(table + index * sizeof(uint64_t)));
    if (!(entry & vm::AMDGPU_PTE_VALID)) {
      return absl::NotFoundError(
          absl::StrFormat("%#x is not mapped in VM context %d: the level-%d entry is not valid", address, vmid, level));
    }
    if (leaf_level || (entry & vm::AMDGPU_PDE_PTE)) {
      const uint64_t page = uint64_t{1} << shift;
      if (entry & vm::AMDGPU_PTE_SYSTEM) {
        return absl::UnimplementedError(
            absl::StrFormat("%#x maps to system memory (bus address %#x), which a tool cannot read through BAR0",
                            address, (entry & kAddressMask & ~(page - 1)) + (address & (page - 1))));
      }
      return (entry & kAddressMask & ~(page - 1)) + (address & (page - 1));
    }
    table = entry & kPdeAddressMask;
    system = (entry & vm::AMDGPU_PTE_SYSTEM) != 0;
  }
  return absl::InternalError(absl::StrFormat("the walk for %#x ended without a page", address));
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
