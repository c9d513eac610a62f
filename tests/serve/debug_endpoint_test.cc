// The debug endpoint and its client on the virtual edu device (no boot, no state): where the socket goes, when it is
// served, what an attached client may do, and that closing is bounded whatever the clients do.
#include "serve/debug_endpoint.h"

#include <linux/pci_regs.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "gtest/gtest.h"
#include "pci/open.h"
#include "pci/sim/edu_device.h"
#include "serve/attached_device.h"
#include "serve/protocol.h"
#include "tests/serve/serve_client.h"

namespace serve {
namespace {

class DebugEndpointTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/baregpu-endpoint-test-XXXXXX";
    dir_ = ::mkdtemp(pattern);
    ::setenv(kRuntimeDirEnv, dir_.c_str(), 1);
    ::unsetenv(kDebugEndpointEnv);
  }
  void TearDown() override {
    ::unsetenv(kDebugEndpointEnv);
    std::system(("rm -rf '" + dir_ + "'").c_str());
  }
  static std::unique_ptr<pci::Device> Edu(const std::string& name) {
    auto device = pci::Open(name);
    EXPECT_TRUE(device.ok()) << device.status();
    return device.ok() ? std::move(*device) : nullptr;
  }
  std::string dir_;
};

TEST_F(DebugEndpointTest, PathIsTheRuntimeDirectoryAndTheDeviceName) {
  auto path = DebugEndpointPath("sim:navi31:0");
  ASSERT_TRUE(path.ok()) << path.status();
  EXPECT_EQ(*path, dir_ + "/sim:navi31:0.debug");
  EXPECT_TRUE(DebugEndpointPath("0000:03:00.0").ok());
  for (const char* bad : {"", "../up", "a/b", ".hidden", "new\nline"}) {
    EXPECT_EQ(DebugEndpointPath(bad).status().code(), absl::StatusCode::kInvalidArgument) << bad;
  }
}

TEST_F(DebugEndpointTest, TheProgramThenTheVariableThenTheDeviceDecide) {
  auto edu = Edu("sim:edu:wanted");
  ASSERT_NE(edu, nullptr);
  EXPECT_TRUE(edu->debug_endpoint_default());  // a virtual device
  EXPECT_EQ(*DebugEndpointWanted(*edu, std::nullopt), true);
  ::setenv(kDebugEndpointEnv, "0", 1);
  EXPECT_EQ(*DebugEndpointWanted(*edu, std::nullopt), false);
  EXPECT_EQ(*DebugEndpointWanted(*edu, true), true);
  ::setenv(kDebugEndpointEnv, "yes", 1);
  auto bad = DebugEndpointWanted(*edu, std::nullopt);
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StrContains(bad.status().message(), "BAREGPU_DEBUG_ENDPOINT")) << bad.status();
}

