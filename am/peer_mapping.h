// Peer access: a range of one device's VRAM mapped into another device's GPU page tables, at the virtual address
// the range has on its owner (the process-wide VA allocator makes that address free everywhere), so one address
// means the same buffer on both GPUs. The importing device reaches it as system memory through its DMA path: the
// owner's BAR0 made reachable by pci::Device::MapPeerMemory (the IOMMU under VFIO), then system PTEs to that
// device address. It needs the owner's VRAM range visible through its BAR0 (a large BAR). Host DMA memory that
// another device allocated is imported the same way: its pages are made reachable by this device's DMA too.
#ifndef BAREGPU_AM_PEER_MAPPING_H_
#define BAREGPU_AM_PEER_MAPPING_H_

#include <cstdint>
#include <memory>
#include <span>

#include "absl/status/statusor.h"
#include "pci/dma_mapping.h"

namespace am {

class Device;

class PeerMapping {
 public:
  // Maps [vram_offset, vram_offset + size) of `owner`'s VRAM into `importer`'s page tables at `va` and flushes its
  // TLB. Page-aligned offset, size and VA.
  static absl::StatusOr<std::unique_ptr<PeerMapping>> Create(Device& importer, Device& owner, uint64_t vram_offset,
                                                             uint64_t size, uint64_t va);
  // Maps host memory that another device allocated for DMA (`memory`, page-aligned) into `importer`'s page tables
  // at `va`, snooped (coherent with the CPU's caches) unless `uncached`, and flushes its TLB.
  static absl::StatusOr<std::unique_ptr<PeerMapping>> CreateForHostMemory(Device& importer, std::span<uint8_t> memory,
                                                                          uint64_t va, bool uncached);
  // Unmaps from the importer's page tables (and flushes) before the DMA mapping goes.
  ~PeerMapping();
  PeerMapping(const PeerMapping&) = delete;
  PeerMapping& operator=(const PeerMapping&) = delete;

  uint64_t va() const { return va_; }
  uint64_t size() const { return dma_->size(); }
  // Where the importer's DMA reaches the memory (its bus address / IOVA).
  uint64_t device_address() const { return dma_->device_address(); }

 private:
  PeerMapping(Device& importer, std::unique_ptr<pci::DmaMapping> dma, uint64_t va)
      : importer_(importer), dma_(std::move(dma)), va_(va) {}

  Device& importer_;
  std::unique_ptr<pci::DmaMapping> dma_;
  uint64_t va_;
};

}  // namespace am

#endif  // BAREGPU_AM_PEER_MAPPING_H_
