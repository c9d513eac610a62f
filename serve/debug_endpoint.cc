#include "serve/debug_endpoint.h"

#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/file.h"
#include "base/printable.h"
#include "base/private_dir.h"
#include "base/status_macros.h"
#include "serve/session.h"

namespace serve {
namespace {

// Clients queue here while another is served; a debugger connects for one command at a time.
constexpr int kListenBacklog = 4;
constexpr mode_t kSocketMode = 0600;  // only the user who drives the device may connect
// Longest device name in a socket path: PCI addresses are 12 characters, virtual names at most "sim:" and two 64-
// character parts (pci/virtual_registry.cc).
constexpr size_t kMaxNameBytes = 4 + 64 + 1 + 64;
constexpr absl::string_view kSuffix = ".debug";
// A debugger sends its next request at once; one that is silent this long is gone or stuck, and another may wait.
// Below AttachOptions::reply_timeout_ms (10 s), so a debugger queued behind a stuck one still gets its answer.
constexpr int kIdleTimeoutMs = 5'000;
// Once a request has started, the rest of it is already on the wire.
constexpr int kRequestTimeoutMs = 5'000;

bool ValidNameCharacter(char c) {
  return absl::ascii_isalnum(static_cast<unsigned char>(c)) || c == ':' || c == '.' || c == '_' || c == '-';
}

std::string DirectoryFix(const std::string& path) {
  return absl::StrFormat("remove it (rm -r %s) or set %s to a directory of your own (mode 0700)", path, kRuntimeDirEnv);
}

// The socket answers: a process serves it.
bool Answers(const sockaddr_un& address) {
  base::ScopedFd probe(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
  return probe.valid() && ::connect(probe.get(), reinterpret_cast<const sockaddr*>(&address), sizeof(address)) == 0;
}

}  // namespace

std::string RuntimeDirectory() {
  if (const char* dir = std::getenv(kRuntimeDirEnv); dir != nullptr && *dir != '\0') return dir;
  if (const char* runtime = std::getenv("XDG_RUNTIME_DIR"); runtime != nullptr && *runtime != '\0') {
    return absl::StrCat(runtime, "/baregpu");
  }
  return absl::StrCat("/dev/shm/baregpu-", ::geteuid());
}

absl::StatusOr<std::string> DebugEndpointPath(absl::string_view device_name) {
  bool valid = !device_name.empty() && device_name.size() <= kMaxNameBytes && device_name[0] != '.';
  for (char c : device_name) valid = valid && ValidNameCharacter(c);
  if (!valid) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s cannot name a debug endpoint: device names are letters, digits, ':', '.', '_' and '-' (at most %d), not "
        "starting with '.'",
        base::Printable(device_name), kMaxNameBytes));
  }
  std::string path = absl::StrCat(RuntimeDirectory(), "/", device_name, kSuffix);
  if (path.size() >= sizeof(sockaddr_un{}.sun_path)) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "the debug endpoint %s is %d bytes, longer than a Unix socket address takes (%d): set %s to a shorter "
        "directory",
        path, path.size(), sizeof(sockaddr_un{}.sun_path) - 1, kRuntimeDirEnv));
  }
  return path;
}

absl::StatusOr<bool> DebugEndpointWanted(const pci::Device& device, std::optional<bool> requested) {
  if (requested.has_value()) return *requested;
  if (const char* value = std::getenv(kDebugEndpointEnv); value != nullptr && *value != '\0') {
    const absl::string_view text(value);
    if (text == "1") return true;
    if (text == "0") return false;
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s=%s: it takes 1 (serve a debug endpoint) or 0 (none); unset it for the device's default (%s)",
        kDebugEndpointEnv, base::Printable(text), device.debug_endpoint_default() ? "on" : "off"));
  }
  return device.debug_endpoint_default();
}

