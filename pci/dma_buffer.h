// Host memory that a device can reach by DMA, with the device address of every page.
//
// Device addresses are bus addresses (sysfs backend), IOVAs the IOMMU translates (VFIO), or addresses a virtual
// device translates (sim). Destroying the buffer unmaps it from the device before the memory is released.
#ifndef BAREGPU_PCI_DMA_BUFFER_H_
#define BAREGPU_PCI_DMA_BUFFER_H_

#include <cstddef>
#include <cstdint>
#include <span>
#include <utility>
#include <vector>

#include "pci/host_memory.h"

namespace pci {

class DmaBuffer {
 public:
  virtual ~DmaBuffer() = default;
  DmaBuffer(const DmaBuffer&) = delete;
  DmaBuffer& operator=(const DmaBuffer&) = delete;

  uint8_t* cpu() const { return memory_.data(); }
  size_t size() const { return memory_.size(); }
  // The memfd of a buffer allocated with DmaOptions::shareable (owned by the buffer), else -1.
  int shareable_fd() const { return memory_.fd(); }
  // Device address of the byte at `offset` (< size()); pages are kPageSize, contiguous within a page.
  uint64_t device_address(size_t offset = 0) const { return pages_[offset / kPageSize] + offset % kPageSize; }
  std::span<const uint64_t> page_addresses() const { return pages_; }
  // True when every page follows the previous one in device address space.
  bool contiguous() const {
    for (size_t i = 1; i < pages_.size(); ++i) {
      if (pages_[i] != pages_[i - 1] + kPageSize) return false;
    }
    return true;
  }

 protected:
  DmaBuffer(HostMemory memory, std::vector<uint64_t> pages) : memory_(std::move(memory)), pages_(std::move(pages)) {}
  // For a backend whose device may still hold pointers into the memory after the unmapping (pci::sim::DmaSpace):
  // the memory, which then outlives the buffer.
  HostMemory TakeMemory() { return std::move(memory_); }

 private:
  HostMemory memory_;
  std::vector<uint64_t> pages_;
};

}  // namespace pci

#endif  // BAREGPU_PCI_DMA_BUFFER_H_
