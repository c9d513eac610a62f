#include "serve/served_device.h"

#include <linux/pci_regs.h>

#include <bit>
#include <cstring>
#include <utility>

#include "absl/strings/str_format.h"
#include "base/status_macros.h"
#include "pci/open.h"

namespace serve {
namespace {

constexpr uint64_t kDword = 4;
constexpr uint64_t kQword = 8;
// Extended capabilities start after the 256-byte legacy space and are dword-aligned; a list longer than the space
// has room for is a loop.
constexpr int kMaxExtendedCapabilities = (pci::kConfigSpaceSize - PCI_CFG_SPACE_SIZE) / 4;
// Resizable-BAR sizes are powers of two from 1 MiB: bit n of PCI_REBAR_CAP_SIZES is 2^(n - 4) MiB, and the
// control register's size field is the exponent in MiB.
constexpr int kRebarFirstSizeBit = 4;

}  // namespace

absl::StatusOr<std::unique_ptr<ServedDevice>> ServedDevice::Open(const std::string& name) {
  BAREGPU_ASSIGN_OR_RETURN(std::unique_ptr<pci::Device> device, pci::Open(name));
  return std::make_unique<ServedDevice>(std::move(device));
}

ServedDevice::ServedDevice(std::unique_ptr<pci::Device> device) : owned_(std::move(device)), device_(owned_.get()) {}

ServedDevice::ServedDevice(pci::Device& borrowed) : device_(&borrowed) {}

absl::StatusOr<pci::Device::SharedMemory> ServedDevice::ShareBar(uint32_t bar) {
  BAREGPU_ASSIGN_OR_RETURN(Window * w, OpenWindow(bar));
  if (w->memory.empty()) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s: BAR %d holds registers, which only MMIO_READ/MMIO_WRITE reach, not a mapping", name(), bar));
  }
  BAREGPU_ASSIGN_OR_RETURN(pci::Device::SharedMemory shared, device_->ShareMemory(static_cast<int>(bar)));
  if (shared.fd < 0 || shared.size != w->memory.size()) {
    return absl::InternalError(absl::StrFormat("%s: BAR %d is shared as %d bytes of descriptor %d, mapped as %d bytes",
                                               name(), bar, shared.size, shared.fd, w->memory.size()));
  }
  return shared;
}

absl::StatusOr<std::vector<uint32_t>> ServedDevice::RunRegisterSequence(uint32_t bar,
                                                                        std::span<const pci::RegisterStep> steps) {
  BAREGPU_ASSIGN_OR_RETURN(Window * w, OpenWindow(bar));
  if (!w->memory.empty()) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s: BAR %d is memory; a register sequence runs on a register BAR", name(), bar));
  }
  BAREGPU_ASSIGN_OR_RETURN(const size_t reads, pci::CheckRegisterSequence(steps, w->size));
  for (size_t i = 0; i < steps.size(); ++i) {
    if (steps[i].kind == pci::RegisterStep::Kind::kSelect &&
        !device_->IsSelectionRegister(static_cast<int>(bar), steps[i].offset)) {
      return absl::PermissionDeniedError(absl::StrFormat(
          "%s: register sequence step %d writes BAR %d offset %#x, which the device's driver did not declare a "
          "selection register; a sequence only selects (and puts the selections back), other writes are MMIO_WRITEs",
          name(), i, bar, steps[i].offset));
    }
  }
  std::vector<uint32_t> values(reads);
  BAREGPU_RETURN_IF_ERROR(device_->RunRegisterSequence(static_cast<int>(bar), steps, values));
  return values;
}

absl::StatusOr<std::string> ServedDevice::HolderStatus() const {
  if (!holder_status_) {
    return absl::UnimplementedError(absl::StrFormat("%s: the process serving it reports no status", name()));
  }
  return holder_status_();
}

absl::StatusOr<bool> ServedDevice::Matches(uint16_t vendor, uint8_t base_class,
                                           std::span<const DeviceIdFilter> filters) {
  BAREGPU_ASSIGN_OR_RETURN(uint16_t vendor_id, device_->ReadConfig16(PCI_VENDOR_ID));
  BAREGPU_ASSIGN_OR_RETURN(uint16_t device_id, device_->ReadConfig16(PCI_DEVICE_ID));
  BAREGPU_ASSIGN_OR_RETURN(uint8_t device_base_class, device_->ReadConfig8(PCI_CLASS_DEVICE + 1));
  if (vendor_id != vendor) return false;
  if (base_class != 0 && device_base_class != base_class) return false;
  for (const DeviceIdFilter& f : filters) {
    if ((device_id & f.mask) == f.device_id) return true;
  }
  return false;
}

absl::Status ServedDevice::Claim(uint64_t client, const std::string& client_label) {
  base::MutexLock lock(&mu_);
  if (holder_id_ == client) return absl::OkStatus();
  if (holder_id_ != 0) {
    return absl::UnavailableError(absl::StrFormat(
        "%s is in use by %s; one client drives a device at a time: wait until it disconnects", name(), holder_label_));
  }
  holder_id_ = client;
  holder_label_ = client_label;
  return absl::OkStatus();
}

