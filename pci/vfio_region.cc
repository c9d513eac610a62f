#include "pci/vfio_region.h"

#include <unistd.h>

namespace pci {

volatile uint8_t* VfioRegionHandler::Mapped(uint64_t offset, uint64_t width) const {
  for (const MappedArea& a : areas_) {
    if (a.size >= width && offset >= a.start && offset - a.start <= a.size - width) return a.host + (offset - a.start);
  }
  return nullptr;
}

template <typename T>
T VfioRegionHandler::Read(uint64_t offset) {
  if (volatile uint8_t* p = Mapped(offset, sizeof(T))) return *reinterpret_cast<volatile T*>(p);
  T value;
  if (::pread(fd_, &value, sizeof(T), static_cast<off_t>(region_offset_ + offset)) != sizeof(T)) return ~T{0};
  return value;
}

template <typename T>
void VfioRegionHandler::Write(uint64_t offset, T value) {
  if (volatile uint8_t* p = Mapped(offset, sizeof(T))) {
    *reinterpret_cast<volatile T*>(p) = value;
    return;
  }
  (void)::pwrite(fd_, &value, sizeof(T), static_cast<off_t>(region_offset_ + offset));
}

template uint32_t VfioRegionHandler::Read<uint32_t>(uint64_t);
template uint64_t VfioRegionHandler::Read<uint64_t>(uint64_t);
template void VfioRegionHandler::Write<uint32_t>(uint64_t, uint32_t);
template void VfioRegionHandler::Write<uint64_t>(uint64_t, uint64_t);

}  // namespace pci
