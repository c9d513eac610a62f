// GPU page tables in the gfx11 format, as the driver builds them in VRAM: four levels (PDB2, PDB1, PDB0 and the
// page table; 9 address bits each, 512 GiB per root entry), 4 KiB pages, PDE-as-PTE huge pages of 2 MiB (PDB0) and
// 1 GiB (PDB1) where size and alignment allow, fragment fields on contiguous 4 KiB runs, and system pages for
// DMA memory. Bits from amdgpu_vm.h (am/regs/vm.h); the layout is what a VM context with PAGE_TABLE_DEPTH 3 and
// PAGE_TABLE_BLOCK_SIZE 0 walks (gfxhub_v3_0 / mmhub_v3_0 program VMIDs 1-15 that way).
//
// Tables are allocated from a VRAM range the caller gives (the memory manager's page-table region) and written
// through a host view of VRAM (BAR0, or the part of it a small BAR shows). A host-side shadow counts each
// table's valid entries, so unmapping frees tables that became empty. Changes are not visible to the GPU until
// the caller invalidates its TLB; `Map`/`Unmap` only write memory.
#ifndef BAREGPU_AM_PAGE_TABLE_H_
#define BAREGPU_AM_PAGE_TABLE_H_

#include <array>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "am/tlsf_allocator.h"

namespace am {

struct PageFlags {
  bool system = false;   // DMA memory (the address is a bus address), else VRAM
  bool snooped = false;  // coherent with the CPU's caches (system pages)
  bool readable = true;
  bool writeable = true;
  bool executable = false;
  uint32_t mtype = 0;  // AMDGPU_MTYPE_* in PTE bits 50:48 (gfx10/11)
};

class PageTable {
 public:
  static constexpr uint64_t kPageSize = 4096;
  static constexpr int kLevels = 4;  // PDB2, PDB1, PDB0, PTB
  static constexpr int kRootLevel = kLevels - 1;
  static constexpr int kDepth = kLevels - 1;  // PAGE_TABLE_DEPTH for the VM context
  static constexpr uint64_t kAddressSpace = uint64_t{1} << 48;

  // `vram_window` is host memory showing VRAM from `window_offset` on; tables come from `tables`, whose range
  // must lie inside the window. The root table is allocated here.
  static absl::StatusOr<std::unique_ptr<PageTable>> Create(std::span<uint8_t> vram_window, uint64_t window_offset,
                                                           TlsfAllocator& tables, bool huge_pages = true);
  ~PageTable();

  // VRAM address of the root table (what goes into VM_CONTEXTn_PAGE_TABLE_BASE_ADDR).
  uint64_t root() const;

  // Maps [va, va + size) to the physically contiguous [address, address + size). All page-aligned. Mapping over
  // an existing mapping is an error (unmap first) and changes nothing.
  absl::Status Map(uint64_t va, uint64_t size, uint64_t address, const PageFlags& flags);
  // Maps one 4 KiB page per entry of `pages` (a DMA buffer's page addresses), contiguous runs as fragments.
  absl::Status MapPages(uint64_t va, std::span<const uint64_t> pages, const PageFlags& flags);
  // Removes every mapping in [va, va + size) (huge pages must be unmapped whole); empty tables are freed.
  absl::Status Unmap(uint64_t va, uint64_t size);

  // What the walker sees for `va`: each level's table, index and entry, down to the leaf (or the invalid entry).
  struct Step {
    int level;  // 3 = PDB2 ... 0 = page table
    uint64_t table;
    uint32_t index;
    uint64_t entry;
  };
  struct Translation {
    std::vector<Step> steps;
    bool valid = false;
    uint64_t address = 0;    // the byte va maps to
    uint64_t page_size = 0;  // 4 KiB, 2 MiB or 1 GiB
  };
  Translation Walk(uint64_t va) const;

  size_t table_count() const { return table_count_; }

 private:
  // One table: its entries are in VRAM (`entries`, the host view of them, taken once); the host keeps the count
  // of valid entries and, for directories only, the child tables their entries point at (a page table's entries
  // are all leaves, so it carries no child array to clear or scan).
  struct Table {
    uint64_t address;   // VRAM
    uint64_t* entries;  // 512 of them, through the host view of VRAM
    int level;
    uint32_t used = 0;
    std::unique_ptr<std::array<std::unique_ptr<Table>, 512>> children;  // level > 0 only

    Table* child(uint32_t index) const { return children ? (*children)[index].get() : nullptr; }
  };

  PageTable(std::span<uint8_t> vram_window, uint64_t window_offset, TlsfAllocator& tables, bool huge_pages)
      : window_(vram_window), window_offset_(window_offset), tables_(tables), huge_pages_(huge_pages) {}

  static int Shift(int level) { return 12 + 9 * level; }
  static uint32_t IndexAt(uint64_t va, int level) { return (va >> Shift(level)) & 511; }
  absl::StatusOr<std::unique_ptr<Table>> NewTable(int level);
  void FreeTable(std::unique_ptr<Table> table);
  uint64_t LeafBits(const PageFlags& flags) const;
  // Maps one run of pages contiguous in both spaces, choosing the largest page and fragment that fit.
  absl::Status MapRun(uint64_t va, uint64_t size, uint64_t address, const PageFlags& flags);
  absl::Status CheckFree(const Table& table, uint64_t va, uint64_t size) const;
  void UnmapIn(Table& table, uint64_t va, uint64_t end);

  std::span<uint8_t> window_;
  uint64_t window_offset_;
  TlsfAllocator& tables_;
  bool huge_pages_;
  std::unique_ptr<Table> root_;
  size_t table_count_ = 0;
};

}  // namespace am

#endif  // BAREGPU_AM_PAGE_TABLE_H_
