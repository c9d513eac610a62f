// A virtual QEMU "edu" device (vendor 1234, device 11e8): the smallest real PCI device with registers, a DMA
// engine and MSI. Registers and behaviour from QEMU's docs/specs/edu.rst. The same checks run against this
// model here and against QEMU's real edu device through vfio-pci (tests/pci/), so it must behave like QEMU's.
#ifndef BAREGPU_PCI_SIM_EDU_DEVICE_H_
#define BAREGPU_PCI_SIM_EDU_DEVICE_H_

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "base/mutex.h"
#include "pci/sim/virtual_device.h"

namespace pci::sim {

// Register map of QEMU's edu device (docs/specs/edu.rst), shared by the model and by code that drives the device.
namespace edu {
inline constexpr uint16_t kVendorId = 0x1234;
inline constexpr uint16_t kDeviceId = 0x11e8;
inline constexpr uint32_t kClassCode = 0x00ff00;  // unclassified device, as QEMU's edu declares (PCI_CLASS_OTHERS)
inline constexpr uint8_t kRevision = 0x10;
inline constexpr uint16_t kSubsystemVendorId = 0x1af4;  // QEMU's PCI_SUBVENDOR_ID_REDHAT_QUMRANET
inline constexpr uint16_t kSubsystemId = 0x1100;        // QEMU's PCI_SUBDEVICE_ID_QEMU
inline constexpr uint32_t kBarSize = 1 << 20;           // BAR0: 1 MiB of registers
inline constexpr uint32_t kIdentification = 0x00;       // RO: 0xRRrr00ed, major RR, minor rr
inline constexpr uint32_t kLiveness = 0x04;             // RW: reads back the inverse of what was written
inline constexpr uint32_t kFactorial = 0x08;            // RW: writing n computes n! (32-bit, wrapping)
inline constexpr uint32_t kStatus = 0x20;               // RW: bit 0 computing (RO), bit 7 interrupt after factorial
inline constexpr uint32_t kInterruptStatus = 0x24;      // RO
inline constexpr uint32_t kInterruptRaise = 0x60;       // WO: ORs the value into the interrupt status and raises
inline constexpr uint32_t kInterruptAck = 0x64;         // WO: clears these bits of the interrupt status
inline constexpr uint32_t kDmaSource = 0x80;            // RW, 64-bit
inline constexpr uint32_t kDmaDestination = 0x88;       // RW, 64-bit
inline constexpr uint32_t kDmaCount = 0x90;             // RW, 64-bit
inline constexpr uint32_t kDmaCommand = 0x98;           // RW, 64-bit
inline constexpr uint32_t kStatusComputing = 0x01;
inline constexpr uint32_t kStatusIrqOnFactorial = 0x80;
inline constexpr uint32_t kFactorialIrq = 0x01;  // interrupt status value a finished factorial raises
inline constexpr uint64_t kDmaStart = 0x01;
inline constexpr uint64_t kDmaToRam = 0x02;  // direction: 0 RAM to device buffer, 1 device buffer to RAM
inline constexpr uint64_t kDmaIrq = 0x04;
inline constexpr uint32_t kDmaIrqValue = 0x100;  // interrupt status value a finished DMA raises
inline constexpr uint64_t kDmaBufferAddress = 0x40000;
inline constexpr uint64_t kDmaBufferSize = 4096;
inline constexpr uint64_t kMaxDmaTransfer = kDmaBufferSize - 1;  // QEMU 7.2 refuses a transfer ending at the end
inline constexpr uint32_t kIdentificationValue = 0x010000ed;     // version 1.0
inline constexpr unsigned kDmaMaskBits = 28;                     // QEMU's default dma_mask property
}  // namespace edu

class EduDevice : public VirtualDevice, private MmioHandler {
 public:
  explicit EduDevice(std::string name);
  ~EduDevice() override;

  // What the model refused (bad access widths, DMA outside its buffer); QEMU logs these as guest errors.
  std::vector<std::string> violations() const;

 private:
  uint32_t Read32(uint64_t offset) override;
  void Write32(uint64_t offset, uint32_t value) override;
  uint64_t Read64(uint64_t offset) override;
  void Write64(uint64_t offset, uint64_t value) override;
  void OnFunctionReset() override;

  void RunDma() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void Raise(uint32_t bits) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void Violation(std::string what) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  mutable base::Mutex mu_;
  uint32_t liveness_ ABSL_GUARDED_BY(mu_) = 0;
  uint32_t factorial_ ABSL_GUARDED_BY(mu_) = 0;
  uint32_t status_ ABSL_GUARDED_BY(mu_) = 0;
  uint32_t irq_status_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t dma_source_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t dma_destination_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t dma_count_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t dma_command_ ABSL_GUARDED_BY(mu_) = 0;
  std::array<uint8_t, edu::kDmaBufferSize> dma_buffer_ ABSL_GUARDED_BY(mu_){};
  std::vector<std::string> violations_ ABSL_GUARDED_BY(mu_);
};

}  // namespace pci::sim

#endif  // BAREGPU_PCI_SIM_EDU_DEVICE_H_
