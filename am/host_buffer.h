// am::HostBuffer: host memory the GPU reaches — a DMA buffer of the device (pinned pages the IOMMU maps, under
// VFIO) mapped into the device's page tables at an address of the process-wide VA space. Snooped unless asked
// otherwise (gmc_v11_0's AMDGPU_PTE_SNOOPED for cached system memory). Unmapped when destroyed.
#ifndef BAREGPU_AM_HOST_BUFFER_H_
#define BAREGPU_AM_HOST_BUFFER_H_

#include <cstdint>
#include <memory>
#include <span>

#include "absl/status/statusor.h"
#include "pci/dma_buffer.h"

namespace am {

class Device;

class HostBuffer {
 public:
  // `size` bytes (a multiple of the 4 KiB page). `at_cpu_address`: at the GPU address equal to its CPU address
  // (MemoryManager::MapSystemAtCpuAddress) instead of one from the VA allocator.
  static absl::StatusOr<std::unique_ptr<HostBuffer>> Create(Device& device, uint64_t size, bool snooped,
                                                            bool at_cpu_address = false);
  ~HostBuffer();
  HostBuffer(const HostBuffer&) = delete;
  HostBuffer& operator=(const HostBuffer&) = delete;

  uint64_t va() const { return va_; }
  uint8_t* cpu() const { return buffer_->cpu(); }
  uint64_t size() const { return buffer_->size(); }
  std::span<uint8_t> memory() const { return {buffer_->cpu(), buffer_->size()}; }

 private:
  HostBuffer(Device& device, std::unique_ptr<pci::DmaBuffer> buffer, uint64_t va)
      : device_(device), buffer_(std::move(buffer)), va_(va) {}

  Device& device_;
  std::unique_ptr<pci::DmaBuffer> buffer_;
  uint64_t va_;
};

}  // namespace am

#endif  // BAREGPU_AM_HOST_BUFFER_H_
