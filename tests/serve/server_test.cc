#include "serve/server.h"

#include <linux/pci_regs.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <fstream>
#include <random>
#include <sstream>
#include <thread>

#include "am/sim/navi31.h"
#include "gtest/gtest.h"
#include "pci/sim/edu_device.h"
#include "tests/serve/serve_client.h"

namespace serve {
namespace {

using ::serve::testing::Client;
using ::serve::testing::MakeRequest;
namespace edu = ::pci::sim::edu;

constexpr uint32_t kEdu = 0;     // device index of sim:edu in the fixture's server
constexpr uint32_t kNavi31 = 1;  // and of sim:navi31
constexpr uint32_t kAmdVendor = 0x1002;
constexpr uint32_t kNavi31DeviceId = 0x744c;
constexpr uint32_t kRegisterBar = 5;  // Navi31's register BAR (amdgpu: rmmio, BAR5)
constexpr uint32_t kVramBar = 0;
// Base classes, from the PCI Code and ID Assignment Specification (Linux: include/linux/pci_ids.h, not exported).
constexpr uint32_t kBaseClassDisplay = 0x03;
constexpr uint32_t kBaseClassMemory = 0x05;

std::vector<uint8_t> Bytes(std::initializer_list<uint32_t> words) {
  std::vector<uint8_t> out;
  for (uint32_t w : words) {
    for (int i = 0; i < 4; ++i) out.push_back(static_cast<uint8_t>(w >> (8 * i)));
  }
  return out;
}

std::vector<uint8_t> Qword(uint64_t v) {
  std::vector<uint8_t> out(8);
  std::memcpy(out.data(), &v, 8);
  return out;
}

uint64_t LoadQword(const std::vector<uint8_t>& data, size_t index = 0) {
  uint64_t v;
  std::memcpy(&v, data.data() + 8 * index, 8);
  return v;
}

// A server for one device, not yet running.
absl::StatusOr<std::unique_ptr<Server>> ServeOne(const std::string& device, const ServerOptions& options,
                                                 std::ostream& log) {
  auto served = ServedDevice::Open(device);
  if (!served.ok()) return served.status();
  std::vector<std::unique_ptr<ServedDevice>> devices;
  devices.push_back(std::move(*served));
  return Server::Create(std::move(devices), options, log);
}

class ServerTest : public ::testing::Test {
 protected:
  void Start(ServerOptions options) {
    std::vector<std::unique_ptr<ServedDevice>> devices;
    auto edu_device = ServedDevice::Open("sim:edu");
    ASSERT_TRUE(edu_device.ok()) << edu_device.status();
    devices.push_back(std::move(*edu_device));
    auto navi = ServedDevice::Open("sim:navi31:serve-test");
    ASSERT_TRUE(navi.ok()) << navi.status();
    devices.push_back(std::move(*navi));
    auto server = Server::Create(std::move(devices), options, log_);
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = std::move(*server);
    runner_ = std::thread([this] { run_status_ = server_->Run(); });
  }
  void SetUp() override {
    ServerOptions options;
    options.listen = "127.0.0.1:0";
    options.limits.max_sysmem_bytes = 64 << 20;
    options.limits.request_timeout_ms = 2000;
    Start(options);
  }
  void TearDown() override {
    if (server_ != nullptr) {
      server_->Stop();
      runner_.join();
      EXPECT_TRUE(run_status_.ok()) << run_status_;
    }
  }
  Client Connect() {
    auto c = Client::ConnectTcp(server_->address());
    EXPECT_TRUE(c.has_value()) << server_->address();
    return std::move(*c);
  }
  std::string Log() const { return log_.str(); }

