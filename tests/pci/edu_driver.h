// A minimal driver for QEMU's edu device over pci::Device: the same code drives the virtual model (sim:edu) and
// QEMU's real device through vfio-pci (tests/pci/qemu), which is what makes the model's checks mean something.
#ifndef BAREGPU_TESTS_PCI_EDU_DRIVER_H_
#define BAREGPU_TESTS_PCI_EDU_DRIVER_H_

#include <cstdint>
#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "pci/device.h"

namespace pci::testing {

class EduDriver {
 public:
  // Checks the identity, maps BAR0, enables bus mastering and sets the 28-bit DMA mask.
  static absl::StatusOr<EduDriver> Attach(Device& device);

  uint32_t Identification() const;
  uint32_t Liveness(uint32_t value) const;  // writes value, returns what the device reads back
  uint32_t Factorial(uint32_t n) const;     // polls the busy bit, bounded
  // DMA between the RAM behind `ram_address` and the device's internal buffer at `device_offset`.
  absl::Status DmaToDevice(uint64_t ram_address, uint32_t device_offset, uint32_t size, bool interrupt = false) const;
  absl::Status DmaFromDevice(uint32_t device_offset, uint64_t ram_address, uint32_t size, bool interrupt = false) const;
  void RaiseInterrupt(uint32_t value) const;
  uint32_t InterruptStatus() const;
  void AckInterrupt(uint32_t value) const;

 private:
  EduDriver(Device& device, Mmio bar0) : device_(&device), bar0_(bar0) {}
  absl::Status RunDma(uint64_t source, uint64_t destination, uint32_t size, uint64_t command) const;

  Device* device_;
  Mmio bar0_;
};

// Waits until the eventfd counts an interrupt; false on timeout. Returns the count it read.
absl::StatusOr<uint64_t> WaitForInterrupt(int eventfd, absl::Duration timeout);

}  // namespace pci::testing

#endif  // BAREGPU_TESTS_PCI_EDU_DRIVER_H_
