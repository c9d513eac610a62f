// Memory that this process did not allocate for the device — another device's BAR, mapped into the process —
// made reachable by the device's DMA at one contiguous device address. This is how a GPU reaches a peer GPU's
// VRAM: VFIO maps the peer's BAR into the IOMMU domain, a virtual device into its DMA space. Destroying the
// mapping removes it from the device before the memory may go away; it must not outlive that memory.
#ifndef BAREGPU_PCI_DMA_MAPPING_H_
#define BAREGPU_PCI_DMA_MAPPING_H_

#include <cstdint>

namespace pci {

class DmaMapping {
 public:
  virtual ~DmaMapping() = default;
  DmaMapping(const DmaMapping&) = delete;
  DmaMapping& operator=(const DmaMapping&) = delete;

  uint64_t device_address() const { return device_address_; }
  uint64_t size() const { return size_; }

 protected:
  DmaMapping(uint64_t device_address, uint64_t size) : device_address_(device_address), size_(size) {}

 private:
  uint64_t device_address_;
  uint64_t size_;
};

}  // namespace pci

#endif  // BAREGPU_PCI_DMA_MAPPING_H_
