#include "serve/attached_device.h"

#include <linux/pci_regs.h>
#include <poll.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/file.h"
#include "base/private_dir.h"
#include "base/status_macros.h"

namespace serve {
namespace {

// The endpoint serves one device, index 0 (serve/debug_endpoint.cc).
constexpr uint32_t kDeviceIndex = 0;
// An error text longer than this is not a status line (the server cuts its own at 4096, serve/session.cc).
constexpr uint64_t kMaxErrorText = 64 * 1024;
// A holder's status document (AmdDevice::HolderStatus) is a few KiB; anything this long is a broken stream.
constexpr uint64_t kMaxHolderStatus = 1024 * 1024;
constexpr mode_t kForeignAccess = S_IRWXG | S_IRWXO;

Request MakeRequest(Command command, uint32_t bar = 0, uint64_t a0 = 0, uint64_t a1 = 0, uint64_t a2 = 0) {
  Request r;
  r.command = static_cast<uint8_t>(command);
  r.device = kDeviceIndex;
  r.bar = bar;
  r.args = {a0, a1, a2};
  return r;
}

std::string EndpointFix(const std::string& path) {
  return absl::StrFormat("remove %s (the holder makes a new one when it opens the device again)", path);
}

}  // namespace

// A register BAR of the holder's device: every access is one MMIO_READ or MMIO_WRITE.
class AttachedDevice::RegisterWindow final : public pci::MmioHandler {
 public:
  RegisterWindow(AttachedDevice& device, int bar) : device_(device), bar_(bar) {}
  uint32_t Read32(uint64_t offset) override {
    uint64_t value = pci::Mmio::kUnclaimedRead;
    device_.ReadRegister(bar_, offset, 4, &value);
    return static_cast<uint32_t>(value);
  }
  void Write32(uint64_t offset, uint32_t value) override { device_.WriteRegister(bar_, offset, 4, value); }
  uint64_t Read64(uint64_t offset) override {
    uint64_t value = ~uint64_t{0};
    device_.ReadRegister(bar_, offset, 8, &value);
    return value;
  }
  void Write64(uint64_t offset, uint64_t value) override { device_.WriteRegister(bar_, offset, 8, value); }

