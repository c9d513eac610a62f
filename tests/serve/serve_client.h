// A test client for tinygrad's remote PCI protocol: raw requests and replies over a connected socket, every wait
// bounded. It speaks the wire format from serve/protocol.h, so the tests also check Request/Reply encoding against
// the bytes tinygrad's struct formats produce (protocol_test.cc).
#ifndef BAREGPU_TESTS_SERVE_SERVE_CLIENT_H_
#define BAREGPU_TESTS_SERVE_SERVE_CLIENT_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/fd.h"
#include "serve/protocol.h"

namespace serve::testing {

struct ReplyWithData {
  Reply reply;
  std::string error;          // the error text when reply.status != kOk
  std::vector<uint8_t> data;  // bytes after an OK reply (as many as asked for)
  int fd = -1;                // a descriptor passed with the reply (MAP_SYSMEM_FD), owned by the caller
};

class Client {
 public:
  static std::optional<Client> ConnectTcp(const std::string& host_port);
  static std::optional<Client> ConnectUnix(const std::string& path);

  bool Send(const Request& request, const std::vector<uint8_t>& payload = {});
  bool SendBytes(const void* data, size_t size);
  // Reads one reply and, when it is OK, `data_size` bytes after it; an error reply's text is read instead.
  std::optional<ReplyWithData> Receive(size_t data_size = 0, bool with_fd = false);
  std::optional<ReplyWithData> Call(const Request& request, size_t data_size = 0,
                                    const std::vector<uint8_t>& payload = {}, bool with_fd = false);
  // For PROBE and MAP_SYSMEM: an OK reply is followed by as many bytes as its first value says.
  std::optional<ReplyWithData> CallSized(const Request& request, const std::vector<uint8_t>& payload = {});
  // True when the server closed the connection (within the timeout).
  bool ClosedByServer();
  void Close() { fd_.Reset(); }

 private:
  explicit Client(base::ScopedFd fd) : fd_(std::move(fd)) {}
  bool ReadExact(void* data, size_t size);
  base::ScopedFd fd_;
};

Request MakeRequest(Command command, uint32_t device = 0, uint32_t bar = 0, uint64_t a0 = 0, uint64_t a1 = 0,
                    uint64_t a2 = 0);

}  // namespace serve::testing

#endif  // BAREGPU_TESTS_SERVE_SERVE_CLIENT_H_