  std::ostringstream log_;
  std::unique_ptr<Server> server_;
  std::thread runner_;
  absl::Status run_status_;
};

TEST(ProtocolTest, HeadersHaveTinygradsStructLayouts) {
  // struct.pack('<BIIQQQ', 7, 1, 5, 0x1122334455667788, 4, 0) and struct.pack('<BQQ', 1, 3, 9), computed by
  // python3 -c "import struct; print(struct.pack(...).hex())".
  Request r = MakeRequest(Command::kMmioWrite, 1, 5, 0x1122334455667788, 4, 0);
  auto bytes = r.Encode();
  std::string hex;
  for (uint8_t b : bytes) hex += "0123456789abcdef"[b >> 4], hex += "0123456789abcdef"[b & 15];
  EXPECT_EQ(hex, "070100000005000000887766554433221104000000000000000000000000000000");
  Reply reply{ReplyStatus::kError, 3, 9};
  auto rb = reply.Encode();
  hex.clear();
  for (uint8_t b : rb) hex += "0123456789abcdef"[b >> 4], hex += "0123456789abcdef"[b & 15];
  EXPECT_EQ(hex, "0103000000000000000900000000000000");
  EXPECT_EQ(Request::Decode(bytes).args[0], 0x1122334455667788u);
  EXPECT_EQ(*CommandName(static_cast<uint8_t>(Command::kPing)), "PING");
  EXPECT_FALSE(CommandName(kCommandCount).has_value());
}

TEST_F(ServerTest, PingAnswers) {
  Client c = Connect();
  auto r = c.Call(MakeRequest(Command::kPing));
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->reply.status, ReplyStatus::kOk);
}

TEST_F(ServerTest, ProbeListsTheMatchingDevicesByIndex) {
  Client c = Connect();
  // tinygrad's payload: (mask, device id) uint32 pairs; the reply lists device indices, one a line.
  auto r = c.CallSized(MakeRequest(Command::kProbe, 0, 0, 0, 8, kAmdVendor), Bytes({0xffff, kNavi31DeviceId}));
  ASSERT_TRUE(r.has_value());
  ASSERT_EQ(r->reply.status, ReplyStatus::kOk) << r->error;
  EXPECT_EQ(std::string(r->data.begin(), r->data.end()), "1");
  // The base class filter: Navi31 is a display controller, edu is not.
  r = c.CallSized(MakeRequest(Command::kProbe, 0, 0, kBaseClassDisplay, 8, kAmdVendor),
                  Bytes({0xffff, kNavi31DeviceId}));
  EXPECT_EQ(std::string(r->data.begin(), r->data.end()), "1");
  r = c.CallSized(MakeRequest(Command::kProbe, 0, 0, kBaseClassMemory, 8, kAmdVendor),
                  Bytes({0xffff, kNavi31DeviceId}));
  EXPECT_EQ(r->reply.value0, 0u);
  r = c.CallSized(MakeRequest(Command::kProbe, 0, 0, 0, 16, edu::kVendorId),
                  Bytes({0xffff, 0x1111, 0xff00, edu::kDeviceId & 0xff00}));
  EXPECT_EQ(std::string(r->data.begin(), r->data.end()), "0");
}

TEST_F(ServerTest, MalformedProbePayloadIsRefusedAndTheStreamStaysFramed) {
  Client c = Connect();
  auto r = c.Call(MakeRequest(Command::kProbe, 0, 0, 0, 12, kAmdVendor), 0, Bytes({1, 2, 3}));
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->reply.status, ReplyStatus::kError);
  EXPECT_NE(r->error.find("(mask, device id) uint32 pairs"), std::string::npos) << r->error;
  r = c.Call(MakeRequest(Command::kPing));
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->reply.status, ReplyStatus::kOk);
  EXPECT_NE(Log().find("connected"), std::string::npos);
}

TEST_F(ServerTest, MapBarGivesAddressAndSizeOrANamedError) {
  Client c = Connect();
  auto r = c.Call(MakeRequest(Command::kMapBar, kNavi31, kRegisterBar));
  ASSERT_EQ(r->reply.status, ReplyStatus::kOk) << r->error;
  EXPECT_GT(r->reply.value1, 0u);
  r = c.Call(MakeRequest(Command::kMapBar, kEdu, 0));
  ASSERT_EQ(r->reply.status, ReplyStatus::kOk) << r->error;
  EXPECT_EQ(r->reply.value1, edu::kBarSize);
  r = c.Call(MakeRequest(Command::kMapBar, kNavi31, 4));  // no BAR4 on the board (docs/fidelity.md)
  EXPECT_EQ(r->reply.status, ReplyStatus::kError);
  EXPECT_NE(r->error.find("BAR 4 is not implemented"), std::string::npos) << r->error;
  r = c.Call(MakeRequest(Command::kMapBar, kNavi31, 9));
  EXPECT_NE(r->error.find("BAR 9 does not exist"), std::string::npos) << r->error;
  r = c.Call(MakeRequest(Command::kMapBar, 7, 0));
  EXPECT_NE(r->error.find("device 7 does not exist"), std::string::npos) << r->error;
}