TEST_F(DebugEndpointTest, AnAttachedClientReadsAndClosingRemovesTheSocket) {
  auto edu = Edu("sim:edu:serve");
  ASSERT_NE(edu, nullptr);
  auto endpoint = DebugEndpoint::Start(*edu);
  ASSERT_TRUE(endpoint.ok()) << endpoint.status();
  const std::string path = (*endpoint)->path();
  struct stat st;
  ASSERT_EQ(::lstat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  {
    auto client = AttachedDevice::Connect("sim:edu:serve", path);
    ASSERT_TRUE(client.ok()) << client.status();
    EXPECT_EQ((*client)->holder_pid(), ::getpid());
    EXPECT_EQ(*(*client)->ReadConfig16(PCI_VENDOR_ID), pci::sim::edu::kVendorId);
    // Read-only: writes are refused here, before they reach the holder.
    EXPECT_EQ((*client)->WriteConfig16(PCI_COMMAND, 0).code(), absl::StatusCode::kPermissionDenied);
    auto bar0 = (*client)->MapMmio(0);
    ASSERT_TRUE(bar0.ok()) << bar0.status();
    bar0->Write32(pci::sim::edu::kFactorial, 5);
    EXPECT_EQ((*client)->TakeAccessError().code(), absl::StatusCode::kPermissionDenied);
    EXPECT_EQ(bar0->Read32(pci::sim::edu::kIdentification), pci::sim::edu::kIdentificationValue);
    EXPECT_TRUE((*client)->TakeAccessError().ok());
    EXPECT_FALSE((*client)->ResetFunction().ok());
    EXPECT_FALSE((*client)->AllocDma(4096).ok());
  }
  endpoint->reset();
  EXPECT_NE(::lstat(path.c_str(), &st), 0) << "the socket outlived its endpoint";
}

TEST_F(DebugEndpointTest, DmaReadSeesTheHoldersBuffersAndNothingElse) {
  auto edu = Edu("sim:edu:dma");
  ASSERT_NE(edu, nullptr);
  auto buffer = edu->AllocDma(8192);
  ASSERT_TRUE(buffer.ok()) << buffer.status();
  for (size_t i = 0; i < (*buffer)->size(); ++i) (*buffer)->cpu()[i] = static_cast<uint8_t>(i * 3);
  auto endpoint = DebugEndpoint::Start(*edu);
  ASSERT_TRUE(endpoint.ok()) << endpoint.status();
  auto client = AttachedDevice::Connect("sim:edu:dma", (*endpoint)->path());
  ASSERT_TRUE(client.ok()) << client.status();
  std::vector<uint8_t> bytes(100);
  ASSERT_TRUE((*client)->ReadDmaMemory((*buffer)->device_address(10), bytes).ok());
  for (size_t i = 0; i < bytes.size(); ++i) EXPECT_EQ(bytes[i], static_cast<uint8_t>((10 + i) * 3)) << i;
  EXPECT_FALSE((*client)->ReadDmaMemory(0x10, bytes).ok());  // below every IOVA the device hands out
  // The connection stays usable after an error reply.
  EXPECT_TRUE((*client)->ReadDmaMemory((*buffer)->device_address(0), bytes).ok());
}

TEST_F(DebugEndpointTest, AnotherLiveEndpointOfTheNameIsLeftAloneAndAStaleOneReplaced) {
  auto first = Edu("sim:edu:dup");
  auto second = Edu("sim:edu:dup");
  ASSERT_NE(first, nullptr);
  ASSERT_NE(second, nullptr);
  auto serving = DebugEndpoint::Start(*first);
  ASSERT_TRUE(serving.ok()) << serving.status();
  auto refused = DebugEndpoint::Start(*second);
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kAlreadyExists) << refused.status();
  EXPECT_TRUE(AttachedDevice::Connect("sim:edu:dup", (*serving)->path()).ok());
  const std::string path = (*serving)->path();
  serving->reset();
  // A socket nobody serves, as a killed holder leaves it.
  int stale = ::socket(AF_UNIX, SOCK_STREAM, 0);
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  std::strncpy(address.sun_path, path.c_str(), sizeof(address.sun_path) - 1);
  ASSERT_EQ(::bind(stale, reinterpret_cast<sockaddr*>(&address), sizeof(address)), 0);
  ::close(stale);
  ASSERT_EQ(::chmod(path.c_str(), 0600), 0);  // as the endpoint made it: private, only nobody answers
  EXPECT_EQ(AttachedDevice::Connect("sim:edu:dup", path).status().code(), absl::StatusCode::kUnavailable);
  auto replaced = DebugEndpoint::Start(*second);
  EXPECT_TRUE(replaced.ok()) << replaced.status();
}

