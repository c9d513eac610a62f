// `baregpu smi DEVICE`: the SMU's metrics, VRAM, firmware versions and the holder, on a booted virtual GPU, a cold
// one (nothing needing firmware is shown and nothing boots it) and one another process holds.
#include <unistd.h>

#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_format.h"
#include "am/device.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "pci/open.h"
#include "pci/sim/persistent_state.h"
#include "tests/am/sim/sim_state_dir.h"
#include "tests/tools/run_cli.h"

namespace cli {
namespace {

using ::cli::testing::RunBaregpu;

auto* const kStateDir = am::sim::testing::RegisterSimStateDir();

void Boot(const std::string& name) {
  ASSERT_TRUE(pci::sim::PersistentState::PowerCycle(name).ok());
  auto device = am::Device::Open(name);
  ASSERT_TRUE(device.ok()) << device.status();
  ASSERT_TRUE((*device)->Boot().ok());
}

TEST(SmiCommandTest, ABootedDeviceReportsMetricsFirmwareAndVram) {
  Boot("sim:navi31:smi");
  auto r = RunBaregpu({"smi", "sim:navi31:smi"});
  ASSERT_EQ(r.exit_status, 0) << r.err;
  EXPECT_TRUE(absl::StrContains(r.out, "booted by baregpu, firmware running")) << r.out;
  EXPECT_TRUE(absl::StrContains(r.out, "clocks (MHz): gfx ")) << r.out;
  EXPECT_TRUE(absl::StrContains(r.out, "temperatures (C): edge ")) << r.out;
  EXPECT_TRUE(absl::StrContains(r.out, "VRAM 24576 MiB")) << r.out;
  EXPECT_TRUE(absl::StrContains(r.out, "firmware: SMU 0x")) << r.out;
  EXPECT_TRUE(absl::StrContains(r.out, "smu_13_0_0.bin")) << r.out;

  auto j = RunBaregpu({"smi", "sim:navi31:smi", "--json", "--watch=0.01", "--count=3"});
  ASSERT_EQ(j.exit_status, 0) << j.err;
  auto json = nlohmann::json::parse(j.out);
  EXPECT_EQ(json["available"], true);
  EXPECT_EQ(json["booted"], true);
  ASSERT_EQ(json["samples"].size(), 3u) << j.out;
  EXPECT_GT(json["samples"][0]["clocks_mhz"]["gfx"].get<uint32_t>(), 0u) << j.out;
  EXPECT_GT(json["samples"][0]["temperatures_c"]["edge"].get<uint32_t>(), 0u) << j.out;
  // Each sample is a fresh transfer of the table: the SMU's counter moves on.
  EXPECT_LT(json["samples"][0]["metrics_counter"].get<uint32_t>(),
            json["samples"][2]["metrics_counter"].get<uint32_t>())
      << j.out;
  EXPECT_TRUE(json["firmware"]["smu"].is_string()) << j.out;
  EXPECT_TRUE(json["firmware"]["sos"].is_string()) << j.out;
  EXPECT_EQ(json["vram"]["total"].get<uint64_t>(), uint64_t{24} << 30) << j.out;

  // A bare --watch takes no argument after it: --count still bounds it.
  auto bare = RunBaregpu({"smi", "sim:navi31:smi", "--watch", "--count=1"});
  ASSERT_EQ(bare.exit_status, 0) << bare.err;
  EXPECT_TRUE(absl::StrContains(bare.out, "clocks (MHz)")) << bare.out;
}

TEST(SmiCommandTest, AColdDeviceIsNotBootedAndShowsNoMetrics) {
  ASSERT_TRUE(pci::sim::PersistentState::PowerCycle("sim:navi31:smi2").ok());
  auto r = RunBaregpu({"smi", "sim:navi31:smi2", "--json"});
  ASSERT_EQ(r.exit_status, 0) << r.err;
  auto json = nlohmann::json::parse(r.out);
  EXPECT_EQ(json["booted"], false);
  EXPECT_EQ(json["samples"].size(), 0u);
  EXPECT_TRUE(json["firmware"]["smu"].is_null()) << r.out;
  auto text = RunBaregpu({"smi", "sim:navi31:smi2"});
  EXPECT_TRUE(absl::StrContains(text.out, "not booted: no firmware runs (`baregpu boot sim:navi31:smi2` starts it)"))
      << text.out;
  // Still cold: smi booted nothing (a boot would have started the sOS).
  auto info = RunBaregpu({"info", "sim:navi31:smi2"});
  EXPECT_TRUE(absl::StrContains(info.out, "firmware: not running")) << info.out;
}

TEST(SmiCommandTest, ADeviceHeldByAnotherProcessNamesItsHolder) {
  Boot("sim:navi31:smi3");
  auto held = pci::Open("sim:navi31:smi3");  // this test process holds it now
  ASSERT_TRUE(held.ok()) << held.status();
  auto r = RunBaregpu({"smi", "sim:navi31:smi3", "--json"});
  ASSERT_EQ(r.exit_status, 0) << r.err;
  auto json = nlohmann::json::parse(r.out);
  EXPECT_EQ(json["available"], false);
  EXPECT_EQ(json["processes"][0]["pid"].get<uint32_t>(), static_cast<uint32_t>(::getpid())) << r.out;
  auto text = RunBaregpu({"smi", "sim:navi31:smi3"});
  EXPECT_TRUE(absl::StrContains(text.out, absl::StrFormat("held by process %d", ::getpid()))) << text.out;
}

TEST(SmiCommandTest, BadOptionsAreUsageErrors) {
  EXPECT_EQ(RunBaregpu({"smi"}).exit_status, 2);
  EXPECT_EQ(RunBaregpu({"smi", "sim:navi31:smi4", "--count=0"}).exit_status, 2);
  EXPECT_EQ(RunBaregpu({"smi", "sim:navi31:smi4", "--count=lots"}).exit_status, 2);
  auto watch = RunBaregpu({"smi", "sim:navi31:smi4", "--watch=-1"});
  EXPECT_EQ(watch.exit_status, 2);
  EXPECT_TRUE(absl::StrContains(watch.err, "interval in seconds")) << watch.err;
  auto help = RunBaregpu({"smi", "--help"});
  EXPECT_EQ(help.exit_status, 0);
  EXPECT_TRUE(absl::StrContains(help.out, "--watch[=V]")) << help.out;
}

}  // namespace
}  // namespace cli
