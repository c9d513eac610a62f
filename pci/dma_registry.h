// The DMA memory a process gave a device, by device address, so that a debugger can read what the device's page
// tables point at (pci::Device::ReadDmaMemory, a debug endpoint's DMA_READ). Each backend's buffers add their
// device-contiguous pieces when made and remove them first thing when destroyed; a read holds the lock while it
// copies, so it never copies from freed memory.
#ifndef BAREGPU_PCI_DMA_REGISTRY_H_
#define BAREGPU_PCI_DMA_REGISTRY_H_

#include <cstdint>
#include <map>
#include <span>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "base/mutex.h"

namespace pci {

class DmaRegistry {
 public:
  // `host` holds the bytes the device reaches at [device_address, device_address + host.size()).
  void Add(uint64_t device_address, std::span<const uint8_t> host);
  void Remove(uint64_t device_address);
  // Copies the bytes at `address`; NotFound, naming `device`, unless the range lies inside one registered piece.
  absl::Status Read(absl::string_view device, uint64_t address, std::span<uint8_t> out) const;

 private:
  mutable base::Mutex mu_;
  std::map<uint64_t, std::span<const uint8_t>> pieces_ ABSL_GUARDED_BY(mu_);
};

}  // namespace pci

#endif  // BAREGPU_PCI_DMA_REGISTRY_H_
