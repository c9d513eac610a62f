// A VFIO region (a BAR) as a register window when vfio-pci allows mmap of only parts of it, or none: accesses
// inside a mapped area go straight to the mapping, the rest become pread/pwrite on the device fd at the region's
// offset, which vfio-pci performs as real MMIO. A failed read returns all ones, as an unclaimed PCI read does.
#ifndef BAREGPU_PCI_VFIO_REGION_H_
#define BAREGPU_PCI_VFIO_REGION_H_

#include <cstdint>
#include <vector>

#include "pci/mmio.h"

namespace pci {

// One mmapped piece of a region.
struct MappedArea {
  uint64_t start = 0;  // offset in the region
  uint64_t size = 0;
  uint8_t* host = nullptr;
};

class VfioRegionHandler : public MmioHandler {
 public:
  // `fd` and the areas' mappings must outlive the handler.
  VfioRegionHandler(int fd, uint64_t region_offset, std::vector<MappedArea> areas)
      : fd_(fd), region_offset_(region_offset), areas_(std::move(areas)) {}
  uint32_t Read32(uint64_t offset) override { return Read<uint32_t>(offset); }
  void Write32(uint64_t offset, uint32_t value) override { Write(offset, value); }
  uint64_t Read64(uint64_t offset) override { return Read<uint64_t>(offset); }
  void Write64(uint64_t offset, uint64_t value) override { Write(offset, value); }

 private:
  volatile uint8_t* Mapped(uint64_t offset, uint64_t width) const;
  template <typename T>
  T Read(uint64_t offset);
  template <typename T>
  void Write(uint64_t offset, T value);

  int fd_;
  uint64_t region_offset_;
  std::vector<MappedArea> areas_;
};

}  // namespace pci

#endif  // BAREGPU_PCI_VFIO_REGION_H_