 private:
  AttachedDevice& device_;
  const int bar_;
};

absl::StatusOr<std::unique_ptr<AttachedDevice>> AttachedDevice::Connect(const std::string& name,
                                                                        const std::string& socket_path,
                                                                        const AttachOptions& options) {
  // The directory and the socket must be ours and private: a socket another user planted would hand our commands
  // (and our writes) to their process, which could answer anything.
  const size_t slash = socket_path.rfind('/');
  const std::string dir = slash == std::string::npos ? "." : socket_path.substr(0, slash);
  BAREGPU_RETURN_IF_ERROR(base::OpenPrivateDirectory(dir, /*create=*/false,
                                                     {"the debug endpoint directory",
                                                      "replace the endpoint with one of their own", EndpointFix(dir)})
                              .status());
  struct stat st;
  if (::lstat(socket_path.c_str(), &st) != 0) {
    return base::ErrnoError(errno, absl::StrFormat("%s: debug endpoint %s", name, socket_path));
  }
  if (!S_ISSOCK(st.st_mode)) {
    return absl::PermissionDeniedError(
        absl::StrFormat("%s: debug endpoint %s is not a socket; %s", name, socket_path, EndpointFix(socket_path)));
  }
  BAREGPU_RETURN_IF_ERROR(base::CheckOwnerAndMode(
      st, socket_path, kForeignAccess,
      {"the debug endpoint", "answer in the place of the device's holder", EndpointFix(socket_path)}));

  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  if (socket_path.size() >= sizeof(address.sun_path)) {
    return absl::InvalidArgumentError(absl::StrFormat("debug endpoint path %s is too long for a Unix socket (%d bytes)",
                                                      socket_path, sizeof(address.sun_path) - 1));
  }
  std::memcpy(address.sun_path, socket_path.c_str(), socket_path.size());
  base::ScopedFd socket(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (!socket.valid()) return base::ErrnoError(errno, "creating a Unix socket");
  if (::connect(socket.get(), reinterpret_cast<sockaddr*>(&address), sizeof(address)) != 0) {
    if (errno == ECONNREFUSED) {
      return absl::UnavailableError(absl::StrFormat(
          "%s: nobody answers at the debug endpoint %s: the process that made it has ended (the file is stale); "
          "%s",
          name, socket_path, EndpointFix(socket_path)));
    }
    return base::ErrnoError(errno, absl::StrFormat("%s: connecting to the debug endpoint %s", name, socket_path));
  }
  ucred cred{};
  socklen_t cred_len = sizeof(cred);
  if (::getsockopt(socket.get(), SOL_SOCKET, SO_PEERCRED, &cred, &cred_len) != 0) {
    return base::ErrnoError(errno, "SO_PEERCRED on the debug endpoint");
  }
  if (cred.uid != ::geteuid()) {
    return absl::PermissionDeniedError(absl::StrFormat(
        "%s: the debug endpoint %s is served by process %d of %s, not by you (%s); %s", name, socket_path, cred.pid,
        base::UserName(cred.uid), base::UserName(::geteuid()), EndpointFix(socket_path)));
  }
  std::unique_ptr<AttachedDevice> device(new AttachedDevice(name, std::move(socket), cred.pid, options));
  // One round trip before anything else: the holder serves the protocol (and this is no other kind of socket).
  {
    base::MutexLock lock(&device->mu_);
    absl::StatusOr<Call> ping = device->Rpc(MakeRequest(Command::kPing), {}, {});
    if (!ping.ok()) {
      return absl::Status(ping.status().code(),
                          absl::StrFormat("%s: the debug endpoint %s (process %d) does not answer PING: %s", name,
                                          socket_path, cred.pid, ping.status().message()));
    }
  }
  return device;
}

AttachedDevice::AttachedDevice(std::string name, base::ScopedFd socket, pid_t holder, const AttachOptions& options)
    : Device(std::move(name)), socket_(std::move(socket)), holder_pid_(holder), options_(options) {}

AttachedDevice::~AttachedDevice() {
  for (std::span<uint8_t> m : mappings_) {
    if (!m.empty()) ::munmap(m.data(), m.size());
  }
}

absl::Status AttachedDevice::TakeAccessError() {
  base::MutexLock lock(&error_mu_);
  return std::exchange(access_error_, absl::OkStatus());
}

void AttachedDevice::RecordAccessError(absl::Status error) {
  base::MutexLock lock(&error_mu_);
  if (access_error_.ok()) access_error_ = std::move(error);
}

absl::Status AttachedDevice::Send(std::span<const uint8_t> data) {
  size_t done = 0;
  while (done < data.size()) {
    pollfd fd{socket_.get(), POLLOUT, 0};
    const int ready = ::poll(&fd, 1, options_.reply_timeout_ms);
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0) return absl::DeadlineExceededError("the holder stopped taking requests");
    const ssize_t n = ::send(socket_.get(), data.data() + done, data.size() - done, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n < 0) {
      if (errno == EINTR || errno == EAGAIN) continue;
      return base::ErrnoError(errno, "sending a request to the holder");
    }
    done += static_cast<size_t>(n);
  }
  return absl::OkStatus();
}

absl::Status AttachedDevice::Receive(std::span<uint8_t> data, base::ScopedFd* fd) {
  size_t done = 0;
  while (done < data.size()) {
    pollfd p{socket_.get(), POLLIN, 0};
    const int ready = ::poll(&p, 1, options_.reply_timeout_ms);
    if (ready < 0 && errno == EINTR) continue;
    if (ready == 0) {
      return absl::DeadlineExceededError(
          absl::StrFormat("the holder (process %d) sent no reply for %d ms", holder_pid_, options_.reply_timeout_ms));
    }
    if (ready < 0) return base::ErrnoError(errno, "waiting for the holder's reply");
    iovec iov{data.data() + done, data.size() - done};
    alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
    msghdr msg{};
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    if (fd != nullptr) {
      msg.msg_control = control;
      msg.msg_controllen = sizeof(control);
    }
    const ssize_t n = ::recvmsg(socket_.get(), &msg, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
    if (n < 0) {
      if (errno == EINTR || errno == EAGAIN) continue;
      return base::ErrnoError(errno, "reading the holder's reply");
    }
    if (n == 0) {
      return absl::UnavailableError(
          absl::StrFormat("the holder (process %d) closed the debug connection (it closed the device?)", holder_pid_));
    }
    if (fd != nullptr) {
      for (cmsghdr* c = CMSG_FIRSTHDR(&msg); c != nullptr; c = CMSG_NXTHDR(&msg, c)) {
        if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS && c->cmsg_len == CMSG_LEN(sizeof(int))) {
          int received;
          std::memcpy(&received, CMSG_DATA(c), sizeof(int));
          fd->Reset(received);
        }
      }
    }
    done += static_cast<size_t>(n);
  }
  return absl::OkStatus();
}

absl::StatusOr<AttachedDevice::Call> AttachedDevice::Rpc(const Request& request, std::span<const uint8_t> payload,
                                                         std::span<uint8_t> readout, bool expect_fd) {
  if (!socket_.valid()) {
    return absl::UnavailableError(
        absl::StrFormat("%s: the connection to the holder (process %d) broke earlier", name(), holder_pid_));
  }
  // A failure in the middle leaves the stream unframed: the connection is dropped, later calls fail at once.
  auto broken = [&](absl::Status s) {
    socket_.Reset();
    return s;
  };
  const std::array<uint8_t, kRequestHeaderSize> header = request.Encode();
  if (absl::Status s = Send(header); !s.ok()) return broken(s);
  if (absl::Status s = Send(payload); !s.ok()) return broken(s);
  Call call;
  if (IsPostedWrite(static_cast<Command>(request.command))) return call;
  std::array<uint8_t, kReplyHeaderSize> reply_bytes;
  if (absl::Status s = Receive(reply_bytes, expect_fd ? &call.fd : nullptr); !s.ok()) return broken(s);
  call.reply = Reply::Decode(reply_bytes);
  if (call.reply.status != ReplyStatus::kOk) {
    if (call.reply.value0 > kMaxErrorText) {
      return broken(absl::DataLossError(absl::StrFormat(
          "the holder's error reply claims %d bytes of text; the connection is out of step", call.reply.value0)));
    }
    std::string text(call.reply.value0, '\0');
    if (absl::Status s = Receive(std::span<uint8_t>(reinterpret_cast<uint8_t*>(text.data()), text.size()), nullptr);
        !s.ok()) {
      return broken(s);
    }
    return absl::FailedPreconditionError(absl::StrFormat("%s (process %d): %s", name(), holder_pid_, text));
  }
  if (absl::Status s = Receive(readout, nullptr); !s.ok()) return broken(s);
  return call;
}

absl::Status AttachedDevice::RefuseWrite(absl::string_view what) const {
  return absl::PermissionDeniedError(absl::StrFormat(
      "%s is attached read-only (process %d holds it): %s refused; attach writable (baregpu: --force) to change "
      "the device under its holder",
      name(), holder_pid_, what));
}

absl::Status AttachedDevice::ReadConfig(uint32_t offset, std::span<uint8_t> data) {
  base::MutexLock lock(&mu_);
  for (size_t done = 0; done < data.size();) {
    const uint32_t at = offset + static_cast<uint32_t>(done);
    const size_t left = data.size() - done;
    // The widest naturally aligned access that fits: the server takes sizes 1, 2 and 4.
    const uint64_t size = (at % 4 == 0 && left >= 4) ? 4 : (at % 2 == 0 && left >= 2) ? 2 : 1;
    BAREGPU_ASSIGN_OR_RETURN(Call call, Rpc(MakeRequest(Command::kCfgRead, 0, at, size), {}, {}));
    for (uint64_t i = 0; i < size; ++i) data[done + i] = static_cast<uint8_t>(call.reply.value0 >> (8 * i));
    done += size;
  }
  return absl::OkStatus();
}

absl::Status AttachedDevice::WriteConfig(uint32_t offset, std::span<const uint8_t> data) {
  if (!options_.writable) {
    return RefuseWrite(absl::StrFormat("a configuration write of %d bytes at %#x", data.size(), offset));
  }
  base::MutexLock lock(&mu_);
  for (size_t done = 0; done < data.size();) {
    const uint32_t at = offset + static_cast<uint32_t>(done);
    const size_t left = data.size() - done;
    const uint64_t size = (at % 4 == 0 && left >= 4) ? 4 : (at % 2 == 0 && left >= 2) ? 2 : 1;
    uint64_t value = 0;
    for (uint64_t i = 0; i < size; ++i) value |= uint64_t{data[done + i]} << (8 * i);
    BAREGPU_RETURN_IF_ERROR(Rpc(MakeRequest(Command::kCfgWrite, 0, at, size, value), {}, {}).status());
    done += size;
  }
  return absl::OkStatus();
}

absl::StatusOr<pci::BarInfo> AttachedDevice::GetBarInfo(int bar) {
  if (bar < 0 || bar >= pci::kBarCount) {
    return absl::InvalidArgumentError(absl::StrFormat("%s: BAR %d does not exist (0..5)", name(), bar));
  }
  if (bars_[bar].has_value()) return *bars_[bar];
  pci::BarInfo info;
  info.index = bar;
  absl::StatusOr<Call> mapped;
  {
    base::MutexLock lock(&mu_);
    mapped = Rpc(MakeRequest(Command::kMapBar, static_cast<uint32_t>(bar)), {}, {});
  }
  if (mapped.ok()) {
    // The flags are the BAR register's low bits (PCI_BASE_ADDRESS_* in linux/pci_regs.h).
    BAREGPU_ASSIGN_OR_RETURN(uint32_t reg, ReadConfig32(PCI_BASE_ADDRESS_0 + 4 * static_cast<uint32_t>(bar)));
    info.size = mapped->reply.value1;
    info.is_io = (reg & PCI_BASE_ADDRESS_SPACE) == PCI_BASE_ADDRESS_SPACE_IO;
    info.is_64bit = !info.is_io && (reg & PCI_BASE_ADDRESS_MEM_TYPE_MASK) == PCI_BASE_ADDRESS_MEM_TYPE_64;
    info.prefetchable = !info.is_io && (reg & PCI_BASE_ADDRESS_MEM_PREFETCH) != 0;
  } else if (!socket_.valid()) {
    return mapped.status();  // the connection broke, not the BAR: say so
  }
  // An error reply means the holder has no such BAR (not implemented, or I/O): size 0.
  bars_[bar] = info;
  return info;
}

absl::StatusOr<pci::Mmio> AttachedDevice::MapMmio(int bar) {
  BAREGPU_ASSIGN_OR_RETURN(pci::BarInfo info, GetBarInfo(bar));
  if (!info.present()) return absl::NotFoundError(absl::StrFormat("%s: BAR %d is not implemented", name(), bar));
  if (windows_[bar] == nullptr) windows_[bar] = std::make_unique<RegisterWindow>(*this, bar);
  return pci::Mmio::Trapped(windows_[bar].get(), info.size);
}

absl::StatusOr<std::span<uint8_t>> AttachedDevice::MapMemory(int bar) {
  BAREGPU_ASSIGN_OR_RETURN(pci::BarInfo info, GetBarInfo(bar));
  if (!info.present()) return absl::NotFoundError(absl::StrFormat("%s: BAR %d is not implemented", name(), bar));
  if (!mappings_[bar].empty()) return mappings_[bar];
  Call call;
  {
    base::MutexLock lock(&mu_);
    BAREGPU_ASSIGN_OR_RETURN(call, Rpc(MakeRequest(Command::kMapBarFd, static_cast<uint32_t>(bar)), {}, {},
                                       /*expect_fd=*/true));
  }
  const uint64_t offset = call.reply.value0, size = call.reply.value1;
  if (!call.fd.valid() || size == 0 || offset % pci::kPageSize != 0) {
    return absl::DataLossError(
        absl::StrFormat("%s: the holder's MAP_BAR_FD reply for BAR %d (offset %#x, %d bytes, %s) cannot be mapped",
                        name(), bar, offset, size, call.fd.valid() ? "a descriptor" : "no descriptor"));
  }
  struct stat st;
  if (::fstat(call.fd.get(), &st) != 0) return base::ErrnoError(errno, "fstat of the holder's BAR descriptor");
  // A regular file (the virtual GPU's VRAM) must hold the range, or touching its end would raise SIGBUS.
  if (S_ISREG(st.st_mode) && (offset > static_cast<uint64_t>(st.st_size) || size > st.st_size - offset)) {
    return absl::DataLossError(absl::StrFormat("%s: the holder shares BAR %d as %d bytes at %#x of a %d-byte file",
                                               name(), bar, size, offset, st.st_size));
  }
  const int protection = PROT_READ | (options_.writable ? PROT_WRITE : 0);
  void* data = ::mmap(nullptr, size, protection, MAP_SHARED, call.fd.get(), static_cast<off_t>(offset));
  if (data == MAP_FAILED)
    return base::ErrnoError(errno, absl::StrFormat("%s: mapping the holder's BAR %d", name(), bar));
  mappings_[bar] = std::span<uint8_t>(static_cast<uint8_t*>(data), size);
  return mappings_[bar];
}

absl::StatusOr<std::unique_ptr<pci::DmaBuffer>> AttachedDevice::AllocDma(size_t size, const pci::DmaOptions&) {
  return absl::FailedPreconditionError(absl::StrFormat(
      "%s is attached to process %d, which holds it: DMA memory (%d bytes) can only be allocated by the holder", name(),
      holder_pid_, size));
}

absl::Status AttachedDevice::ReadDmaMemory(uint64_t address, std::span<uint8_t> out) {
  base::MutexLock lock(&mu_);
  return Rpc(MakeRequest(Command::kDmaRead, 0, address, out.size()), {}, out).status();
}

absl::Status AttachedDevice::RunRegisterSequence(int bar, std::span<const pci::RegisterStep> steps,
                                                 std::span<uint32_t> out) {
  // Read-only attachments may run sequences: the holder lets them write only the selection registers its driver
  // declared and puts each back, so the device is left as it was (serve/protocol.h, REGISTER_SEQUENCE).
  BAREGPU_ASSIGN_OR_RETURN(pci::BarInfo info, GetBarInfo(bar));
  BAREGPU_ASSIGN_OR_RETURN(const size_t reads, pci::CheckRegisterSequence(steps, info.size));
  if (out.size() != reads) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s: a register sequence reading %d dwords given room for %d", name(), reads, out.size()));
  }
  const std::vector<uint8_t> payload = EncodeRegisterSteps(steps);
  base::MutexLock lock(&mu_);
  BAREGPU_ASSIGN_OR_RETURN(
      Call call, Rpc(MakeRequest(Command::kRegisterSequence, static_cast<uint32_t>(bar), steps.size()), payload, {}));
  if (call.reply.value0 != reads) {
    socket_.Reset();
    return absl::DataLossError(absl::StrFormat(
        "%s: the holder answered a register sequence of %d reads with %d dwords; the connection is out of step", name(),
        reads, call.reply.value0));
  }
  return ReceiveReplyData(std::span<uint8_t>(reinterpret_cast<uint8_t*>(out.data()), out.size_bytes()));
}