TEST_F(ServerTest, ConfigSpaceReadsAndWritesWithSizeAndRangeChecks) {
  Client c = Connect();
  auto r = c.Call(MakeRequest(Command::kCfgRead, kNavi31, 0, PCI_VENDOR_ID, 2));
  ASSERT_EQ(r->reply.status, ReplyStatus::kOk) << r->error;
  EXPECT_EQ(r->reply.value0, kAmdVendor);
  r = c.Call(MakeRequest(Command::kCfgRead, kNavi31, 0, PCI_VENDOR_ID, 4));
  EXPECT_EQ(r->reply.value0, (uint64_t{kNavi31DeviceId} << 16) | kAmdVendor);
  r = c.Call(MakeRequest(Command::kCfgRead, kNavi31, 0, 0, 3));
  EXPECT_NE(r->error.find("the sizes are 1, 2 and 4"), std::string::npos) << r->error;
  r = c.Call(MakeRequest(Command::kCfgRead, kNavi31, 0, 4096, 4));
  EXPECT_NE(r->error.find("must be below"), std::string::npos) << r->error;
  r = c.Call(MakeRequest(Command::kCfgWrite, kEdu, 0, PCI_COMMAND, 2, PCI_COMMAND_MEMORY | PCI_COMMAND_MASTER));
  ASSERT_EQ(r->reply.status, ReplyStatus::kOk) << r->error;
  r = c.Call(MakeRequest(Command::kCfgRead, kEdu, 0, PCI_COMMAND, 2));
  EXPECT_EQ(r->reply.value0 & (PCI_COMMAND_MEMORY | PCI_COMMAND_MASTER),
            uint64_t{PCI_COMMAND_MEMORY | PCI_COMMAND_MASTER});
  r = c.Call(MakeRequest(Command::kCfgWrite, kEdu, 0, PCI_COMMAND, 2, 0x10000));
  EXPECT_NE(r->error.find("does not fit in 2 bytes"), std::string::npos) << r->error;
}

TEST_F(ServerTest, BarReadsAndWritesReachTheDevice) {
  Client c = Connect();
  // VRAM (a memory BAR): any size and alignment.
  const std::vector<uint8_t> pattern = {1, 2, 3, 4, 5, 6, 7};
  ASSERT_TRUE(c.Send(MakeRequest(Command::kMmioWrite, kNavi31, kVramBar, 0x1003, pattern.size()), pattern));
  auto r = c.Call(MakeRequest(Command::kMmioRead, kNavi31, kVramBar, 0x1003, pattern.size()), pattern.size());
  ASSERT_EQ(r->reply.status, ReplyStatus::kOk) << r->error;
  EXPECT_EQ(r->data, pattern);
  // Registers: edu's liveness register reads back the inverse of what was written (QEMU docs/specs/edu.rst).
  ASSERT_TRUE(c.Send(MakeRequest(Command::kMmioWrite, kEdu, 0, edu::kLiveness, 4), Bytes({0x12345678})));
  r = c.Call(MakeRequest(Command::kMmioRead, kEdu, 0, edu::kLiveness, 4), 4);
  ASSERT_EQ(r->reply.status, ReplyStatus::kOk) << r->error;
  EXPECT_EQ(r->data, Bytes({~0x12345678u}));
  r = c.Call(MakeRequest(Command::kMmioRead, kEdu, 0, edu::kIdentification, 4), 4);
  EXPECT_EQ(r->data, Bytes({edu::kIdentificationValue}));
}

TEST_F(ServerTest, BadBarAccessesAreRefusedWithTheirReason) {
  Client c = Connect();
  auto r = c.Call(MakeRequest(Command::kMmioRead, kEdu, 0, 2, 4), 4);
  EXPECT_NE(r->error.find("whole, aligned dwords"), std::string::npos) << r->error;
  r = c.Call(MakeRequest(Command::kMmioRead, kEdu, 0, edu::kBarSize - 4, 8), 8);
  EXPECT_NE(r->error.find("outside the BAR"), std::string::npos) << r->error;
  r = c.Call(MakeRequest(Command::kMmioRead, kEdu, 0, ~uint64_t{0} - 3, 8), 8);  // offset + size overflows
  EXPECT_NE(r->error.find("outside the BAR"), std::string::npos) << r->error;
  r = c.Call(MakeRequest(Command::kPing));
  EXPECT_EQ(r->reply.status, ReplyStatus::kOk);
}

