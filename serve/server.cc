#include "serve/server.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/file.h"
#include "base/status_macros.h"

namespace serve {
namespace {

constexpr int kListenBacklog = 16;
constexpr mode_t kUnixSocketMode = 0600;  // only the user who serves may connect
constexpr uint8_t kLoopbackNet = 127;     // 127.0.0.0/8

}  // namespace

Server::Server(std::vector<std::unique_ptr<ServedDevice>> devices, const ServerOptions& options, std::ostream& log)
    : devices_(std::move(devices)), options_(options), log_stream_(log) {
  for (auto& d : devices_) device_pointers_.push_back(d.get());
}

absl::StatusOr<std::unique_ptr<Server>> Server::Create(std::vector<std::unique_ptr<ServedDevice>> devices,
                                                       const ServerOptions& options, std::ostream& log) {
  if (devices.empty()) return absl::InvalidArgumentError("nothing to serve: name at least one device");
  if (options.listen.empty() == options.unix_path.empty()) {
    return absl::InvalidArgumentError("serve on exactly one of a TCP address (--listen) and a Unix socket (--unix)");
  }
  std::unique_ptr<Server> server(new Server(std::move(devices), options, log));
  server->stop_event_ = base::ScopedFd(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
  if (!server->stop_event_.valid()) return base::ErrnoError(errno, "eventfd for stopping the server");
  BAREGPU_RETURN_IF_ERROR(server->Listen());
  return server;
}

Server::~Server() {
  Stop();
  {
    base::MutexLock lock(&mu_);
    for (auto& c : clients_) {
      if (c->thread.joinable()) c->thread.join();
    }
    clients_.clear();
  }
  if (unix_ && listener_.valid()) ::unlink(options_.unix_path.c_str());
}

absl::Status Server::Listen() {
  if (!options_.unix_path.empty()) {
    const std::string& path = options_.unix_path;
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    if (path.size() >= sizeof(addr.sun_path)) {
      return absl::InvalidArgumentError(
          absl::StrFormat("Unix socket path '%s' is %d bytes; the limit is %d: choose a shorter path", path,
                          path.size(), sizeof(addr.sun_path) - 1));
    }
    std::memcpy(addr.sun_path, path.c_str(), path.size());
    struct stat st;
    if (::lstat(path.c_str(), &st) == 0) {
      if (!S_ISSOCK(st.st_mode)) {
        return absl::AlreadyExistsError(
            absl::StrFormat("'%s' exists and is not a socket; refusing to replace it: choose another path", path));
      }
      // A socket nobody listens on is what a killed server leaves: replace it. One that answers is in use.
      base::ScopedFd probe(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
      if (probe.valid() && ::connect(probe.get(), reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0) {
        return absl::AlreadyExistsError(
            absl::StrFormat("'%s' is in use by another server: stop it or choose another path", path));
      }
      ::unlink(path.c_str());
    }
    listener_ = base::ScopedFd(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
    if (!listener_.valid()) return base::ErrnoError(errno, "creating a Unix socket");
    if (::bind(listener_.get(), reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
      return base::ErrnoError(errno, absl::StrFormat("binding Unix socket '%s'", path));
    }
    unix_ = true;
    if (::chmod(path.c_str(), kUnixSocketMode) != 0) return base::ErrnoError(errno, absl::StrCat("chmod ", path));
    address_ = absl::StrCat("unix:", path);
  } else {
    const std::string& listen = options_.listen;
    const size_t colon = listen.rfind(':');
    uint32_t port = 0;
    if (colon == std::string::npos || !absl::SimpleAtoi(listen.substr(colon + 1), &port) || port > 0xffff) {
      return absl::InvalidArgumentError(
          absl::StrFormat("listen address '%s' is not HOST:PORT (e.g. 127.0.0.1:%d)", listen, kDefaultPort));
    }
    std::string host = listen.substr(0, colon);
    if (host == "localhost") host = "127.0.0.1";
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<uint16_t>(port));
    if (::inet_pton(AF_INET, host.c_str(), &addr.sin_addr) != 1) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "listen host '%s' is not an IPv4 address (127.0.0.1, 0.0.0.0 or a local interface's address)", host));
    }
    remote_ = (ntohl(addr.sin_addr.s_addr) >> 24) != kLoopbackNet;
    if (remote_ && !options_.allow_remote) {
      return absl::PermissionDeniedError(absl::StrFormat(
          "%s is reachable from other machines, and whoever connects controls the GPU (its registers and its DMA "
          "into this machine's memory): serve on 127.0.0.1 or a Unix socket, or pass --allow-remote",
          listen));
    }
    listener_ = base::ScopedFd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
    if (!listener_.valid()) return base::ErrnoError(errno, "creating a TCP socket");
    const int one = 1;
    ::setsockopt(listener_.get(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    if (::bind(listener_.get(), reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
      return base::ErrnoError(errno, absl::StrFormat("binding %s", listen));
    }
    socklen_t len = sizeof(addr);
    ::getsockname(listener_.get(), reinterpret_cast<sockaddr*>(&addr), &len);
    address_ = absl::StrFormat("%s:%d", host, ntohs(addr.sin_port));
  }
  if (::listen(listener_.get(), kListenBacklog) != 0) return base::ErrnoError(errno, "listen");
  return absl::OkStatus();
}

namespace {
constexpr absl::string_view kCursorUpAndEraseLine = "\033[1A\033[2K";
}  // namespace

void Server::Log(const std::string& line) {
  base::MutexLock lock(&log_mu_);
  std::string text;
  for (size_t i = 0; i < status_lines_.size(); ++i) absl::StrAppend(&text, kCursorUpAndEraseLine);
  absl::StrAppend(&text, "serve: ", line, "\n");
  for (const std::string& s : status_lines_) absl::StrAppend(&text, s, "\n");
  log_stream_ << text << std::flush;
}

void Server::ShowStatus(std::vector<std::string> lines) {
  base::MutexLock lock(&log_mu_);
  std::string text;
  for (size_t i = 0; i < status_lines_.size(); ++i) absl::StrAppend(&text, kCursorUpAndEraseLine);
  for (const std::string& s : lines) absl::StrAppend(&text, s, "\n");
  status_lines_ = std::move(lines);
  log_stream_ << text << std::flush;
}

void Server::Stop() {
  const uint64_t one = 1;
  if (stop_event_.valid()) (void)!::write(stop_event_.get(), &one, sizeof(one));
}

void Server::ReapFinished() {
  std::vector<std::unique_ptr<Client>> finished;
  {
    base::MutexLock lock(&mu_);
    for (auto it = clients_.begin(); it != clients_.end();) {
      if ((*it)->finished.load(std::memory_order_acquire)) {
        finished.push_back(std::move(*it));
        it = clients_.erase(it);
      } else {
        ++it;
      }
    }
  }
  for (auto& c : finished) c->thread.join();
}

absl::Status Server::Run() {
  while (true) {
    pollfd fds[2] = {{listener_.get(), POLLIN, 0}, {stop_event_.get(), POLLIN, 0}};
    if (::poll(fds, 2, -1) < 0) {
      if (errno == EINTR) continue;
      return base::ErrnoError(errno, "waiting for clients");
    }
    ReapFinished();
    if (fds[1].revents != 0) break;
    if (fds[0].revents == 0) continue;
    sockaddr_storage peer{};
    socklen_t peer_len = sizeof(peer);
    base::ScopedFd socket(
        ::accept4(listener_.get(), reinterpret_cast<sockaddr*>(&peer), &peer_len, SOCK_CLOEXEC | SOCK_NONBLOCK));
    if (!socket.valid()) {
      if (errno == EINTR || errno == EAGAIN || errno == ECONNABORTED) continue;
      Log(absl::StrCat("accept failed: ", base::ErrnoName(errno)));
      continue;
    }
    std::string peer_name;
    if (unix_) {
      ucred cred{};
      socklen_t cred_len = sizeof(cred);
      peer_name = ::getsockopt(socket.get(), SOL_SOCKET, SO_PEERCRED, &cred, &cred_len) == 0
                      ? absl::StrFormat("pid %d", cred.pid)
                      : "unix";
    } else {
      const int one = 1;
      ::setsockopt(socket.get(), IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
      const auto* in = reinterpret_cast<const sockaddr_in*>(&peer);
      char text[INET_ADDRSTRLEN] = {};
      ::inet_ntop(AF_INET, &in->sin_addr, text, sizeof(text));
      peer_name = absl::StrFormat("%s:%d", text, ntohs(in->sin_port));
    }
    auto client = std::make_unique<Client>();
    client->session =
        std::make_unique<Session>(next_client_id_++, peer_name, std::move(socket), unix_, device_pointers_,
                                  stop_event_.get(), options_.limits, [this](const std::string& line) { Log(line); });
    Client* c = client.get();
    {
      base::MutexLock lock(&mu_);
      clients_.push_back(std::move(client));
    }
    c->thread = std::thread([this, c] {
      c->session->Run();
      LogDeviceDiagnostics();
      c->finished.store(true, std::memory_order_release);
    });
  }
  // Stopping: every session sees the stop event and ends; wait for them.
  std::vector<std::unique_ptr<Client>> all;
  {
    base::MutexLock lock(&mu_);
    all = std::move(clients_);
    clients_.clear();
  }
  for (auto& c : all) {
    if (c->thread.joinable()) c->thread.join();
  }
  return absl::OkStatus();
}

void Server::LogDeviceDiagnostics() {
  base::MutexLock lock(&diagnostics_mu_);
  for (ServedDevice* d : device_pointers_) {
    for (const std::string& line : d->device().TakeDiagnostics()) Log(absl::StrCat(d->name(), ": ", line));
  }
}

std::vector<ClientSnapshot> Server::Clients() const {
  std::vector<ClientSnapshot> out;
  base::MutexLock lock(&mu_);
  for (const auto& c : clients_) {
    if (c->finished.load(std::memory_order_acquire)) continue;
    const SessionCounters& k = c->session->counters();
    out.push_back(ClientSnapshot{c->session->id(), c->session->label(), c->session->claimed_devices(),
                                 k.requests.load(std::memory_order_relaxed), k.errors.load(std::memory_order_relaxed),
                                 k.bytes_received.load(std::memory_order_relaxed),
                                 k.bytes_sent.load(std::memory_order_relaxed)});
  }
  return out;
}

}  // namespace serve
