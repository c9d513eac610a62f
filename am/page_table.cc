#include "am/page_table.h"

#include <algorithm>
#include <atomic>
#include <bit>
#include <cstring>

#include "absl/strings/str_format.h"
#include "am/regs/vm.h"
#include "base/status_macros.h"

namespace am {
namespace {

namespace vm = regs::vm;

constexpr uint64_t kEntryAddressMask = 0x0000'ffff'ffff'f000;  // amdgpu_vm.h: PTE/PDE address bits 47:12
constexpr int kMaxFragment = 31;                               // AMDGPU_PTE_FRAG is 5 bits wide
constexpr int kEntriesPerTable = 512;
constexpr int kPageShift = 12;

bool Aligned(uint64_t value, uint64_t alignment) { return (value & (alignment - 1)) == 0; }

}  // namespace

absl::StatusOr<std::unique_ptr<PageTable>> PageTable::Create(std::span<uint8_t> vram_window, uint64_t window_offset,
                                                             TlsfAllocator& tables, bool huge_pages) {
  if (tables.base() < window_offset || tables.base() + tables.size() > window_offset + vram_window.size()) {
    return absl::InvalidArgumentError(
        absl::StrFormat("page-table region %#x..%#x is not inside the CPU-visible VRAM window %#x..%#x", tables.base(),
                        tables.base() + tables.size(), window_offset, window_offset + vram_window.size()));
  }
  std::unique_ptr<PageTable> table(new PageTable(vram_window, window_offset, tables, huge_pages));
  BAREGPU_ASSIGN_OR_RETURN(table->root_, table->NewTable(kRootLevel));
  return table;
}

PageTable::~PageTable() {
  if (root_) FreeTable(std::move(root_));
}

uint64_t PageTable::root() const { return root_->address; }

absl::StatusOr<std::unique_ptr<PageTable::Table>> PageTable::NewTable(int level) {
  BAREGPU_ASSIGN_OR_RETURN(uint64_t address, tables_.Allocate(kPageSize, kPageSize));
  auto table = std::make_unique<Table>();
  table->address = address;
  table->entries = reinterpret_cast<uint64_t*>(window_.data() + (address - window_offset_));
  table->level = level;
  if (level > 0) table->children = std::make_unique<std::array<std::unique_ptr<Table>, kEntriesPerTable>>();
  std::memset(table->entries, 0, kPageSize);
  ++table_count_;
  return table;
}

void PageTable::FreeTable(std::unique_ptr<Table> table) {
  if (table->children) {
    for (auto& child : *table->children) {
      if (child) FreeTable(std::move(child));
    }
  }
  (void)tables_.Free(table->address);
  --table_count_;
}

uint64_t PageTable::LeafBits(const PageFlags& flags) const {
  uint64_t bits = vm::AMDGPU_PTE_VALID;
  if (flags.system) bits |= vm::AMDGPU_PTE_SYSTEM;
  if (flags.snooped) bits |= vm::AMDGPU_PTE_SNOOPED;
  if (flags.readable) bits |= vm::AMDGPU_PTE_READABLE;
  if (flags.writeable) bits |= vm::AMDGPU_PTE_WRITEABLE;
  if (flags.executable) bits |= vm::AMDGPU_PTE_EXECUTABLE;
  return vm::PteWithMtypeNv10(bits, flags.mtype);
}

absl::Status PageTable::CheckFree(const Table& table, uint64_t va, uint64_t size) const {
  if (table.level == 0) {  // [va, va + size) lies inside this page table: its entries, one after the other
    const uint64_t* entries = table.entries + IndexAt(va, 0);
    for (uint64_t i = 0; i < size >> kPageShift; ++i) {
      if (entries[i] & vm::AMDGPU_PTE_VALID) {
        return absl::AlreadyExistsError(absl::StrFormat("GPU address %#x is already mapped", va + i * kPageSize));
      }
    }
    return absl::OkStatus();
  }
  const uint64_t span = uint64_t{1} << Shift(table.level);
  const uint64_t end = va + size;
  for (uint64_t at = va; at < end;) {
    const uint32_t index = IndexAt(at, table.level);
    const uint64_t entry_end = (at & ~(span - 1)) + span;
    const uint64_t piece_end = std::min(end, entry_end);
    if (const Table* child = table.child(index)) {
      BAREGPU_RETURN_IF_ERROR(CheckFree(*child, at, piece_end - at));
    } else if (table.entries[index] & vm::AMDGPU_PTE_VALID) {
      return absl::AlreadyExistsError(absl::StrFormat("GPU address %#x is already mapped", at));
    }
    at = piece_end;
  }
  return absl::OkStatus();
}

absl::Status PageTable::Map(uint64_t va, uint64_t size, uint64_t address, const PageFlags& flags) {
  if (size == 0 || !Aligned(va, kPageSize) || !Aligned(size, kPageSize) || !Aligned(address, kPageSize)) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "map of %#x bytes at GPU address %#x to %#x: all three must be 4 KiB multiples", size, va, address));
  }
  if (va >= kAddressSpace || size > kAddressSpace - va) {
    return absl::OutOfRangeError(absl::StrFormat("GPU addresses %#x..%#x exceed the 48-bit space", va, va + size));
  }
  BAREGPU_RETURN_IF_ERROR(CheckFree(*root_, va, size));
  return MapRun(va, size, address, flags);
}

