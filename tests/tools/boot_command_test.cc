// `baregpu boot`: the step list, the decoded register trace and the JSON form.
#include <cstdlib>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/am/sim/sim_state_dir.h"
#include "tests/firmware/nv/nv_firmware.h"
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
  EXPECT_EQ(j["kind"], "full, after a chip reset");
}

TEST(BootCommandTest, TraceShowsDecodedRegisterAccesses) {
  auto r = RunBaregpu({"boot", "sim:navi31:trace", "--trace=regs"});
  ASSERT_EQ(r.exit_status, 0) << r.err;
  EXPECT_TRUE(absl::StrContains(r.out, "W IH_RB_CNTL = ")) << r.out.substr(0, 2000);
  EXPECT_TRUE(absl::StrContains(r.out, "RB_ENABLE=0x1")) << r.out.substr(0, 2000);
  EXPECT_TRUE(absl::StrContains(r.out, "R MMMC_VM_FB_LOCATION_BASE = 0x00008000")) << r.out.substr(0, 2000);
}

// Each step's accesses under a heading line; every access named (the remapped HDP flush page by the driver's name,
// an address the database lacks by IP block, segment and offset); values as 0x%08x; no line wider than 160.
TEST(BootCommandTest, TraceIsGroupedByStepNamedAndNarrow) {
  auto r = RunBaregpu({"boot", "sim:navi31:trace-groups", "--trace=regs"});
  ASSERT_EQ(r.exit_status, 0) << r.err;
  for (const char* heading : {"== soc init_hw: ", "== gmc init_hw: ", "== psp init_hw: ", "== sdma init_hw: "}) {
    EXPECT_TRUE(absl::StrContains(r.out, heading)) << heading;
  }
  EXPECT_LT(r.out.find("== gmc init_hw: "), r.out.find("W MMVM_CONTEXT0_PAGE_TABLE_BASE_ADDR_LO32"));
  EXPECT_TRUE(absl::StrContains(r.out, "W REMAP_HDP_MEM_FLUSH_CNTL (HDP flush page) = 0x00000000")) << r.out;
  // Written by the MQD's HQD range in gfx init_hw; gc_11_0_0_offset.h names no register at GC offset 0x1fb9.
  EXPECT_TRUE(absl::StrContains(r.out, "W GC0 seg0+0x1fb9 (dword 0x3219) = 0x00000000")) << r.out;
  std::istringstream lines(r.out);
  std::string line;
  while (std::getline(lines, line)) {
    EXPECT_LE(line.size(), 160u) << line;
    EXPECT_FALSE(absl::StartsWith(line, "W dword") || absl::StartsWith(line, "R dword")) << line;
    EXPECT_FALSE(absl::StrContains(line, "= 0000000000")) << line;
  }
}

TEST(BootCommandTest, TraceWithJsonIsOneDocument) {
  auto r = RunBaregpu({"boot", "sim:navi31:trace-json", "--trace=regs", "--json"});
  ASSERT_EQ(r.exit_status, 0) << r.err;
  auto j = nlohmann::json::parse(r.out, nullptr, /*allow_exceptions=*/false);
  ASSERT_FALSE(j.is_discarded()) << r.out.substr(0, 500);
  EXPECT_EQ(j["schema"], "baregpu.boot/1");
  ASSERT_TRUE(j["trace"].is_array());
  bool saw_ih_rb_cntl = false;
  for (const auto& group : j["trace"]) {
    for (const auto& access : group["accesses"]) {
      if (access["register"] != "IH_RB_CNTL" || access["access"] != "W") continue;
      saw_ih_rb_cntl = true;
      EXPECT_EQ(j["steps"][group["step"].get<size_t>()]["block"], "ih");
      EXPECT_EQ(access["value"].get<std::string>().size(), 10u);  // 0x and eight digits
      EXPECT_EQ(access["fields"][0]["name"], "RB_ENABLE");
    }
  }
  EXPECT_TRUE(saw_ih_rb_cntl);
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

// An NVIDIA GPU boots through GSP-RM with Debian's real 535.113.01 files, then unloads it (the steps after
// static-info), so that the next boot finds WPR2 down.
TEST(BootCommandTest, BootsTheVirtualAd102ThroughGspRmAndUnloadsIt) {
  REQUIRE_NVIDIA_FIRMWARE(root);
  ::setenv("BAREGPU_FIRMWARE_PATH", root.c_str(), 1);
  auto r = RunBaregpu({"boot", "sim:ad102:boot", "--json"});
  ::unsetenv("BAREGPU_FIRMWARE_PATH");
  ASSERT_EQ(r.exit_status, 0) << r.err << r.out;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["chip"], "AD102");
  EXPECT_EQ(j["booted"], true);
  std::vector<std::string> steps;
  for (const auto& step : j["steps"]) {
    steps.push_back(step["step"]);
    EXPECT_TRUE(step["ok"].get<bool>()) << step.dump();
  }
  const std::vector<std::string> expected = {"identify",    "gfw-boot",   "firmware",   "wpr2",        "fb",
                                             "layout",      "fwsec-frts", "gsp-memory", "booter-load", "init-done",
                                             "static-info", "rm-objects", "unload",     "fwsec-sb",    "booter-unload"};
  EXPECT_EQ(steps, expected);
}

