#include "tools/cli/page_walk.h"

#include <cstring>
#include <span>

#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "am/discovery.h"
#include "am/register_io.h"
#include "am/regs/database.h"
#include "am/regs/gc.h"
#include "am/regs/vm.h"
#include "base/status_macros.h"
#include "tools/cli/device_access.h"

namespace cli {
namespace {

namespace vm = am::regs::vm;

constexpr uint64_t kAddressMask = 0x0000'ffff'ffff'f000;  // amdgpu_vm.h: entry address bits 47:12
// A directory entry's table address is 64-byte aligned: bits 47:6 (gmc_v11_0_get_vm_pde refuses any other bit), as
// the GMC model walks it.
constexpr uint64_t kPdeAddressMask = 0x0000'ffff'ffff'ffc0;
constexpr int kPageShift = 12;
constexpr uint64_t kPageSize = uint64_t{1} << kPageShift;
constexpr int kLevelBits = 9;
constexpr uint64_t kEntrySize = sizeof(uint64_t);
constexpr uint32_t kVmContexts = 16;  // GCVM_CONTEXT0..15

// How many entries the table at `level` has (amdgpu_vm_pt_num_entries): the root covers the context's range
// [start, end], so its size follows from that range; a directory below it has 2^9 entries, a page table
// 2^(9 + PAGE_TABLE_BLOCK_SIZE).
uint64_t TableEntries(int level, int depth, int shift, int ptb_bits, uint64_t start, uint64_t end) {
  if (level == depth) return ((end - start) >> shift) + 1;
  return uint64_t{1} << (level == 0 ? ptb_bits : kLevelBits);
}

std::string Flags(uint64_t entry, bool leaf) {
  std::vector<std::string> flags;
  if (entry & vm::AMDGPU_PTE_VALID) flags.push_back("VALID");
  if (entry & vm::AMDGPU_PTE_SYSTEM) flags.push_back("SYSTEM");
  if (entry & vm::AMDGPU_PTE_SNOOPED) flags.push_back("SNOOPED");
  if (leaf) {
    if (entry & vm::AMDGPU_PTE_READABLE) flags.push_back("READABLE");
    if (entry & vm::AMDGPU_PTE_WRITEABLE) flags.push_back("WRITEABLE");
    if (entry & vm::AMDGPU_PTE_EXECUTABLE) flags.push_back("EXECUTABLE");
    if (vm::PteFragmentOf(entry) != 0) flags.push_back(absl::StrFormat("FRAG=%d", vm::PteFragmentOf(entry)));
  }
  if (entry & vm::AMDGPU_PDE_PTE) flags.push_back("PDE_PTE");
  return flags.empty() ? "-" : absl::StrJoin(flags, " ");
}

}  // namespace

std::string PageSizeName(uint64_t bytes) {
  if (bytes >= (uint64_t{1} << 30)) return absl::StrFormat("%d GiB", bytes >> 30);
  if (bytes >= (uint64_t{1} << 20)) return absl::StrFormat("%d MiB", bytes >> 20);
  return absl::StrFormat("%d KiB", bytes >> 10);
}

absl::StatusOr<VmContext> ReadVmContext(pci::Device& device, uint32_t vmid) {
  if (vmid >= kVmContexts) {
    return absl::InvalidArgumentError(absl::StrFormat("VM context %d does not exist (0-%d)", vmid, kVmContexts - 1));
  }
  BAREGPU_ASSIGN_OR_RETURN(am::DeviceDiscovery found, am::ReadDiscovery(device));
  const am::regs::IpBases bases = found.discovery.Bases();
  BAREGPU_ASSIGN_OR_RETURN(pci::Mmio bar5, device.MapMmio(5));
  am::RegisterIo io(bar5, bases);
  auto reg = [&](const std::string& name) -> absl::StatusOr<uint32_t> {
    BAREGPU_ASSIGN_OR_RETURN(uint64_t address, am::regs::ResolveAddress(bases, name, am::regs::Ip::kGc));
    return io.ReadDword(address);
  };
  const std::string prefix = absl::StrFormat("GCVM_CONTEXT%d_", vmid);
  BAREGPU_ASSIGN_OR_RETURN(uint32_t cntl_raw, reg(prefix + "CNTL"));
  BAREGPU_ASSIGN_OR_RETURN(uint32_t base_lo, reg(prefix + "PAGE_TABLE_BASE_ADDR_LO32"));
  BAREGPU_ASSIGN_OR_RETURN(uint32_t base_hi, reg(prefix + "PAGE_TABLE_BASE_ADDR_HI32"));
  BAREGPU_ASSIGN_OR_RETURN(uint32_t start_lo, reg(prefix + "PAGE_TABLE_START_ADDR_LO32"));
  BAREGPU_ASSIGN_OR_RETURN(uint32_t start_hi, reg(prefix + "PAGE_TABLE_START_ADDR_HI32"));
  BAREGPU_ASSIGN_OR_RETURN(uint32_t end_lo, reg(prefix + "PAGE_TABLE_END_ADDR_LO32"));
  BAREGPU_ASSIGN_OR_RETURN(uint32_t end_hi, reg(prefix + "PAGE_TABLE_END_ADDR_HI32"));
  BAREGPU_RETURN_IF_ERROR(TakeAccessError(device));
  const auto cntl = am::regs::gc::GCVM_CONTEXT0_CNTL::FromRaw(cntl_raw);
  VmContext c;
  c.vmid = vmid;
  c.enabled = cntl.enable_context() != 0;
  c.depth = static_cast<int>(cntl.page_table_depth());
  c.block_size = cntl.page_table_block_size();
  c.base = (uint64_t{base_hi} << 32) | base_lo;
  // START and END are page numbers; END names the context's last page, so every byte of that page is inside.
  c.start = ((uint64_t{start_hi} << 32) | start_lo) << kPageShift;
  c.end = (((uint64_t{end_hi} << 32) | end_lo) << kPageShift) | (kPageSize - 1);
  return c;
}

absl::StatusOr<PageWalk> WalkPageTable(pci::Device& device, const VmContext& context, uint64_t va) {
  if (!context.enabled) {
    return absl::FailedPreconditionError(absl::StrFormat("VM context %d is disabled", context.vmid));
  }
  // The hardware checks the range before it reads any table: an address outside it is a range fault, whatever the
  // tables hold (gmc_model.cc Walk; VM_CONTEXTn_CNTL.RANGE_PROTECTION_FAULT_ENABLE_DEFAULT).
  if (va < context.start || va > context.end) {
    return absl::OutOfRangeError(absl::StrFormat(
        "%#x is outside VM context %d's range 0x%x..0x%x (GCVM_CONTEXT%d_PAGE_TABLE_START/END_ADDR): the GPU raises a "
        "range fault for it without walking the page table; give an address inside the range",
        va, context.vmid, context.start, context.end, context.vmid));
  }
  BAREGPU_ASSIGN_OR_RETURN(std::span<uint8_t> vram, device.MapMemory(0));
  const int depth = context.depth;
  const int ptb_bits = kLevelBits + static_cast<int>(context.block_size);
  PageWalk walk;
  walk.context = context;
  walk.outcome = "not mapped";
  const uint64_t relative = va - context.start;
  uint64_t table = context.base & kAddressMask;
  bool system = (context.base & vm::AMDGPU_PTE_SYSTEM) != 0;
  for (int level = depth; level >= 0; --level) {
    const bool leaf_level = level == 0;
    const int shift = kPageShift + (leaf_level ? 0 : ptb_bits + kLevelBits * (level - 1));
    const uint64_t bits = leaf_level ? static_cast<uint64_t>(ptb_bits) : static_cast<uint64_t>(kLevelBits);
    const uint64_t index = (level == depth) ? relative >> shift : (relative >> shift) & ((uint64_t{1} << bits) - 1);
    const uint64_t entries = TableEntries(level, depth, shift, ptb_bits, context.start, context.end);
    const std::string name = leaf_level ? "PTB" : absl::StrFormat("PDB%d", level - 1);
    // The range check and the masks above keep the index inside the table; checked again so that no change to
    // them can send the walk past a table's end into whatever VRAM follows it.
    if (index >= entries) {
      return absl::InternalError(
          absl::StrFormat("%s index %d for %#x is past the %d-entry table at %#x", name, index, va, entries, table));
    }
    const uint64_t address = table + index * kEntrySize;
    uint64_t entry;
    if (system) {
      absl::Status read =
          device.ReadDmaMemory(address, std::span<uint8_t>(reinterpret_cast<uint8_t*>(&entry), sizeof(entry)));
      if (!read.ok()) {
        walk.outcome = absl::StrFormat("%s at system address %#x cannot be read: %s", name, address, read.message());
        break;
      }
    } else if (address > vram.size() || vram.size() - address < kEntrySize) {
      walk.outcome =
          absl::StrFormat("%s at VRAM %#x cannot be read through BAR0 (%#x bytes)", name, address, vram.size());
      break;
    } else {
      std::memcpy(&entry, vram.data() + address, sizeof(entry));
    }
    const bool leaf = leaf_level || (entry & vm::AMDGPU_PDE_PTE);
    walk.steps.push_back(WalkStep{name, table, system, index, entries, entry, leaf, Flags(entry, leaf)});
    if (!(entry & vm::AMDGPU_PTE_VALID)) {
      walk.outcome = absl::StrFormat("not mapped: the %s entry is not valid", name);
      break;
    }
    if (leaf) {
      const uint64_t page = uint64_t{1} << shift;
      Translation t;
      t.system = (entry & vm::AMDGPU_PTE_SYSTEM) != 0;
      t.address = (entry & kAddressMask & ~(page - 1)) + (va & (page - 1));
      t.page_size = page;
      walk.translation = t;
      walk.outcome =
          absl::StrFormat("%#x -> %s %#x (%s page)", va, t.system ? "system" : "VRAM", t.address, PageSizeName(page));
      break;
    }
    table = entry & kPdeAddressMask;
    system = (entry & vm::AMDGPU_PTE_SYSTEM) != 0;
  }
  return walk;
}

}  // namespace cli
