// baregpu pt DEVICE walk VA: how the GPU translates an address, read from the device itself: the VM context's
// registers (page-table base, depth, range) and each level's entry in VRAM, with the PTE/PDE bits decoded.
#include <cstring>
#include <ostream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "am/discovery.h"
#include "am/register_io.h"
#include "am/regs/database.h"
#include "am/regs/gc.h"
#include "am/regs/vm.h"
#include "base/printable.h"
#include "base/status_macros.h"
#include "pci/open.h"
#include "tools/cli/command.h"
#include "tools/cli/json.h"

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

absl::Status RunPt(Invocation& inv) {
  const std::vector<std::string>& args = inv.positional();
  if (args.size() != 3 || args[1] != "walk") return inv.UsageError("usage: baregpu pt DEVICE walk VA [--vmid=N]");
  uint64_t va = 0;
  if (!absl::StartsWithIgnoreCase(args[2], "0x") || !absl::SimpleHexAtoi(args[2].substr(2), &va)) {
    return inv.UsageError(
        absl::StrCat("'", base::Printable(args[2]), "' is not a GPU address; write it in hex (0x7f0000001000)"));
  }
  uint32_t vmid = 0;
  if (std::optional<std::string> text = inv.value("vmid")) {
    if (!absl::SimpleAtoi(*text, &vmid) || vmid > 15) return inv.UsageError("--vmid takes 0 to 15");
  }
  BAREGPU_ASSIGN_OR_RETURN(std::unique_ptr<pci::Device> device, pci::Open(args[0]));
  BAREGPU_ASSIGN_OR_RETURN(am::DeviceDiscovery found, am::ReadDiscovery(*device));
  const am::regs::IpBases bases = found.discovery.Bases();
  BAREGPU_ASSIGN_OR_RETURN(pci::Mmio bar5, device->MapMmio(5));
  am::RegisterIo io(bar5, bases);
  BAREGPU_ASSIGN_OR_RETURN(std::span<uint8_t> vram, device->MapMemory(0));
  auto reg = [&](const std::string& name) -> absl::StatusOr<uint32_t> {
    BAREGPU_ASSIGN_OR_RETURN(uint64_t address, am::regs::ResolveAddress(bases, name, am::regs::Ip::kGc));
    return io.ReadDword(address);
  };
  const std::string context = absl::StrFormat("GCVM_CONTEXT%d_", vmid);
  BAREGPU_ASSIGN_OR_RETURN(uint32_t cntl_raw, reg(context + "CNTL"));
  BAREGPU_ASSIGN_OR_RETURN(uint32_t base_lo, reg(context + "PAGE_TABLE_BASE_ADDR_LO32"));
  BAREGPU_ASSIGN_OR_RETURN(uint32_t base_hi, reg(context + "PAGE_TABLE_BASE_ADDR_HI32"));
  BAREGPU_ASSIGN_OR_RETURN(uint32_t start_lo, reg(context + "PAGE_TABLE_START_ADDR_LO32"));
  BAREGPU_ASSIGN_OR_RETURN(uint32_t start_hi, reg(context + "PAGE_TABLE_START_ADDR_HI32"));
  BAREGPU_ASSIGN_OR_RETURN(uint32_t end_lo, reg(context + "PAGE_TABLE_END_ADDR_LO32"));
  BAREGPU_ASSIGN_OR_RETURN(uint32_t end_hi, reg(context + "PAGE_TABLE_END_ADDR_HI32"));
  const auto cntl = am::regs::gc::GCVM_CONTEXT0_CNTL::FromRaw(cntl_raw);
  const uint64_t base = (uint64_t{base_hi} << 32) | base_lo;
  // START and END are page numbers; END names the context's last page, so every byte of that page is inside.
  const uint64_t start = ((uint64_t{start_hi} << 32) | start_lo) << kPageShift;
  const uint64_t end = (((uint64_t{end_hi} << 32) | end_lo) << kPageShift) | (kPageSize - 1);
  const int depth = static_cast<int>(cntl.page_table_depth());
  const int ptb_bits = kLevelBits + static_cast<int>(cntl.page_table_block_size());

  Json steps = Json::array();
  std::ostream& out = inv.out();
  if (!inv.json()) {
    out << absl::StrFormat("GCHUB context %d: %s, depth %d, block size %d, page-table base 0x%x, range 0x%x..0x%x\n",
                           vmid, cntl.enable_context() ? "enabled" : "DISABLED", depth, cntl.page_table_block_size(),
                           base, start, end);
  }
  if (!cntl.enable_context()) return absl::FailedPreconditionError(absl::StrFormat("VM context %d is disabled", vmid));
  // The hardware checks the range before it reads any table: an address outside it is a range fault, whatever the
  // tables hold (gmc_model.cc Walk; VM_CONTEXTn_CNTL.RANGE_PROTECTION_FAULT_ENABLE_DEFAULT).
  if (va < start || va > end) {
    return absl::OutOfRangeError(absl::StrFormat(
        "%#x is outside VM context %d's range 0x%x..0x%x (GCVM_CONTEXT%d_PAGE_TABLE_START/END_ADDR): the GPU raises a "
        "range fault for it without walking the page table; give an address inside the range",
        va, vmid, start, end, vmid));
  }
  const uint64_t relative = va - start;
  uint64_t table = base & kAddressMask;
  bool system = (base & vm::AMDGPU_PTE_SYSTEM) != 0;
  std::string outcome = "not mapped";
  for (int level = depth; level >= 0; --level) {
    const bool leaf_level = level == 0;
    const int shift = kPageShift + (leaf_level ? 0 : ptb_bits + kLevelBits * (level - 1));
    const uint64_t bits = leaf_level ? static_cast<uint64_t>(ptb_bits) : static_cast<uint64_t>(kLevelBits);
    const uint64_t index = (level == depth) ? relative >> shift : (relative >> shift) & ((uint64_t{1} << bits) - 1);
    const uint64_t entries = TableEntries(level, depth, shift, ptb_bits, start, end);
    const std::string name = leaf_level ? "PTB" : absl::StrFormat("PDB%d", level - 1);
    // The range check and the masks above keep the index inside the table; checked again so that no change to
    // them can send the walk past a table's end into whatever VRAM follows it.
    if (index >= entries) {
      return absl::InternalError(
          absl::StrFormat("%s index %d for %#x is past the %d-entry table at %#x", name, index, va, entries, table));
    }
    const uint64_t address = table + index * kEntrySize;
    if (system || address > vram.size() || vram.size() - address < kEntrySize) {
      outcome = absl::StrFormat("%s at %s %#x cannot be read through BAR0", name, system ? "system address" : "VRAM",
                                address);
      break;
    }
    uint64_t entry;
    std::memcpy(&entry, vram.data() + address, 8);
    const bool leaf = leaf_level || (entry & vm::AMDGPU_PDE_PTE);
    steps.push_back({{"level", name},
                     {"table", Hex(table)},
                     {"index", index},
                     {"entries", entries},
                     {"entry", Hex(entry, 16)},
                     {"flags", Flags(entry, leaf)}});
    if (!inv.json()) {
      out << absl::StrFormat("  %-4s table 0x%012x  index %4d of %4d  entry 0x%016x  %s\n", name, table, index, entries,
                             entry, Flags(entry, leaf));
    }
    if (!(entry & vm::AMDGPU_PTE_VALID)) {
      outcome = absl::StrFormat("not mapped: the %s entry is not valid", name);
      break;
    }
    if (leaf) {
      const uint64_t page = uint64_t{1} << shift;
      const uint64_t target = (entry & kAddressMask & ~(page - 1)) + (va & (page - 1));
      outcome =
          absl::StrFormat("%#x -> %s %#x (%s page)", va, (entry & vm::AMDGPU_PTE_SYSTEM) ? "system" : "VRAM", target,
                          page >= (1u << 30)   ? "1 GiB"
                          : page >= (1u << 21) ? "2 MiB"
                                               : "4 KiB");
      break;
    }
    table = entry & kPdeAddressMask;
    system = (entry & vm::AMDGPU_PTE_SYSTEM) != 0;
  }
  if (inv.json()) {
    PrintJson(out,
              Json{{"device", device->name()}, {"vmid", vmid}, {"va", Hex(va)}, {"steps", steps}, {"result", outcome}});
  } else {
    out << "  " << outcome << "\n";
  }
  return absl::OkStatus();
}

BAREGPU_REGISTER_COMMAND(kPtRegistered,
                         Command{"pt",
                                 "walk a GPU virtual address through the device's page tables",
                                 "baregpu pt DEVICE walk VA [--vmid=N] [--json]",
                                 "Reads GCHUB VM context N's registers (default 0) and the page-table entries in "
                                 "VRAM, and prints each level's table, index, entry and flags, then what the "
                                 "address translates to.",
                                 {{"json", false, "print the walk as JSON"}, {"vmid", true, "VM context (0-15)"}},
                                 RunPt});

}  // namespace
}  // namespace cli
