#include "serve/session.h"

#include <poll.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "base/bits.h"
#include "base/file.h"
#include "base/status_macros.h"

namespace serve {
namespace {

// Bulk transfers move through one buffer of this size: a client's request size never sizes an allocation.
constexpr size_t kChunkBytes = size_t{1} << 20;
// PROBE's payload is (mask, device id) pairs of uint32; tinygrad sends one pair per device id it knows.
constexpr uint64_t kMaxProbePayload = 64 * 1024;
// A reply's error text is cut here: a status message is a line, not a document.
constexpr size_t kMaxErrorText = 4096;

}  // namespace

Session::Session(uint64_t id, std::string peer, base::ScopedFd socket, bool unix_socket,
                 std::span<ServedDevice* const> devices, int stop_fd, SessionLimits limits,
                 std::function<void(const std::string&)> log)
    : id_(id),
      peer_(std::move(peer)),
      label_(absl::StrFormat("client #%d (%s)", id, peer_)),
      socket_(std::move(socket)),
      unix_socket_(unix_socket),
      devices_(devices.begin(), devices.end()),
      claimed_(devices.size(), false),
      stop_fd_(stop_fd),
      limits_(limits),
      log_(std::move(log)),
      chunk_(kChunkBytes) {}

Session::~Session() {
  for (size_t i = 0; i < devices_.size(); ++i) {
    if (claimed_[i]) devices_[i]->Release(id_);
  }
}

std::string Session::claimed_devices() const {
  base::MutexLock lock(&claimed_names_mu_);
  return claimed_names_;
}

Session::ReadResult Session::ReadExact(std::span<uint8_t> buffer, bool first_byte_may_wait) {
  size_t done = 0;
  while (done < buffer.size()) {
    pollfd fds[2] = {{socket_.get(), POLLIN, 0}, {stop_fd_, POLLIN, 0}};
    const int timeout = (done == 0 && first_byte_may_wait) ? limits_.idle_timeout_ms : limits_.request_timeout_ms;
    const int ready = ::poll(fds, 2, timeout);
    if (ready < 0) {
      if (errno == EINTR) continue;
      return ReadResult::kFailed;
    }
    if (ready == 0) return (done == 0 && first_byte_may_wait) ? ReadResult::kIdle : ReadResult::kTimedOut;
    if (fds[1].revents != 0) return ReadResult::kStopped;
    const ssize_t n = ::recv(socket_.get(), buffer.data() + done, buffer.size() - done, 0);
    if (n == 0) return ReadResult::kClosed;
    if (n < 0) {
      if (errno == EINTR || errno == EAGAIN) continue;
      return errno == ECONNRESET ? ReadResult::kClosed : ReadResult::kFailed;
    }
    done += static_cast<size_t>(n);
    counters_.bytes_received.fetch_add(static_cast<uint64_t>(n), std::memory_order_relaxed);
  }
  return ReadResult::kOk;
}

absl::Status Session::SendAll(std::span<const uint8_t> data) {
  size_t done = 0;
  while (done < data.size()) {
    const ssize_t n = ::send(socket_.get(), data.data() + done, data.size() - done, MSG_NOSIGNAL);
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN) {
        pollfd fds[2] = {{socket_.get(), POLLOUT, 0}, {stop_fd_, POLLIN, 0}};
        const int ready = ::poll(fds, 2, limits_.request_timeout_ms);
        if (ready == 0) return absl::DeadlineExceededError("the client stopped reading its replies");
        if (ready > 0 && fds[1].revents != 0) return absl::CancelledError("the server is stopping");
        continue;
      }
      return base::ErrnoError(errno, "sending a reply");
    }
    done += static_cast<size_t>(n);
    counters_.bytes_sent.fetch_add(static_cast<uint64_t>(n), std::memory_order_relaxed);
  }
  return absl::OkStatus();
}

