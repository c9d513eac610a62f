// A debug endpoint: the process that drives a device serves it to debuggers of the same user (`baregpu regs/pt/ih/
// mem`), over tinygrad's remote PCI protocol (serve/protocol.h) on a Unix socket, so a device in use can be inspected
// without stopping its user. One thread serves one client at a time; the client side is serve::AttachedDevice.
//
// Where: RUNTIME_DIR/NAME.debug, NAME being the device's name ("sim:navi31", "0000:03:00.0") and RUNTIME_DIR
// $BAREGPU_RUNTIME_DIR, else $XDG_RUNTIME_DIR/baregpu, else /dev/shm/baregpu-EUID. The directory must be the
// effective user's and writable by nobody else (it is created 0700); the socket is mode 0600 and every client's
// credentials are checked (SO_PEERCRED: its uid must be our effective uid), so only the same user reaches the device.
//
// When: BAREGPU_DEBUG_ENDPOINT=1 turns it on, =0 off; a program's explicit choice (hcq::DeviceOptions::debug_endpoint)
// wins over the variable; with neither, the device decides (pci::Device::debug_endpoint_default: on for virtual
// devices, off for real ones).
#ifndef BAREGPU_SERVE_DEBUG_ENDPOINT_H_
#define BAREGPU_SERVE_DEBUG_ENDPOINT_H_

#include <sys/types.h>

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <thread>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "base/fd.h"
#include "pci/device.h"
#include "serve/served_device.h"

namespace serve {

inline constexpr char kDebugEndpointEnv[] = "BAREGPU_DEBUG_ENDPOINT";
inline constexpr char kRuntimeDirEnv[] = "BAREGPU_RUNTIME_DIR";

// The directory debug endpoints live in (not checked here; Start and AttachedDevice::Connect check it).
std::string RuntimeDirectory();
// RUNTIME_DIR/NAME.debug. InvalidArgument for a name that could leave the directory (characters other than letters,
// digits, ':', '.', '_', '-'; a leading '.') or that makes the path too long for a Unix socket address.
absl::StatusOr<std::string> DebugEndpointPath(absl::string_view device_name);

// Whether a process that opens `device` serves an endpoint: `requested` when the program chose, else
// BAREGPU_DEBUG_ENDPOINT (1 or 0; anything else is an InvalidArgument naming the variable), else the device's default.
absl::StatusOr<bool> DebugEndpointWanted(const pci::Device& device, std::optional<bool> requested);

class DebugEndpoint {
 public:
  // Binds DebugEndpointPath(device.name()) and starts serving `device`, which must outlive the endpoint. Fails with
  // AlreadyExists when another live process serves that path, PermissionDenied when the directory is not private.
  // `holder_status`, when given, answers HOLDER_STATUS (`baregpu smi` attached): a JSON document of what the
  // holder's driver knows (it runs on the endpoint's thread, beside the holder's own work: it must be thread-safe).
  static absl::StatusOr<std::unique_ptr<DebugEndpoint>> Start(
      pci::Device& device, std::function<absl::StatusOr<std::string>()> holder_status = {});
  // Stops serving (a client in the middle of a request is cut off at once), joins the thread and removes the socket
  // file if it is still ours.
  ~DebugEndpoint();
  DebugEndpoint(const DebugEndpoint&) = delete;
  DebugEndpoint& operator=(const DebugEndpoint&) = delete;

  const std::string& path() const { return path_; }

 private:
  explicit DebugEndpoint(pci::Device& device) : served_(device) {}
  void Run();

  ServedDevice served_;
  std::string path_;
  base::ScopedFd listener_;
  base::ScopedFd stop_event_;
  dev_t socket_device_ = 0;  // the socket file we bound, so that close removes no one else's
  ino_t socket_inode_ = 0;
  std::thread thread_;
};

}  // namespace serve

#endif  // BAREGPU_SERVE_DEBUG_ENDPOINT_H_
