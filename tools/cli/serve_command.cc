// baregpu serve: devices over tinygrad's remote PCI protocol (serve/), until Ctrl-C.
#include <signal.h>

#include <cerrno>
#include <ctime>
#include <map>
#include <ostream>
#include <thread>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/status_macros.h"
#include "serve/protocol.h"
#include "serve/server.h"
#include "tools/cli/command.h"

namespace cli {
namespace {

constexpr int kProgressIntervalSeconds = 1;

// Blocks SIGINT and SIGTERM in this thread and every thread it starts, so they arrive only through sigtimedwait;
// the previous mask returns when the command ends (Main also runs inside tests).
class BlockedStopSignals {
 public:
  BlockedStopSignals() {
    sigemptyset(&set_);
    sigaddset(&set_, SIGINT);
    sigaddset(&set_, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &set_, &previous_);
  }
  ~BlockedStopSignals() { pthread_sigmask(SIG_SETMASK, &previous_, nullptr); }
  const sigset_t& set() const { return set_; }

 private:
  sigset_t set_;
  sigset_t previous_;
};

// One status line per client with its request rate over the last interval.
class ProgressLines {
 public:
  std::vector<std::string> Lines(const std::vector<serve::ClientSnapshot>& clients) {
    std::vector<std::string> lines;
    std::map<uint64_t, uint64_t> requests;
    for (const serve::ClientSnapshot& c : clients) {
      const uint64_t before = last_requests_.count(c.id) ? last_requests_[c.id] : 0;
      lines.push_back(absl::StrFormat("%s  %-14s %8d req/s  %10d requests  %d refused  in %s  out %s", c.label,
                                      c.devices.empty() ? "-" : c.devices,
                                      (c.requests - before) / kProgressIntervalSeconds, c.requests, c.errors,
                                      Bytes(c.bytes_received), Bytes(c.bytes_sent)));
      requests[c.id] = c.requests;
    }
    last_requests_ = std::move(requests);
    return lines;
  }

