#include "am/memory_manager.h"

#include "absl/strings/str_format.h"
#include "base/status_macros.h"

namespace am {

absl::StatusOr<std::unique_ptr<MemoryManager>> MemoryManager::Create(std::span<uint8_t> cpu_view,
                                                                     const VramLayout& layout, VaAllocator& va) {
  const uint64_t fixed = layout.boot_size + layout.page_table_size + layout.reserved_top;
  if (layout.vram_size <= fixed) {
    return absl::InvalidArgumentError(
        absl::StrFormat("VRAM of %#x bytes does not hold the boot (%#x), page-table (%#x) and reserved (%#x) regions",
                        layout.vram_size, layout.boot_size, layout.page_table_size, layout.reserved_top));
  }
  if (layout.boot_size + layout.page_table_size > cpu_view.size()) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "the boot and page-table regions (%#x bytes) must be CPU-visible, but BAR0 shows only %#x bytes of VRAM",
        layout.boot_size + layout.page_table_size, cpu_view.size()));
  }
  std::unique_ptr<MemoryManager> manager(new MemoryManager(cpu_view, layout, va));
  BAREGPU_ASSIGN_OR_RETURN(manager->page_table_, PageTable::Create(cpu_view, 0, manager->tables_));
  return manager;
}

MemoryManager::MemoryManager(std::span<uint8_t> cpu_view, const VramLayout& layout, VaAllocator& va)
    : cpu_view_(cpu_view),
      layout_(layout),
      va_(va),
      boot_(0, layout.boot_size, PageTable::kPageSize),
      tables_(layout.boot_size, layout.page_table_size, PageTable::kPageSize),
      general_(layout.boot_size + layout.page_table_size,
               layout.vram_size - layout.boot_size - layout.page_table_size - layout.reserved_top,
               PageTable::kPageSize) {}

MemoryManager::~MemoryManager() {
  base::MutexLock lock(&mu_);
  for (const auto& [va, mapping] : mappings_) {
    if (mapping.owns_va) (void)va_.Free(va);
  }
}

absl::StatusOr<uint64_t> MemoryManager::AllocBoot(uint64_t size, uint64_t alignment) {
  base::MutexLock lock(&mu_);
  auto address = boot_.Allocate(size, alignment);
  if (!address.ok()) {
    return absl::ResourceExhaustedError(absl::StrFormat("boot region: %s", address.status().message()));
  }
  boot_allocations_.push_back(*address);
  return address;
}

void MemoryManager::ReleaseBootRegion() {
  base::MutexLock lock(&mu_);
  for (uint64_t address : boot_allocations_) (void)boot_.Free(address);
  boot_allocations_.clear();
}

absl::StatusOr<uint64_t> MemoryManager::AllocVram(uint64_t size, uint64_t alignment) {
  base::MutexLock lock(&mu_);
  auto address = general_.Allocate(size, alignment);
  if (!address.ok()) return absl::ResourceExhaustedError(absl::StrFormat("VRAM: %s", address.status().message()));
  return address;
}

absl::Status MemoryManager::FreeVram(uint64_t address) {
  base::MutexLock lock(&mu_);
  if (address < general_base()) return boot_.Free(address);
  return general_.Free(address);
}

absl::StatusOr<std::span<uint8_t>> MemoryManager::CpuView(uint64_t address, uint64_t size) const {
  if (address > cpu_view_.size() || size > cpu_view_.size() - address) {
    return absl::OutOfRangeError(absl::StrFormat(
        "VRAM %#x..%#x is not CPU-visible (BAR0 shows the first %#x bytes); use a DMA copy or a large BAR", address,
        address + size, cpu_view_.size()));
  }
  return cpu_view_.subspan(address, size);
}

absl::StatusOr<uint64_t> MemoryManager::MapVram(uint64_t address, uint64_t size, const PageFlags& flags) {
  if (address >= layout_.vram_size || size > layout_.vram_size - address) {
    return absl::OutOfRangeError(
        absl::StrFormat("VRAM %#x..%#x is beyond VRAM (%#x bytes)", address, address + size, layout_.vram_size));
  }
  const uint64_t rounded = base::AlignUp(size, PageTable::kPageSize);
  BAREGPU_ASSIGN_OR_RETURN(uint64_t va, va_.Allocate(rounded, address & (base::MiB(2) - 1) ? 0 : base::MiB(2)));
  base::MutexLock lock(&mu_);
  if (absl::Status mapped = page_table_->Map(va, rounded, address, flags); !mapped.ok()) {
    (void)va_.Free(va);
    return mapped;
  }
  mappings_[va] = {rounded, true};
  return va;
}