absl::Status Session::SendReply(const Reply& reply, std::span<const uint8_t> data, int fd) {
  const std::array<uint8_t, kReplyHeaderSize> header = reply.Encode();
  if (fd >= 0) {
    // The descriptor travels with the reply header, as the client's recvmsg(17, CMSG_LEN(4)) expects.
    iovec iov{const_cast<uint8_t*>(header.data()), header.size()};
    alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
    msghdr msg{};
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control;
    msg.msg_controllen = sizeof(control);
    cmsghdr* cmsg = CMSG_FIRSTHDR(&msg);
    cmsg->cmsg_level = SOL_SOCKET;
    cmsg->cmsg_type = SCM_RIGHTS;
    cmsg->cmsg_len = CMSG_LEN(sizeof(int));
    std::memcpy(CMSG_DATA(cmsg), &fd, sizeof(int));
    ssize_t n;
    do {
      n = ::sendmsg(socket_.get(), &msg, MSG_NOSIGNAL);
    } while (n < 0 && errno == EINTR);
    if (n < 0) return base::ErrnoError(errno, "sending a reply with a file descriptor");
    counters_.bytes_sent.fetch_add(static_cast<uint64_t>(n), std::memory_order_relaxed);
    if (static_cast<size_t>(n) < header.size()) {
      BAREGPU_RETURN_IF_ERROR(SendAll(std::span<const uint8_t>(header).subspan(static_cast<size_t>(n))));
    }
  } else {
    BAREGPU_RETURN_IF_ERROR(SendAll(header));
  }
  return SendAll(data);
}

absl::Status Session::SendError(const absl::Status& error) {
  counters_.errors.fetch_add(1, std::memory_order_relaxed);
  std::string text(error.message());
  if (text.size() > kMaxErrorText) text.resize(kMaxErrorText);
  return SendReply(Reply{ReplyStatus::kError, text.size(), 0},
                   std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(text.data()), text.size()));
}

absl::StatusOr<ServedDevice*> Session::Device(const Request& request) {
  if (request.device >= devices_.size()) {
    return absl::NotFoundError(absl::StrFormat("device %d does not exist: this server serves %d (PROBE lists them)",
                                               request.device, devices_.size()));
  }
  ServedDevice* device = devices_[request.device];
  if (!claimed_[request.device]) {
    BAREGPU_RETURN_IF_ERROR(device->Claim(id_, label_));
    claimed_[request.device] = true;
    std::vector<std::string> names;
    for (size_t i = 0; i < devices_.size(); ++i) {
      if (claimed_[i]) names.push_back(devices_[i]->name());
    }
    base::MutexLock lock(&claimed_names_mu_);
    claimed_names_ = absl::StrJoin(names, ",");
    log_(absl::StrFormat("%s: drives %s", label_, device->name()));
  }
  return device;
}

absl::Status Session::DiscardPayload(uint64_t size) {
  while (size > 0) {
    const size_t n = static_cast<size_t>(std::min<uint64_t>(size, chunk_.size()));
    if (ReadExact(std::span<uint8_t>(chunk_.data(), n), false) != ReadResult::kOk) {
      return absl::DataLossError(absl::StrFormat("the connection ended inside a payload (%d bytes missing)", size));
    }
    size -= n;
  }
  return absl::OkStatus();
}

absl::Status Session::Probe(const Request& request) {
  const uint64_t base_class = request.args[0];
  const uint64_t payload_size = request.args[1];
  const uint64_t vendor = request.args[2];
  if (payload_size > kMaxProbePayload || payload_size % 8 != 0) {
    BAREGPU_RETURN_IF_ERROR(DiscardPayload(payload_size));
    return SendError(absl::InvalidArgumentError(
        absl::StrFormat("PROBE payload of %d bytes: it must be (mask, device id) uint32 pairs, at most %d bytes",
                        payload_size, kMaxProbePayload)));
  }
  std::vector<uint8_t> payload(payload_size);
  if (ReadExact(payload, false) != ReadResult::kOk) {
    return absl::DataLossError("the connection ended inside a PROBE payload");
  }
  std::vector<DeviceIdFilter> filters(payload_size / 8);
  for (size_t i = 0; i < filters.size(); ++i) {
    std::memcpy(&filters[i].mask, &payload[8 * i], 4);
    std::memcpy(&filters[i].device_id, &payload[8 * i + 4], 4);
  }
  if (vendor > 0xffff || base_class > 0xff) {
    return SendError(absl::InvalidArgumentError(absl::StrFormat(
        "PROBE for vendor %#x, base class %#x: a PCI vendor is 16 bits, a base class 8", vendor, base_class)));
  }
  std::vector<std::string> matches;
  for (size_t i = 0; i < devices_.size(); ++i) {
    absl::StatusOr<bool> m =
        devices_[i]->Matches(static_cast<uint16_t>(vendor), static_cast<uint8_t>(base_class), filters);
    if (!m.ok()) return SendError(m.status());
    // tinygrad takes the device index from the text after the last ':' of each line.
    if (*m) matches.push_back(absl::StrCat(i));
  }
  const std::string list = absl::StrJoin(matches, "\n");
  return SendReply(Reply{ReplyStatus::kOk, list.size(), 0},
                   std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(list.data()), list.size()));
}