absl::Status PageTable::MapPages(uint64_t va, std::span<const uint64_t> pages, const PageFlags& flags) {
  if (pages.empty() || !Aligned(va, kPageSize) || va >= kAddressSpace ||
      pages.size() > (kAddressSpace - va) / kPageSize) {
    return absl::InvalidArgumentError(absl::StrFormat("map of %d pages at GPU address %#x", pages.size(), va));
  }
  for (uint64_t page : pages) {
    if (!Aligned(page, kPageSize)) return absl::InvalidArgumentError(absl::StrFormat("page %#x unaligned", page));
  }
  BAREGPU_RETURN_IF_ERROR(CheckFree(*root_, va, pages.size() * kPageSize));
  for (size_t i = 0; i < pages.size();) {
    size_t run = 1;
    while (i + run < pages.size() && pages[i + run] == pages[i] + run * kPageSize) ++run;
    BAREGPU_RETURN_IF_ERROR(MapRun(va + i * kPageSize, run * kPageSize, pages[i], flags));
    i += run;
  }
  return absl::OkStatus();
}

absl::Status PageTable::MapRun(uint64_t va, uint64_t size, uint64_t address, const PageFlags& flags) {
  const uint64_t leaf = LeafBits(flags);
  while (size > 0) {
    // The largest level whose page fits here: 1 GiB at PDB1, 2 MiB at PDB0, else 4 KiB pages.
    int level = 0;
    for (int candidate = 2; huge_pages_ && candidate >= 1 && level == 0; --candidate) {
      const uint64_t page = uint64_t{1} << Shift(candidate);
      if (Aligned(va, page) && Aligned(address, page) && size >= page) level = candidate;
    }
    Table* table = root_.get();
    for (int l = kRootLevel; l > level; --l) {
      const uint32_t index = IndexAt(va, l);
      std::unique_ptr<Table>& child = (*table->children)[index];
      if (!child) {
        BAREGPU_ASSIGN_OR_RETURN(child, NewTable(l - 1));
        std::atomic_ref<uint64_t>(table->entries[index])
            .store(child->address | vm::AMDGPU_PTE_VALID, std::memory_order_release);
        ++table->used;
      }
      table = child.get();
    }
    const uint32_t index = IndexAt(va, level);
    if (level > 0) {
      std::atomic_ref<uint64_t>(table->entries[index])
          .store((address & kEntryAddressMask) | leaf | vm::AMDGPU_PDE_PTE, std::memory_order_release);
      ++table->used;
      const uint64_t page = uint64_t{1} << Shift(level);
      va += page, address += page, size -= page;
      continue;
    }
    // A fragment: the largest aligned power-of-two block of pages that is contiguous in both spaces. Every PTE of
    // the block carries it, so the TLB may translate the whole block from any one of them.
    const uint64_t pages_left = size >> kPageShift;
    const int fragment =
        std::min({kMaxFragment, std::countr_zero(va >> kPageShift | uint64_t{1} << 63),
                  std::countr_zero(address >> kPageShift | uint64_t{1} << 63), 63 - std::countl_zero(pages_left)});
    uint64_t block = uint64_t{1} << fragment;
    const uint64_t bits = leaf | vm::PteFragment(fragment);
    // Fill this table's part of the block; the loop comes back for the rest.
    const uint64_t here = std::min<uint64_t>(block, kEntriesPerTable - index);
    uint64_t* entries = table->entries + index;
    for (uint64_t i = 0; i < here; ++i) {
      std::atomic_ref<uint64_t>(entries[i])
          .store(((address + i * kPageSize) & kEntryAddressMask) | bits, std::memory_order_release);
    }
    table->used += here;
    if (here < block) {
      // The rest of the block continues in the next table with the same fragment size.
      block = here;
    }
    va += block * kPageSize, address += block * kPageSize, size -= block * kPageSize;
  }
  return absl::OkStatus();
}

