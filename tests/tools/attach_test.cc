// `baregpu regs/pt/ih/mem` on a device another process holds: the holder (attach_holder.cc, an HCQ client) serves a
// debug endpoint, the CLI (another process) attaches to it and must see what the holder did: a register it wrote, its
// buffers' bytes, the page walk of their addresses. And the endpoint must survive what a debugger can do wrong.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <chrono>
#include <cstdlib>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "serve/protocol.h"
#include "tests/am/sim/sim_state_dir.h"
#include "tests/tools/run_cli.h"

extern char** environ;

namespace cli {
namespace {

using ::cli::testing::CliResult;
using ::cli::testing::RunBaregpu;

auto* const kStateDir = am::sim::testing::RegisterSimStateDir();

// The runtime directory of this binary's endpoints, private to it as the state directory is.
class RuntimeDirEnvironment : public ::testing::Environment {
 public:
  void SetUp() override {
    char pattern[] = "/tmp/baregpu-runtime-test-XXXXXX";
    dir_ = ::mkdtemp(pattern);
    ::setenv("BAREGPU_RUNTIME_DIR", dir_.c_str(), 1);
  }
  void TearDown() override { std::system(("rm -rf '" + dir_ + "'").c_str()); }
  const std::string& dir() const { return dir_; }

 private:
  std::string dir_;
};
auto* const kRuntimeDir =
    static_cast<RuntimeDirEnvironment*>(::testing::AddGlobalTestEnvironment(new RuntimeDirEnvironment));

// A holder boots the device (a few seconds on the virtual GPU); every wait below is bounded by this.
constexpr int kReadyTimeoutMs = 120'000;
constexpr int kExitTimeoutMs = 60'000;
// The bytes attach_holder.cc puts in its buffers.
uint8_t VramByte(uint64_t i) { return static_cast<uint8_t>(i * 7 + 1); }
uint8_t HostByte(uint64_t i) { return static_cast<uint8_t>(i * 13 + 5); }
constexpr uint64_t kPage = 4096;

std::string HexBytes(uint8_t (*byte)(uint64_t), uint64_t from, uint64_t count) {
  std::string hex;
  for (uint64_t i = from; i < from + count; ++i) absl::StrAppend(&hex, absl::StrFormat("%02x", byte(i)));
  return hex;
}

class Holder {
 public:
  // Starts attach_holder on `device` with `env` added, and waits for its ready line.
  void Start(const std::string& device, const std::vector<std::string>& env, const std::string& mode = "") {
    device_ = device;
    int in[2], out[2];
    ASSERT_EQ(::pipe2(in, O_CLOEXEC), 0);
    ASSERT_EQ(::pipe2(out, O_CLOEXEC), 0);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, in[0], STDIN_FILENO);
    posix_spawn_file_actions_adddup2(&actions, out[1], STDOUT_FILENO);
    const std::string path = absl::StrCat(std::getenv("BAREGPU_BUILD_ROOT"), "/tests/tools/attach_holder");
    std::vector<std::string> env_storage;
    for (char** e = environ; *e != nullptr; ++e) env_storage.emplace_back(*e);
    env_storage.insert(env_storage.end(), env.begin(), env.end());
    std::vector<char*> envp;
    for (std::string& e : env_storage) envp.push_back(e.data());
    envp.push_back(nullptr);
    std::string arg0 = path, arg1 = device, arg2 = mode;
    char* argv[] = {arg0.data(), arg1.data(), mode.empty() ? nullptr : arg2.data(), nullptr};
    const int spawned = posix_spawn(&pid_, path.c_str(), &actions, nullptr, argv, envp.data());
    posix_spawn_file_actions_destroy(&actions);
    ::close(in[0]);
    ::close(out[1]);
    stdin_ = in[1];
    stdout_ = out[0];
    ASSERT_EQ(spawned, 0) << path;
    std::string line;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(kReadyTimeoutMs);
    while (line.find('\n') == std::string::npos) {
      const int left = static_cast<int>(
          std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now()).count());
      pollfd p{stdout_, POLLIN, 0};
      ASSERT_GT(::poll(&p, 1, std::max(left, 0)), 0) << "the holder did not get ready in time";
      char buffer[256];
      const ssize_t n = ::read(stdout_, buffer, sizeof(buffer));
      ASSERT_GT(n, 0) << "the holder exited before it was ready";
      line.append(buffer, static_cast<size_t>(n));
    }
    std::vector<std::string> words = absl::StrSplit(line.substr(0, line.find('\n')), ' ');
    ASSERT_EQ(words.size(), 5u) << line;
    ASSERT_EQ(words[0], "ready") << line;
    vram_va_ = words[1];
    host_va_ = words[2];
    scratch_ = words[3];
    endpoint_ = words[4];
  }

