// The client side of a debug endpoint (serve/debug_endpoint.h): a pci::Device whose every access goes to the device
// another process holds. Configuration space and registers travel as CFG_READ/MMIO_READ requests (registers are a
// trapped pci::Mmio); VRAM is the holder's own BAR file mapped here (MAP_BAR_FD), a live view that costs no round
// trip per byte, which a page-table walk or a hex dump of megabytes needs; system memory the GPU reaches is read by
// device address (DMA_READ). Nothing here allocates DMA memory, takes interrupts or resets: the device is the
// holder's.
//
// Read-only unless opened `writable`: register and configuration writes are refused with an error naming the write,
// and VRAM is mapped without write permission.
#ifndef BAREGPU_SERVE_ATTACHED_DEVICE_H_
#define BAREGPU_SERVE_ATTACHED_DEVICE_H_

#include <sys/types.h>

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "base/fd.h"
#include "base/mutex.h"
#include "pci/device.h"
#include "serve/protocol.h"

namespace serve {

struct AttachOptions {
  bool writable = false;
  // Each reply must arrive within this time, or the call fails (a holder that stopped answering).
  int reply_timeout_ms = 10'000;
};

class AttachedDevice final : public pci::Device {
 public:
  // Connects to the endpoint at `socket_path` for device `name`. Refuses a socket or directory another user owns or
  // may write (PermissionDenied), a socket whose peer is another user, and one nobody answers (Unavailable: the
  // holder died and left it).
  static absl::StatusOr<std::unique_ptr<AttachedDevice>> Connect(const std::string& name,
                                                                 const std::string& socket_path,
                                                                 const AttachOptions& options = {});
  ~AttachedDevice() override;

  absl::string_view backend() const override { return "attached"; }
  pid_t holder_pid() const { return holder_pid_; }
  bool writable() const { return options_.writable; }
  // The first failed register access since the last call (a trapped Mmio cannot return an error): OK when none.
  absl::Status TakeAccessError();

  absl::Status ReadConfig(uint32_t offset, std::span<uint8_t> data) override;
  absl::Status WriteConfig(uint32_t offset, std::span<const uint8_t> data) override;
  absl::StatusOr<pci::BarInfo> GetBarInfo(int bar) override;
  absl::StatusOr<pci::Mmio> MapMmio(int bar) override;
  absl::StatusOr<std::span<uint8_t>> MapMemory(int bar) override;
  using Device::AllocDma;
  absl::StatusOr<std::unique_ptr<pci::DmaBuffer>> AllocDma(size_t size, const pci::DmaOptions& options) override;
  absl::Status ReadDmaMemory(uint64_t address, std::span<uint8_t> out) override;
  // One REGISTER_SEQUENCE round trip, allowed read-only (see the .cc).
  absl::Status RunRegisterSequence(int bar, std::span<const pci::RegisterStep> steps, std::span<uint32_t> out) override;
  // HOLDER_STATUS: the holder's JSON document (hcq::amd::AmdDevice::HolderStatus), unparsed.
  absl::StatusOr<std::string> HolderStatus();
  absl::Status ResetFunction() override;
  absl::StatusOr<std::vector<int>> EnableInterrupts(int count) override;
  absl::Status DisableInterrupts() override { return absl::OkStatus(); }

 private:
  class RegisterWindow;
  struct Call {
    Reply reply;
    base::ScopedFd fd;  // MAP_BAR_FD's descriptor
  };

  AttachedDevice(std::string name, base::ScopedFd socket, pid_t holder, const AttachOptions& options);
  // One request and its reply; the reply's data (`readout` bytes, or an error text) is read here.
  absl::StatusOr<Call> Rpc(const Request& request, std::span<const uint8_t> payload, std::span<uint8_t> readout,
                           bool expect_fd = false);
  absl::Status Send(std::span<const uint8_t> data);
  absl::Status Receive(std::span<uint8_t> data, base::ScopedFd* fd);
  // The data after an OK reply whose size the caller checked (REGISTER_SEQUENCE, HOLDER_STATUS); drops the
  // connection when it does not arrive whole. Called under mu_.
  absl::Status ReceiveReplyData(std::span<uint8_t> data);
  absl::Status RefuseWrite(absl::string_view what) const;
  void ReadRegister(int bar, uint64_t offset, int bytes, uint64_t* value);
  void WriteRegister(int bar, uint64_t offset, int bytes, uint64_t value);
  void RecordAccessError(absl::Status error);

  base::Mutex mu_;  // one request at a time on the socket
  base::ScopedFd socket_;
  const pid_t holder_pid_;
  const AttachOptions options_;
  std::array<std::optional<pci::BarInfo>, pci::kBarCount> bars_;
  std::array<std::unique_ptr<RegisterWindow>, pci::kBarCount> windows_;
  std::array<std::span<uint8_t>, pci::kBarCount> mappings_;
  base::Mutex error_mu_;
  absl::Status access_error_ ABSL_GUARDED_BY(error_mu_);
};

}  // namespace serve

#endif  // BAREGPU_SERVE_ATTACHED_DEVICE_H_