TEST_F(ServerTest, AFailedPostedWriteAnswersTheNextRequest) {
  Client c = Connect();
  const std::vector<uint8_t> payload(16, 0xab);
  ASSERT_TRUE(c.Send(MakeRequest(Command::kMmioWrite, kEdu, 0, edu::kBarSize - 8, payload.size()), payload));
  auto r = c.Call(MakeRequest(Command::kPing));
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->reply.status, ReplyStatus::kError);
  EXPECT_NE(r->error.find("an earlier MMIO_WRITE failed"), std::string::npos) << r->error;
  EXPECT_NE(r->error.find("this PING was not run"), std::string::npos) << r->error;
  r = c.Call(MakeRequest(Command::kPing));  // reported once; the stream stayed framed (the payload was consumed)
  EXPECT_EQ(r->reply.status, ReplyStatus::kOk);
  EXPECT_NE(Log().find("MMIO_WRITE dropped"), std::string::npos) << Log();
}

TEST_F(ServerTest, SystemMemoryIsTheDevicesDmaMemory) {
  Client c = Connect();
  // Two pages of system memory, one handle; the reply lists each page's device address.
  auto r = c.CallSized(MakeRequest(Command::kMapSysmem, kEdu, 0, 2 * 4096, 0));
  ASSERT_EQ(r->reply.status, ReplyStatus::kOk) << r->error;
  ASSERT_EQ(r->data.size(), 16u);
  const uint32_t handle = static_cast<uint32_t>(r->reply.value1);
  const uint64_t page0 = LoadQword(r->data, 0);
  const std::vector<uint8_t> message = {'b', 'a', 'r', 'e', 'g', 'p', 'u', '!'};
  ASSERT_TRUE(c.Send(MakeRequest(Command::kSysmemWrite, kEdu, handle, 0, message.size()), message));
  // The device's DMA engine copies the bytes from system memory into its buffer and back to the second page.
  ASSERT_EQ(c.Call(MakeRequest(Command::kCfgWrite, kEdu, 0, PCI_COMMAND, 2, PCI_COMMAND_MEMORY | PCI_COMMAND_MASTER))
                ->reply.status,
            ReplyStatus::kOk);
  auto dma = [&](uint64_t source, uint64_t destination, uint64_t command) {
    c.Send(MakeRequest(Command::kMmioWrite, kEdu, 0, edu::kDmaSource, 8), Qword(source));
    c.Send(MakeRequest(Command::kMmioWrite, kEdu, 0, edu::kDmaDestination, 8), Qword(destination));
    c.Send(MakeRequest(Command::kMmioWrite, kEdu, 0, edu::kDmaCount, 8), Qword(message.size()));
    c.Send(MakeRequest(Command::kMmioWrite, kEdu, 0, edu::kDmaCommand, 8), Qword(command));
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (std::chrono::steady_clock::now() < deadline) {
      auto status = c.Call(MakeRequest(Command::kMmioRead, kEdu, 0, edu::kDmaCommand, 8), 8);
      if (!status.has_value() || status->reply.status != ReplyStatus::kOk) return false;
      if ((LoadQword(status->data) & edu::kDmaStart) == 0) return true;
    }
    return false;
  };
  ASSERT_TRUE(dma(page0, edu::kDmaBufferAddress, edu::kDmaStart));
  ASSERT_TRUE(dma(edu::kDmaBufferAddress, LoadQword(r->data, 1), edu::kDmaStart | edu::kDmaToRam));
  auto back = c.Call(MakeRequest(Command::kSysmemRead, kEdu, handle, 4096, message.size()), message.size());
  ASSERT_EQ(back->reply.status, ReplyStatus::kOk) << back->error;
  EXPECT_EQ(back->data, message);
}