  // Releases the device and returns the holder's exit status (0: its device still worked), -1 on a timeout.
  int Stop() {
    if (pid_ <= 0) return -1;
    ::close(stdin_);
    ::close(stdout_);
    int status = 0;
    for (int waited = 0; waited < kExitTimeoutMs; waited += 10) {
      if (::waitpid(pid_, &status, WNOHANG) == pid_) {
        pid_ = 0;
        return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
      }
      ::usleep(10'000);
    }
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, &status, 0);
    pid_ = 0;
    return -1;
  }
  ~Holder() { Stop(); }

  const std::string& device() const { return device_; }
  const std::string& vram_va() const { return vram_va_; }
  const std::string& host_va() const { return host_va_; }
  const std::string& scratch() const { return scratch_; }
  const std::string& endpoint() const { return endpoint_; }
  pid_t pid() const { return pid_; }

 private:
  std::string device_;
  pid_t pid_ = 0;
  int stdin_ = -1, stdout_ = -1;
  std::string vram_va_, host_va_, scratch_, endpoint_;
};

// One holder with an endpoint for the whole suite (a boot per test would cost seconds each).
class AttachTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    holder_ = new Holder();
    holder_->Start("sim:navi31:attach", {"BAREGPU_DEBUG_ENDPOINT=1"});
  }
  static void TearDownTestSuite() {
    const std::string endpoint = holder_->endpoint();
    EXPECT_EQ(holder_->Stop(), 0) << "the holder's device did not survive its debuggers";
    struct stat st;
    EXPECT_NE(::lstat(endpoint.c_str(), &st), 0) << "closing the device left its endpoint " << endpoint;
    delete holder_;
  }
  void SetUp() override {
    if (HasFatalFailure() || holder_->pid() <= 0) GTEST_SKIP() << "no holder";
  }
  static CliResult Run(std::vector<std::string> args) { return RunBaregpu(args); }
  static Holder* holder_;
};
Holder* AttachTest::holder_ = nullptr;

TEST_F(AttachTest, EndpointIsInTheRuntimeDirectoryAndPrivate) {
  EXPECT_EQ(holder_->endpoint(), kRuntimeDir->dir() + "/sim:navi31:attach.debug");
  struct stat st;
  ASSERT_EQ(::lstat(holder_->endpoint().c_str(), &st), 0);
  EXPECT_TRUE(S_ISSOCK(st.st_mode));
  EXPECT_EQ(st.st_mode & 0777, 0600u);
}

TEST_F(AttachTest, RegsReadSeesTheRegisterTheHolderWrote) {
  CliResult r = Run({"regs", holder_->device(), "read", "SCRATCH_REG0", "--json"});
  ASSERT_EQ(r.exit_status, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["value"], absl::StrFormat("0x%08x", std::stoul(holder_->scratch(), nullptr, 16)));
  // Not interactive: nothing on stderr.
  EXPECT_EQ(r.err, "");
}

