#include "pci/sim/edu_device.h"

#include <linux/pci_regs.h>

#include <cstring>

#include "absl/strings/str_format.h"
#include "base/bits.h"
#include "pci/virtual_registry.h"

namespace pci::sim {
namespace {

// MSI capability body (after id/next): message control with one vector and 64-bit addresses, address, data.
// Layout from linux/pci_regs.h (PCI_MSI_FLAGS, PCI_MSI_ADDRESS_LO/HI, PCI_MSI_DATA_64).
constexpr std::array<uint8_t, 12> kMsiCapability = {PCI_MSI_FLAGS_64BIT, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};

}  // namespace

EduDevice::EduDevice(std::string name)
    : VirtualDevice(std::move(name),
                    Identity{edu::kVendorId, edu::kDeviceId, edu::kClassCode, edu::kRevision, edu::kSubsystemVendorId,
                             edu::kSubsystemId},
                    /*max_interrupt_vectors=*/1) {
  AddRegisterBar(0, edu::kBarSize, /*is_64bit=*/false, this);
  AddCapability(PCI_CAP_ID_MSI, kMsiCapability);
}

EduDevice::~EduDevice() = default;

std::vector<std::string> EduDevice::violations() const {
  base::MutexLock lock(&mu_);
  return violations_;
}

void EduDevice::Violation(std::string what) { violations_.push_back(std::move(what)); }

void EduDevice::Raise(uint32_t bits) {
  irq_status_ |= bits;
  RaiseInterrupt(0);
}

uint32_t EduDevice::Read32(uint64_t offset) {
  base::MutexLock lock(&mu_);
  switch (offset) {
    case edu::kIdentification:
      return edu::kIdentificationValue;
    case edu::kLiveness:
      return ~liveness_;
    case edu::kFactorial:
      return factorial_;
    case edu::kStatus:
      return status_;
    case edu::kInterruptStatus:
      return irq_status_;
    case edu::kDmaSource:
      return static_cast<uint32_t>(dma_source_);
    case edu::kDmaSource + 4:
      return static_cast<uint32_t>(dma_source_ >> 32);
    case edu::kDmaDestination:
      return static_cast<uint32_t>(dma_destination_);
    case edu::kDmaDestination + 4:
      return static_cast<uint32_t>(dma_destination_ >> 32);
    case edu::kDmaCount:
      return static_cast<uint32_t>(dma_count_);
    case edu::kDmaCount + 4:
      return static_cast<uint32_t>(dma_count_ >> 32);
    case edu::kDmaCommand:
      return static_cast<uint32_t>(dma_command_);
    case edu::kDmaCommand + 4:
      return static_cast<uint32_t>(dma_command_ >> 32);
    default:
      return Mmio::kUnclaimedRead;
  }
}

void EduDevice::Write32(uint64_t offset, uint32_t value) {
  base::MutexLock lock(&mu_);
  auto set_low = [value](uint64_t& reg) { reg = (reg & ~uint64_t{0xffffffff}) | value; };
  auto set_high = [value](uint64_t& reg) { reg = (reg & 0xffffffff) | (uint64_t{value} << 32); };
  switch (offset) {
    case edu::kLiveness:
      liveness_ = value;
      break;
    case edu::kFactorial:
      if (status_ & edu::kStatusComputing) break;  // QEMU ignores the write while a computation runs
      {
        uint32_t result = 1;
        for (uint32_t i = 2; i <= value; ++i) result *= i;  // wraps at 32 bits, as QEMU's does
        factorial_ = result;
      }
      if (status_ & edu::kStatusIrqOnFactorial) Raise(edu::kFactorialIrq);
      break;
    case edu::kStatus:
      status_ = (status_ & edu::kStatusComputing) | (value & edu::kStatusIrqOnFactorial);
      break;
    case edu::kInterruptRaise:
      Raise(value);
      break;
    case edu::kInterruptAck:
      irq_status_ &= ~value;
      break;
    case edu::kDmaSource:
      set_low(dma_source_);
      break;
    case edu::kDmaSource + 4:
      set_high(dma_source_);
      break;
    case edu::kDmaDestination:
      set_low(dma_destination_);
      break;
    case edu::kDmaDestination + 4:
      set_high(dma_destination_);
      break;
    case edu::kDmaCount:
      set_low(dma_count_);
      break;
    case edu::kDmaCount + 4:
      set_high(dma_count_);
      break;
    case edu::kDmaCommand:
      if (dma_command_ & edu::kDmaStart) break;  // a transfer is in flight: QEMU ignores the write
      set_low(dma_command_);
      if (dma_command_ & edu::kDmaStart) RunDma();
      break;
    default:
      break;
  }
}

uint64_t EduDevice::Read64(uint64_t offset) {
  if (offset < edu::kDmaSource) {
    base::MutexLock lock(&mu_);
    Violation(absl::StrFormat("64-bit read at %#x: registers below 0x80 take 32-bit accesses only", offset));
    return ~uint64_t{0};
  }
  return MmioHandler::Read64(offset);
}

void EduDevice::Write64(uint64_t offset, uint64_t value) {
  if (offset < edu::kDmaSource) {
    base::MutexLock lock(&mu_);
    Violation(absl::StrFormat("64-bit write at %#x: registers below 0x80 take 32-bit accesses only", offset));
    return;
  }
  // The DMA command register must see the whole value at once, so that the start bit acts on the full command.
  Write32(offset + 4, static_cast<uint32_t>(value >> 32));
  Write32(offset, static_cast<uint32_t>(value));
}

void EduDevice::RunDma() {
  const bool to_ram = (dma_command_ & edu::kDmaToRam) != 0;
  const uint64_t device_address = to_ram ? dma_source_ : dma_destination_;
  uint64_t ram_address = to_ram ? dma_destination_ : dma_source_;
  const uint64_t dma_mask = base::LowBitsMask(edu::kDmaMaskBits);
  if ((ram_address & dma_mask) != ram_address) {
    Violation(
        absl::StrFormat("DMA RAM address %#x exceeds the device's %u-bit DMA mask", ram_address, edu::kDmaMaskBits));
    ram_address &= dma_mask;  // the upper address lines do not exist on the device
  }
  // QEMU 7.2's edu_check_range wants the transfer's end strictly inside the buffer, so a transfer can never
  // reach its last byte (a full 4 KiB transfer is refused), and a transfer of 0 bytes is refused too. QEMU stops
  // the whole machine with a hardware error there; the model records a violation and completes the command.
  const uint64_t buffer_end = edu::kDmaBufferAddress + edu::kDmaBufferSize;
  const uint64_t transfer_end = device_address + dma_count_;
  const bool in_buffer = device_address >= edu::kDmaBufferAddress && device_address < buffer_end &&
                         transfer_end > device_address && transfer_end < buffer_end;
  if (!in_buffer) {
    Violation(absl::StrFormat("DMA of %#x bytes at device address %#x is outside the buffer [%#x, %#x)", dma_count_,
                              device_address, edu::kDmaBufferAddress, edu::kDmaBufferAddress + edu::kDmaBufferSize));
  } else {
    uint8_t* buffer = dma_buffer_.data() + (device_address - edu::kDmaBufferAddress);
    // A faulting transfer moves nothing (DmaSpace records the fault); the device still completes the command.
    if (to_ram) {
      dma().Write(ram_address, buffer, dma_count_);
    } else {
      dma().Read(ram_address, buffer, dma_count_);
    }
  }
  dma_command_ &= ~edu::kDmaStart;
  if (dma_command_ & edu::kDmaIrq) Raise(edu::kDmaIrqValue);
}

void EduDevice::OnFunctionReset() {
  base::MutexLock lock(&mu_);
  liveness_ = factorial_ = status_ = irq_status_ = 0;
  dma_source_ = dma_destination_ = dma_count_ = dma_command_ = 0;
  dma_buffer_.fill(0);
}

BAREGPU_REGISTER_VIRTUAL_DEVICE(
    kEduRegistered,
    VirtualDeviceKind{"edu", "virtual QEMU edu device (registers, DMA engine, MSI; for tests)", edu::kVendorId,
                      edu::kDeviceId,
                      [](const std::string& name, const std::string&) -> absl::StatusOr<std::unique_ptr<Device>> {
                        return std::make_unique<EduDevice>(name);
                      }});

}  // namespace pci::sim