TEST_F(ServerTest, SystemMemoryRequestsAreChecked) {
  Client c = Connect();
  auto r = c.CallSized(MakeRequest(Command::kMapSysmem, kEdu, 0, 0, 0));
  EXPECT_NE(r->error.find("system memory of 0 bytes"), std::string::npos) << r->error;
  r = c.CallSized(MakeRequest(Command::kMapSysmem, kEdu, 0, uint64_t{1} << 40, 0));
  EXPECT_NE(r->error.find("holds 0 of its"), std::string::npos) << r->error;
  r = c.Call(MakeRequest(Command::kSysmemRead, kEdu, 3, 0, 8), 8);
  EXPECT_NE(r->error.find("handle 3 does not exist"), std::string::npos) << r->error;
  r = c.CallSized(MakeRequest(Command::kMapSysmem, kEdu, 0, 4096, 0));
  ASSERT_EQ(r->reply.status, ReplyStatus::kOk);
  r = c.Call(MakeRequest(Command::kSysmemRead, kEdu, 0, 4000, 200), 200);
  EXPECT_NE(r->error.find("outside system memory 0"), std::string::npos) << r->error;
  // MAP_SYSMEM_FD needs a Unix socket to carry the descriptor.
  r = c.Call(MakeRequest(Command::kMapSysmemFd, kEdu, 0, 4096, 0));
  EXPECT_NE(r->error.find("only a Unix socket can carry"), std::string::npos) << r->error;
}

TEST_F(ServerTest, UnknownCommandIsAnsweredAndEndsTheConnection) {
  Client c = Connect();
  auto r = c.Call(MakeRequest(static_cast<Command>(42)));
  ASSERT_TRUE(r.has_value());
  EXPECT_NE(r->error.find("unknown command 42"), std::string::npos) << r->error;
  EXPECT_TRUE(c.ClosedByServer());
  Client next = Connect();
  EXPECT_EQ(next.Call(MakeRequest(Command::kPing))->reply.status, ReplyStatus::kOk);
}

TEST_F(ServerTest, TruncatedRequestsDropTheClientOnly) {
  {
    Client c = Connect();
    const auto header = MakeRequest(Command::kPing).Encode();
    ASSERT_TRUE(c.SendBytes(header.data(), 10));  // part of a header, then hang up
  }
  {
    Client c = Connect();
    const std::vector<uint8_t> part(10, 1);
    ASSERT_TRUE(c.Send(MakeRequest(Command::kMmioWrite, kNavi31, kVramBar, 0, 100), part));  // 90 bytes missing
  }
  {
    Client c = Connect();  // part of a header, then silence: dropped after the request timeout
    const auto header = MakeRequest(Command::kPing).Encode();
    ASSERT_TRUE(c.SendBytes(header.data(), 5));
    EXPECT_TRUE(c.ClosedByServer());
  }
  Client c = Connect();
  EXPECT_EQ(c.Call(MakeRequest(Command::kPing))->reply.status, ReplyStatus::kOk);
  EXPECT_NE(Log().find("stayed incomplete"), std::string::npos) << Log();
}

TEST_F(ServerTest, ABusyDeviceIsRefusedNamingItsHolder) {
  Client first = Connect();
  ASSERT_EQ(first.Call(MakeRequest(Command::kMapBar, kNavi31, kVramBar))->reply.status, ReplyStatus::kOk);
  Client second = Connect();
  auto r = second.Call(MakeRequest(Command::kMapBar, kNavi31, kVramBar));
  EXPECT_EQ(r->reply.status, ReplyStatus::kError);
  EXPECT_NE(r->error.find("sim:navi31:serve-test is in use by client #1"), std::string::npos) << r->error;
  // Another device is free.
  EXPECT_EQ(second.Call(MakeRequest(Command::kMapBar, kEdu, 0))->reply.status, ReplyStatus::kOk);
  // Once the holder disconnects, the device is released (its session ends asynchronously: retry, bounded).
  first.Close();
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  bool claimed = false;
  while (!claimed && std::chrono::steady_clock::now() < deadline) {
    claimed = second.Call(MakeRequest(Command::kMapBar, kNavi31, kVramBar))->reply.status == ReplyStatus::kOk;
  }
  EXPECT_TRUE(claimed);
}

TEST_F(ServerTest, ResizeBarSucceedsOnlyWhenTheBarIsAtItsLargestSize) {
  Client c = Connect();
  auto r = c.Call(MakeRequest(Command::kResizeBar, kNavi31, kVramBar));  // 32 GiB, its largest (ReBAR capability)
  EXPECT_EQ(r->reply.status, ReplyStatus::kOk) << r->error;
  r = c.Call(MakeRequest(Command::kResizeBar, kNavi31, kRegisterBar));
  EXPECT_NE(r->error.find("BAR 5 is not resizable"), std::string::npos) << r->error;
  r = c.Call(MakeRequest(Command::kResizeBar, kEdu, 0));
  EXPECT_NE(r->error.find("not resizable"), std::string::npos) << r->error;
}

