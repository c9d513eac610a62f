// `baregpu info`: the device as its discovery table describes it.
#include <nlohmann/json.hpp>

#include "absl/strings/match.h"
#include "gtest/gtest.h"
#include "tests/am/sim/sim_state_dir.h"
#include "tests/firmware/debian_firmware.h"
#include "tests/firmware/nv/nv_firmware.h"
#include "tests/tools/run_cli.h"

namespace cli {
namespace {

using ::cli::testing::RunBaregpu;

auto* const kStateDir = am::sim::testing::RegisterSimStateDir();

TEST(InfoCommandTest, JsonDescribesTheVirtualNavi31) {
  auto r = RunBaregpu({"info", "sim:navi31:info", "--json"});
  ASSERT_EQ(r.exit_status, 0) << r.err;
  auto json = nlohmann::json::parse(r.out, nullptr, false);
  ASSERT_FALSE(json.is_discarded()) << r.out;
  EXPECT_EQ(json["device_id"], "0x744c");
  EXPECT_EQ(json["vram_size"], uint64_t{24} << 30);
  EXPECT_EQ(json["gc_info"]["compute_units"], 96);
  bool saw_gc = false;
  for (const auto& ip : json["ips"]) {
    if (ip["block"] == "GC") {
      saw_gc = true;
      EXPECT_EQ(ip["version"], "11.0.0");
      EXPECT_EQ(ip["bases"][0], "0x1260");
    }
  }
  EXPECT_TRUE(saw_gc);
  EXPECT_EQ(json["bars"].size(), 3u);
}

// The RX 7900 XTX is device 0x744c revision 0xc8 (libdrm's amdgpu.ids); GC 11.0.0 compiles as gfx1100.
TEST(InfoCommandTest, NamesTheProductTargetAndSizesInHumanUnits) {
  auto r = RunBaregpu({"info", "sim:navi31:product"});
  ASSERT_EQ(r.exit_status, 0) << r.err;
  EXPECT_TRUE(absl::StrContains(r.out, "1002:744c rev c8, AMD Radeon RX 7900 XTX")) << r.out;
  EXPECT_TRUE(absl::StrContains(r.out, "compile target gfx1100 (GC 11.0.0), VRAM 24 GiB")) << r.out;
  EXPECT_TRUE(absl::StrContains(r.out, "BAR0      32 GiB")) << r.out;
  EXPECT_TRUE(absl::StrContains(r.out, "BAR5       1 MiB")) << r.out;
  auto j = nlohmann::json::parse(RunBaregpu({"info", "sim:navi31:product", "--json"}).out);
  EXPECT_EQ(j["product"], "AMD Radeon RX 7900 XTX");
  EXPECT_EQ(j["gfx_target"], "gfx1100");
  EXPECT_EQ(j["revision"], "0xc8");
}

TEST(InfoCommandTest, TextListsEveryBlock) {
  auto r = RunBaregpu({"info", "sim:navi31:info-text"});
  ASSERT_EQ(r.exit_status, 0) << r.err;
  for (const char* block : {"GC", "SDMA0", "MMHUB", "NBIF", "MP0", "MP1", "HDP", "OSSSYS"}) {
    EXPECT_TRUE(absl::StrContains(r.out, block)) << block;
  }
  EXPECT_TRUE(absl::StrContains(r.out, "96 CUs"));
}

// Before a boot no sOS runs and the files a boot would load are the virtual set; after a boot with Debian's real
// firmware, the running sOS's version is the real one (psp_13_0_0_sos.bin 20250410: 0x00310032) and the files are
// the real release's.
TEST(InfoCommandTest, FirmwareShowsTheRunningSosAndTheFilesABootLoads) {
  auto fresh = RunBaregpu({"info", "sim:navi31:info-fw", "--json"});
  ASSERT_EQ(fresh.exit_status, 0) << fresh.err;
  auto json = nlohmann::json::parse(fresh.out, nullptr, false);
  ASSERT_FALSE(json.is_discarded()) << fresh.out;
  EXPECT_EQ(json["firmware"]["sos_running"], false);
  ASSERT_GE(json["firmware"]["files"].size(), 9u);
  EXPECT_EQ(json["firmware"]["files"][0]["name"], "psp_13_0_0_sos.bin");
  EXPECT_TRUE(absl::StrContains(json["firmware"]["files"][0]["path"].get<std::string>(), "virtual"));

  REQUIRE_DEBIAN_FIRMWARE(dir, firmware::testing::DebianFirmwareVersions().front());
  const std::string env = "BAREGPU_FIRMWARE_PATH=" + dir.substr(0, dir.size() - std::string("/amdgpu").size());
  auto boot = RunBaregpu({"boot", "sim:navi31:info-fw"}, {env});
  ASSERT_EQ(boot.exit_status, 0) << boot.err << boot.out;
  auto booted = RunBaregpu({"info", "sim:navi31:info-fw", "--json"}, {env});
  ASSERT_EQ(booted.exit_status, 0) << booted.err;
  json = nlohmann::json::parse(booted.out, nullptr, false);
  ASSERT_FALSE(json.is_discarded()) << booted.out;
  EXPECT_EQ(json["firmware"]["sos_running"], true);
  EXPECT_EQ(json["firmware"]["sos_version"], "0x310032");
  EXPECT_EQ(json["firmware"]["files"][0]["path"], dir + "/psp_13_0_0_sos.bin");
  EXPECT_EQ(json["firmware"]["files"][0]["ucode_version"], "0x310032");
  auto text = RunBaregpu({"info", "sim:navi31:info-fw"}, {env});
  EXPECT_TRUE(absl::StrContains(text.out, "firmware: sOS 0x00310032 running")) << text.out;
}

TEST(InfoCommandTest, ErrorsAreOneLine) {
  auto missing = RunBaregpu({"info"});
  EXPECT_EQ(missing.exit_status, 2);
  auto bad = RunBaregpu({"info", "sim:nothing"});
  EXPECT_EQ(bad.exit_status, 1);
  EXPECT_TRUE(absl::StartsWith(bad.err, "error: no virtual device kind 'nothing'")) << bad.err;
  auto not_gpu = RunBaregpu({"info", "sim:edu"});
  EXPECT_EQ(not_gpu.exit_status, 1);
  EXPECT_TRUE(absl::StartsWith(not_gpu.err, "error: ")) << not_gpu.err;
}

// An NVIDIA GPU: `info` boots GSP-RM for its static information and shows what the virtual RTX 4090 reports (11
// GPCs of AD102's 12, 64 TPCs: nv/sim/gsp_rm_model.cc says which are fused off) with the GSP-RM release it booted.
TEST(InfoCommandTest, TheVirtualAd102ShowsGspRmsStaticInformation) {
  REQUIRE_NVIDIA_FIRMWARE(root);
  ::setenv("BAREGPU_FIRMWARE_PATH", root.c_str(), 1);
  auto r = RunBaregpu({"info", "sim:ad102:info", "--json"});
  ::unsetenv("BAREGPU_FIRMWARE_PATH");
  ASSERT_EQ(r.exit_status, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["vendor_id"], "0x10de");
  EXPECT_EQ(j["device_id"], "0x2684");
  EXPECT_EQ(j["chip"], "AD102");
  EXPECT_EQ(j["name"], "NVIDIA GeForce RTX 4090");
  EXPECT_EQ(j["vram_size"], uint64_t{24} << 30);
  EXPECT_EQ(j["gsp_rm"], "535.113.01");
  EXPECT_EQ(j["gpc_mask"], "0x7ff");
  EXPECT_EQ(j["gpcs"].size(), 11u);
  EXPECT_EQ(j["tpcs"], 64);
}

}  // namespace
}  // namespace cli
