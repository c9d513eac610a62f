// One client connection of `baregpu serve`: reads requests, runs them on the served devices, replies.
#ifndef BAREGPU_SERVE_SESSION_H_
#define BAREGPU_SERVE_SESSION_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "base/fd.h"
#include "base/mutex.h"
#include "pci/dma_buffer.h"
#include "serve/protocol.h"
#include "serve/served_device.h"

namespace serve {

// What a session counts, read by the server's progress display while the session runs.
struct SessionCounters {
  std::atomic<uint64_t> requests{0};
  std::atomic<uint64_t> errors{0};
  std::atomic<uint64_t> bytes_received{0};
  std::atomic<uint64_t> bytes_sent{0};
};

struct SessionLimits {
  // System memory one client may allocate in all (MAP_SYSMEM, MAP_SYSMEM_FD): the protocol has no free, so it is
  // held until the client disconnects.
  uint64_t max_sysmem_bytes = uint64_t{16} << 30;
  // Once a request has started arriving, the rest of it must arrive within this time, or the client is dropped.
  int request_timeout_ms = 30'000;
  // How long a client may stay silent between requests before it is dropped; -1: forever (`baregpu serve`'s
  // clients drive the device; a debug endpoint serves one client at a time, so an idle one must not keep others out).
  int idle_timeout_ms = -1;
  // RESET: a debug endpoint's clients look at a device another process drives; resetting it under that process is
  // refused.
  bool allow_reset = true;
};

class Session {
 public:
  // `socket` is connected; `stop_fd` becomes readable when the server stops. `log` takes one line at a time.
  Session(uint64_t id, std::string peer, base::ScopedFd socket, bool unix_socket,
          std::span<ServedDevice* const> devices, int stop_fd, SessionLimits limits,
          std::function<void(const std::string&)> log);
  ~Session();

  // Serves requests until the client disconnects, a request cannot be framed, or the server stops. Devices the
  // client claimed are released and its system memory freed (the device's DMA to it ends, as when a process
  // that owned DMA memory exits); the devices themselves are left as they are.
  void Run();

  uint64_t id() const { return id_; }
  const std::string& label() const { return label_; }
  const SessionCounters& counters() const { return counters_; }
  // Names of the devices this client has claimed, for the progress display.
  std::string claimed_devices() const;

 private:
  enum class ReadResult { kOk, kClosed, kStopped, kIdle, kTimedOut, kFailed };

  ReadResult ReadExact(std::span<uint8_t> buffer, bool first_byte_may_wait);
  absl::Status SendAll(std::span<const uint8_t> data);
  absl::Status SendReply(const Reply& reply, std::span<const uint8_t> data = {}, int fd = -1);
  absl::Status SendError(const absl::Status& error);

  // Runs one request whose header has been read; returns an error only when the connection must close.
  absl::Status Handle(const Request& request);
  // The request's device, claimed for this client on first use (refused while another client holds it).
  absl::StatusOr<ServedDevice*> Device(const Request& request);
  absl::Status Probe(const Request& request);
  absl::Status MapSysmem(const Request& request, bool as_fd);
  absl::Status BulkRead(const Request& request);
  absl::Status BulkWrite(const Request& request);
  absl::Status MapBarFd(const Request& request);
  absl::Status DmaRead(const Request& request);
  absl::Status RegisterSequence(const Request& request);
  absl::Status HolderStatus(const Request& request);
  // Reads and drops `size` payload bytes that cannot be used, so the next header is framed correctly.
  absl::Status DiscardPayload(uint64_t size);
  // The system memory a SYSMEM_READ/WRITE names (its handle in the BAR field), with the range checked.
  absl::StatusOr<pci::DmaBuffer*> Sysmem(const Request& request);

  const uint64_t id_;
  const std::string peer_;
  const std::string label_;
  base::ScopedFd socket_;
  const bool unix_socket_;
  std::vector<ServedDevice*> devices_;
  std::vector<bool> claimed_;  // by this session's thread only
  mutable base::Mutex claimed_names_mu_;
  std::string claimed_names_ ABSL_GUARDED_BY(claimed_names_mu_);
  const int stop_fd_;
  const SessionLimits limits_;
  std::function<void(const std::string&)> log_;
  std::vector<std::unique_ptr<pci::DmaBuffer>> sysmem_;
  uint64_t sysmem_bytes_ = 0;
  // A posted write that failed: the client is not waiting for its reply, so the error answers the next request.
  absl::Status deferred_error_;
  std::vector<uint8_t> chunk_;
  SessionCounters counters_;
};

}  // namespace serve

#endif  // BAREGPU_SERVE_SESSION_H_