absl::StatusOr<pci::DmaBuffer*> Session::Sysmem(const Request& request) {
  const uint32_t handle = request.bar;
  const uint64_t offset = request.args[0], size = request.args[1];
  if (handle >= sysmem_.size()) {
    return absl::NotFoundError(absl::StrFormat(
        "system memory handle %d does not exist: this client allocated %d (MAP_SYSMEM returns the handle)", handle,
        sysmem_.size()));
  }
  pci::DmaBuffer* buffer = sysmem_[handle].get();
  if (offset > buffer->size() || size > buffer->size() - offset) {
    return absl::OutOfRangeError(absl::StrFormat("%s of %d bytes at %#x is outside system memory %d (%#x bytes)",
                                                 *CommandName(request.command), size, offset, handle, buffer->size()));
  }
  return buffer;
}

absl::Status Session::MapSysmem(const Request& request, bool as_fd) {
  const uint64_t size = request.args[0];
  const bool contiguous = request.args[1] != 0;
  auto device = Device(request);
  if (!device.ok()) return SendError(device.status());
  if (as_fd && !unix_socket_) {
    return SendError(absl::FailedPreconditionError(
        "MAP_SYSMEM_FD passes a memfd, which only a Unix socket can carry: serve with --unix PATH, or use "
        "MAP_SYSMEM"));
  }
  if (size == 0 || size > limits_.max_sysmem_bytes - sysmem_bytes_) {
    return SendError(absl::ResourceExhaustedError(absl::StrFormat(
        "system memory of %d bytes requested; this client holds %d of its %d bytes (the protocol frees nothing "
        "before the client disconnects)",
        size, sysmem_bytes_, limits_.max_sysmem_bytes)));
  }
  auto buffer = (*device)->device().AllocDma(size, pci::DmaOptions{.shareable = as_fd});
  if (!buffer.ok()) return SendError(buffer.status());
  if (contiguous && !(*buffer)->contiguous()) {
    return SendError(absl::ResourceExhaustedError(
        absl::StrFormat("%s: no device-contiguous system memory of %d bytes", (*device)->name(), size)));
  }
  pci::DmaBuffer* b = buffer->get();
  sysmem_bytes_ += b->size();
  const uint32_t handle = static_cast<uint32_t>(sysmem_.size());
  sysmem_.push_back(std::move(*buffer));
  if (as_fd) {
    // The pages' device addresses as (address, size) runs, ending with (0, 0), at the start of the memory itself.
    std::vector<uint64_t> runs;
    for (uint64_t page : b->page_addresses()) {
      if (!runs.empty() && runs[runs.size() - 2] + runs.back() == page) {
        runs.back() += pci::kPageSize;
      } else {
        runs.push_back(page);
        runs.push_back(pci::kPageSize);
      }
    }
    runs.push_back(0);
    runs.push_back(0);
    std::memcpy(b->cpu(), runs.data(), runs.size() * sizeof(uint64_t));
    return SendReply(Reply{ReplyStatus::kOk, b->size(), handle}, {}, b->shareable_fd());
  }
  std::vector<uint64_t> pages(b->page_addresses().begin(), b->page_addresses().end());
  pages.resize(base::AlignUp(size, pci::kPageSize) / pci::kPageSize);  // the pages asked for, not the rounding
  return SendReply(
      Reply{ReplyStatus::kOk, pages.size() * sizeof(uint64_t), handle},
      std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(pages.data()), pages.size() * sizeof(uint64_t)));
}

