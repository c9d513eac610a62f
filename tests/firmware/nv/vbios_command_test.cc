// `baregpu fw vbios` and `baregpu fw info` on a VBIOS, as a user runs them.
#include <unistd.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "absl/strings/match.h"
#include "base/file.h"
#include "base/sha256.h"
#include "gtest/gtest.h"
#include "tests/tools/run_cli.h"

namespace firmware::nv {
namespace {

using ::cli::testing::RunBaregpu;

std::string TempPath(const std::string& name) {
  return "/tmp/baregpu-vbios-cli-" + std::to_string(getpid()) + "-" + name;
}

// The same pin as virtual_vbios_test.cc: the CLI writes exactly the virtual GPU's ROM.
constexpr char kVirtualAd102Sha256[] = "31c89f0f749c613de3b8f5e45303e2c2b4c1651c7585856cc1960656100c095d";

TEST(VbiosCommandTest, WritesTheVirtualVbiosAndReadsItBack) {
  const std::string path = TempPath("ad102.rom");
  auto w = RunBaregpu({"fw", "vbios", "--virtual=ad102", "--output=" + path});
  ASSERT_EQ(w.exit_status, 0) << w.err;
  EXPECT_TRUE(absl::StrContains(w.out, kVirtualAd102Sha256)) << w.out;
  absl::StatusOr<std::string> data = base::ReadFile(path);
  ASSERT_TRUE(data.ok()) << data.status();
  EXPECT_EQ(base::Sha256::HexHash(*data), kVirtualAd102Sha256);

  // Recognised without --kind: it starts like a PCI expansion ROM.
  auto r = RunBaregpu({"fw", "info", path});
  ASSERT_EQ(r.exit_status, 0) << r.err;
  for (const char* line :
       {"NVIDIA VBIOS, 28672 bytes, ROM at 0x0, 3 images", "PC-AT (x86)", "EFI", "NVIDIA extension (FwSec)",
        "BIT at 0x1b0: version 1.00, header 12 bytes, 3 tokens", "token 'p' (0x70)", "FWSEC_DBG", "FWSEC_PROD",
        "FWSEC (entry 1): descriptor v3 at 0x900, 812 bytes (2 signatures of 384 bytes",
        "DMEMMAPPER at DMEM 0x200 (0x2e2c): command in 0x400 (256 bytes)"}) {
    EXPECT_TRUE(absl::StrContains(r.out, line)) << "missing '" << line << "' in\n" << r.out;
  }

  auto j = RunBaregpu({"fw", "info", "--json", path});
  ASSERT_EQ(j.exit_status, 0) << j.err;
  auto json = nlohmann::json::parse(j.out, nullptr, false);
  ASSERT_FALSE(json.is_discarded()) << j.out;
  EXPECT_EQ(json["schema"], "baregpu.fw.info/1");
  const auto& f = json["files"][0];
  EXPECT_EQ(f["kind"], "vbios");
  EXPECT_EQ(f["images"].size(), 3u);
  EXPECT_EQ(f["images"][2]["code_type"], "0xe0");
  EXPECT_EQ(f["bit"]["offset"], "0x1b0");
  EXPECT_EQ(f["ucode_table"]["entries"][1]["application"], "FWSEC_PROD");
  EXPECT_EQ(f["fwsec"]["descriptor"]["version"], 3);
  EXPECT_EQ(f["fwsec"]["descriptor"]["signature_count"], 2);
  EXPECT_EQ(f["fwsec"]["dmem_mapper"]["offset"], "0x2e2c");
  EXPECT_EQ(f["fwsec"]["dmem_mapper"]["cmd_in_buffer_size"], 256);
  unlink(path.c_str());
}

TEST(VbiosCommandTest, ABrokenVbiosIsAnErrorNamingWhere) {
  const std::string path = TempPath("short.rom");
  auto w = RunBaregpu({"fw", "vbios", "--virtual=ad102", "--output=" + path});
  ASSERT_EQ(w.exit_status, 0) << w.err;
  absl::StatusOr<std::string> data = base::ReadFile(path);
  ASSERT_TRUE(data.ok());
  std::ofstream(path, std::ios::binary | std::ios::trunc) << data->substr(0, 0x5000);
  auto r = RunBaregpu({"fw", "info", path});
  EXPECT_EQ(r.exit_status, 1);
  EXPECT_TRUE(absl::StrContains(r.err, "image 2 at 0x800")) << r.err;
  EXPECT_TRUE(absl::StrContains(r.err, "dump the whole ROM again")) << r.err;
  unlink(path.c_str());
}

TEST(VbiosCommandTest, UsageErrors) {
  auto none = RunBaregpu({"fw", "vbios"});
  EXPECT_EQ(none.exit_status, 2);
  EXPECT_TRUE(absl::StrContains(none.err, "--virtual=ad102 and --output=FILE")) << none.err;
  auto other = RunBaregpu({"fw", "vbios", "--virtual=ga102", "--output=/tmp/x.rom"});
  EXPECT_EQ(other.exit_status, 2);
  EXPECT_TRUE(absl::StrContains(other.err, "the only virtual NVIDIA chip is ad102")) << other.err;
}

}  // namespace
}  // namespace firmware::nv
