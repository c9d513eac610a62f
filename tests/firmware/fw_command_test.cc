// `baregpu fw info` and `baregpu fw need` as a user runs them.
#include <lzma.h>
#include <zstd.h>

#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "absl/strings/match.h"
#include "base/file.h"
#include "gtest/gtest.h"
#include "tests/firmware/debian_firmware.h"
#include "tests/firmware/shared_firmware.h"
#include "tests/tools/run_cli.h"

namespace firmware {
namespace {

using ::cli::testing::RunBaregpu;

int Lines(const std::string& s) { return static_cast<int>(std::count(s.begin(), s.end(), '\n')); }

// Debian's sienna_cichlid_sos.bin (20250410): the KDB lies at 0x100 + kdb.offset_bytes 0x360d0.
TEST(FwCommandTest, InfoListsSosComponentsWithSha256) {
  REQUIRE_DEBIAN_FIRMWARE(dir, testing::DebianFirmwareVersions().front());
  auto r = RunBaregpu({"fw", "info", dir + "/sienna_cichlid_sos.bin"});
  ASSERT_EQ(r.exit_status, 0) << r.err;
  EXPECT_TRUE(absl::StrContains(r.out, "psp_firmware_header_v1_3 (header 1.3)")) << r.out;
  EXPECT_TRUE(absl::StrContains(r.out, "PSP_FW_TYPE_PSP_KDB")) << r.out;
  // sha256sum of the kdb bytes (dd bs=1 skip=$((0x361d0)) count=$((0x1310)) | sha256sum).
  EXPECT_TRUE(absl::StrContains(r.out, "aeb4d1d8f1b1af9e52ffc64ca7f014653d115dabd8ca02f0dd385458e2dd39c5")) << r.out;
}

TEST(FwCommandTest, InfoJsonCoversEveryComponent) {
  REQUIRE_SHARED_FIRMWARE(dir);
  auto r = RunBaregpu({"fw", "info", "--json", dir + "/sienna_cichlid_rlc.bin", dir + "/navi10_sdma1.bin"});
  ASSERT_EQ(r.exit_status, 0) << r.err;
  auto json = nlohmann::json::parse(r.out, nullptr, false);
  ASSERT_FALSE(json.is_discarded()) << r.out;
  ASSERT_EQ(json["files"].size(), 2u);
  const auto& rlc = json["files"][0];
  EXPECT_EQ(rlc["layout"], "rlc_firmware_header_v2_2");
  EXPECT_EQ(rlc["notes"].size(), 1u);
  bool iram = false;
  for (const auto& c : rlc["components"]) {
    if (c["name"] == "rlc_iram") {
      iram = true;
      EXPECT_EQ(c["offset"], "0xb260");
      EXPECT_EQ(c["size"], 0x10200);
      EXPECT_EQ(c["types"][0]["name"], "GFX_FW_TYPE_RLC_IRAM");
      EXPECT_EQ(c["sha256"].get<std::string>().size(), 64u);
    }
  }
  EXPECT_TRUE(iram);
  EXPECT_EQ(json["files"][1]["components"][0]["types"][0]["name"], "GFX_FW_TYPE_SDMA1");
}

// Debian's psp_13_0_5_toc.bin (20230210-5): 1792 bytes, sha256sum 2dfcc2b4...
TEST(FwCommandTest, InfoReadsCompressedFiles) {
  REQUIRE_DEBIAN_FIRMWARE(dir, testing::DebianFirmwareVersions()[1]);
  auto data = base::ReadFile(dir + "/psp_13_0_5_toc.bin");
  ASSERT_TRUE(data.ok());
  std::string zst(ZSTD_compressBound(data->size()), '\0');
  zst.resize(ZSTD_compress(zst.data(), zst.size(), data->data(), data->size(), 3));
  std::string xz(lzma_stream_buffer_bound(data->size()), '\0');
  size_t xz_size = 0;
  lzma_easy_buffer_encode(6, LZMA_CHECK_CRC64, nullptr, reinterpret_cast<const uint8_t*>(data->data()), data->size(),
                          reinterpret_cast<uint8_t*>(xz.data()), &xz_size, xz.size());
  xz.resize(xz_size);
  const std::string zst_path = "/tmp/baregpu-fw-test-psp_13_0_5_toc.bin.zst";
  const std::string xz_path = "/tmp/baregpu-fw-test-psp_13_0_5_toc.bin.xz";
  std::ofstream(zst_path, std::ios::binary) << zst;
  std::ofstream(xz_path, std::ios::binary) << xz;
  auto r = RunBaregpu({"fw", "info", "--json", zst_path, xz_path});
  ASSERT_EQ(r.exit_status, 0) << r.err;
  auto json = nlohmann::json::parse(r.out, nullptr, false);
  ASSERT_FALSE(json.is_discarded()) << r.out;
  for (const auto& file : json["files"]) {
    EXPECT_EQ(file["kind"], "toc");
    EXPECT_EQ(file["file_size"], 1792);
    // sha256sum of the uncompressed file.
    EXPECT_EQ(file["sha256"], "2dfcc2b4d6b7f072a471da3852164560ae709bb563626997c41ef1ef17588bbe");
  }
  std::remove(zst_path.c_str());
  std::remove(xz_path.c_str());
}

// navi10_mec.bin of Debian's 20230210-5 is byte for byte the AMDGPU 22.20 bundle's (cmp).
TEST(FwCommandTest, TruncatedAndCorruptedFilesFailWithOneLine) {
  REQUIRE_DEBIAN_FIRMWARE(dir, testing::DebianFirmwareVersions()[1]);
  auto data = base::ReadFile(dir + "/navi10_mec.bin");
  ASSERT_TRUE(data.ok());
  const std::string truncated = "/tmp/baregpu-fw-test-truncated_mec.bin";
  std::ofstream(truncated, std::ios::binary) << data->substr(0, 5000);
  auto r = RunBaregpu({"fw", "info", truncated});
  EXPECT_EQ(r.exit_status, 1);
  EXPECT_EQ(Lines(r.err), 1) << r.err;
  EXPECT_TRUE(absl::StartsWith(r.err, "error: " + truncated + ": header.size_bytes = 268592 but the file is 5000"))
      << r.err;

  std::string corrupt = *data;
  corrupt[42] = '\x7f';  // jt_size (gfx_firmware_header_v1_0, offset 40) becomes 0x7f00e0 dwords
  const std::string corrupted = "/tmp/baregpu-fw-test-corrupted_mec.bin";
  std::ofstream(corrupted, std::ios::binary) << corrupt;
  r = RunBaregpu({"fw", "info", corrupted});
  EXPECT_EQ(r.exit_status, 1);
  EXPECT_EQ(Lines(r.err), 1) << r.err;
  EXPECT_TRUE(absl::StrContains(r.err, "jt_size = 0x7f00e0 dwords")) << r.err;
  std::remove(truncated.c_str());
  std::remove(corrupted.c_str());
}

// `fw need` over each Debian release: every file Navi31 needs is found in it (gc_11_0_0_mes.bin standing in for
// _mes_2.bin in 20230210-5) and meets the driver's requirements.
TEST(FwCommandTest, NeedFindsEveryNavi31FileInBothDebianReleases) {
  for (const std::string& version : testing::DebianFirmwareVersions()) {
    REQUIRE_DEBIAN_FIRMWARE(dir, version);
    const std::string root = dir.substr(0, dir.size() - std::string("/amdgpu").size());
    auto r = RunBaregpu({"fw", "need", "navi31", "--json"}, {"BAREGPU_FIRMWARE_PATH=" + root});
    ASSERT_EQ(r.exit_status, 0) << r.err;
    auto json = nlohmann::json::parse(r.out, nullptr, false);
    ASSERT_FALSE(json.is_discarded()) << r.out;
    ASSERT_GE(json["files"].size(), 9u);
    for (const auto& file : json["files"]) {
      EXPECT_EQ(file["ok"], true) << version << " " << file.dump();
      EXPECT_TRUE(absl::StartsWith(file["found"].get<std::string>(), dir + "/")) << version << " " << file.dump();
    }
  }
}

TEST(FwCommandTest, UsageErrors) {
  EXPECT_EQ(RunBaregpu({"fw"}).exit_status, 2);
  EXPECT_EQ(RunBaregpu({"fw", "info"}).exit_status, 2);
  EXPECT_EQ(RunBaregpu({"fw", "frobnicate"}).exit_status, 2);
  EXPECT_EQ(RunBaregpu({"fw", "info", "--kind=nonsense", "x.bin"}).exit_status, 2);
  auto help = RunBaregpu({"fw", "--help"});
  EXPECT_EQ(help.exit_status, 0);
  EXPECT_TRUE(absl::StrContains(help.out, "baregpu fw need DEVICE")) << help.out;
}

TEST(FwCommandTest, NeedForTheVirtualDeviceFindsEveryFileInTheVirtualDirectory) {
  auto r = RunBaregpu({"fw", "need", "sim:navi31", "--json"}, {"BAREGPU_FIRMWARE_PATH="});
  ASSERT_EQ(r.exit_status, 0) << r.err << r.out;
  auto json = nlohmann::json::parse(r.out, nullptr, false);
  ASSERT_FALSE(json.is_discarded()) << r.out;
  EXPECT_TRUE(json["virtual"].get<bool>());
  EXPECT_EQ(json["ip_versions"]["gc"], "11.0.0");
  const std::string virtual_dir = std::string(std::getenv("BAREGPU_BUILD_ROOT")) + "/firmware/virtual";
  EXPECT_EQ(json["search_path"][0], virtual_dir);
  ASSERT_EQ(json["files"].size(), 11u);
  for (const auto& f : json["files"]) {
    EXPECT_TRUE(f["ok"].get<bool>()) << f.dump();
    EXPECT_EQ(f["found"], virtual_dir + "/amdgpu/" + f["name"].get<std::string>());
  }
}

TEST(FwCommandTest, NeedReportsEveryPathTriedForMissingFiles) {
  char tmpl[] = "/tmp/baregpu-fw-need-XXXXXX";
  ASSERT_NE(mkdtemp(tmpl), nullptr);
  // The real navi31 files are not on this machine's /lib/firmware unless linux-firmware is installed; point the
  // search path at an empty root and check it comes first in what was tried.
  auto r = RunBaregpu({"fw", "need", "navi31", "--json"}, {std::string("BAREGPU_FIRMWARE_PATH=") + tmpl});
  auto json = nlohmann::json::parse(r.out, nullptr, false);
  ASSERT_FALSE(json.is_discarded()) << r.out;
  EXPECT_FALSE(json["virtual"].get<bool>());
  for (const auto& f : json["files"]) {
    ASSERT_GE(f["tried"].size(), 3u);
    EXPECT_EQ(f["tried"][0], std::string(tmpl) + "/amdgpu/" + f["name"].get<std::string>());
    if (f["found"].is_null()) {
      EXPECT_EQ(f["tried"].size(), 9u * (1 + f["fallbacks"].size()));  // 3 roots x plain/.zst/.xz, per name
    }
  }
  if (r.exit_status != 0) {
    EXPECT_EQ(r.exit_status, 1);
    EXPECT_TRUE(absl::StrContains(r.err, "firmware files for navi31 are missing or unusable")) << r.err;
  }
  rmdir(tmpl);
}

TEST(FwCommandTest, NeedWithoutJsonPrintsTheTriedPaths) {
  auto r = RunBaregpu({"fw", "need", "navi31"}, {"BAREGPU_FIRMWARE_PATH=/nonexistent-root"});
  if (r.exit_status == 0) GTEST_SKIP() << "this machine has the real navi31 firmware installed";
  EXPECT_EQ(r.exit_status, 1);
  EXPECT_TRUE(absl::StrContains(r.out, "MISSING; tried:")) << r.out;
  EXPECT_TRUE(absl::StrContains(r.out, "/nonexistent-root/amdgpu/gc_11_0_0_mec.bin.zst")) << r.out;
  // A note that the root does not exist (cli::Main checks BAREGPU_FIRMWARE_PATH), then the one error line.
  EXPECT_EQ(Lines(r.err), 2) << r.err;
  EXPECT_TRUE(absl::StartsWith(r.err, "note: BAREGPU_FIRMWARE_PATH entry /nonexistent-root does not exist")) << r.err;
  EXPECT_TRUE(absl::StrContains(r.err, "\nerror: ")) << r.err;
}

}  // namespace
}  // namespace firmware
