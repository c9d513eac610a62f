// `baregpu serve`: offers devices to clients over tinygrad's remote PCI protocol (serve/protocol.h), on a TCP
// port or a Unix socket. One thread per client; one client drives a device at a time.
#ifndef BAREGPU_SERVE_SERVER_H_
#define BAREGPU_SERVE_SERVER_H_

#include <cstdint>
#include <memory>
#include <ostream>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "base/fd.h"
#include "base/mutex.h"
#include "serve/served_device.h"
#include "serve/session.h"

namespace serve {

struct ServerOptions {
  // TCP "HOST:PORT" (IPv4; port 0 picks a free one), or empty with unix_path set.
  std::string listen;
  // A Unix socket path: created mode 0600, refused when something else is there.
  std::string unix_path;
  // Without it, a TCP address that is not loopback is refused: whoever connects drives the GPU, its DMA
  // included.
  bool allow_remote = false;
  SessionLimits limits;
};

struct ClientSnapshot {
  uint64_t id = 0;
  std::string label;
  std::string devices;
  uint64_t requests = 0;
  uint64_t errors = 0;
  uint64_t bytes_received = 0;
  uint64_t bytes_sent = 0;
};

class Server {
 public:
  // Binds and listens; the devices are open already and are served in this order (device index = position).
  static absl::StatusOr<std::unique_ptr<Server>> Create(std::vector<std::unique_ptr<ServedDevice>> devices,
                                                        const ServerOptions& options, std::ostream& log);
  ~Server();

  // "127.0.0.1:6667" or "unix:/path": where clients connect (the port the kernel chose for port 0).
  const std::string& address() const { return address_; }
  // True when the address is reachable from other machines (allow_remote was needed).
  bool remote() const { return remote_; }

  // Accepts clients until Stop(); then ends every session and returns once all have ended.
  absl::Status Run();
  // From any thread (not from a signal handler): makes Run return.
  void Stop();

  std::vector<ClientSnapshot> Clients() const;
  // Logs what each device reported since the last call (pci::Device::TakeDiagnostics): a GPU-side error, such as
  // an illegal instruction or a page fault, in the device's words. Called periodically, and when a client leaves.
  void LogDeviceDiagnostics();
  // One line to the log stream. Status lines (below) stay under the log: they are erased, and redrawn after it.
  void Log(const std::string& line);
  // Replaces the status lines at the bottom of a terminal (ANSI cursor-up and erase-line; only for a TTY).
  void ShowStatus(std::vector<std::string> lines);

 private:
  Server(std::vector<std::unique_ptr<ServedDevice>> devices, const ServerOptions& options, std::ostream& log);
  absl::Status Listen();
  void ReapFinished() ABSL_LOCKS_EXCLUDED(mu_);

  struct Client {
    std::unique_ptr<Session> session;
    std::thread thread;
    std::atomic<bool> finished{false};
  };

  std::vector<std::unique_ptr<ServedDevice>> devices_;
  std::vector<ServedDevice*> device_pointers_;
  ServerOptions options_;
  std::ostream& log_stream_;
  base::Mutex log_mu_;
  base::Mutex diagnostics_mu_;  // one caller of TakeDiagnostics at a time
  std::vector<std::string> status_lines_ ABSL_GUARDED_BY(log_mu_);
  base::ScopedFd listener_;
  base::ScopedFd stop_event_;
  std::string address_;
  bool remote_ = false;
  bool unix_ = false;
  uint64_t next_client_id_ = 1;
  mutable base::Mutex mu_;
  std::vector<std::unique_ptr<Client>> clients_ ABSL_GUARDED_BY(mu_);
};

}  // namespace serve

#endif  // BAREGPU_SERVE_SERVER_H_