TEST_F(DebugEndpointTest, AClientOfAnotherUserIsHungUpOn) {
  if (::geteuid() != 0) GTEST_SKIP() << "only root can connect as another user";
  auto edu = Edu("sim:edu:peer");
  ASSERT_NE(edu, nullptr);
  auto endpoint = DebugEndpoint::Start(*edu);
  ASSERT_TRUE(endpoint.ok()) << endpoint.status();
  // Open the directory and socket to everyone, as a mistaken chmod would: the credentials check still holds.
  ASSERT_EQ(::chmod(dir_.c_str(), 0755), 0);
  ASSERT_EQ(::chmod((*endpoint)->path().c_str(), 0666), 0);
  constexpr uid_t kOtherUser = 54321;
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    // The child reports with its exit status: 0 when the endpoint hung up without answering PING.
    if (::setgid(kOtherUser) != 0 || ::setuid(kOtherUser) != 0) ::_exit(10);
    const int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
    sockaddr_un address{};
    address.sun_family = AF_UNIX;
    std::strncpy(address.sun_path, (*endpoint)->path().c_str(), sizeof(address.sun_path) - 1);
    if (::connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) != 0) ::_exit(11);
    const auto ping = Request{static_cast<uint8_t>(Command::kPing), 0, 0, {}}.Encode();
    (void)::send(fd, ping.data(), ping.size(), MSG_NOSIGNAL);
    timeval limit{5, 0};
    ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &limit, sizeof(limit));
    char reply[kReplyHeaderSize];
    const ssize_t n = ::recv(fd, reply, sizeof(reply), MSG_WAITALL);
    ::_exit(n == 0 || (n < 0 && errno == ECONNRESET) ? 0 : 12);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << "10: setuid failed, 11: connect failed, 12: the endpoint answered";
  // Our own client is still served.
  ASSERT_EQ(::chmod((*endpoint)->path().c_str(), 0600), 0);
  ASSERT_EQ(::chmod(dir_.c_str(), 0700), 0);
  EXPECT_TRUE(AttachedDevice::Connect("sim:edu:peer", (*endpoint)->path()).ok());
}

TEST_F(DebugEndpointTest, ASilentClientCannotKeepOthersOut) {
  auto edu = Edu("sim:edu:silent");
  ASSERT_NE(edu, nullptr);
  auto endpoint = DebugEndpoint::Start(*edu);
  ASSERT_TRUE(endpoint.ok()) << endpoint.status();
  // Connected first, so the endpoint serves it, and then silent.
  int silent = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  std::strncpy(address.sun_path, (*endpoint)->path().c_str(), sizeof(address.sun_path) - 1);
  ASSERT_EQ(::connect(silent, reinterpret_cast<sockaddr*>(&address), sizeof(address)), 0);
  // The next client waits in the queue until the silent one is dropped (5 s), within its own reply timeout (10 s).
  auto client = AttachedDevice::Connect("sim:edu:silent", (*endpoint)->path());
  EXPECT_TRUE(client.ok()) << client.status();
  ::close(silent);
}

TEST_F(DebugEndpointTest, CloseIsBoundedWhileAClientIsStuckMidRequest) {
  auto edu = Edu("sim:edu:stuck");
  ASSERT_NE(edu, nullptr);
  auto endpoint = DebugEndpoint::Start(*edu);
  ASSERT_TRUE(endpoint.ok()) << endpoint.status();
  auto client = AttachedDevice::Connect("sim:edu:stuck", (*endpoint)->path());
  ASSERT_TRUE(client.ok()) << client.status();
  // The attached client holds the session; a raw one queues behind it with half a request.
  int raw = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  std::strncpy(address.sun_path, (*endpoint)->path().c_str(), sizeof(address.sun_path) - 1);
  ASSERT_EQ(::connect(raw, reinterpret_cast<sockaddr*>(&address), sizeof(address)), 0);
  const auto header = Request{static_cast<uint8_t>(Command::kPing), 0, 0, {}}.Encode();
  ASSERT_EQ(::send(raw, header.data(), 7, MSG_NOSIGNAL), 7);
  const auto start = std::chrono::steady_clock::now();
  endpoint->reset();
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(2));
  // The holder is gone for the attached client: its next call fails instead of waiting.
  auto vendor = (*client)->ReadConfig16(PCI_VENDOR_ID);
  EXPECT_FALSE(vendor.ok());
  ::close(raw);
}

