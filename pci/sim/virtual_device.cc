#include "pci/sim/virtual_device.h"

#include <linux/pci_regs.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <iterator>

#include "absl/strings/str_format.h"
#include "base/bits.h"
#include "base/file.h"
#include "base/status_macros.h"

namespace pci::sim {
namespace {

// Where the virtual "firmware" places BARs: 32-bit BARs below 4 GiB, 64-bit BARs high, as a BIOS would.
constexpr uint64_t kBar32Window = 0xe0000000;
constexpr uint64_t kBar64Window = uint64_t{0x38} << 36;

void Put16(std::span<uint8_t> space, uint32_t offset, uint16_t value) { std::memcpy(&space[offset], &value, 2); }
void Put32(std::span<uint8_t> space, uint32_t offset, uint32_t value) { std::memcpy(&space[offset], &value, 4); }

// Each BAR gets its own slot in the window, aligned for the largest BAR a device of ours has.
uint64_t DefaultBarAddress(int index, bool is_64bit) {
  const auto slot = static_cast<uint64_t>(index);
  return is_64bit ? kBar64Window + (slot << 36) : kBar32Window + (slot << 24);
}

// The persistent block: which layout it belongs to, then the writable state.
struct SavedConfig {
  uint64_t layout;  // LayoutFingerprint(); 0 never matches (a fresh, zero-filled block)
  uint64_t bar_address[kBarCount];
  uint8_t config[kConfigSpaceSize];
};

// The bytes of configuration space the driver can change, besides the BAR addresses (see WriteConfig).
bool DriverWritable(uint32_t offset) {
  return (offset >= PCI_COMMAND && offset < PCI_COMMAND + 2) || offset == PCI_INTERRUPT_LINE ||
         (offset >= PCI_ROM_ADDRESS && offset < PCI_ROM_ADDRESS + 4) ||
         (offset >= PCI_STD_HEADER_SIZEOF && offset < PCI_CFG_SPACE_SIZE);
}

}  // namespace

// A DMA buffer of a virtual device: host memory plus a contiguous device-address range in the device's DmaSpace.
class VirtualDevice::Buffer : public DmaBuffer {
 public:
  Buffer(HostMemory memory, std::vector<uint64_t> pages, std::shared_ptr<DmaSpace> dma,
         std::shared_ptr<IovaAllocator> iova_alloc)
      : DmaBuffer(std::move(memory), std::move(pages)),
        iova_(page_addresses()[0]),
        dma_(std::move(dma)),
        iova_alloc_(std::move(iova_alloc)) {}
  static std::vector<uint64_t> PageList(uint64_t iova, size_t size) {
    std::vector<uint64_t> pages(size / kPageSize);
    for (size_t i = 0; i < pages.size(); ++i) pages[i] = iova + i * kPageSize;
    return pages;
  }
  ~Buffer() override {
    // The device's engines may still hold host pointers into the memory (DmaSpace::Translate): it goes back to the
    // host once they cannot, and a late access lands in memory nothing else uses.
    dma_->Unmap(iova_);
    dma_->Retire(TakeMemory());
    (void)iova_alloc_->Free(iova_);
  }

