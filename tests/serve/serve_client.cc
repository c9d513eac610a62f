#include "tests/serve/serve_client.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>

#include <cstring>

namespace serve::testing {
namespace {

constexpr int kTimeoutMs = 20'000;  // generous: a sanitizer build on a loaded 2-core machine

}  // namespace

std::optional<Client> Client::ConnectTcp(const std::string& host_port) {
  const size_t colon = host_port.rfind(':');
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(std::stoi(host_port.substr(colon + 1))));
  if (::inet_pton(AF_INET, host_port.substr(0, colon).c_str(), &addr.sin_addr) != 1) return std::nullopt;
  base::ScopedFd fd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (::connect(fd.get(), reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) return std::nullopt;
  return Client(std::move(fd));
}

std::optional<Client> Client::ConnectUnix(const std::string& path) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::strncpy(addr.sun_path, path.c_str(), sizeof(addr.sun_path) - 1);
  base::ScopedFd fd(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (::connect(fd.get(), reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) return std::nullopt;
  return Client(std::move(fd));
}

bool Client::SendBytes(const void* data, size_t size) {
  const auto* p = static_cast<const uint8_t*>(data);
  while (size > 0) {
    const ssize_t n = ::send(fd_.get(), p, size, MSG_NOSIGNAL);
    if (n <= 0) return false;
    p += n;
    size -= static_cast<size_t>(n);
  }
  return true;
}

bool Client::Send(const Request& request, const std::vector<uint8_t>& payload) {
  const auto header = request.Encode();
  return SendBytes(header.data(), header.size()) && SendBytes(payload.data(), payload.size());
}

bool Client::ReadExact(void* data, size_t size) {
  auto* p = static_cast<uint8_t*>(data);
  while (size > 0) {
    pollfd pfd{fd_.get(), POLLIN, 0};
    if (::poll(&pfd, 1, kTimeoutMs) != 1) return false;
    const ssize_t n = ::recv(fd_.get(), p, size, 0);
    if (n <= 0) return false;
    p += n;
    size -= static_cast<size_t>(n);
  }
  return true;
}

std::optional<ReplyWithData> Client::Receive(size_t data_size, bool with_fd) {
  std::array<uint8_t, kReplyHeaderSize> header{};
  ReplyWithData out;
  if (with_fd) {
    pollfd pfd{fd_.get(), POLLIN, 0};
    if (::poll(&pfd, 1, kTimeoutMs) != 1) return std::nullopt;
    iovec iov{header.data(), header.size()};
    alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
    msghdr msg{};
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control;
    msg.msg_controllen = sizeof(control);
    const ssize_t n = ::recvmsg(fd_.get(), &msg, MSG_CMSG_CLOEXEC);
    if (n <= 0) return std::nullopt;
    if (static_cast<size_t>(n) < header.size() && !ReadExact(header.data() + n, header.size() - n)) {
      return std::nullopt;
    }
    for (cmsghdr* c = CMSG_FIRSTHDR(&msg); c != nullptr; c = CMSG_NXTHDR(&msg, c)) {
      if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS) std::memcpy(&out.fd, CMSG_DATA(c), sizeof(int));
    }
  } else if (!ReadExact(header.data(), header.size())) {
    return std::nullopt;
  }
  out.reply = Reply::Decode(header);
  if (out.reply.status != ReplyStatus::kOk) {
    out.error.resize(out.reply.value0);
    if (!ReadExact(out.error.data(), out.error.size())) return std::nullopt;
    return out;
  }
  out.data.resize(data_size);
  if (!ReadExact(out.data.data(), out.data.size())) return std::nullopt;
  return out;
}

std::optional<ReplyWithData> Client::Call(const Request& request, size_t data_size, const std::vector<uint8_t>& payload,
                                          bool with_fd) {
  if (!Send(request, payload)) return std::nullopt;
  return Receive(data_size, with_fd);
}

std::optional<ReplyWithData> Client::CallSized(const Request& request, const std::vector<uint8_t>& payload) {
  if (!Send(request, payload)) return std::nullopt;
  auto r = Receive(0);
  if (!r.has_value() || r->reply.status != ReplyStatus::kOk) return r;
  r->data.resize(r->reply.value0);
  if (!ReadExact(r->data.data(), r->data.size())) return std::nullopt;
  return r;
}

bool Client::ClosedByServer() {
  pollfd pfd{fd_.get(), POLLIN, 0};
  if (::poll(&pfd, 1, kTimeoutMs) != 1) return false;
  char byte;
  return ::recv(fd_.get(), &byte, 1, 0) == 0;
}

Request MakeRequest(Command command, uint32_t device, uint32_t bar, uint64_t a0, uint64_t a1, uint64_t a2) {
  Request r;
  r.command = static_cast<uint8_t>(command);
  r.device = device;
  r.bar = bar;
  r.args = {a0, a1, a2};
  return r;
}

}  // namespace serve::testing