TEST_F(AttachTest, MemReadShowsTheVramBufferAcrossAPageBoundary) {
  // 32 bytes from 16 before the buffer's second page: two pages, two translations.
  uint64_t va = 0;
  ASSERT_TRUE(absl::SimpleHexAtoi(holder_->vram_va().substr(2), &va));
  const uint64_t from = kPage - 16;
  CliResult r = Run({"mem", holder_->device(), "read", absl::StrFormat("%#x", va + from), "--bytes=32", "--json"});
  ASSERT_EQ(r.exit_status, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["hex"], HexBytes(VramByte, from, 32)) << r.out;
  ASSERT_GE(j["translations"].size(), 1u) << r.out;
  EXPECT_EQ(j["translations"][0]["target"], "vram") << r.out;
  EXPECT_EQ(j["translations"][0]["va"], absl::StrFormat("%#x", va + from)) << r.out;

  CliResult text = Run({"mem", holder_->device(), "read", holder_->vram_va(), "--bytes=16"});
  ASSERT_EQ(text.exit_status, 0) << text.err;
  EXPECT_TRUE(absl::StrContains(text.out, "-> VRAM")) << text.out;
  EXPECT_TRUE(absl::StrContains(text.out, "01 08 0f 16")) << text.out;  // VramByte(0..3)
}

TEST_F(AttachTest, MemReadFollowsTheTablesIntoHostMemory) {
  CliResult r = Run({"mem", holder_->device(), "read", holder_->host_va(), "--bytes=16", "--as=u32", "--json"});
  ASSERT_EQ(r.exit_status, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["hex"], HexBytes(HostByte, 0, 16)) << r.out;
  EXPECT_EQ(j["translations"][0]["target"], "system") << r.out;
  EXPECT_EQ(j["values"].size(), 4u) << r.out;
}

TEST_F(AttachTest, PtWalksTheHoldersMapping) {
  CliResult r = Run({"pt", holder_->device(), "walk", holder_->vram_va()});
  ASSERT_EQ(r.exit_status, 0) << r.err;
  EXPECT_TRUE(absl::StrContains(r.out, absl::StrCat(holder_->vram_va(), " -> VRAM"))) << r.out;
}

TEST_F(AttachTest, IhPeeksWithoutMovingTheHoldersReadPointer) {
  CliResult before = Run({"regs", holder_->device(), "read", "IH_RB_RPTR", "--json"});
  ASSERT_EQ(before.exit_status, 0) << before.err;
  CliResult ih = Run({"ih", holder_->device(), "--json"});
  ASSERT_EQ(ih.exit_status, 0) << ih.err;
  EXPECT_EQ(nlohmann::json::parse(ih.out)["peek"], true) << ih.out;
  CliResult after = Run({"regs", holder_->device(), "read", "IH_RB_RPTR", "--json"});
  ASSERT_EQ(after.exit_status, 0) << after.err;
  EXPECT_EQ(nlohmann::json::parse(before.out)["value"], nlohmann::json::parse(after.out)["value"]);
}

TEST_F(AttachTest, WritesNeedForceAndSayWhatTheyChange) {
  CliResult refused = Run({"regs", holder_->device(), "write", "SCRATCH_REG1=0x1234"});
  EXPECT_EQ(refused.exit_status, 1);
  EXPECT_TRUE(absl::StrContains(refused.err, "--force")) << refused.err;
  EXPECT_TRUE(absl::StrContains(refused.err, "read-only")) << refused.err;

  CliResult forced = Run({"regs", holder_->device(), "write", "SCRATCH_REG1=0x1234", "--force"});
  ASSERT_EQ(forced.exit_status, 0) << forced.err;
  EXPECT_TRUE(absl::StrContains(forced.out, "-> 0x00001234")) << forced.out;
  CliResult read = Run({"regs", holder_->device(), "read", "SCRATCH_REG1", "--json"});
  EXPECT_EQ(nlohmann::json::parse(read.out)["value"], "0x00001234") << read.out;

  CliResult mem_refused = Run({"mem", holder_->device(), "write", holder_->vram_va(), "0x1"});
  EXPECT_EQ(mem_refused.exit_status, 2) << mem_refused.err;
  EXPECT_TRUE(absl::StrContains(mem_refused.err, "--force")) << mem_refused.err;

  // A write and its undo: the holder checks its buffer when it exits.
  const std::string original = absl::StrFormat("%#x", uint32_t{VramByte(0)} | uint32_t{VramByte(1)} << 8 |
                                                          uint32_t{VramByte(2)} << 16 | uint32_t{VramByte(3)} << 24);
  CliResult mem = Run({"mem", holder_->device(), "write", holder_->vram_va(), "0xdeadbeef", "--force"});
  ASSERT_EQ(mem.exit_status, 0) << mem.err;
  EXPECT_TRUE(absl::StrContains(
      mem.out, absl::StrFormat("%s -> 0xdeadbeef", absl::StrFormat("0x%08x", std::stoul(original, nullptr, 16)))))
      << mem.out;
  CliResult undo = Run({"mem", holder_->device(), "write", holder_->vram_va(), original, "--force"});
  ASSERT_EQ(undo.exit_status, 0) << undo.err;
}