absl::Status Session::BulkRead(const Request& request) {
  const bool sysmem = static_cast<Command>(request.command) == Command::kSysmemRead;
  const uint64_t offset = request.args[0];
  const uint64_t size = request.args[1];
  auto device = Device(request);
  if (!device.ok()) return SendError(device.status());
  pci::DmaBuffer* buffer = nullptr;
  if (sysmem) {
    auto b = Sysmem(request);
    if (!b.ok()) return SendError(b.status());
    buffer = *b;
  } else if (absl::Status s = (*device)->CheckBarAccess(request.bar, offset, size); !s.ok()) {
    return SendError(s);
  }
  BAREGPU_RETURN_IF_ERROR(SendReply(Reply{ReplyStatus::kOk, 0, 0}));
  for (uint64_t done = 0; done < size;) {
    const size_t n = static_cast<size_t>(std::min<uint64_t>(size - done, chunk_.size()));
    std::span<uint8_t> chunk(chunk_.data(), n);
    if (sysmem) {
      std::memcpy(chunk.data(), buffer->cpu() + offset + done, n);
    } else if (absl::Status s = (*device)->ReadBar(request.bar, offset + done, chunk); !s.ok()) {
      return s;  // checked above, so the connection cannot stay framed
    }
    BAREGPU_RETURN_IF_ERROR(SendAll(chunk));
    done += n;
  }
  return absl::OkStatus();
}

absl::Status Session::BulkWrite(const Request& request) {
  const bool sysmem = static_cast<Command>(request.command) == Command::kSysmemWrite;
  const uint64_t offset = request.args[0];
  const uint64_t size = request.args[1];
  absl::Status refused;
  ServedDevice* device = nullptr;
  pci::DmaBuffer* buffer = nullptr;
  if (auto d = Device(request); !d.ok()) {
    refused = d.status();
  } else if (device = *d; sysmem) {
    if (auto b = Sysmem(request); !b.ok()) {
      refused = b.status();
    } else {
      buffer = *b;
    }
  } else {
    refused = device->CheckBarAccess(request.bar, offset, size);
  }
  if (!refused.ok()) {
    BAREGPU_RETURN_IF_ERROR(DiscardPayload(size));
    counters_.errors.fetch_add(1, std::memory_order_relaxed);
    log_(absl::StrFormat("%s: %s dropped: %s", label_, *CommandName(request.command), refused.message()));
    if (deferred_error_.ok()) {
      deferred_error_ = absl::Status(refused.code(), absl::StrFormat("an earlier %s failed (writes get no reply): %s",
                                                                     *CommandName(request.command), refused.message()));
    }
    return absl::OkStatus();
  }
  // A register write must reach the device as the access the client made: a BAR write of one dword or qword is
  // read whole before it is applied; larger writes stream through the chunk buffer.
  for (uint64_t done = 0; done < size;) {
    size_t n = static_cast<size_t>(std::min<uint64_t>(size - done, chunk_.size()));
    std::span<uint8_t> chunk(chunk_.data(), n);
    if (ReadExact(chunk, false) != ReadResult::kOk) {
      return absl::DataLossError(
          absl::StrFormat("the connection ended inside a %s payload", *CommandName(request.command)));
    }
    if (sysmem) {
      std::memcpy(buffer->cpu() + offset + done, chunk.data(), n);
    } else {
      BAREGPU_RETURN_IF_ERROR(device->WriteBar(request.bar, offset + done, chunk));
    }
    done += n;
  }
  return absl::OkStatus();
}

absl::Status Session::MapBarFd(const Request& request) {
  auto device = Device(request);
  if (!device.ok()) return SendError(device.status());
  if (!unix_socket_) {
    return SendError(absl::FailedPreconditionError(
        "MAP_BAR_FD passes a file descriptor, which only a Unix socket can carry: use MMIO_READ"));
  }
  auto shared = (*device)->ShareBar(request.bar);
  if (!shared.ok()) return SendError(shared.status());
  return SendReply(Reply{ReplyStatus::kOk, shared->offset, shared->size}, {}, shared->fd);
}

