#include "pci/dma_registry.h"

#include <cstring>

#include "absl/strings/str_format.h"

namespace pci {

void DmaRegistry::Add(uint64_t device_address, std::span<const uint8_t> host) {
  base::MutexLock lock(&mu_);
  pieces_[device_address] = host;
}

void DmaRegistry::Remove(uint64_t device_address) {
  base::MutexLock lock(&mu_);
  pieces_.erase(device_address);
}

absl::Status DmaRegistry::Read(absl::string_view device, uint64_t address, std::span<uint8_t> out) const {
  base::ReaderMutexLock lock(&mu_);
  // Pieces do not overlap, so only the one starting at or below `address` can hold it.
  auto it = pieces_.upper_bound(address);
  if (it != pieces_.begin()) {
    --it;
    const uint64_t offset = address - it->first;
    if (offset < it->second.size() && it->second.size() - offset >= out.size()) {
      if (!out.empty()) std::memcpy(out.data(), it->second.data() + offset, out.size());
      return absl::OkStatus();
    }
  }
  return absl::NotFoundError(absl::StrFormat(
      "%s: %d bytes at device address %#x are not inside one DMA buffer of this process", device, out.size(), address));
}

}  // namespace pci