// --trace=rpc shows GSP-RM's messages under the step they belong to: the two RPCs queued before the boot, the CPU
// sequencer and INIT_DONE, static info, the unload.
TEST(BootCommandTest, TheVirtualAd102sRpcTraceFollowsTheSteps) {
  REQUIRE_NVIDIA_FIRMWARE(root);
  ::setenv("BAREGPU_FIRMWARE_PATH", root.c_str(), 1);
  auto r = RunBaregpu({"boot", "sim:ad102:trace", "--trace=rpc"});
  auto regs = RunBaregpu({"boot", "sim:ad102:trace", "--trace=regs"});
  ::unsetenv("BAREGPU_FIRMWARE_PATH");
  ASSERT_EQ(r.exit_status, 0) << r.err;
  const char* expected =
      "== gsp-memory: 2 messages\n"
      "-> NV_VGPU_MSG_FUNCTION_GSP_SET_SYSTEM_INFO (0x48), 664 bytes\n"
      "-> NV_VGPU_MSG_FUNCTION_SET_REGISTRY (0x49), 82 bytes\n"
      "== init-done: 2 messages\n"
      "<- NV_VGPU_MSG_EVENT_GSP_RUN_CPU_SEQUENCER (0x1002)";
  EXPECT_TRUE(absl::StrContains(r.out, expected)) << r.out;
  EXPECT_TRUE(absl::StrContains(r.out, "<- NV_VGPU_MSG_EVENT_GSP_INIT_DONE (0x1001), 0 bytes")) << r.out;
  EXPECT_TRUE(absl::StrContains(r.out, "-> NV_VGPU_MSG_FUNCTION_UNLOADING_GUEST_DRIVER (0x2f), 8 bytes")) << r.out;
  ASSERT_EQ(regs.exit_status, 0) << regs.err;
  EXPECT_TRUE(absl::StrContains(regs.out, "R NV_PMC_BOOT_42 = 0x192a1000")) << regs.out.substr(0, 2000);
  EXPECT_TRUE(absl::StrContains(regs.out, "R PROM window (VBIOS) x262144")) << regs.out.substr(0, 4000);
}

// Without GSP-RM's files the boot stops at the firmware step, exits 1, and says where to get them.
TEST(BootCommandTest, TheVirtualAd102WithoutFirmwareSaysWhatIsMissing) {
  ::setenv("BAREGPU_FIRMWARE_PATH", "/nonexistent-baregpu-firmware", 1);
  auto r = RunBaregpu({"boot", "sim:ad102:nofw"});
  ::unsetenv("BAREGPU_FIRMWARE_PATH");
  EXPECT_EQ(r.exit_status, 1) << r.out;
  EXPECT_TRUE(absl::StrContains(r.out, "firmware")) << r.out;
  EXPECT_TRUE(absl::StrContains(r.err, "tools/fetch_firmware.sh")) << r.err;
  EXPECT_FALSE(absl::StrContains(r.out, "booter-load")) << r.out;
}

}  // namespace
}  // namespace cli
