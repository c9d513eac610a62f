// `baregpu waves DEVICE`: a kernel that spins (s_branch to itself) on sim:navi31, and the command run in the same
// process through cli::Main (a second process cannot open a device this one holds; the test lends its open device
// to the command as a virtual device kind of its own, "sim:lent"). The command reads the waves through the SQ's
// indirect registers, as on hardware.
#include <cstring>
#include <memory>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_format.h"
#include "am/device.h"
#include "am/regs/gc.h"
#include "gtest/gtest.h"
#include "hcq/amd/amd_device.h"
#include "hcq/device.h"
#include "hcq/program.h"
#include "nlohmann/json.hpp"
#include "pci/device.h"
#include "pci/sim/persistent_state.h"
#include "pci/virtual_registry.h"
#include "tests/am/sim/sim_state_dir.h"
#include "tests/stress/corpus.h"
#include "tools/cli/command.h"

namespace cli {
namespace {

auto* const kStateDir = am::sim::testing::RegisterSimStateDir();

constexpr char kDevice[] = "sim:navi31:waves";
constexpr char kLent[] = "sim:lent";
// s_branch -1 (SOPP 0x17f << 23, s_branch = opcode 32 in LLVM's GFX11 SOPP table): a wave that jumps to itself.
constexpr uint32_t kBranchToItself = (0x17fu << 23) | (32u << 16) | 0xffffu;
constexpr uint32_t kWorkgroupSize = 64;  // two wave32 waves

// A pci::Device that forwards to a device someone else owns (the test's open hcq device).
class LentDevice final : public pci::Device {
 public:
  LentDevice(std::string name, pci::Device& owner) : pci::Device(std::move(name)), owner_(owner) {}
  absl::string_view backend() const override { return owner_.backend(); }
  absl::Status ReadConfig(uint32_t offset, std::span<uint8_t> data) override { return owner_.ReadConfig(offset, data); }
  absl::Status WriteConfig(uint32_t offset, std::span<const uint8_t> data) override {
    return owner_.WriteConfig(offset, data);
  }
  absl::StatusOr<pci::BarInfo> GetBarInfo(int bar) override { return owner_.GetBarInfo(bar); }
  absl::StatusOr<pci::Mmio> MapMmio(int bar) override { return owner_.MapMmio(bar); }
  absl::StatusOr<std::span<uint8_t>> MapMemory(int bar) override { return owner_.MapMemory(bar); }
  absl::StatusOr<std::unique_ptr<pci::DmaBuffer>> AllocDma(size_t size, const pci::DmaOptions& options) override {
    return owner_.AllocDma(size, options);
  }
  absl::Status ResetFunction() override { return absl::FailedPreconditionError("a lent device is not reset"); }
  absl::StatusOr<std::vector<int>> EnableInterrupts(int) override {
    return absl::FailedPreconditionError("a lent device's interrupts are its owner's");
  }
  absl::Status DisableInterrupts() override { return absl::OkStatus(); }

 private:
  pci::Device& owner_;
};

pci::Device* lent_device = nullptr;  // set while a test holds the device

BAREGPU_REGISTER_VIRTUAL_DEVICE(kLentRegistered,
                                pci::VirtualDeviceKind{
                                    .kind = "lent",
                                    .description = "the device the waves test holds, lent to the command",
                                    .open = [](const std::string& name,
                                               const std::string&) -> absl::StatusOr<std::unique_ptr<pci::Device>> {
                                      if (lent_device == nullptr) return absl::UnavailableError("nothing is lent");
                                      return std::make_unique<LentDevice>(name, *lent_device);
                                    },
                                });

struct CliRun {
  int status;
  std::string out, err;
};
CliRun Baregpu(const std::vector<std::string>& args) {
  std::ostringstream out, err;
  const int status = Main(args, out, err, /*interactive=*/false);
  return {status, out.str(), err.str()};
}

class WavesCommandTest : public ::testing::Test {
 protected:
  void SetUp() override {
    code_ = stress::ReadCodeObject("vector_add-O2");
    if (code_.empty()) GTEST_SKIP() << "vector_add-O2.co is not built";
    ASSERT_TRUE(pci::sim::PersistentState::PowerCycle(kDevice).ok());
    auto device = hcq::Device::Open(kDevice);
    ASSERT_TRUE(device.ok()) << device.status();
    device_ = std::move(*device);
    auto* amd = dynamic_cast<hcq::amd::AmdDevice*>(device_.get());
    ASSERT_NE(amd, nullptr);
    lent_device = &amd->am().pci();
  }
  void TearDown() override {
    lent_device = nullptr;
    queue_.reset();
    program_.reset();
    device_.reset();  // ends the spinning waves (RESET_WAVES) before the memory goes
  }