absl::StatusOr<uint64_t> MemoryManager::MapSystem(const pci::DmaBuffer& buffer, PageFlags flags) {
  flags.system = true;
  BAREGPU_ASSIGN_OR_RETURN(uint64_t va, va_.Allocate(buffer.page_addresses().size() * PageTable::kPageSize));
  base::MutexLock lock(&mu_);
  if (absl::Status mapped = page_table_->MapPages(va, buffer.page_addresses(), flags); !mapped.ok()) {
    (void)va_.Free(va);
    return mapped;
  }
  mappings_[va] = {buffer.page_addresses().size() * PageTable::kPageSize, true};
  return va;
}

namespace {

// Whether [va, va + size) may be given to a buffer at its CPU address (MapSystemAtCpuAddress).
absl::Status CheckCpuAddressRange(uint64_t va, uint64_t size) {
  // amdgpu_gmc.h AMDGPU_GMC_HOLE_START: the lower half of the 48-bit space ends at 2^47; what the CPU gives a process
  // (x86-64 user space, 47 bits with 4-level paging) lies below it.
  constexpr uint64_t kHoleStart = PageTable::kAddressSpace / 2;
  if (va % PageTable::kPageSize != 0 || va + size > kHoleStart || va + size < va) {
    return absl::InvalidArgumentError(
        absl::StrFormat("CPU address %#x (%d bytes) is not page-aligned below the GPU's address-space hole at %#x: "
                        "the buffer cannot sit at the same GPU address",
                        va, size, kHoleStart));
  }
  if (va < VaAllocator::kEnd && va + size > VaAllocator::kStart) {
    return absl::FailedPreconditionError(
        absl::StrFormat("CPU address %#x (%d bytes) overlaps the GPU VA allocator's range [%#x, %#x)", va, size,
                        VaAllocator::kStart, VaAllocator::kEnd));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<uint64_t> MemoryManager::MapSystemAtCpuAddress(const pci::DmaBuffer& buffer, PageFlags flags) {
  const uint64_t va = reinterpret_cast<uintptr_t>(buffer.cpu());
  const uint64_t size = buffer.page_addresses().size() * PageTable::kPageSize;
  BAREGPU_RETURN_IF_ERROR(CheckCpuAddressRange(va, size));
  flags.system = true;
  base::MutexLock lock(&mu_);
  if (mappings_.contains(va)) return absl::AlreadyExistsError(absl::StrFormat("%#x is mapped already", va));
  BAREGPU_RETURN_IF_ERROR(page_table_->MapPages(va, buffer.page_addresses(), flags));
  mappings_[va] = {size, false};
  return va;
}

absl::StatusOr<uint64_t> MemoryManager::MapVramAtCpuAddress(uint64_t address, uint64_t size, const PageFlags& flags) {
  // Saturating: a size near 2^64 must not round to 0 and map nothing; CpuView refuses the saturated size.
  const uint64_t rounded = base::AlignUp(size, PageTable::kPageSize);
  BAREGPU_ASSIGN_OR_RETURN(std::span<uint8_t> view, CpuView(address, rounded));
  const uint64_t va = reinterpret_cast<uintptr_t>(view.data());
  BAREGPU_RETURN_IF_ERROR(CheckCpuAddressRange(va, rounded));
  base::MutexLock lock(&mu_);
  if (mappings_.contains(va)) return absl::AlreadyExistsError(absl::StrFormat("%#x is mapped already", va));
  BAREGPU_RETURN_IF_ERROR(page_table_->Map(va, rounded, address, flags));
  mappings_[va] = {rounded, false};
  return va;
}

absl::Status MemoryManager::MapAt(uint64_t va, uint64_t size, uint64_t address, const PageFlags& flags) {
  base::MutexLock lock(&mu_);
  BAREGPU_RETURN_IF_ERROR(page_table_->Map(va, size, address, flags));
  mappings_[va] = {size, false};
  return absl::OkStatus();
}

absl::Status MemoryManager::Unmap(uint64_t va) {
  base::MutexLock lock(&mu_);
  auto it = mappings_.find(va);
  if (it == mappings_.end()) return absl::NotFoundError(absl::StrFormat("nothing is mapped at %#x", va));
  BAREGPU_RETURN_IF_ERROR(page_table_->Unmap(va, it->second.size));
  if (it->second.owns_va) BAREGPU_RETURN_IF_ERROR(va_.Free(va));
  mappings_.erase(it);
  return absl::OkStatus();
}

MemoryManager::Usage MemoryManager::usage() const {
  auto region = [](const TlsfAllocator& a) {
    return RegionUsage{a.size(), a.free_bytes(), a.largest_free_block(), a.allocation_count()};
  };
  base::MutexLock lock(&mu_);
  return Usage{region(boot_), region(tables_), region(general_), mappings_.size()};
}

absl::Status MemoryManager::Flush() { return tlb_flush_ ? tlb_flush_() : absl::OkStatus(); }

}  // namespace am
