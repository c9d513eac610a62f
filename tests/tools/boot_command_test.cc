// `baregpu boot`: the step list, the decoded register trace and the JSON form.
#include <cstdlib>
#include <string>

#include "absl/strings/match.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/am/sim/sim_state_dir.h"
#include "tests/tools/run_cli.h"

namespace cli {
namespace {

using ::cli::testing::RunBaregpu;

auto* const kStateDir = am::sim::testing::RegisterSimStateDir();

// Started by a relative path (as tools/demo.sh and a user in the source tree do), the statically linked CLI still
// finds the build tree's virtual firmware (dladdr names such a program by the path it was started by).
TEST(BootCommandTest, BootsTheVirtualGpuWhenStartedByARelativePath) {
  const char* build = std::getenv("BAREGPU_BUILD_ROOT");
  ASSERT_NE(build, nullptr);
  const std::string command =
      "cd '" + std::string(build) + "' && tools/baregpu boot sim:navi31:relative-path > /dev/null 2>&1";
  EXPECT_EQ(std::system(command.c_str()), 0) << command;
}

TEST(BootCommandTest, PrintsEveryStepWithItsOutcome) {
  auto r = RunBaregpu({"boot", "sim:navi31:boot"});
  ASSERT_EQ(r.exit_status, 0) << r.err;
  for (const char* step :
       {"soc    init_hw", "gmc    init_hw", "ih     init_hw", "psp    init_hw", "smu    init_hw", "gfx    init_hw"}) {
    EXPECT_TRUE(absl::StrContains(r.out, step)) << r.out;
  }
  EXPECT_FALSE(absl::StrContains(r.out, "error")) << r.out;
}

TEST(BootCommandTest, ASecondBootIsPartialAndResetMakesItFull) {
  ASSERT_EQ(RunBaregpu({"boot", "sim:navi31:twice"}).exit_status, 0);
  auto second = RunBaregpu({"boot", "sim:navi31:twice"});
  ASSERT_EQ(second.exit_status, 0) << second.err;
  EXPECT_TRUE(absl::StrContains(second.out, "partial boot")) << second.out;
  EXPECT_FALSE(absl::StrContains(second.out, "psp    init_hw")) << second.out;
  auto reset = RunBaregpu({"boot", "sim:navi31:twice", "--reset", "--json"});
  ASSERT_EQ(reset.exit_status, 0) << reset.err;
  auto j = nlohmann::json::parse(reset.out);
  EXPECT_EQ(j["kind"], "full, after a mode1 reset");
}

TEST(BootCommandTest, TraceShowsDecodedRegisterAccesses) {
  auto r = RunBaregpu({"boot", "sim:navi31:trace", "--trace=regs"});
  ASSERT_EQ(r.exit_status, 0) << r.err;
  EXPECT_TRUE(absl::StrContains(r.out, "W IH_RB_CNTL = ")) << r.out.substr(0, 2000);
  EXPECT_TRUE(absl::StrContains(r.out, "RB_ENABLE=0x1")) << r.out.substr(0, 2000);
  EXPECT_TRUE(absl::StrContains(r.out, "R MMMC_VM_FB_LOCATION_BASE = 0x00008000")) << r.out.substr(0, 2000);
}

TEST(BootCommandTest, JsonListsTheSteps) {
  auto r = RunBaregpu({"boot", "sim:navi31:json", "--json"});
  ASSERT_EQ(r.exit_status, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_TRUE(j["booted"].get<bool>());
  ASSERT_EQ(j["steps"].size(), 14u);
  EXPECT_EQ(j["steps"][8]["block"], "gmc");
  EXPECT_EQ(j["steps"][8]["phase"], "init_hw");
}

TEST(BootCommandTest, BadArgumentsAreUsageErrors) {
  EXPECT_EQ(RunBaregpu({"boot"}).exit_status, 2);
  EXPECT_EQ(RunBaregpu({"boot", "sim:navi31:x", "--trace=everything"}).exit_status, 2);
  auto missing = RunBaregpu({"boot", "sim:nothing"});
  EXPECT_EQ(missing.exit_status, 1);
  EXPECT_TRUE(absl::StartsWith(missing.err, "error: ")) << missing.err;
}

}  // namespace
}  // namespace cli
