// `baregpu sim reset`: power-cycling a virtual device from the command line.
#include <stdlib.h>
#include <unistd.h>

#include "absl/strings/match.h"
#include "am/sim/navi31.h"
#include "gtest/gtest.h"
#include "nv/sim/ad102.h"
#include "pci/open.h"
#include "tests/am/sim/sim_state_dir.h"
#include "tests/tools/run_cli.h"

namespace cli {
namespace {

using ::cli::testing::RunBaregpu;

auto* const kStateDir = am::sim::testing::RegisterSimStateDir();

TEST(SimCommandTest, ResetMakesTheNextOpenCold) {
  {
    auto device = pci::Open("sim:navi31:cli");
    ASSERT_TRUE(device.ok()) << device.status();
    (*(*device)->MapMemory(0))[0] = 0x42;
  }
  {
    auto device = pci::Open("sim:navi31:cli");
    ASSERT_TRUE(device.ok());
    EXPECT_FALSE(static_cast<am::sim::Navi31&>(**device).cold());
  }
  auto r = RunBaregpu({"sim", "reset", "sim:navi31:cli"});
  ASSERT_EQ(r.exit_status, 0) << r.err;
  auto device = pci::Open("sim:navi31:cli");
  ASSERT_TRUE(device.ok());
  EXPECT_TRUE(static_cast<am::sim::Navi31&>(**device).cold());
  EXPECT_EQ((*(*device)->MapMemory(0))[0], 0);
}

// The virtual AD102 keeps its state beside sim:navi31's and is listed and power-cycled the same way.
TEST(SimCommandTest, ListShowsTheVirtualAd102AndResetPowersItOff) {
  {
    auto device = pci::Open("sim:ad102:cli");
    ASSERT_TRUE(device.ok()) << device.status();
    static_cast<nv::sim::Ad102&>(**device).priv_bus().Write32(0x1fa828, 0x5ff800);  // WPR2 up (ADDR_HI)
  }
  auto list = RunBaregpu({"list"});
  ASSERT_EQ(list.exit_status, 0) << list.err;
  EXPECT_TRUE(absl::StrContains(list.out, "sim:ad102")) << list.out;
  EXPECT_TRUE(absl::StrContains(list.out, "virtual NVIDIA GeForce RTX 4090 (AD102)")) << list.out;
  EXPECT_TRUE(absl::StrContains(list.out, "sim:ad102:cli")) << list.out;  // the instance, from the state directory
  auto r = RunBaregpu({"sim", "reset", "sim:ad102:cli"});
  ASSERT_EQ(r.exit_status, 0) << r.err;
  auto device = pci::Open("sim:ad102:cli");
  ASSERT_TRUE(device.ok()) << device.status();
  EXPECT_TRUE(static_cast<nv::sim::Ad102&>(**device).cold());
  EXPECT_EQ((*(*device)->MapMmio(0)).Read32(0x1fa828), 0u);
}

TEST(SimCommandTest, ResetRefusesADeviceInUse) {
  auto device = pci::Open("sim:navi31:held");
  ASSERT_TRUE(device.ok());
  auto r = RunBaregpu({"sim", "reset", "sim:navi31:held"});
  EXPECT_EQ(r.exit_status, 1);
  EXPECT_TRUE(absl::StrContains(r.err, "in use by process " + std::to_string(::getpid()))) << r.err;
}

TEST(SimCommandTest, BadArgumentsAreUsageErrors) {
  EXPECT_EQ(RunBaregpu({"sim"}).exit_status, 2);
  EXPECT_EQ(RunBaregpu({"sim", "explode", "sim:navi31"}).exit_status, 2);
  EXPECT_EQ(RunBaregpu({"sim", "reset"}).exit_status, 2);
  EXPECT_EQ(RunBaregpu({"sim", "reset", "0000:03:00.0"}).exit_status, 2);
  auto unknown = RunBaregpu({"sim", "reset", "sim:navi99"});
  EXPECT_EQ(unknown.exit_status, 1);
  EXPECT_TRUE(absl::StartsWith(unknown.err, "error: no virtual device kind 'navi99'"));
  // Issue 23 (10): an instance name that would reach outside the state directory.
  auto escape = RunBaregpu({"sim", "reset", "sim:navi31:../x"});
  EXPECT_EQ(escape.exit_status, 1);
  EXPECT_TRUE(absl::StrContains(escape.err, "not a valid virtual device name")) << escape.err;
}

// Issue 23 (7): `boot` says on stderr that a damaged state was discarded, and boots the device from power-on.
TEST(SimCommandTest, BootNotesADiscardedState) {
  ASSERT_EQ(RunBaregpu({"boot", "sim:navi31:noted"}).exit_status, 0);
  ASSERT_EQ(::truncate((kStateDir->dir() + "/navi31-noted.model").c_str(), 4096), 0);
  auto r = RunBaregpu({"boot", "sim:navi31:noted", "--json"});
  ASSERT_EQ(r.exit_status, 0) << r.err;
  EXPECT_TRUE(absl::StrContains(r.err, "note: state: sim:navi31:noted: state file")) << r.err;
  EXPECT_TRUE(absl::StrContains(r.err, "navi31-noted.model has 4096 bytes")) << r.err;
  EXPECT_TRUE(absl::StrContains(r.out, "\"kind\": \"full\"")) << r.out;
}

}  // namespace
}  // namespace cli