absl::StatusOr<std::unique_ptr<DebugEndpoint>> DebugEndpoint::Start(
    pci::Device& device, std::function<absl::StatusOr<std::string>()> holder_status) {
  std::unique_ptr<DebugEndpoint> endpoint(new DebugEndpoint(device));
  endpoint->served_.set_holder_status(std::move(holder_status));
  BAREGPU_ASSIGN_OR_RETURN(endpoint->path_, DebugEndpointPath(device.name()));
  const std::string& path = endpoint->path_;
  const std::string dir = RuntimeDirectory();
  BAREGPU_ASSIGN_OR_RETURN(
      base::ScopedFd dir_fd,
      base::OpenPrivateDirectory(dir, /*create=*/true,
                                 {"the debug endpoint directory",
                                  "connect to your devices' debug endpoints or replace them", DirectoryFix(dir)}));

  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  std::memcpy(address.sun_path, path.c_str(), path.size());
  struct stat st;
  if (::lstat(path.c_str(), &st) == 0) {
    if (!S_ISSOCK(st.st_mode)) {
      return absl::AlreadyExistsError(absl::StrFormat(
          "%s: the debug endpoint path %s exists and is not a socket; remove it to serve one", device.name(), path));
    }
    // A socket nobody answers is what a killed holder leaves: replace it. One that answers is another process's
    // (the same device name in another BAREGPU_SIM_DIR, say): left alone.
    if (Answers(address)) {
      return absl::AlreadyExistsError(absl::StrFormat(
          "%s: another process serves the debug endpoint %s; set %s to a directory of your own for this one",
          device.name(), path, kRuntimeDirEnv));
    }
    ::unlink(path.c_str());
  }
  endpoint->listener_ = base::ScopedFd(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (!endpoint->listener_.valid()) return base::ErrnoError(errno, "creating a Unix socket for the debug endpoint");
  // The directory is private, so no other user can reach the socket in the moment between bind and chmod.
  if (::bind(endpoint->listener_.get(), reinterpret_cast<sockaddr*>(&address), sizeof(address)) != 0) {
    return base::ErrnoError(errno, absl::StrFormat("%s: binding the debug endpoint %s", device.name(), path));
  }
  if (::chmod(path.c_str(), kSocketMode) != 0 || ::lstat(path.c_str(), &st) != 0) {
    const int err = errno;
    ::unlink(path.c_str());
    return base::ErrnoError(err, absl::StrCat("chmod ", path));
  }
  endpoint->socket_device_ = st.st_dev;
  endpoint->socket_inode_ = st.st_ino;
  if (::listen(endpoint->listener_.get(), kListenBacklog) != 0) {
    const int err = errno;
    ::unlink(path.c_str());
    return base::ErrnoError(err, absl::StrCat("listen on ", path));
  }
  endpoint->stop_event_ = base::ScopedFd(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
  if (!endpoint->stop_event_.valid()) {
    ::unlink(path.c_str());
    return base::ErrnoError(errno, "eventfd for the debug endpoint");
  }
  DebugEndpoint* self = endpoint.get();
  endpoint->thread_ = std::thread([self] { self->Run(); });
  return endpoint;
}

DebugEndpoint::~DebugEndpoint() {
  // The file first, so no new client finds it; then the thread (a session in progress sees the stop event in its
  // poll and ends); the descriptors close last, after nothing uses them.
  struct stat st;
  if (!path_.empty() && ::lstat(path_.c_str(), &st) == 0 && st.st_dev == socket_device_ && st.st_ino == socket_inode_) {
    ::unlink(path_.c_str());
  }
  if (thread_.joinable()) {
    const uint64_t one = 1;
    (void)!::write(stop_event_.get(), &one, sizeof(one));
    thread_.join();
  }
}

void DebugEndpoint::Run() {
  const uid_t me = ::geteuid();
  uint64_t next_client = 1;
  while (true) {
    pollfd fds[2] = {{listener_.get(), POLLIN, 0}, {stop_event_.get(), POLLIN, 0}};
    if (::poll(fds, 2, -1) < 0) {
      if (errno == EINTR) continue;
      return;
    }
    if (fds[1].revents != 0) return;
    if (fds[0].revents == 0) continue;
    base::ScopedFd socket(::accept4(listener_.get(), nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK));
    if (!socket.valid()) continue;  // the client gave up (ECONNABORTED), or a signal: wait for the next one
    ucred cred{};
    socklen_t cred_len = sizeof(cred);
    // The socket's mode already keeps other users out; the credentials are checked too, so that a mode changed by
    // mistake (or a descriptor passed on) cannot let another user at the device.
    if (::getsockopt(socket.get(), SOL_SOCKET, SO_PEERCRED, &cred, &cred_len) != 0 || cred.uid != me) continue;
    ServedDevice* devices[] = {&served_};
    SessionLimits limits;
    limits.max_sysmem_bytes = 0;  // a debugger allocates nothing in the holder's name
    limits.allow_reset = false;
    limits.idle_timeout_ms = kIdleTimeoutMs;
    limits.request_timeout_ms = kRequestTimeoutMs;
    Session session(next_client++, absl::StrFormat("pid %d", cred.pid), std::move(socket), /*unix_socket=*/true,
                    devices, stop_event_.get(), limits, [](const std::string&) {});
    session.Run();
  }
}

}  // namespace serve