TEST_F(ServerTest, ProgressSnapshotsCountEachClientsRequests) {
  Client c = Connect();
  for (int i = 0; i < 3; ++i) ASSERT_EQ(c.Call(MakeRequest(Command::kPing))->reply.status, ReplyStatus::kOk);
  ASSERT_EQ(c.Call(MakeRequest(Command::kMapBar, kEdu, 0))->reply.status, ReplyStatus::kOk);
  auto clients = server_->Clients();
  ASSERT_EQ(clients.size(), 1u);
  EXPECT_EQ(clients[0].requests, 4u);
  EXPECT_EQ(clients[0].devices, "sim:edu");
}

// A deterministic fuzz of the request parser: streams of random headers (commands near and beyond the valid range,
// random sizes and offsets) with random payloads, each on its own connection, against sim:edu. The server must
// answer or drop each one and keep serving: a PING on a fresh connection gets its reply after every stream.
TEST(ServerFuzzTest, RandomStreamsNeverStopTheServer) {
  std::ostringstream log;
  ServerOptions options;
  options.listen = "127.0.0.1:0";
  options.limits.max_sysmem_bytes = 1 << 20;
  options.limits.request_timeout_ms = 200;
  auto created = ServeOne("sim:edu", options, log);
  ASSERT_TRUE(created.ok()) << created.status();
  Server& server = **created;
  std::thread runner([&] { (void)server.Run(); });
  std::mt19937_64 random(17);  // fixed seed: the same streams every run
  auto pick = [&](std::initializer_list<uint64_t> values) { return *(values.begin() + random() % values.size()); };
  constexpr int kStreams = 200;
  for (int i = 0; i < kStreams; ++i) {
    SCOPED_TRACE(i);
    auto c = Client::ConnectTcp(server.address());
    ASSERT_TRUE(c.has_value());
    const int requests = 1 + static_cast<int>(random() % 4);
    for (int r = 0; r < requests; ++r) {
      Request request;
      request.command = static_cast<uint8_t>(random() % (kCommandCount + 3));
      request.device = static_cast<uint32_t>(pick({0, 0, 0, 1, 0xffffffff}));
      request.bar = static_cast<uint32_t>(pick({0, 0, 1, 5, 0xffffffff}));
      for (uint64_t& a : request.args) a = pick({0, 1, 4, 8, 4096, edu::kBarSize, random() % 0x100000, ~uint64_t{0}});
      std::vector<uint8_t> payload(random() % 64);
      for (uint8_t& b : payload) b = static_cast<uint8_t>(random());
      if (!c->Send(request, payload)) break;  // the server may already have dropped the connection
    }
    c->Close();
    auto ping = Client::ConnectTcp(server.address());
    ASSERT_TRUE(ping.has_value());
    auto reply = ping->Call(MakeRequest(Command::kPing));
    ASSERT_TRUE(reply.has_value()) << log.str();
    ASSERT_EQ(reply->reply.status, ReplyStatus::kOk);
  }
  server.Stop();
  runner.join();
}

TEST(ServerDiagnosticsTest, WhatTheDeviceReportsReachesTheLogOnce) {
  std::ostringstream log;
  std::vector<std::unique_ptr<ServedDevice>> devices;
  devices.push_back(std::move(*ServedDevice::Open("sim:navi31:serve-diagnostics")));
  auto& navi31 = static_cast<am::sim::Navi31&>(devices[0]->device());
  ServerOptions options;
  options.listen = "127.0.0.1:0";
  auto server = Server::Create(std::move(devices), options, log);
  ASSERT_TRUE(server.ok()) << server.status();
  navi31.errors().Report("sq", "illegal instruction at PC 0x1000");
  (*server)->LogDeviceDiagnostics();
  (*server)->LogDeviceDiagnostics();  // nothing new
  const std::string text = log.str();
  const std::string line = "serve: sim:navi31:serve-diagnostics: sq: illegal instruction at PC 0x1000\n";
  EXPECT_NE(text.find(line), std::string::npos) << text;
  EXPECT_EQ(text.find(line), text.rfind(line)) << "logged twice: " << text;
}