void PageTable::UnmapIn(Table& table, uint64_t va, uint64_t end) {
  if (table.level == 0) {  // [va, end) lies inside this page table: clear its entries in one pass
    uint64_t* entries = table.entries + IndexAt(va, 0);
    uint32_t cleared = 0;
    for (uint64_t i = 0; i < (end - va) >> kPageShift; ++i) {
      cleared += (entries[i] & vm::AMDGPU_PTE_VALID) != 0;
      std::atomic_ref<uint64_t>(entries[i]).store(0, std::memory_order_release);
    }
    table.used -= cleared;
    return;
  }
  const uint64_t span = uint64_t{1} << Shift(table.level);
  for (uint64_t at = va; at < end;) {
    const uint32_t index = IndexAt(at, table.level);
    const uint64_t entry_start = at & ~(span - 1);
    const uint64_t piece_end = std::min(end, entry_start + span);
    uint64_t* entry = &table.entries[index];
    if (Table* child = table.child(index)) {
      UnmapIn(*child, at, piece_end);
      if (child->used == 0) {
        std::atomic_ref<uint64_t>(*entry).store(0, std::memory_order_release);
        FreeTable(std::move((*table.children)[index]));
        --table.used;
      }
    } else if (*entry & vm::AMDGPU_PTE_VALID) {
      std::atomic_ref<uint64_t>(*entry).store(0, std::memory_order_release);
      --table.used;
    }
    at = piece_end;
  }
}

absl::Status PageTable::Unmap(uint64_t va, uint64_t size) {
  if (size == 0 || !Aligned(va, kPageSize) || !Aligned(size, kPageSize) || va >= kAddressSpace ||
      size > kAddressSpace - va) {
    return absl::InvalidArgumentError(absl::StrFormat("unmap of %#x bytes at GPU address %#x", size, va));
  }
  // A huge page is unmapped whole or not at all.
  for (uint64_t edge : {va, va + size - kPageSize}) {
    const Translation t = Walk(edge);
    if (t.valid && t.page_size > kPageSize) {
      const uint64_t start = edge & ~(t.page_size - 1);
      if (start < va || start + t.page_size > va + size) {
        return absl::InvalidArgumentError(absl::StrFormat(
            "unmap %#x..%#x cuts the %#x-byte page at %#x; unmap it whole", va, va + size, t.page_size, start));
      }
    }
  }
  // Pages just outside the range whose fragment block reaches into it would still vouch for it: lower them to
  // single pages first.
  for (uint64_t outside : {va - kPageSize, va + size}) {
    if (va == 0 && outside == va - kPageSize) continue;
    const Translation t = Walk(outside);
    if (!t.valid || t.page_size != kPageSize) continue;
    const uint64_t pages = uint64_t{1} << vm::PteFragmentOf(t.steps.back().entry);
    const uint64_t block = outside & ~(pages * kPageSize - 1);
    if (block + pages * kPageSize <= va || block >= va + size) continue;
    for (uint64_t page = block; page < block + pages * kPageSize; page += kPageSize) {
      const Translation p = Walk(page);
      if (!p.valid || p.page_size != kPageSize) continue;
      const Step& step = p.steps.back();
      uint64_t* entry = reinterpret_cast<uint64_t*>(window_.data() + (step.table - window_offset_)) + step.index;
      std::atomic_ref<uint64_t>(*entry).store(step.entry & ~vm::PteFragment(kMaxFragment), std::memory_order_release);
    }
  }
  UnmapIn(*root_, va, va + size);
  return absl::OkStatus();
}

PageTable::Translation PageTable::Walk(uint64_t va) const {
  Translation result;
  if (va >= kAddressSpace) return result;
  const Table* table = root_.get();
  while (table != nullptr) {
    const uint32_t index = IndexAt(va, table->level);
    const uint64_t entry = std::atomic_ref<uint64_t>(table->entries[index]).load(std::memory_order_acquire);
    result.steps.push_back({table->level, table->address, index, entry});
    if ((entry & vm::AMDGPU_PTE_VALID) == 0) return result;
    if (table->level == 0 || (entry & vm::AMDGPU_PDE_PTE)) {
      result.valid = true;
      result.page_size = uint64_t{1} << Shift(table->level);
      result.address = (entry & kEntryAddressMask & ~(result.page_size - 1)) + (va & (result.page_size - 1));
      return result;
    }
    table = table->child(index);
  }
  return result;
}

}  // namespace am