 private:
  uint64_t iova_;
  std::shared_ptr<DmaSpace> dma_;
  std::shared_ptr<IovaAllocator> iova_alloc_;
};

VirtualDevice::VirtualDevice(std::string name, const Identity& identity, int max_interrupt_vectors)
    : Device(std::move(name)),
      iova_(std::make_shared<IovaAllocator>(kFirstIova, (uint64_t{1} << 52) - kFirstIova)),
      max_interrupt_vectors_(max_interrupt_vectors) {
  base::MutexLock lock(&config_mu_);
  Put16(config_, PCI_VENDOR_ID, identity.vendor_id);
  Put16(config_, PCI_DEVICE_ID, identity.device_id);
  config_[PCI_REVISION_ID] = identity.revision;
  config_[PCI_CLASS_PROG] = static_cast<uint8_t>(identity.class_code);
  Put16(config_, PCI_CLASS_DEVICE, static_cast<uint16_t>(identity.class_code >> 8));
  config_[PCI_HEADER_TYPE] = PCI_HEADER_TYPE_NORMAL;
  Put16(config_, PCI_SUBSYSTEM_VENDOR_ID, identity.subsystem_vendor_id);
  Put16(config_, PCI_SUBSYSTEM_ID, identity.subsystem_id);
  config_[PCI_INTERRUPT_PIN] = 1;  // INTA#
  ResetConfigRegisters();
}

VirtualDevice::~VirtualDevice() = default;

void VirtualDevice::ResetConfigRegisters() {
  Put16(config_, PCI_COMMAND, 0);
  Put32(config_, PCI_ROM_ADDRESS, 0);  // the ROM BAR disabled again
  dma_->set_bus_master(false);
  SaveConfig();
}

void VirtualDevice::ResetCommandRegister() {
  base::MutexLock lock(&config_mu_);
  ResetConfigRegisters();
}

uint64_t VirtualDevice::LayoutFingerprint() const {
  // FNV-1a over the constructed space and the BAR sizes; never 0, so a zero-filled block never matches.
  uint64_t hash = 0xcbf29ce484222325;
  auto mix = [&hash](uint8_t byte) { hash = (hash ^ byte) * 0x100000001b3; };
  for (uint8_t byte : config_) mix(byte);
  for (const Bar& bar : bars_) {
    for (int shift = 0; shift < 64; shift += 8) mix(static_cast<uint8_t>(bar.size >> shift));
  }
  for (int shift = 0; shift < 32; shift += 8) mix(static_cast<uint8_t>(rom_size_ >> shift));
  return hash == 0 ? 1 : hash;
}

void VirtualDevice::PersistConfig(std::span<uint8_t> storage) {
  static_assert(sizeof(SavedConfig) <= kPersistentConfigBytes);
  base::MutexLock lock(&config_mu_);
  if (storage.size() < sizeof(SavedConfig)) return;
  layout_ = LayoutFingerprint();
  persistent_config_ = storage;
  SavedConfig saved;
  std::memcpy(&saved, storage.data(), sizeof(saved));
  if (saved.layout == layout_) {
    for (uint32_t at = 0; at < kConfigSpaceSize; ++at) {
      if (DriverWritable(at)) config_[at] = saved.config[at];
    }
    std::copy(std::begin(saved.bar_address), std::end(saved.bar_address), bar_address_.begin());
    uint16_t command;
    std::memcpy(&command, &config_[PCI_COMMAND], 2);
    dma_->set_bus_master((command & PCI_COMMAND_MASTER) != 0);
  }
  SaveConfig();
}

void VirtualDevice::SaveConfig() {
  if (persistent_config_.empty()) return;
  SavedConfig saved;
  saved.layout = layout_;
  std::copy(bar_address_.begin(), bar_address_.end(), std::begin(saved.bar_address));
  std::memcpy(saved.config, config_.data(), kConfigSpaceSize);
  std::memcpy(persistent_config_.data(), &saved, sizeof(saved));
}

void VirtualDevice::AddRegisterBar(int index, uint64_t size, bool is_64bit, MmioHandler* handler, bool prefetchable) {
  bars_[index] = Bar{size, is_64bit, prefetchable, handler, {}};
  base::MutexLock lock(&config_mu_);
  bar_address_[index] = DefaultBarAddress(index, is_64bit);
}

void VirtualDevice::AddMemoryBar(int index, std::span<uint8_t> memory, uint64_t bar_size, bool is_64bit,
                                 bool prefetchable) {
  bars_[index] = Bar{bar_size, is_64bit, prefetchable, nullptr, memory};
  base::MutexLock lock(&config_mu_);
  bar_address_[index] = DefaultBarAddress(index, is_64bit);
}

void VirtualDevice::SetFirstCapabilityOffset(uint8_t offset) {
  base::MutexLock lock(&config_mu_);
  if (last_capability_ == 0 && offset >= PCI_STD_HEADER_SIZEOF && offset % 4 == 0) next_capability_ = offset;
}

void VirtualDevice::AddCapability(uint8_t id, std::span<const uint8_t> body) {
  base::MutexLock lock(&config_mu_);
  const uint8_t offset = next_capability_;
  config_[offset + PCI_CAP_LIST_ID] = id;
  config_[offset + PCI_CAP_LIST_NEXT] = 0;
  std::memcpy(&config_[offset + 2], body.data(), body.size());
  if (last_capability_ == 0) {
    config_[PCI_CAPABILITY_LIST] = offset;
    Put16(config_, PCI_STATUS, PCI_STATUS_CAP_LIST);
  } else {
    config_[last_capability_ + PCI_CAP_LIST_NEXT] = offset;
  }
  last_capability_ = offset;
  next_capability_ = static_cast<uint8_t>(base::AlignUp(offset + 2 + body.size(), 4));
}

void VirtualDevice::AddExtendedCapability(uint16_t id, uint8_t version, std::span<const uint8_t> body) {
  base::MutexLock lock(&config_mu_);
  const uint32_t offset = next_extended_capability_;
  // Header: id in bits 15:0, version in 19:16, next offset in 31:20 (PCI_EXT_CAP_ID / _VER / _NEXT).
  Put32(config_, offset, uint32_t{id} | (uint32_t{version} << 16));
  std::memcpy(&config_[offset + 4], body.data(), body.size());
  if (last_extended_capability_ != 0) {
    uint32_t header;
    std::memcpy(&header, &config_[last_extended_capability_], 4);
    Put32(config_, last_extended_capability_, header | (offset << 20));
  }
  last_extended_capability_ = offset;
  next_extended_capability_ = static_cast<uint32_t>(base::AlignUp(offset + 4 + body.size(), 4));
}

uint32_t VirtualDevice::BarRegisterValue(int index) const {
  // The upper half of a 64-bit BAR is the register after its lower half.
  if (index > 0 && bars_[index].size == 0 && bars_[index - 1].is_64bit) {
    return static_cast<uint32_t>(bar_address_[index - 1] >> 32);
  }
  const Bar& bar = bars_[index];
  if (bar.size == 0) return 0;
  uint32_t flags = PCI_BASE_ADDRESS_SPACE_MEMORY;
  if (bar.is_64bit) flags |= PCI_BASE_ADDRESS_MEM_TYPE_64;
  if (bar.prefetchable) flags |= PCI_BASE_ADDRESS_MEM_PREFETCH;
  return static_cast<uint32_t>(bar_address_[index]) | flags;
}

void VirtualDevice::AddExpansionRom(std::string contents, uint32_t bar_size) {
  rom_ = std::move(contents);
  rom_size_ = bar_size;
}

absl::StatusOr<std::string> VirtualDevice::ReadExpansionRom() {
  if (rom_size_ == 0) return absl::NotFoundError(absl::StrFormat("%s has no expansion ROM", name()));
  return rom_;
}

absl::Status VirtualDevice::ReadConfig(uint32_t offset, std::span<uint8_t> data) {
  if (offset > kConfigSpaceSize || data.size() > kConfigSpaceSize - offset) {
    return absl::OutOfRangeError(absl::StrFormat("%s: config read of %d bytes at %#x is outside the %#x-byte space",
                                                 name(), data.size(), offset, kConfigSpaceSize));
  }
  base::ReaderMutexLock lock(&config_mu_);
  std::array<uint8_t, kConfigSpaceSize> view = config_;
  for (int i = 0; i < kBarCount; ++i) Put32(view, PCI_BASE_ADDRESS_0 + 4 * i, BarRegisterValue(i));
  std::memcpy(data.data(), &view[offset], data.size());
  return absl::OkStatus();
}

absl::Status VirtualDevice::WriteConfig(uint32_t offset, std::span<const uint8_t> data) {
  if (offset > kConfigSpaceSize || data.size() > kConfigSpaceSize - offset) {
    return absl::OutOfRangeError(absl::StrFormat("%s: config write of %d bytes at %#x is outside the %#x-byte space",
                                                 name(), data.size(), offset, kConfigSpaceSize));
  }
  base::MutexLock lock(&config_mu_);
  for (size_t i = 0; i < data.size(); ++i) {
    const uint32_t at = offset + static_cast<uint32_t>(i);
    if (at >= PCI_COMMAND && at < PCI_COMMAND + 2) {
      // Only the bits this model implements are writable: I/O, memory, bus master, INTx disable.
      const uint16_t writable = PCI_COMMAND_IO | PCI_COMMAND_MEMORY | PCI_COMMAND_MASTER | PCI_COMMAND_INTX_DISABLE;
      const uint8_t mask = static_cast<uint8_t>(at == PCI_COMMAND ? writable : writable >> 8);
      config_[at] = static_cast<uint8_t>((config_[at] & ~mask) | (data[i] & mask));
    } else if (at >= PCI_BASE_ADDRESS_0 && at < PCI_BASE_ADDRESS_5 + 4) {
      // BAR sizing: address bits below the BAR's size read back as zero, so writing all ones reveals the size.
      const int index = static_cast<int>((at - PCI_BASE_ADDRESS_0) / 4);
      const int shift = static_cast<int>((at - PCI_BASE_ADDRESS_0) % 4) * 8;
      const bool upper = index > 0 && bars_[index].size == 0 && bars_[index - 1].is_64bit;
      const int owner = upper ? index - 1 : index;
      if (bars_[owner].size == 0) continue;
      const int bit = shift + (upper ? 32 : 0);
      uint64_t address = bar_address_[owner];
      address = (address & ~(uint64_t{0xff} << bit)) | (uint64_t{data[i]} << bit);
      address &= ~(bars_[owner].size - 1);
      if (!bars_[owner].is_64bit) address &= 0xffffffff;
      bar_address_[owner] = address;
    } else if (at >= PCI_ROM_ADDRESS && at < PCI_ROM_ADDRESS + 4) {
      // The ROM BAR: without a ROM it reads 0; with one, the address bits below its size read back 0 (sizing, as for
      // the BARs), the enable bit (PCI_ROM_ADDRESS_ENABLE) is kept, the rest of bits 10:1 are reserved (0).
      if (rom_size_ == 0) continue;
      config_[at] = data[i];
      uint32_t value;
      std::memcpy(&value, &config_[PCI_ROM_ADDRESS], 4);
      value &= (~(rom_size_ - 1) & PCI_ROM_ADDRESS_MASK) | PCI_ROM_ADDRESS_ENABLE;
      Put32(config_, PCI_ROM_ADDRESS, value);
    } else if (at == PCI_INTERRUPT_LINE || (at >= PCI_STD_HEADER_SIZEOF && at < PCI_CFG_SPACE_SIZE)) {
      config_[at] = data[i];  // interrupt line and device-specific space are plain storage; extended space is not
    }
  }
  uint16_t command;
  std::memcpy(&command, &config_[PCI_COMMAND], 2);
  dma_->set_bus_master((command & PCI_COMMAND_MASTER) != 0);
  SaveConfig();
  return absl::OkStatus();
}

absl::StatusOr<BarInfo> VirtualDevice::GetBarInfo(int bar) {
  if (bar < 0 || bar >= kBarCount) {
    return absl::InvalidArgumentError(absl::StrFormat("%s: BAR %d does not exist (0..5)", name(), bar));
  }
  const Bar& b = bars_[bar];
  return BarInfo{bar, b.size, false, b.is_64bit, b.prefetchable};
}

absl::StatusOr<Mmio> VirtualDevice::MapMmio(int bar) {
  BAREGPU_ASSIGN_OR_RETURN(BarInfo info, GetBarInfo(bar));
  if (!info.present()) return absl::NotFoundError(absl::StrFormat("%s: BAR %d is not implemented", name(), bar));
  const Bar& b = bars_[bar];
  if (b.handler != nullptr) return Mmio::Trapped(b.handler, b.size);
  return Mmio::Direct(b.memory.data(), b.memory.size());
}

absl::StatusOr<std::span<uint8_t>> VirtualDevice::MapMemory(int bar) {
  BAREGPU_ASSIGN_OR_RETURN(BarInfo info, GetBarInfo(bar));
  if (!info.present()) return absl::NotFoundError(absl::StrFormat("%s: BAR %d is not implemented", name(), bar));
  if (bars_[bar].handler != nullptr) {
    return absl::FailedPreconditionError(
        absl::StrFormat("%s: BAR %d holds registers, not memory; map it with MapMmio", name(), bar));
  }
  return bars_[bar].memory;
}

absl::StatusOr<std::unique_ptr<DmaBuffer>> VirtualDevice::AllocDma(size_t size, const DmaOptions& options) {
  BAREGPU_ASSIGN_OR_RETURN(HostMemory memory, HostMemory::Allocate(size, {.shareable = options.shareable}));
  BAREGPU_ASSIGN_OR_RETURN(uint64_t iova, iova_->Allocate(memory.size(), kPageSize, dma_mask()));
  dma_->Map(iova, memory.data(), memory.size());
  std::vector<uint64_t> pages = Buffer::PageList(iova, memory.size());
  return std::make_unique<Buffer>(std::move(memory), std::move(pages), dma_, iova_);
}

namespace {

// Peer memory in a virtual device's DMA space: the range is the device's until the mapping goes.
class PeerMapping : public DmaMapping {
 public:
  PeerMapping(uint64_t iova, uint64_t size, std::shared_ptr<DmaSpace> dma, std::shared_ptr<IovaAllocator> iova_alloc)
      : DmaMapping(iova, size), dma_(std::move(dma)), iova_alloc_(std::move(iova_alloc)) {}
  ~PeerMapping() override {
    dma_->Unmap(device_address());
    (void)iova_alloc_->Free(device_address());
  }