class UnixServerTest : public ServerTest {
 protected:
  void SetUp() override {
    path_ = ::testing::TempDir() + "/baregpu-serve-test.sock";
    ::unlink(path_.c_str());
    ServerOptions options;
    options.unix_path = path_;
    Start(options);
  }
  std::string path_;
};

TEST_F(UnixServerTest, MapSysmemFdSharesThePagesAndListsTheirAddresses) {
  struct stat st;
  ASSERT_EQ(::stat(path_.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u) << "only the serving user may connect";
  auto c = Client::ConnectUnix(path_);
  ASSERT_TRUE(c.has_value());
  auto r = c->Call(MakeRequest(Command::kMapSysmemFd, kEdu, 0, 3 * 4096, 0), 0, {}, /*with_fd=*/true);
  ASSERT_TRUE(r.has_value());
  ASSERT_EQ(r->reply.status, ReplyStatus::kOk) << r->error;
  ASSERT_GE(r->fd, 0);
  const size_t size = r->reply.value0;
  ASSERT_EQ(size, 3 * 4096u);
  void* map = ::mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, r->fd, 0);
  ASSERT_NE(map, MAP_FAILED);
  // (address, size) runs until (0, 0), at the start of the memory (tinygrad's APLRemotePCIDevice.alloc_sysmem).
  const auto* runs = static_cast<const uint64_t*>(map);
  uint64_t covered = 0;
  int i = 0;
  for (; runs[2 * i + 1] != 0; ++i) {
    EXPECT_EQ(runs[2 * i] % 4096, 0u);
    covered += runs[2 * i + 1];
  }
  EXPECT_EQ(covered, size);
  // The same pages as the handle in the reply's second value.
  std::memcpy(static_cast<uint8_t*>(map) + 8192, "shared!", 8);
  auto back = c->Call(MakeRequest(Command::kSysmemRead, kEdu, static_cast<uint32_t>(r->reply.value1), 8192, 8), 8);
  ASSERT_EQ(back->reply.status, ReplyStatus::kOk) << back->error;
  EXPECT_EQ(std::memcmp(back->data.data(), "shared!", 8), 0);
  ::munmap(map, size);
  ::close(r->fd);
}

TEST(ServerCreateTest, RefusesAddressesOtherMachinesReachUnlessAllowed) {
  std::ostringstream log;
  ServerOptions options;
  options.listen = "0.0.0.0:0";
  auto server = ServeOne("sim:edu", options, log);
  ASSERT_FALSE(server.ok());
  EXPECT_EQ(server.status().code(), absl::StatusCode::kPermissionDenied);
  EXPECT_NE(server.status().message().find("--allow-remote"), std::string::npos) << server.status();
  options.allow_remote = true;
  server = ServeOne("sim:edu", options, log);
  ASSERT_TRUE(server.ok()) << server.status();
  EXPECT_TRUE((*server)->remote());
}

TEST(ServerCreateTest, RefusesBadAddressesAndPaths) {
  std::ostringstream log;
  auto create = [&](const ServerOptions& options) { return ServeOne("sim:edu", options, log); };
  for (const char* bad : {"127.0.0.1", "127.0.0.1:99999", "nohost:80", ":x"}) {
    ServerOptions o;
    o.listen = bad;
    auto s = create(o);
    EXPECT_EQ(s.status().code(), absl::StatusCode::kInvalidArgument) << bad << ": " << s.status();
  }
  const std::string file = ::testing::TempDir() + "/baregpu-serve-not-a-socket";
  std::ofstream(file) << "data";
  ServerOptions o;
  o.unix_path = file;
  auto s = create(o);
  EXPECT_NE(s.status().message().find("is not a socket; refusing to replace it"), std::string::npos) << s.status();
  std::ifstream in(file);
  std::string kept;
  in >> kept;
  EXPECT_EQ(kept, "data");
  o.unix_path = std::string(200, 'x');
  EXPECT_NE(create(o).status().message().find("choose a shorter path"), std::string::npos);
  // A socket left by a killed server is replaced; one in use is not.
  ServerOptions live;
  live.unix_path = ::testing::TempDir() + "/baregpu-serve-live.sock";
  ::unlink(live.unix_path.c_str());
  auto first = create(live);
  ASSERT_TRUE(first.ok()) << first.status();
  auto second = create(live);
  EXPECT_NE(second.status().message().find("in use by another server"), std::string::npos) << second.status();
}

}  // namespace
}  // namespace serve