absl::StatusOr<std::string> AttachedDevice::HolderStatus() {
  base::MutexLock lock(&mu_);
  BAREGPU_ASSIGN_OR_RETURN(Call call, Rpc(MakeRequest(Command::kHolderStatus, 0), {}, {}));
  if (call.reply.value0 > kMaxHolderStatus) {
    socket_.Reset();
    return absl::DataLossError(
        absl::StrFormat("%s: the holder's status claims %d bytes (at most %d); the connection is out of step", name(),
                        call.reply.value0, kMaxHolderStatus));
  }
  std::string text(call.reply.value0, '\0');
  BAREGPU_RETURN_IF_ERROR(ReceiveReplyData(std::span<uint8_t>(reinterpret_cast<uint8_t*>(text.data()), text.size())));
  return text;
}

absl::Status AttachedDevice::ReceiveReplyData(std::span<uint8_t> data) {
  // A reply cut short leaves the stream unframed: the connection is dropped, as Rpc drops it.
  absl::Status received = Receive(data, nullptr);
  if (!received.ok()) socket_.Reset();
  return received;
}

absl::Status AttachedDevice::ResetFunction() {
  return absl::FailedPreconditionError(absl::StrFormat(
      "%s is attached to process %d, which holds it: only the holder may reset it", name(), holder_pid_));
}

