// One device `baregpu serve` offers: a pci::Device with the accesses tinygrad's remote protocol makes of it, and
// which client holds it. Nothing here knows what the device is; every access goes through pci::Device.
#ifndef BAREGPU_SERVE_SERVED_DEVICE_H_
#define BAREGPU_SERVE_SERVED_DEVICE_H_

#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "base/mutex.h"
#include "pci/device.h"
#include "pci/mmio.h"

namespace serve {

// A (mask, device id) pair of PROBE's payload: the device matches when (device id & mask) == id.
struct DeviceIdFilter {
  uint32_t mask = 0;
  uint32_t device_id = 0;
};

class ServedDevice {
 public:
  static absl::StatusOr<std::unique_ptr<ServedDevice>> Open(const std::string& name);
  explicit ServedDevice(std::unique_ptr<pci::Device> device);
  // Serves a device someone else owns (a debug endpoint serves its process's device); it must outlive this.
  explicit ServedDevice(pci::Device& borrowed);

  const std::string& name() const { return device_->name(); }
  pci::Device& device() { return *device_; }

  // PROBE: the vendor matches, any filter matches, and the base class (0: any) matches.
  absl::StatusOr<bool> Matches(uint16_t vendor, uint8_t base_class, std::span<const DeviceIdFilter> filters);

  // One client at a time drives a device. Claim fails, naming the holder, while another client holds it.
  absl::Status Claim(uint64_t client, const std::string& client_label);
  void Release(uint64_t client);
  std::optional<std::string> holder() const;

  // MAP_BAR: the BAR's bus address (from its BAR registers) and size.
  absl::StatusOr<std::pair<uint64_t, uint64_t>> BarAddressAndSize(uint32_t bar);
  // Checks a BAR access before any byte moves: the BAR exists, the range lies inside it, and a register BAR is
  // accessed in whole dwords (8 bytes at an 8-byte offset become one 64-bit access: a 64-bit doorbell).
  absl::Status CheckBarAccess(uint32_t bar, uint64_t offset, uint64_t size);
  // Reads or writes a range CheckBarAccess accepted.
  absl::Status ReadBar(uint32_t bar, uint64_t offset, std::span<uint8_t> out);
  absl::Status WriteBar(uint32_t bar, uint64_t offset, std::span<const uint8_t> data);

  absl::StatusOr<uint64_t> ReadConfig(uint64_t offset, uint64_t size);
  absl::Status WriteConfig(uint64_t offset, uint64_t size, uint64_t value);
  // RESIZE_BAR: succeeds when the BAR already has the largest size its resizable-BAR capability offers (a served
  // device cannot be resized under its user: the kernel reassigns bridge windows with no driver bound).
  absl::Status ResizeBar(uint32_t bar);
  absl::Status Reset() { return device_->ResetFunction(); }
  // MAP_BAR_FD: the BAR's memory as a file (pci::Device::ShareMemory); the descriptor stays the device's.
  absl::StatusOr<pci::Device::SharedMemory> ShareBar(uint32_t bar);
  // REGISTER_SEQUENCE on a register BAR: the steps are checked (pci::CheckRegisterSequence), and every select must
  // name a register the device's driver declared a selection register (pci::Device::IsSelectionRegister), or the
  // sequence is refused before any access. Returns the dwords read.
  absl::StatusOr<std::vector<uint32_t>> RunRegisterSequence(uint32_t bar, std::span<const pci::RegisterStep> steps);
  // HOLDER_STATUS: what the process driving the device reports (set by whoever serves a debug endpoint).
  void set_holder_status(std::function<absl::StatusOr<std::string>()> status) { holder_status_ = std::move(status); }
  absl::StatusOr<std::string> HolderStatus() const;

 private:
  struct Window {
    bool opened = false;
    absl::Status error;         // why the BAR cannot be accessed
    std::span<uint8_t> memory;  // prefetchable memory BARs (VRAM): also any size, any alignment
    pci::Mmio mmio;             // every BAR: dword and aligned qword accesses (over `memory` when it is memory)
    uint64_t size = 0;
  };
  absl::StatusOr<Window*> OpenWindow(uint32_t bar);
  // Sizes 1, 2, 4 at an offset inside configuration space, aligned to the size.
  absl::Status CheckConfigAccess(absl::string_view what, uint64_t offset, uint64_t size) const;

  std::unique_ptr<pci::Device> owned_;  // null when borrowed
  pci::Device* device_;
  std::array<Window, pci::kBarCount> windows_;
  std::function<absl::StatusOr<std::string>()> holder_status_;
  mutable base::Mutex mu_;
  uint64_t holder_id_ ABSL_GUARDED_BY(mu_) = 0;  // 0: free
  std::string holder_label_ ABSL_GUARDED_BY(mu_);
};

}  // namespace serve

#endif  // BAREGPU_SERVE_SERVED_DEVICE_H_