// A register sequence through the endpoint: the holder runs it, selects only the registers its driver declared, and
// puts every selection back. edu has no selection registers; two plain RW registers stand in for them.
TEST_F(DebugEndpointTest, ARegisterSequenceSelectsReadsAndPutsTheSelectionsBack) {
  using Step = pci::RegisterStep;
  namespace edu_regs = pci::sim::edu;
  auto edu = Edu("sim:edu:sequence");
  ASSERT_NE(edu, nullptr);
  edu->set_selection_registers(0, {edu_regs::kDmaSource, edu_regs::kDmaDestination});
  auto direct = edu->MapMmio(0);
  ASSERT_TRUE(direct.ok()) << direct.status();
  direct->Write32(edu_regs::kDmaSource, 0x1111);
  direct->Write32(edu_regs::kDmaDestination, 0x2222);
  auto endpoint = DebugEndpoint::Start(*edu);
  ASSERT_TRUE(endpoint.ok()) << endpoint.status();
  auto client = AttachedDevice::Connect("sim:edu:sequence", (*endpoint)->path());  // read-only
  ASSERT_TRUE(client.ok()) << client.status();

  const std::vector<Step> steps = {Step::Select(edu_regs::kDmaSource, 0xaaaa), Step::Read(edu_regs::kDmaSource),
                                   Step::Select(edu_regs::kDmaDestination, 0xbbbb),
                                   Step::Read(edu_regs::kDmaDestination, 2), Step::Read(edu_regs::kIdentification)};
  std::vector<uint32_t> values(4);
  ASSERT_TRUE((*client)->RunRegisterSequence(0, steps, values).ok());
  EXPECT_EQ(values, (std::vector<uint32_t>{0xaaaa, 0xbbbb, 0xbbbb, edu_regs::kIdentificationValue}));
  EXPECT_EQ(direct->Read32(edu_regs::kDmaSource), 0x1111u);
  EXPECT_EQ(direct->Read32(edu_regs::kDmaDestination), 0x2222u);

  // A select of a register the driver did not declare refuses the whole sequence before any access.
  direct->Write32(edu_regs::kFactorial, 3);  // 3! = 6
  const uint32_t factorial = direct->Read32(edu_regs::kFactorial);
  std::vector<uint32_t> one(1);
  absl::Status refused = (*client)->RunRegisterSequence(
      0,
      std::vector<Step>{Step::Select(edu_regs::kDmaSource, 0xcccc), Step::Select(edu_regs::kFactorial, 5),
                        Step::Read(edu_regs::kFactorial)},
      one);
  EXPECT_EQ(refused.code(), absl::StatusCode::kFailedPrecondition) << refused;  // the holder's error, as all are
  EXPECT_TRUE(absl::StrContains(refused.message(), "selection register")) << refused;
  EXPECT_EQ(direct->Read32(edu_regs::kFactorial), factorial);
  EXPECT_EQ(direct->Read32(edu_regs::kDmaSource), 0x1111u);

  // Checked on this side too: a read count of 0, an offset outside the BAR, a result buffer of the wrong size.
  EXPECT_EQ((*client)->RunRegisterSequence(0, std::vector<Step>{Step::Read(0, 0)}, {}).code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ((*client)->RunRegisterSequence(0, std::vector<Step>{Step::Read(edu_regs::kBarSize)}, one).code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ((*client)->RunRegisterSequence(0, std::vector<Step>{Step::Read(0)}, values).code(),
            absl::StatusCode::kInvalidArgument);
  // The connection still works.
  ASSERT_TRUE((*client)->RunRegisterSequence(0, std::vector<Step>{Step::Read(edu_regs::kIdentification)}, one).ok());
  EXPECT_EQ(one[0], edu_regs::kIdentificationValue);
}

// What a client that does not follow the protocol gets: errors for bad steps (the connection stays framed), a closed
// connection for a step count it will not read, and an endpoint that serves the next client after a cut-off payload.
TEST_F(DebugEndpointTest, MalformedRegisterSequencesAreRefused) {
  using testing::Client;
  using testing::MakeRequest;
  auto edu = Edu("sim:edu:badseq");
  ASSERT_NE(edu, nullptr);
  auto endpoint = DebugEndpoint::Start(*edu);
  ASSERT_TRUE(endpoint.ok()) << endpoint.status();
  const std::string path = (*endpoint)->path();
  auto steps = [](std::vector<pci::RegisterStep> s) { return EncodeRegisterSteps(s); };
  {
    std::optional<Client> c = Client::ConnectUnix(path);
    ASSERT_TRUE(c.has_value());
    // Unknown kind, unaligned offset, an offset past the BAR, a read count of 0, a register BAR that does not exist.
    std::vector<uint8_t> unknown_kind = steps({pci::RegisterStep::Read(0)});
    unknown_kind[0] = 7;
    for (const auto& [bar, payload] : std::vector<std::pair<uint32_t, std::vector<uint8_t>>>{
             {0, unknown_kind},
             {0, steps({pci::RegisterStep::Read(2)})},
             {0, steps({pci::RegisterStep::Read(pci::sim::edu::kBarSize)})},
             {0, steps({pci::RegisterStep::Read(0, 0)})},
             {0, steps({pci::RegisterStep::Select(pci::sim::edu::kDmaSource, 1)})},  // nothing declared
             {3, steps({pci::RegisterStep::Read(0)})}}) {
      auto reply =
          c->Call(MakeRequest(Command::kRegisterSequence, 0, bar, payload.size() / kRegisterStepSize), 0, payload);
      ASSERT_TRUE(reply.has_value());
      EXPECT_EQ(reply->reply.status, ReplyStatus::kError) << bar;
      EXPECT_FALSE(reply->error.empty());
    }
    auto status = c->Call(MakeRequest(Command::kHolderStatus));  // this endpoint was started without a status
    ASSERT_TRUE(status.has_value());
    EXPECT_EQ(status->reply.status, ReplyStatus::kError);
    EXPECT_TRUE(absl::StrContains(status->error, "reports no status")) << status->error;
    auto ping = c->Call(MakeRequest(Command::kPing));
    ASSERT_TRUE(ping.has_value());
    EXPECT_EQ(ping->reply.status, ReplyStatus::kOk);
    // More steps than any sequence may have: refused, and the connection closed without reading the payload.
    auto huge = c->Call(MakeRequest(Command::kRegisterSequence, 0, 0, uint64_t{1} << 40));
    ASSERT_TRUE(huge.has_value());
    EXPECT_EQ(huge->reply.status, ReplyStatus::kError);
    EXPECT_TRUE(c->ClosedByServer());
  }
  {
    // Two steps announced, one sent, then the client goes: the endpoint drops it and serves the next one.
    std::optional<Client> c = Client::ConnectUnix(path);
    ASSERT_TRUE(c.has_value());
    const std::vector<uint8_t> half = steps({pci::RegisterStep::Read(0)});
    ASSERT_TRUE(c->Send(MakeRequest(Command::kRegisterSequence, 0, 0, 2), half));
    c->Close();
  }
  auto client = AttachedDevice::Connect("sim:edu:badseq", path);
  ASSERT_TRUE(client.ok()) << client.status();
  EXPECT_EQ(*(*client)->ReadConfig16(PCI_VENDOR_ID), pci::sim::edu::kVendorId);
}

TEST_F(DebugEndpointTest, HolderStatusIsWhatTheHolderSays) {
  auto edu = Edu("sim:edu:status");
  ASSERT_NE(edu, nullptr);
  auto endpoint = DebugEndpoint::Start(*edu, []() -> absl::StatusOr<std::string> { return R"({"ok": true})"; });
  ASSERT_TRUE(endpoint.ok()) << endpoint.status();
  auto client = AttachedDevice::Connect("sim:edu:status", (*endpoint)->path());
  ASSERT_TRUE(client.ok()) << client.status();
  auto status = (*client)->HolderStatus();
  ASSERT_TRUE(status.ok()) << status.status();
  EXPECT_EQ(*status, R"({"ok": true})");
}

}  // namespace
}  // namespace serve