 private:
  static std::string Bytes(uint64_t n) {
    if (n >= (uint64_t{1} << 30)) return absl::StrFormat("%.1f GiB", static_cast<double>(n) / (1 << 30));
    if (n >= (uint64_t{1} << 20)) return absl::StrFormat("%.1f MiB", static_cast<double>(n) / (1 << 20));
    return absl::StrFormat("%d B", n);
  }
  std::map<uint64_t, uint64_t> last_requests_;
};

absl::Status RunServe(Invocation& inv) {
  if (inv.positional().empty()) {
    return inv.UsageError("name the devices to serve: baregpu serve sim:navi31 [--listen HOST:PORT | --unix PATH]");
  }
  if (inv.has("listen") && inv.has("unix")) return inv.UsageError("--listen and --unix exclude each other");
  serve::ServerOptions options;
  options.unix_path = inv.value("unix").value_or("");
  if (options.unix_path.empty()) {
    options.listen = inv.value("listen").value_or(absl::StrFormat("127.0.0.1:%d", serve::kDefaultPort));
  }
  options.allow_remote = inv.has("allow-remote");
  if (auto v = inv.value("max-sysmem-mib"); v.has_value()) {
    uint64_t mib = 0;
    if (!absl::SimpleAtoi(*v, &mib) || mib == 0 || mib > (uint64_t{1} << 26)) {
      return inv.UsageError(absl::StrCat("--max-sysmem-mib '", *v, "' is not a size in MiB (1..67108864)"));
    }
    options.limits.max_sysmem_bytes = mib << 20;
  }
  std::vector<std::unique_ptr<serve::ServedDevice>> devices;
  for (const std::string& name : inv.positional()) {
    for (const auto& d : devices) {
      if (d->name() == name) return inv.UsageError(absl::StrCat("'", name, "' is named twice"));
    }
    BAREGPU_ASSIGN_OR_RETURN(std::unique_ptr<serve::ServedDevice> device, serve::ServedDevice::Open(name));
    devices.push_back(std::move(device));
  }
  std::vector<std::string> names;
  for (const auto& d : devices) names.push_back(d->name());

  BlockedStopSignals signals;
  BAREGPU_ASSIGN_OR_RETURN(std::unique_ptr<serve::Server> server,
                           serve::Server::Create(std::move(devices), options, inv.err()));
  if (server->remote()) {
    inv.err() << "warning: serving on " << server->address()
              << ", reachable from other machines: anyone who can connect controls the GPU, its registers and its "
                 "DMA into this machine's memory\n";
  }
  for (size_t i = 0; i < names.size(); ++i) {
    inv.out() << absl::StrFormat("serving %s as device %d on %s\n", names[i], i, server->address());
  }
  inv.out() << std::flush;

  absl::Status run_status;
  std::thread runner([&] { run_status = server->Run(); });
  ProgressLines progress;
  while (true) {
    const timespec interval{kProgressIntervalSeconds, 0};
    const int signal = sigtimedwait(&signals.set(), nullptr, &interval);
    if (signal == SIGINT || signal == SIGTERM) break;
    server->LogDeviceDiagnostics();
    if (inv.interactive()) server->ShowStatus(progress.Lines(server->Clients()));
  }
  if (inv.interactive()) server->ShowStatus({});
  server->Log("stopping: ending every client's session");
  server->Stop();
  runner.join();
  return run_status;
}

BAREGPU_REGISTER_COMMAND(
    kServeRegistered,
    Command{"serve",
            "serve devices to tinygrad (and other clients) over its remote PCI protocol",
            "baregpu serve DEVICE... [--listen HOST:PORT | --unix PATH] [--allow-remote] [--max-sysmem-mib N]",
            "Serves each DEVICE (sim:navi31, sim:navi31:1, a PCI address) as device 0, 1, ... in the order given,\n"
            "with the wire format of tinygrad's RemotePCIDevice (tinygrad/runtime/support/system.py): PROBE,\n"
            "MAP_BAR, CFG_READ/CFG_WRITE, MMIO_READ/MMIO_WRITE, MAP_SYSMEM, SYSMEM_READ/SYSMEM_WRITE, MAP_SYSMEM_FD\n"
            "(a memfd over a Unix socket), RESET, RESIZE_BAR, PING. tinygrad connects with REMOTE=HOST:PORT.\n"
            "The default address is 127.0.0.1:6667, tinygrad's default port.\n"
            "\n"
            "Security model: the protocol has no authentication and no encryption. A client drives the whole GPU:\n"
            "its registers, its firmware and its DMA, which reaches every page of system memory the client\n"
            "allocated here (and, on a real GPU, whatever its page tables point at). So the server listens only on\n"
            "loopback or on a Unix socket (created mode 0600: only this user may connect) unless --allow-remote is\n"
            "given, and then warns: anyone who can reach the port controls the GPU. Serve real GPUs only to clients\n"
            "you trust as you would trust root on this machine.\n"
            "\n"
            "One client drives a device at a time; another client's request for it is refused, naming the holder.\n"
            "When a client disconnects, its system memory is freed and its devices released, left as they are (a\n"
            "virtual GPU keeps its state, as a real one keeps its VRAM and registers). Malformed requests get an\n"
            "error reply and a log line on stderr; failed posted writes (MMIO_WRITE, SYSMEM_WRITE get no reply) are\n"
            "reported in the reply to the client's next request. Ctrl-C ends every session and stops. On a terminal,\n"
            "stderr shows one line per client with its request rate.",
            {{"listen", true, "TCP HOST:PORT to listen on (default 127.0.0.1:6667; port 0 picks one)"},
             {"unix", true, "listen on a Unix socket at PATH instead"},
             {"allow-remote", false, "allow a --listen address other machines can reach"},
             {"max-sysmem-mib", true, "system memory one client may allocate, in MiB (default 16384)"}},
            RunServe});

}  // namespace
}  // namespace cli