absl::Status Session::DmaRead(const Request& request) {
  const uint64_t address = request.args[0];
  const uint64_t size = request.args[1];
  auto device = Device(request);
  if (!device.ok()) return SendError(device.status());
  if (size > chunk_.size()) {
    return SendError(absl::InvalidArgumentError(
        absl::StrFormat("DMA_READ of %d bytes; at most %d per request", size, chunk_.size())));
  }
  std::span<uint8_t> chunk(chunk_.data(), static_cast<size_t>(size));
  if (absl::Status s = (*device)->device().ReadDmaMemory(address, chunk); !s.ok()) return SendError(s);
  BAREGPU_RETURN_IF_ERROR(SendReply(Reply{ReplyStatus::kOk, 0, 0}));
  return SendAll(chunk);
}

absl::Status Session::RegisterSequence(const Request& request) {
  const uint64_t count = request.args[0];
  if (count > pci::kMaxRegisterSteps) {
    // The payload is count x 12 bytes of a client that does not follow the protocol: not worth reading.
    const absl::Status error = absl::InvalidArgumentError(
        absl::StrFormat("REGISTER_SEQUENCE of %d steps; at most %d (closing the connection: the payload is not read)",
                        count, pci::kMaxRegisterSteps));
    (void)SendError(error);
    return error;
  }
  std::vector<uint8_t> payload(static_cast<size_t>(count) * kRegisterStepSize);
  if (ReadExact(payload, false) != ReadResult::kOk) {
    return absl::DataLossError("the connection ended inside a REGISTER_SEQUENCE payload");
  }
  auto device = Device(request);
  if (!device.ok()) return SendError(device.status());
  const std::vector<pci::RegisterStep> steps = DecodeRegisterSteps(payload);
  absl::StatusOr<std::vector<uint32_t>> values = (*device)->RunRegisterSequence(request.bar, steps);
  if (!values.ok()) return SendError(values.status());
  return SendReply(
      Reply{ReplyStatus::kOk, values->size(), 0},
      std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(values->data()), values->size() * sizeof(uint32_t)));
}

absl::Status Session::HolderStatus(const Request& request) {
  auto device = Device(request);
  if (!device.ok()) return SendError(device.status());
  absl::StatusOr<std::string> text = (*device)->HolderStatus();
  if (!text.ok()) return SendError(text.status());
  return SendReply(Reply{ReplyStatus::kOk, text->size(), 0},
                   std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(text->data()), text->size()));
}

