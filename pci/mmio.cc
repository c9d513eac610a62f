#include "pci/mmio.h"

namespace pci {

uint64_t MmioHandler::Read64(uint64_t offset) {
  uint64_t low = Read32(offset);
  uint64_t high = Read32(offset + 4);
  return low | (high << 32);
}

void MmioHandler::Write64(uint64_t offset, uint64_t value) {
  Write32(offset, static_cast<uint32_t>(value));
  Write32(offset + 4, static_cast<uint32_t>(value >> 32));
}

}  // namespace pci