void ServedDevice::Release(uint64_t client) {
  base::MutexLock lock(&mu_);
  if (holder_id_ != client) return;
  holder_id_ = 0;
  holder_label_.clear();
}

std::optional<std::string> ServedDevice::holder() const {
  base::MutexLock lock(&mu_);
  if (holder_id_ == 0) return std::nullopt;
  return holder_label_;
}

absl::StatusOr<ServedDevice::Window*> ServedDevice::OpenWindow(uint32_t bar) {
  if (bar >= pci::kBarCount) {
    return absl::InvalidArgumentError(absl::StrFormat("%s: BAR %d does not exist (0..5)", name(), bar));
  }
  Window& w = windows_[bar];
  if (!w.opened) {
    w.opened = true;
    absl::StatusOr<pci::BarInfo> info = device_->GetBarInfo(static_cast<int>(bar));
    if (!info.ok()) {
      w.error = info.status();
    } else if (!info->present() || info->is_io) {
      w.error = absl::NotFoundError(
          absl::StrFormat("%s: BAR %d is %s", name(), bar, info->is_io ? "an I/O BAR" : "not implemented"));
    } else {
      w.size = info->size;
      // Prefetchable BARs are memory (VRAM) unless the backend says they hold registers (doorbells).
      absl::StatusOr<std::span<uint8_t>> memory =
          info->prefetchable ? device_->MapMemory(static_cast<int>(bar)) : absl::UnimplementedError("registers");
      if (memory.ok()) {
        w.memory = *memory;
        w.mmio = pci::Mmio::Direct(w.memory.data(), w.memory.size());
      } else {
        absl::StatusOr<pci::Mmio> mmio = device_->MapMmio(static_cast<int>(bar));
        if (mmio.ok()) {
          w.mmio = *mmio;
        } else {
          w.error = mmio.status();
        }
      }
    }
  }
  if (!w.error.ok()) return w.error;
  return &w;
}

absl::StatusOr<std::pair<uint64_t, uint64_t>> ServedDevice::BarAddressAndSize(uint32_t bar) {
  BAREGPU_ASSIGN_OR_RETURN(Window * w, OpenWindow(bar));
  BAREGPU_ASSIGN_OR_RETURN(pci::BarInfo info, device_->GetBarInfo(static_cast<int>(bar)));
  const uint32_t reg = PCI_BASE_ADDRESS_0 + 4 * bar;
  BAREGPU_ASSIGN_OR_RETURN(uint32_t low, device_->ReadConfig32(reg));
  uint64_t address = low & PCI_BASE_ADDRESS_MEM_MASK;
  if (info.is_64bit && bar + 1 < pci::kBarCount) {
    BAREGPU_ASSIGN_OR_RETURN(uint32_t high, device_->ReadConfig32(reg + 4));
    address |= uint64_t{high} << 32;
  }
  return std::make_pair(address, w->size);
}

absl::Status ServedDevice::CheckBarAccess(uint32_t bar, uint64_t offset, uint64_t size) {
  BAREGPU_ASSIGN_OR_RETURN(Window * w, OpenWindow(bar));
  if (offset > w->size || size > w->size - offset) {
    return absl::OutOfRangeError(absl::StrFormat("%s: BAR %d access of %d bytes at %#x is outside the BAR (%#x bytes)",
                                                 name(), bar, size, offset, w->size));
  }
  if (w->memory.empty() && (offset % kDword != 0 || size % kDword != 0)) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s: BAR %d holds registers: access of %d bytes at %#x must be whole, aligned dwords", name(),
                        bar, size, offset));
  }
  return absl::OkStatus();
}

absl::Status ServedDevice::ReadBar(uint32_t bar, uint64_t offset, std::span<uint8_t> out) {
  BAREGPU_RETURN_IF_ERROR(CheckBarAccess(bar, offset, out.size()));
  Window& w = windows_[bar];
  // An aligned dword or qword stays one access (a register, a 64-bit doorbell or signal); memory takes the rest
  // as bytes, registers as dwords (CheckBarAccess made sure they are whole).
  if (out.size() == kQword && offset % kQword == 0) {
    const uint64_t v = w.mmio.Read64(offset);
    std::memcpy(out.data(), &v, sizeof(v));
  } else if (!w.memory.empty() && !(out.size() == kDword && offset % kDword == 0)) {
    std::memcpy(out.data(), w.memory.data() + offset, out.size());
  } else {
    for (uint64_t i = 0; i < out.size(); i += kDword) {
      const uint32_t v = w.mmio.Read32(offset + i);
      std::memcpy(out.data() + i, &v, sizeof(v));
    }
  }
  return absl::OkStatus();
}