// rings and waves select queues and waves through registers the holder uses too: attached, the holder runs each
// selection and its reads as one register sequence and puts the selection back, so they need no --force. Halting
// waves does.
TEST_F(AttachTest, RingsAndWavesReadTheHoldersQueuesWithoutForce) {
  CliResult rings = Run({"rings", holder_->device(), "--queue=comp_1.0.0", "--json"});
  ASSERT_EQ(rings.exit_status, 0) << rings.err;
  auto queue = nlohmann::json::parse(rings.out)["queues"][0];
  EXPECT_EQ(queue["name"], "comp_1.0.0");
  EXPECT_EQ(queue["active"], true) << rings.out;
  // The holder's selection is back where its driver leaves it (am::Gfx: me 0, pipe 0, queue 0).
  // (The queue read selected ME 1, so a selection left behind would read MEID=1.)
  CliResult cntl = Run({"regs", holder_->device(), "read", "GRBM_GFX_CNTL", "--json"});
  ASSERT_EQ(cntl.exit_status, 0) << cntl.err;
  EXPECT_EQ(nlohmann::json::parse(cntl.out)["value"], "0x00000000") << cntl.out;
  CliResult waves = Run({"waves", holder_->device(), "--json"});
  ASSERT_EQ(waves.exit_status, 0) << waves.err;
  EXPECT_EQ(nlohmann::json::parse(waves.out)["waves"].size(), 0u) << waves.out;
  CliResult halt = Run({"waves", holder_->device(), "--halt"});
  EXPECT_EQ(halt.exit_status, 1) << halt.out;
  EXPECT_TRUE(absl::StrContains(halt.err, "SETHALT")) << halt.err;
  EXPECT_TRUE(absl::StrContains(halt.err, "--force")) << halt.err;
}

// smi attached: the holder reports its firmware, SMU metrics, its own VRAM allocations and its waits (attach_holder
// allocated one VRAM buffer of 8 KiB) through HOLDER_STATUS.
TEST_F(AttachTest, SmiReadsTheHoldersMetricsAndAllocations) {
  CliResult r = Run({"smi", holder_->device(), "--json"});
  ASSERT_EQ(r.exit_status, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["attached"], true);
  EXPECT_EQ(j["processes"][0]["pid"], holder_->pid()) << r.out;
  EXPECT_EQ(j["samples"].size(), 1u) << r.out;
  // The virtual SMU's metrics (am/sim: the gfx clock it reports at its top DPM level).
  EXPECT_GT(j["samples"][0]["clocks_mhz"]["gfx"].get<uint32_t>(), 0u) << r.out;
  EXPECT_TRUE(j["firmware"]["smu"].is_string()) << r.out;
  const auto& general = j["vram"]["regions"]["general"];
  EXPECT_GE(general["allocations"].get<uint64_t>(), 1u) << r.out;
  EXPECT_LT(general["free"].get<uint64_t>(), general["size"].get<uint64_t>()) << r.out;
  // attach_holder's wait that slept on the device's interrupt and timed out.
  const auto& waits = j["waits"];
  EXPECT_EQ(waits["interrupt"], true) << r.out;
  EXPECT_EQ(waits["sleeping"], 0u) << r.out;
  EXPECT_GE(waits["sleeps"].get<uint64_t>(), 1u) << r.out;
  EXPECT_GE(waits["timer_wakes"].get<uint64_t>(), 1u) << r.out;
  EXPECT_EQ(waits["blind_waits"], 0u) << r.out;
  CliResult text = Run({"smi", holder_->device(), "--count=2", "--watch=0.01"});
  ASSERT_EQ(text.exit_status, 0) << text.err;
  EXPECT_TRUE(absl::StrContains(text.out, absl::StrFormat("attached to process %d", holder_->pid()))) << text.out;
  EXPECT_TRUE(absl::StrContains(text.out, "waits: 0 sleeping on the device's interrupt now")) << text.out;
  EXPECT_TRUE(absl::StrContains(text.out, "sample 2")) << text.out;
}

