#include "pci/device.h"

#include <linux/pci_regs.h>

#include <algorithm>
#include <cstring>

#include "absl/strings/str_format.h"
#include "base/bits.h"
#include "base/status_macros.h"

namespace pci {
namespace {

template <typename T>
absl::StatusOr<T> ReadConfigAs(Device& device, uint32_t offset) {
  T value;
  uint8_t bytes[sizeof(T)];
  BAREGPU_RETURN_IF_ERROR(device.ReadConfig(offset, bytes));
  std::memcpy(&value, bytes, sizeof(T));  // configuration space is little-endian, as is every host we run on
  return value;
}

template <typename T>
absl::Status WriteConfigAs(Device& device, uint32_t offset, T value) {
  uint8_t bytes[sizeof(T)];
  std::memcpy(bytes, &value, sizeof(T));
  return device.WriteConfig(offset, bytes);
}

}  // namespace

absl::StatusOr<uint8_t> Device::ReadConfig8(uint32_t offset) { return ReadConfigAs<uint8_t>(*this, offset); }
absl::StatusOr<uint16_t> Device::ReadConfig16(uint32_t offset) { return ReadConfigAs<uint16_t>(*this, offset); }
absl::StatusOr<uint32_t> Device::ReadConfig32(uint32_t offset) { return ReadConfigAs<uint32_t>(*this, offset); }
absl::Status Device::WriteConfig8(uint32_t offset, uint8_t value) { return WriteConfigAs(*this, offset, value); }
absl::Status Device::WriteConfig16(uint32_t offset, uint16_t value) { return WriteConfigAs(*this, offset, value); }
absl::Status Device::WriteConfig32(uint32_t offset, uint32_t value) { return WriteConfigAs(*this, offset, value); }

absl::StatusOr<std::optional<uint8_t>> Device::FindCapability(uint8_t capability_id) {
  BAREGPU_ASSIGN_OR_RETURN(uint16_t status, ReadConfig16(PCI_STATUS));
  if ((status & PCI_STATUS_CAP_LIST) == 0) return std::nullopt;
  BAREGPU_ASSIGN_OR_RETURN(uint8_t pointer, ReadConfig8(PCI_CAPABILITY_LIST));
  // The list lives in the 256-byte legacy space; a malformed list must not loop forever.
  for (int hops = 0; pointer >= PCI_STD_HEADER_SIZEOF && hops < 48; ++hops) {
    pointer &= ~3u;
    BAREGPU_ASSIGN_OR_RETURN(uint8_t id, ReadConfig8(pointer + PCI_CAP_LIST_ID));
    if (id == capability_id) return pointer;
    BAREGPU_ASSIGN_OR_RETURN(pointer, ReadConfig8(pointer + PCI_CAP_LIST_NEXT));
  }
  return std::nullopt;
}

absl::Status Device::SetDmaMaskBits(unsigned bits) {
  if (bits < 12 || bits > 64) {
    return absl::InvalidArgumentError(absl::StrFormat("%s: DMA mask of %u bits is outside 12..64", name_, bits));
  }
  dma_mask_ = base::LowBitsMask(bits);
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<DmaMapping>> Device::MapPeerMemory(std::span<uint8_t> memory) {
  return absl::UnimplementedError(absl::StrFormat(
      "%s: the %s backend cannot map peer memory (%d bytes) for DMA; open the device through vfio-pci for "
      "peer-to-peer access",
      name(), backend(), memory.size()));
}

absl::StatusOr<Device::SharedMemory> Device::ShareMemory(int bar) {
  return absl::UnimplementedError(absl::StrFormat(
      "%s: the %s backend cannot share BAR %d as a file; read it through the BAR instead", name(), backend(), bar));
}

absl::Status Device::ReadDmaMemory(uint64_t address, std::span<uint8_t> out) {
  return absl::UnimplementedError(absl::StrFormat(
      "%s: the %s backend does not track its DMA memory, so %d bytes at device address %#x cannot be read here", name(),
      backend(), out.size(), address));
}

absl::Status Device::SetBusMaster(bool enable) {
  BAREGPU_ASSIGN_OR_RETURN(uint16_t command, ReadConfig16(PCI_COMMAND));
  const uint16_t updated = enable ? (command | PCI_COMMAND_MASTER) : (command & ~PCI_COMMAND_MASTER);
  if (updated == command) return absl::OkStatus();
  return WriteConfig16(PCI_COMMAND, updated);
}

absl::Status Device::RunRegisterSequence(int bar, std::span<const RegisterStep> steps, std::span<uint32_t> out) {
  BAREGPU_ASSIGN_OR_RETURN(Mmio mmio, MapMmio(bar));
  BAREGPU_ASSIGN_OR_RETURN(const size_t reads, CheckRegisterSequence(steps, mmio.size()));
  if (out.size() != reads) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s: a register sequence reading %d dwords given room for %d", name_, reads, out.size()));
  }
  base::MutexLock lock(&register_sequence_mu_);
  pci::RunRegisterSequence(mmio, steps, out);
  return absl::OkStatus();
}

void Device::set_selection_registers(int bar, std::vector<uint32_t> offsets) {
  base::MutexLock lock(&selection_mu_);
  std::erase_if(selection_registers_, [&](const auto& r) { return r.first == bar; });
  for (uint32_t offset : offsets) selection_registers_.emplace_back(bar, offset);
}

bool Device::IsSelectionRegister(int bar, uint32_t offset) const {
  base::ReaderMutexLock lock(&selection_mu_);
  return std::find(selection_registers_.begin(), selection_registers_.end(), std::make_pair(bar, offset)) !=
         selection_registers_.end();
}

}  // namespace pci
