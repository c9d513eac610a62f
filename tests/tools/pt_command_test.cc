// `baregpu pt DEVICE walk VA`: a mapping made by the driver, walked from the device's own registers and VRAM by a
// second process.
#include "absl/strings/match.h"
#include "absl/strings/str_format.h"
#include "am/device.h"
#include "am/memory_manager.h"
#include "am/sim/persistent_state.h"
#include "firmware/store.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "pci/open.h"
#include "tests/am/sim/sim_state_dir.h"
#include "tests/tools/run_cli.h"

namespace cli {
namespace {

using ::cli::testing::RunBaregpu;

auto* const kStateDir = am::sim::testing::RegisterSimStateDir();

TEST(PtCommandTest, WalksADriverMappingToItsPage) {
  ASSERT_TRUE(am::sim::PersistentState::PowerCycle("sim:navi31:pt").ok());
  uint64_t va = 0, vram = 0, va_huge = 0;
  {
    auto pci = pci::Open("sim:navi31:pt");
    ASSERT_TRUE(pci.ok()) << pci.status();
    auto device = am::Device::Open(std::move(*pci));
    ASSERT_TRUE(device.ok()) << device.status();
    ASSERT_TRUE((*device)->Boot().ok());
    vram = *(*device)->memory().AllocVram(base::MiB(4), base::MiB(2));
    va = *(*device)->memory().MapVram(vram, 4096);
    va_huge = *(*device)->memory().MapVram(vram + base::MiB(2), base::MiB(2));
  }
  auto r = RunBaregpu({"pt", "sim:navi31:pt", "walk", absl::StrFormat("%#x", va + 0x10)});
  ASSERT_EQ(r.exit_status, 0) << r.err;
  EXPECT_TRUE(absl::StrContains(r.out, absl::StrFormat("-> VRAM %#x (4 KiB page)", vram + 0x10))) << r.out;
  EXPECT_TRUE(absl::StrContains(r.out, "PDB2")) << r.out;
  EXPECT_TRUE(absl::StrContains(r.out, "READABLE WRITEABLE")) << r.out;

  auto huge = RunBaregpu({"pt", "sim:navi31:pt", "walk", absl::StrFormat("%#x", va_huge + 8), "--json"});
  ASSERT_EQ(huge.exit_status, 0) << huge.err;
  auto j = nlohmann::json::parse(huge.out);
  EXPECT_EQ(j["steps"].size(), 3u);  // PDB2, PDB1, and PDB0 holding a PDE_PTE
  EXPECT_TRUE(absl::StrContains(j["result"].get<std::string>(), "2 MiB")) << huge.out;

  auto unmapped = RunBaregpu({"pt", "sim:navi31:pt", "walk", "0x10000000"});
  ASSERT_EQ(unmapped.exit_status, 0) << unmapped.err;
  EXPECT_TRUE(absl::StrContains(unmapped.out, "not mapped")) << unmapped.out;
}

TEST(PtCommandTest, BadArgumentsAreUsageErrors) {
  EXPECT_EQ(RunBaregpu({"pt"}).exit_status, 2);
  EXPECT_EQ(RunBaregpu({"pt", "sim:navi31:pt2", "walk", "12"}).exit_status, 2);
  EXPECT_EQ(RunBaregpu({"pt", "sim:navi31:pt2", "walk", "0x1000", "--vmid=16"}).exit_status, 2);
  auto disabled = RunBaregpu({"pt", "sim:navi31:pt2", "walk", "0x1000", "--vmid=3"});
  EXPECT_EQ(disabled.exit_status, 1);
  EXPECT_TRUE(absl::StrContains(disabled.err, "disabled")) << disabled.err;
}

}  // namespace
}  // namespace cli