absl::Status ServedDevice::WriteBar(uint32_t bar, uint64_t offset, std::span<const uint8_t> data) {
  BAREGPU_RETURN_IF_ERROR(CheckBarAccess(bar, offset, data.size()));
  Window& w = windows_[bar];
  if (data.size() == kQword && offset % kQword == 0) {
    uint64_t v;
    std::memcpy(&v, data.data(), sizeof(v));
    w.mmio.Write64(offset, v);
  } else if (!w.memory.empty() && !(data.size() == kDword && offset % kDword == 0)) {
    std::memcpy(w.memory.data() + offset, data.data(), data.size());
  } else {
    for (uint64_t i = 0; i < data.size(); i += kDword) {
      uint32_t v;
      std::memcpy(&v, data.data() + i, sizeof(v));
      w.mmio.Write32(offset + i, v);
    }
  }
  return absl::OkStatus();
}

absl::Status ServedDevice::CheckConfigAccess(absl::string_view what, uint64_t offset, uint64_t size) const {
  if (size != 1 && size != 2 && size != 4) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s: configuration %s of %d bytes; the sizes are 1, 2 and 4", name(), what, size));
  }
  if (offset >= pci::kConfigSpaceSize || offset % size != 0) {
    return absl::OutOfRangeError(absl::StrFormat(
        "%s: configuration %s of %d bytes at %#x: the offset must be below %#x and a multiple of the size", name(),
        what, size, offset, pci::kConfigSpaceSize));
  }
  return absl::OkStatus();
}

absl::StatusOr<uint64_t> ServedDevice::ReadConfig(uint64_t offset, uint64_t size) {
  BAREGPU_RETURN_IF_ERROR(CheckConfigAccess("read", offset, size));
  uint8_t bytes[4] = {};
  BAREGPU_RETURN_IF_ERROR(device_->ReadConfig(static_cast<uint32_t>(offset), std::span<uint8_t>(bytes, size)));
  uint64_t value = 0;
  for (uint64_t i = 0; i < size; ++i) value |= uint64_t{bytes[i]} << (8 * i);
  return value;
}

absl::Status ServedDevice::WriteConfig(uint64_t offset, uint64_t size, uint64_t value) {
  BAREGPU_RETURN_IF_ERROR(CheckConfigAccess("write", offset, size));
  if ((value >> (8 * size)) != 0) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s: configuration write of %#x does not fit in %d bytes", name(), value, size));
  }
  uint8_t bytes[4] = {};
  for (uint64_t i = 0; i < size; ++i) bytes[i] = static_cast<uint8_t>(value >> (8 * i));
  return device_->WriteConfig(static_cast<uint32_t>(offset), std::span<const uint8_t>(bytes, size));
}

absl::Status ServedDevice::ResizeBar(uint32_t bar) {
  BAREGPU_ASSIGN_OR_RETURN(Window * w, OpenWindow(bar));
  (void)w;
  uint32_t position = PCI_CFG_SPACE_SIZE;
  for (int i = 0; i < kMaxExtendedCapabilities && position >= PCI_CFG_SPACE_SIZE; ++i) {
    BAREGPU_ASSIGN_OR_RETURN(uint32_t header, device_->ReadConfig32(position));
    if (header == 0 || header == 0xffffffff) break;
    if (PCI_EXT_CAP_ID(header) == PCI_EXT_CAP_ID_REBAR) {
      BAREGPU_ASSIGN_OR_RETURN(uint32_t first_ctrl, device_->ReadConfig32(position + PCI_REBAR_CTRL));
      const uint32_t entries = (first_ctrl & PCI_REBAR_CTRL_NBAR_MASK) >> PCI_REBAR_CTRL_NBAR_SHIFT;
      for (uint32_t e = 0; e < entries; ++e) {
        BAREGPU_ASSIGN_OR_RETURN(uint32_t cap, device_->ReadConfig32(position + PCI_REBAR_CAP + 8 * e));
        BAREGPU_ASSIGN_OR_RETURN(uint32_t ctrl, device_->ReadConfig32(position + PCI_REBAR_CTRL + 8 * e));
        if ((ctrl & PCI_REBAR_CTRL_BAR_IDX) != bar) continue;
        const uint32_t sizes = cap & PCI_REBAR_CAP_SIZES;
        if (sizes == 0) break;
        const uint32_t largest = (31 - std::countl_zero(sizes)) - kRebarFirstSizeBit;
        const uint32_t current = (ctrl & PCI_REBAR_CTRL_BAR_SIZE) >> PCI_REBAR_CTRL_BAR_SHIFT;
        if (current == largest) return absl::OkStatus();
        return absl::FailedPreconditionError(absl::StrFormat(
            "%s: BAR %d is %d MiB and the device offers %d MiB; a served device cannot be resized under its "
            "client: resize it with no driver bound (echo %d > .../resource%d_resize) before serving it",
            name(), bar, uint64_t{1} << current, uint64_t{1} << largest, largest, bar));
      }
      break;
    }
    position = PCI_EXT_CAP_NEXT(header);
  }
  return absl::FailedPreconditionError(
      absl::StrFormat("%s: BAR %d is not resizable (no resizable-BAR capability lists it)", name(), bar));
}

}  // namespace serve