absl::StatusOr<std::vector<int>> AttachedDevice::EnableInterrupts(int count) {
  return absl::FailedPreconditionError(
      absl::StrFormat("%s is attached to process %d, which holds it: its %d interrupt vectors are the holder's", name(),
                      holder_pid_, count));
}

void AttachedDevice::ReadRegister(int bar, uint64_t offset, int bytes, uint64_t* value) {
  std::array<uint8_t, sizeof(uint64_t)> data{};
  absl::StatusOr<Call> call;
  {
    base::MutexLock lock(&mu_);
    call = Rpc(MakeRequest(Command::kMmioRead, static_cast<uint32_t>(bar), offset, static_cast<uint64_t>(bytes)), {},
               std::span<uint8_t>(data.data(), static_cast<size_t>(bytes)));
  }
  if (!call.ok()) {
    RecordAccessError(call.status());
    return;
  }
  uint64_t v = 0;
  std::memcpy(&v, data.data(), sizeof(v));
  *value = v;
}

void AttachedDevice::WriteRegister(int bar, uint64_t offset, int bytes, uint64_t value) {
  if (!options_.writable) {
    RecordAccessError(
        RefuseWrite(absl::StrFormat("a %d-bit write of %#x to BAR %d offset %#x", 8 * bytes, value, bar, offset)));
    return;
  }
  std::array<uint8_t, sizeof(uint64_t)> data;
  std::memcpy(data.data(), &value, sizeof(value));
  absl::Status s;
  {
    base::MutexLock lock(&mu_);
    s = Rpc(MakeRequest(Command::kMmioWrite, static_cast<uint32_t>(bar), offset, static_cast<uint64_t>(bytes)),
            std::span<const uint8_t>(data.data(), static_cast<size_t>(bytes)), {})
            .status();
  }
  if (!s.ok()) RecordAccessError(s);
}

}  // namespace serve