 private:
  std::shared_ptr<DmaSpace> dma_;
  std::shared_ptr<IovaAllocator> iova_alloc_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<DmaMapping>> VirtualDevice::MapPeerMemory(std::span<uint8_t> memory) {
  if (memory.empty() || reinterpret_cast<uintptr_t>(memory.data()) % kPageSize != 0 || memory.size() % kPageSize != 0) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s: peer memory at %p, %d bytes: DMA mappings take whole pages (%d bytes, aligned)", name(),
                        static_cast<const void*>(memory.data()), memory.size(), kPageSize));
  }
  BAREGPU_ASSIGN_OR_RETURN(uint64_t iova, iova_->Allocate(memory.size(), kPageSize, dma_mask()));
  dma_->Map(iova, memory.data(), memory.size());
  return std::make_unique<PeerMapping>(iova, memory.size(), dma_, iova_);
}

absl::Status VirtualDevice::ReadDmaMemory(uint64_t address, std::span<uint8_t> out) {
  if (!dma_->Peek(address, out.data(), out.size())) {
    return absl::NotFoundError(absl::StrFormat(
        "%s: %d bytes at device address %#x are not all DMA memory of this device (no buffer allocated there)", name(),
        out.size(), address));
  }
  return absl::OkStatus();
}

absl::Status VirtualDevice::ResetFunction() {
  BAREGPU_RETURN_IF_ERROR(DisableInterrupts());
  {
    base::MutexLock lock(&config_mu_);
    ResetConfigRegisters();
  }
  OnFunctionReset();
  return absl::OkStatus();
}

