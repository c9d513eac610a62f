// The driver's memory manager for one device: physical VRAM (a TLSF allocator over the general range, plus a boot
// region at the bottom whose contents survive between driver sessions, and the page-table region), the device's
// GPU page tables, and mappings of VRAM and DMA memory at addresses from the process-wide VA allocator.
//
// VRAM layout, bottom to top: [boot region][page-table region][general allocations][reserved top]. The boot region
// holds what a partial boot finds again at the same addresses (rings, MQDs, the IH ring, firmware buffers); the
// page-table region must be CPU-visible (on a small-BAR device it is the part BAR0 shows); the reserved top is
// firmware's (kFirmwareReservedTop; the discovery table in its last 64 KiB).
#ifndef BAREGPU_AM_MEMORY_MANAGER_H_
#define BAREGPU_AM_MEMORY_MANAGER_H_

#include <algorithm>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "am/discovery.h"
#include "am/page_table.h"
#include "am/tlsf_allocator.h"
#include "am/va_allocator.h"
#include "base/bits.h"
#include "base/mutex.h"
#include "pci/dma_buffer.h"

namespace am {

// The firmware's share at the top of VRAM. amdgpu reserves what the VBIOS's firmwareinfo table says the firmware
// uses (amdgpu_ttm_reserve_tmr, amdgpu_atomfirmware_get_fw_reserved_fb_size) and falls back to the discovery
// table's 64 KiB (DISCOVERY_TMR_OFFSET) only without a VBIOS figure; baregpu reads no VBIOS, so it keeps what
// tinygrad's AM driver found the firmware needs on GC 11 boards: 64 MiB (AMDev.reserved_vram_size), the
// discovery table included.
inline constexpr uint64_t kFirmwareReservedTop = base::MiB(64);
static_assert(kFirmwareReservedTop >= kDiscoveryOffsetFromTop);

struct VramLayout {
  uint64_t vram_size = 0;                        // RCC_CONFIG_MEMSIZE
  uint64_t reserved_top = kFirmwareReservedTop;  // the firmware's, with the IP discovery table at the very top
  uint64_t boot_size = base::MiB(32);
  uint64_t page_table_size = base::MiB(64);
};

class MemoryManager {
 public:
  // `cpu_view` is VRAM as the CPU sees it through BAR0, from offset 0 (all of it, or a small BAR's part).
  static absl::StatusOr<std::unique_ptr<MemoryManager>> Create(std::span<uint8_t> cpu_view, const VramLayout& layout,
                                                               VaAllocator& va = VaAllocator::Global());
  ~MemoryManager();

  const VramLayout& layout() const { return layout_; }
  // Bytes of VRAM the CPU reaches through BAR0 from offset 0 (all of it with a large BAR).
  uint64_t cpu_visible_size() const { return std::min<uint64_t>(cpu_view_.size(), layout_.vram_size); }
  // Offsets of the regions in VRAM.
  uint64_t boot_base() const { return 0; }
  uint64_t general_base() const { return layout_.boot_size + layout_.page_table_size; }

  // Boot-region allocations (deterministic: the same sequence gives the same addresses after a reopen).
  absl::StatusOr<uint64_t> AllocBoot(uint64_t size, uint64_t alignment = 0);
  // Frees every boot-region allocation. A boot that starts over (a failed partial boot, a reset after a stopped
  // bootloader) runs init_sw again, and its buffers must land where a fresh process's would: a later process's
  // partial boot finds the firmware's (the SMU's driver table, the PSP's ring) there.
  void ReleaseBootRegion();
  absl::StatusOr<uint64_t> AllocVram(uint64_t size, uint64_t alignment = 0);
  absl::Status FreeVram(uint64_t address);
  // The CPU's view of [address, address + size) of VRAM; an error when BAR0 does not show all of it.
  absl::StatusOr<std::span<uint8_t>> CpuView(uint64_t address, uint64_t size) const;

  // How full each VRAM region is, for `baregpu smi` (through a debug endpoint: the allocations are this process's).
  struct RegionUsage {
    uint64_t size = 0;
    uint64_t free = 0;
    uint64_t largest_free = 0;
    size_t allocations = 0;
  };
  struct Usage {
    RegionUsage boot, page_tables, general;
    size_t mappings = 0;  // GPU virtual mappings made through this manager
  };
  Usage usage() const;

  PageTable& page_table() { return *page_table_; }
  // Maps VRAM / a DMA buffer at a new address of the process-wide VA space; Unmap removes it and frees the VA.
  absl::StatusOr<uint64_t> MapVram(uint64_t address, uint64_t size, const PageFlags& flags = {});
  absl::StatusOr<uint64_t> MapSystem(const pci::DmaBuffer& buffer, PageFlags flags = {.system = true, .snooped = true});
  // Map a DMA buffer, or CPU-visible VRAM (through the BAR), at the address the CPU sees it at, so that one pointer
  // means the same memory to the CPU and the GPU (tinygrad's HCQ, as KFD maps buffers). Refused where that address
  // is not the GPU's to give: inside the VA allocator's range, or at or above gfx11's address-space hole
  // (AMDGPU_GMC_HOLE_START, amdgpu_gmc.h). Unmap leaves the VA (the CPU's mapping owns it).
  absl::StatusOr<uint64_t> MapSystemAtCpuAddress(const pci::DmaBuffer& buffer,
                                                 PageFlags flags = {.system = true, .snooped = true});
  absl::StatusOr<uint64_t> MapVramAtCpuAddress(uint64_t address, uint64_t size, const PageFlags& flags = {});
  // Maps at an address allocated elsewhere (another device's buffer, for peer access); Unmap leaves the VA.
  absl::Status MapAt(uint64_t va, uint64_t size, uint64_t address, const PageFlags& flags);
  absl::Status Unmap(uint64_t va);

  // What makes page-table changes visible to the GPU (the GMC's TLB invalidation); Flush runs it.
  void set_tlb_flush(std::function<absl::Status()> flush) { tlb_flush_ = std::move(flush); }
  absl::Status Flush();

 private:
  struct Mapping {
    uint64_t size;
    bool owns_va;
  };
  MemoryManager(std::span<uint8_t> cpu_view, const VramLayout& layout, VaAllocator& va);

  std::span<uint8_t> cpu_view_;
  VramLayout layout_;
  VaAllocator& va_;
  mutable base::Mutex mu_;
  TlsfAllocator boot_ ABSL_GUARDED_BY(mu_);
  std::vector<uint64_t> boot_allocations_ ABSL_GUARDED_BY(mu_);
  TlsfAllocator tables_;  // used by page_table_ under mu_
  TlsfAllocator general_ ABSL_GUARDED_BY(mu_);
  std::unique_ptr<PageTable> page_table_;
  absl::flat_hash_map<uint64_t, Mapping> mappings_ ABSL_GUARDED_BY(mu_);
  std::function<absl::Status()> tlb_flush_;
};

}  // namespace am

#endif  // BAREGPU_AM_MEMORY_MANAGER_H_