// A holder running a kernel that never ends: `waves` attached, read-only, finds its two waves at the s_branch.
TEST(AttachSpinningTest, WavesSeesTheHoldersRunningWavesReadOnly) {
  Holder holder;
  holder.Start("sim:navi31:spin", {"BAREGPU_DEBUG_ENDPOINT=1"}, "spin");
  if (HasFatalFailure()) return;
  CliResult r;
  // The waves start a moment after the submit: bounded retries.
  for (int attempt = 0; attempt < 500; ++attempt) {
    r = RunBaregpu({"waves", "sim:navi31:spin", "--lanes=0", "--json"});
    if (r.exit_status != 0 || nlohmann::json::parse(r.out)["waves"].size() >= 2) break;
    ::usleep(10'000);
  }
  ASSERT_EQ(r.exit_status, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["waves"].size(), 2u) << r.out;
  std::set<std::string> first_ids;
  for (const auto& w : j["waves"]) {
    EXPECT_EQ(w["instruction"], "s_branch 65535") << r.out;
    EXPECT_EQ(w["exec"], "0xffffffff") << r.out;
    first_ids.insert(w["vgprs"]["0"][0].get<std::string>());  // v0 of lane 0: the wave's first work-item id
  }
  EXPECT_EQ(first_ids, (std::set<std::string>{"0x0", "0x20"})) << r.out;
  EXPECT_EQ(holder.Stop(), 0);
}

TEST_F(AttachTest, ListShowsTheInstanceItsHolderAndTheEndpoint) {
  CliResult r = Run({"list", "--json"});
  ASSERT_EQ(r.exit_status, 0) << r.err;
  bool found = false;
  const nlohmann::json listing = nlohmann::json::parse(r.out);
  for (const auto& instance : listing["instances"]) {
    if (instance["name"] != holder_->device()) continue;
    found = true;
    EXPECT_EQ(instance["holder_pid"], holder_->pid()) << r.out;
    EXPECT_EQ(instance["debug_endpoint"], true) << r.out;
    EXPECT_EQ(instance["open"], true) << r.out;
  }
  EXPECT_TRUE(found) << r.out;
  CliResult text = Run({"list"});
  EXPECT_TRUE(absl::StrContains(text.out, absl::StrFormat("process %d, debug endpoint", holder_->pid()))) << text.out;
}

// Raw connections to the endpoint, as a broken or hostile debugger of the same user makes them.
int Connect(const std::string& path) {
  int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  std::snprintf(address.sun_path, sizeof(address.sun_path), "%s", path.c_str());
  if (::connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

TEST_F(AttachTest, TheHolderSurvivesGarbageAndClientsThatLeaveMidRequest) {
  // Half a request header, then gone.
  int fd = Connect(holder_->endpoint());
  ASSERT_GE(fd, 0);
  const serve::Request read{static_cast<uint8_t>(serve::Command::kMmioRead), 0, 5, {0, 4, 0}};
  const auto header = read.Encode();
  ASSERT_EQ(::send(fd, header.data(), header.size() / 2, MSG_NOSIGNAL), static_cast<ssize_t>(header.size() / 2));
  ::close(fd);
  // A whole request whose reply is never read: a bulk read of all of VRAM's first megabyte.
  fd = Connect(holder_->endpoint());
  ASSERT_GE(fd, 0);
  const serve::Request bulk{static_cast<uint8_t>(serve::Command::kMmioRead), 0, 0, {0, 1 << 20, 0}};
  const auto bulk_header = bulk.Encode();
  ASSERT_EQ(::send(fd, bulk_header.data(), bulk_header.size(), MSG_NOSIGNAL), static_cast<ssize_t>(bulk_header.size()));
  ::close(fd);
  // Garbage: an unknown command, then random bytes.
  fd = Connect(holder_->endpoint());
  ASSERT_GE(fd, 0);
  std::array<uint8_t, 200> junk;
  for (size_t i = 0; i < junk.size(); ++i) junk[i] = static_cast<uint8_t>(0xf0 + i * 31);
  (void)::send(fd, junk.data(), junk.size(), MSG_NOSIGNAL);
  ::close(fd);
  // A DMA_READ of an address no buffer has, and of more than a request may ask: errors, not crashes.
  fd = Connect(holder_->endpoint());
  ASSERT_GE(fd, 0);
  const serve::Request dma{static_cast<uint8_t>(serve::Command::kDmaRead), 0, 0, {0x10, uint64_t{1} << 40, 0}};
  const auto dma_header = dma.Encode();
  ASSERT_EQ(::send(fd, dma_header.data(), dma_header.size(), MSG_NOSIGNAL), static_cast<ssize_t>(dma_header.size()));
  std::array<uint8_t, serve::kReplyHeaderSize> reply;
  pollfd p{fd, POLLIN, 0};
  ASSERT_GT(::poll(&p, 1, 10'000), 0);
  ASSERT_EQ(::recv(fd, reply.data(), reply.size(), MSG_WAITALL), static_cast<ssize_t>(reply.size()));
  EXPECT_EQ(serve::Reply::Decode(reply).status, serve::ReplyStatus::kError);
  ::close(fd);

  // The endpoint still answers, and the holder still runs (its exit status is checked at the end of the suite).
  CliResult r = Run({"regs", holder_->device(), "read", "SCRATCH_REG0"});
  EXPECT_EQ(r.exit_status, 0) << r.err;
}

TEST_F(AttachTest, AnEndpointOthersCanReachIsRefused) {
  ASSERT_EQ(::chmod(holder_->endpoint().c_str(), 0666), 0);
  CliResult r = Run({"regs", holder_->device(), "read", "SCRATCH_REG0"});
  ASSERT_EQ(::chmod(holder_->endpoint().c_str(), 0600), 0);
  EXPECT_EQ(r.exit_status, 1);
  EXPECT_TRUE(absl::StrContains(r.err, "mode 0666")) << r.err;
}

TEST_F(AttachTest, AnEndpointOfAnotherUserIsRefused) {
  if (::geteuid() != 0) GTEST_SKIP() << "only root can give the socket to another user";
  constexpr uid_t kOtherUser = 54321;
  ASSERT_EQ(::lchown(holder_->endpoint().c_str(), kOtherUser, static_cast<gid_t>(-1)), 0);
  CliResult r = Run({"regs", holder_->device(), "read", "SCRATCH_REG0"});
  ASSERT_EQ(::lchown(holder_->endpoint().c_str(), 0, static_cast<gid_t>(-1)), 0);
  EXPECT_EQ(r.exit_status, 1);
  EXPECT_TRUE(absl::StrContains(r.err, "belongs to uid 54321")) << r.err;
}

TEST(AttachWithoutEndpointTest, TheErrorSaysHowToEnableOne) {
  Holder holder;
  holder.Start("sim:navi31:noendpoint", {"BAREGPU_DEBUG_ENDPOINT=0"});
  if (HasFatalFailure()) return;
  EXPECT_EQ(holder.endpoint(), "-");
  CliResult r = RunBaregpu({"regs", "sim:navi31:noendpoint", "read", "SCRATCH_REG0"});
  EXPECT_EQ(r.exit_status, 1);
  EXPECT_TRUE(absl::StrContains(r.err, absl::StrFormat("in use by process %d", holder.pid()))) << r.err;
  EXPECT_TRUE(absl::StrContains(r.err, "BAREGPU_DEBUG_ENDPOINT=1")) << r.err;
  EXPECT_EQ(holder.Stop(), 0);
}

}  // namespace
}  // namespace cli