absl::Status Session::Handle(const Request& request) {
  counters_.requests.fetch_add(1, std::memory_order_relaxed);
  const std::optional<absl::string_view> name = CommandName(request.command);
  if (!name.has_value()) {
    // An unknown command has an unknown payload: the stream cannot be framed any further.
    (void)SendError(absl::InvalidArgumentError(absl::StrFormat(
        "unknown command %d (the protocol's commands are 0..%d, tinygrad's RemoteCmd); closing the connection",
        request.command, kCommandCount - 1)));
    return absl::InvalidArgumentError(absl::StrFormat("unknown command %d", request.command));
  }
  const Command command = static_cast<Command>(request.command);
  if (IsPostedWrite(command)) return BulkWrite(request);
  if (!deferred_error_.ok()) {
    // The failed write is answered now. PROBE's and REGISTER_SEQUENCE's payloads are still consumed so the stream stays
    // framed.
    if (command == Command::kProbe) BAREGPU_RETURN_IF_ERROR(DiscardPayload(request.args[1]));
    if (command == Command::kRegisterSequence) {
      if (request.args[0] > pci::kMaxRegisterSteps) return RegisterSequence(request);  // refused and closed there
      BAREGPU_RETURN_IF_ERROR(DiscardPayload(request.args[0] * kRegisterStepSize));
    }
    absl::Status error = std::exchange(deferred_error_, absl::OkStatus());
    return SendError(absl::Status(error.code(), absl::StrCat(error.message(), "; this ", *name, " was not run")));
  }
  switch (command) {
    case Command::kProbe:
      return Probe(request);
    case Command::kPing:
      return SendReply(Reply{});
    case Command::kMapBar: {
      auto device = Device(request);
      if (!device.ok()) return SendError(device.status());
      auto bar = (*device)->BarAddressAndSize(request.bar);
      if (!bar.ok()) return SendError(bar.status());
      return SendReply(Reply{ReplyStatus::kOk, bar->first, bar->second});
    }
    case Command::kCfgRead: {
      auto device = Device(request);
      if (!device.ok()) return SendError(device.status());
      auto value = (*device)->ReadConfig(request.args[0], request.args[1]);
      if (!value.ok()) return SendError(value.status());
      return SendReply(Reply{ReplyStatus::kOk, *value, 0});
    }
    case Command::kCfgWrite: {
      auto device = Device(request);
      if (!device.ok()) return SendError(device.status());
      if (absl::Status s = (*device)->WriteConfig(request.args[0], request.args[1], request.args[2]); !s.ok()) {
        return SendError(s);
      }
      return SendReply(Reply{});
    }
    case Command::kReset: {
      auto device = Device(request);
      if (!device.ok()) return SendError(device.status());
      if (!limits_.allow_reset) {
        return SendError(absl::PermissionDeniedError(absl::StrFormat(
            "%s is driven by this process; a reset through its debug endpoint would pull the device from under it",
            (*device)->name())));
      }
      if (absl::Status s = (*device)->Reset(); !s.ok()) return SendError(s);
      log_(absl::StrFormat("%s: reset %s", label_, (*device)->name()));
      return SendReply(Reply{});
    }
    case Command::kResizeBar: {
      auto device = Device(request);
      if (!device.ok()) return SendError(device.status());
      if (absl::Status s = (*device)->ResizeBar(request.bar); !s.ok()) return SendError(s);
      return SendReply(Reply{});
    }
    case Command::kMmioRead:
    case Command::kSysmemRead:
      return BulkRead(request);
    case Command::kMapSysmem:
      return MapSysmem(request, /*as_fd=*/false);
    case Command::kMapSysmemFd:
      return MapSysmem(request, /*as_fd=*/true);
    case Command::kMapBarFd:
      return MapBarFd(request);
    case Command::kDmaRead:
      return DmaRead(request);
    case Command::kRegisterSequence:
      return RegisterSequence(request);
    case Command::kHolderStatus:
      return HolderStatus(request);
    case Command::kMmioWrite:
    case Command::kSysmemWrite:
      break;  // posted, above
  }
  return absl::InternalError("unhandled command");
}

void Session::Run() {
  log_(absl::StrFormat("%s: connected", label_));
  std::string why = "disconnected";
  while (true) {
    std::array<uint8_t, kRequestHeaderSize> header;
    const ReadResult r = ReadExact(header, /*first_byte_may_wait=*/true);
    if (r == ReadResult::kClosed) break;
    if (r == ReadResult::kStopped) {
      why = "the server stopped";
      break;
    }
    if (r == ReadResult::kIdle) {
      why = absl::StrFormat("dropped: no request for %d ms", limits_.idle_timeout_ms);
      break;
    }
    if (r == ReadResult::kTimedOut) {
      why = absl::StrFormat("dropped: a request header stayed incomplete for %d ms", limits_.request_timeout_ms);
      break;
    }
    if (r == ReadResult::kFailed) {
      why = absl::StrCat("dropped: ", base::ErrnoName(errno));
      break;
    }
    const Request request = Request::Decode(header);
    if (absl::Status s = Handle(request); !s.ok()) {
      why = absl::StrCat("dropped: ", s.message());
      break;
    }
  }
  log_(absl::StrFormat("%s: %s after %d requests (%d refused); %d system memory buffers freed, devices released",
                       label_, why, counters_.requests.load(), counters_.errors.load(), sysmem_.size()));
  socket_.Reset();  // the client sees the end now, not when the server reaps this session
  sysmem_.clear();
  for (size_t i = 0; i < devices_.size(); ++i) {
    if (claimed_[i]) devices_[i]->Release(id_);
    claimed_[i] = false;
  }
}

}  // namespace serve
