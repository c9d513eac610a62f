#include "tests/pci/edu_driver.h"

#include <linux/pci_regs.h>
#include <poll.h>
#include <unistd.h>

#include <cerrno>

#include "absl/strings/str_format.h"
#include "base/file.h"
#include "base/status_macros.h"
#include "pci/sim/edu_device.h"

namespace pci::testing {
namespace edu = ::pci::sim::edu;

namespace {
// The virtual device finishes synchronously; QEMU's finishes from a timer (about 100 ms for a DMA). Bounded polls.
constexpr absl::Duration kDmaTimeout = absl::Seconds(10);
}  // namespace

absl::StatusOr<EduDriver> EduDriver::Attach(Device& device) {
  BAREGPU_ASSIGN_OR_RETURN(uint16_t vendor, device.ReadConfig16(PCI_VENDOR_ID));
  BAREGPU_ASSIGN_OR_RETURN(uint16_t device_id, device.ReadConfig16(PCI_DEVICE_ID));
  if (vendor != edu::kVendorId || device_id != edu::kDeviceId) {
    return absl::FailedPreconditionError(absl::StrFormat("%s is %04x:%04x, not an edu device (%04x:%04x)",
                                                         device.name(), vendor, device_id, edu::kVendorId,
                                                         edu::kDeviceId));
  }
  BAREGPU_ASSIGN_OR_RETURN(Mmio bar0, device.MapMmio(0));
  BAREGPU_RETURN_IF_ERROR(device.SetBusMaster(true));
  BAREGPU_RETURN_IF_ERROR(device.SetDmaMaskBits(edu::kDmaMaskBits));
  return EduDriver(device, bar0);
}

uint32_t EduDriver::Identification() const { return bar0_.Read32(edu::kIdentification); }

uint32_t EduDriver::Liveness(uint32_t value) const {
  bar0_.Write32(edu::kLiveness, value);
  return bar0_.Read32(edu::kLiveness);
}

uint32_t EduDriver::Factorial(uint32_t n) const {
  bar0_.Write32(edu::kFactorial, n);
  const absl::Time deadline = absl::Now() + kDmaTimeout;
  while ((bar0_.Read32(edu::kStatus) & edu::kStatusComputing) && absl::Now() < deadline) {
  }
  return bar0_.Read32(edu::kFactorial);
}

absl::Status EduDriver::RunDma(uint64_t source, uint64_t destination, uint32_t size, uint64_t command) const {
  bar0_.Write64(edu::kDmaSource, source);
  bar0_.Write64(edu::kDmaDestination, destination);
  bar0_.Write64(edu::kDmaCount, size);
  bar0_.Write64(edu::kDmaCommand, command | edu::kDmaStart);
  const absl::Time deadline = absl::Now() + kDmaTimeout;
  while (bar0_.Read64(edu::kDmaCommand) & edu::kDmaStart) {
    if (absl::Now() > deadline) {
      return absl::DeadlineExceededError(absl::StrFormat("%s: edu DMA of %d bytes did not finish within %s",
                                                         device_->name(), size, absl::FormatDuration(kDmaTimeout)));
    }
  }
  return absl::OkStatus();
}

absl::Status EduDriver::DmaToDevice(uint64_t ram_address, uint32_t device_offset, uint32_t size, bool interrupt) const {
  return RunDma(ram_address, edu::kDmaBufferAddress + device_offset, size, interrupt ? edu::kDmaIrq : 0);
}

absl::Status EduDriver::DmaFromDevice(uint32_t device_offset, uint64_t ram_address, uint32_t size,
                                      bool interrupt) const {
  return RunDma(edu::kDmaBufferAddress + device_offset, ram_address, size,
                edu::kDmaToRam | (interrupt ? edu::kDmaIrq : 0));
}

void EduDriver::RaiseInterrupt(uint32_t value) const { bar0_.Write32(edu::kInterruptRaise, value); }
uint32_t EduDriver::InterruptStatus() const { return bar0_.Read32(edu::kInterruptStatus); }
void EduDriver::AckInterrupt(uint32_t value) const { bar0_.Write32(edu::kInterruptAck, value); }

absl::StatusOr<uint64_t> WaitForInterrupt(int eventfd, absl::Duration timeout) {
  struct pollfd pfd = {eventfd, POLLIN, 0};
  int ready = ::poll(&pfd, 1, static_cast<int>(absl::ToInt64Milliseconds(timeout)));
  if (ready < 0) return base::ErrnoError(errno, "poll on the interrupt eventfd");
  if (ready == 0) {
    return absl::DeadlineExceededError(absl::StrFormat("no interrupt within %s", absl::FormatDuration(timeout)));
  }
  uint64_t count = 0;
  if (::read(eventfd, &count, sizeof(count)) != sizeof(count)) {
    return base::ErrnoError(errno, "read of the interrupt eventfd");
  }
  return count;
}

}  // namespace pci::testing