  // Launches one workgroup of the kernel spinning at its first instruction; returns its kernel-argument address.
  uint64_t LaunchSpinningKernel() {
    const std::vector<char> spinning = stress::WithFirstInstruction(code_, kBranchToItself);
    auto program = device_->LoadProgram(
        std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(spinning.data()), spinning.size()), "vector_add");
    EXPECT_TRUE(program.ok()) << program.status();
    if (!program.ok()) return 0;
    program_ = std::move(*program);
    auto args = device_->NewArgs(program_->args_size(), 3);
    EXPECT_TRUE(args.ok()) << args.status();
    if (!args.ok()) return 0;
    args_ = *args;
    queue_ = device_->NewComputeQueue();
    queue_->exec(*program_, args_, {1, 1, 1}, {kWorkgroupSize, 1, 1});
    EXPECT_TRUE(queue_->submit(*device_).ok());
    return args_.va();
  }

  // Runs `waves` until it sees `count` waves (they start a moment after the submit), at most a few seconds.
  CliRun WavesUntil(const std::vector<std::string>& args, size_t count) {
    CliRun r{};
    for (int attempt = 0; attempt < 500; ++attempt) {
      r = Baregpu(args);
      if (r.status != 0) return r;
      auto j = nlohmann::json::parse(r.out, nullptr, false);
      if (!j.is_discarded() && j["waves"].size() >= count) return r;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return r;
  }

  std::vector<char> code_;
  std::unique_ptr<hcq::Device> device_;
  std::unique_ptr<hcq::Program> program_;
  std::unique_ptr<hcq::ComputeQueue> queue_;
  hcq::ArgsState args_;
};

TEST_F(WavesCommandTest, AnIdleGpuShowsNoWaves) {
  CliRun r = Baregpu({"waves", kLent});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, "sim:lent: no waves\n");
  CliRun j = Baregpu({"waves", kLent, "--json"});
  ASSERT_EQ(j.status, 0) << j.err;
  EXPECT_EQ(nlohmann::json::parse(j.out)["waves"].size(), 0u) << j.out;
}

TEST_F(WavesCommandTest, SeesTheSpinningWavesAtTheirPcWithTheirRegisters) {
  const uint64_t kernargs = LaunchSpinningKernel();
  CliRun r = WavesUntil({"waves", kLent, "--lanes=0,1", "--json"}, 2);
  ASSERT_EQ(r.status, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["waves"].size(), 2u) << r.out;
  std::set<std::string> pcs;
  for (const auto& w : j["waves"]) {
    pcs.insert(w["pc"].get<std::string>());
    EXPECT_EQ(w["instruction"], "s_branch 65535") << r.out;
    EXPECT_EQ(w["exec"], "0xffffffff") << r.out;
    EXPECT_EQ(w["state"][0], "running") << r.out;
    EXPECT_EQ(w["wave64"], false);
    EXPECT_EQ(w["vmid"], 0);
    // s[0:1]: the kernel-argument pointer, the kernel's first user SGPRs.
    const uint64_t s01 = std::stoull(w["sgprs"][0].get<std::string>(), nullptr, 16) |
                         std::stoull(w["sgprs"][1].get<std::string>(), nullptr, 16) << 32;
    EXPECT_EQ(s01, kernargs) << r.out;
  }
  EXPECT_EQ(pcs.size(), 1u) << r.out;  // both waves spin at the kernel's first instruction
  // v0 holds the work-item id: lane L of wave W is W * 32 + L.
  const auto& first = j["waves"][0];
  const auto& second = j["waves"][1];
  const uint32_t base0 = first["slot"].get<uint32_t>() * 4 + first["simd"].get<uint32_t>();
  const uint32_t base1 = second["slot"].get<uint32_t>() * 4 + second["simd"].get<uint32_t>();
  EXPECT_EQ(first["vgprs"]["1"][0], absl::StrFormat("%#x", base0 * 32 + 1)) << r.out;
  EXPECT_EQ(second["vgprs"]["0"][0], base1 == 0 ? "0x0" : absl::StrFormat("%#x", base1 * 32)) << r.out;

  // The text form names the place, state, PC and instruction.
  CliRun text = Baregpu({"waves", kLent});
  ASSERT_EQ(text.status, 0) << text.err;
  EXPECT_TRUE(std::regex_search(
      text.out, std::regex(R"(SE\d SA\d WGP\d SIMD\d wave \d+: running, PC 0x[0-9a-f]+  s_branch 65535)")))
      << text.out;
  EXPECT_TRUE(absl::StrContains(text.out, "EXEC 0xffffffff")) << text.out;
  EXPECT_TRUE(absl::StrContains(text.out, "queue comp_1.0.0")) << text.out;
}

TEST_F(WavesCommandTest, HaltStopsTheWavesWhileTheyAreReadAndResumesThem) {
  LaunchSpinningKernel();
  ASSERT_EQ(WavesUntil({"waves", kLent, "--json"}, 2).status, 0);
  CliRun halted = Baregpu({"waves", kLent, "--halt", "--json"});
  ASSERT_EQ(halted.status, 0) << halted.err;
  auto j = nlohmann::json::parse(halted.out);
  ASSERT_EQ(j["waves"].size(), 2u) << halted.out;
  EXPECT_EQ(j["halted"], true);
  for (const auto& w : j["waves"]) EXPECT_EQ(w["state"][0], "halted") << halted.out;
  // Resumed after the read: the next look without --halt sees them running.
  CliRun after = Baregpu({"waves", kLent, "--json"});
  ASSERT_EQ(after.status, 0) << after.err;
  const auto resumed = nlohmann::json::parse(after.out);
  ASSERT_EQ(resumed["waves"].size(), 2u) << after.out;
  for (const auto& w : resumed["waves"]) EXPECT_EQ(w["state"][0], "running") << after.out;
}

TEST_F(WavesCommandTest, TheSelectionRegistersAreRestored) {
  LaunchSpinningKernel();
  ASSERT_EQ(WavesUntil({"waves", kLent, "--json"}, 2).status, 0);
  auto* amd = dynamic_cast<hcq::amd::AmdDevice*>(device_.get());
  auto g = amd->am().Regs<am::regs::Ip::kGc>();
  const auto index = am::regs::gc::GRBM_GFX_INDEX{}.se_index(1).sa_index(1).instance_index(5);
  const auto ind = am::regs::gc::SQ_IND_INDEX{}.wave_id(3).index(0x10c);
  g.Write(index);
  g.Write(ind);
  ASSERT_EQ(Baregpu({"waves", kLent, "--halt"}).status, 0);
  EXPECT_EQ(g.Read<am::regs::gc::GRBM_GFX_INDEX>().raw(), index.raw());
  EXPECT_EQ(g.Read<am::regs::gc::SQ_IND_INDEX>().raw(), ind.raw());
}

TEST_F(WavesCommandTest, BadLanesAreUsageErrors) {
  for (const char* lanes : {"--lanes=999", "--lanes=64", "--lanes=a", "--lanes=0,,1", "--lanes="}) {
    CliRun r = Baregpu({"waves", kLent, lanes});
    EXPECT_EQ(r.status, 2) << lanes << ": " << r.err;
    EXPECT_TRUE(absl::StrContains(r.err, "lane numbers 0 to 63")) << r.err;
  }
  EXPECT_EQ(Baregpu({"waves"}).status, 2);
  CliRun help = Baregpu({"waves", "--help"});
  EXPECT_EQ(help.status, 0);
  EXPECT_TRUE(absl::StrContains(help.out, "--halt")) << help.out;
}

}  // namespace
}  // namespace cli