absl::StatusOr<std::vector<int>> VirtualDevice::EnableInterrupts(int count) {
  if (count < 1 || count > max_interrupt_vectors_) {
    return absl::InvalidArgumentError(absl::StrFormat("%s: %d interrupt vectors requested; the device has 1..%d",
                                                      name(), count, max_interrupt_vectors_));
  }
  base::MutexLock lock(&irq_mu_);
  irq_fds_.clear();
  std::vector<int> fds;
  for (int i = 0; i < count; ++i) {
    base::ScopedFd fd(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
    if (!fd.valid()) {
      int err = errno;
      irq_fds_.clear();
      return base::ErrnoError(err, absl::StrFormat("%s: eventfd for interrupt vector %d", name(), i));
    }
    fds.push_back(fd.get());
    irq_fds_.push_back(std::move(fd));
  }
  return fds;
}

absl::Status VirtualDevice::DisableInterrupts() {
  base::MutexLock lock(&irq_mu_);
  irq_fds_.clear();
  return absl::OkStatus();
}

void VirtualDevice::RaiseInterrupt(int vector) {
  if (!dma_->bus_master()) return;  // an MSI is a posted memory write: no bus master, no interrupt
  base::MutexLock lock(&irq_mu_);
  if (vector < 0 || static_cast<size_t>(vector) >= irq_fds_.size()) return;
  uint64_t one = 1;
  if (::write(irq_fds_[vector].get(), &one, sizeof(one)) == sizeof(one)) {
    interrupts_raised_.fetch_add(1, std::memory_order_acq_rel);
  }
}

}  // namespace pci::sim
