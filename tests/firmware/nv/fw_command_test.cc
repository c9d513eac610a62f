// `baregpu fw info` and `baregpu fw need` on Debian's NVIDIA firmware, as a user runs them.
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "base/file.h"
#include "gtest/gtest.h"
#include "tests/firmware/nv/nv_firmware.h"
#include "tests/tools/run_cli.h"

namespace firmware::nv {
namespace {

using ::cli::testing::RunBaregpu;

// A fresh directory of this test's own (mkdtemp), so parallel runs do not share files.
std::string FreshDir() {
  std::string pattern = ::testing::TempDir() + "/nv-fw-XXXXXX";
  return mkdtemp(pattern.data()) != nullptr ? pattern : "";
}

bool Write(const std::string& path, const std::string& contents) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << contents;
  return static_cast<bool>(out);
}

TEST(NvFwCommandTest, InfoShowsTheBootersHeadersAndQuirks) {
  REQUIRE_NVIDIA_FIRMWARE(root);
  auto r = RunBaregpu({"fw", "info", root + "/nvidia/ad102/gsp/booter_load-535.113.01.bin"});
  ASSERT_EQ(r.exit_status, 0) << r.err;
  EXPECT_TRUE(absl::StrContains(r.out,
                                "NVIDIA booter_load firmware (ad102, 535.113.01), nvfw_bin_hdr + "
                                "nvfw_hs_header_v2 + nvfw_hs_load_header_v2"))
      << r.out;
  EXPECT_TRUE(absl::StrContains(r.out, "*patch_loc                                   0x7710")) << r.out;
  EXPECT_TRUE(absl::StrContains(r.out, "meta.fuse_ver                                0x1")) << r.out;
  EXPECT_TRUE(absl::StrContains(r.out, "note: nvfw_bin_hdr.bin_size 0xdb00 is not the file's length 0xda78")) << r.out;
  // app[0] at file offset 0x378 + 0x100, 0x7600 bytes: dd bs=1 skip=$((0x478)) count=$((0x7600)) | sha256sum.
  EXPECT_TRUE(absl::StrContains(r.out, "47c6b4825c81cb082e377b47e58605added72344b078fa7b26d64d3e48046db3")) << r.out;
}

TEST(NvFwCommandTest, InfoJsonOfTheGspImage) {
  REQUIRE_NVIDIA_FIRMWARE(root);
  auto r = RunBaregpu({"fw", "info", "--json", root + "/nvidia/ad102/gsp/gsp-535.113.01.bin",
                       root + "/nvidia/tu102/gsp/bootloader-535.113.01.bin"});
  ASSERT_EQ(r.exit_status, 0) << r.err;
  auto json = nlohmann::json::parse(r.out, nullptr, false);
  ASSERT_FALSE(json.is_discarded()) << r.out;
  EXPECT_EQ(json["schema"], "baregpu.fw.info/1");
  ASSERT_EQ(json["files"].size(), 2u);
  const auto& gsp = json["files"][0];
  EXPECT_EQ(gsp["vendor"], "nvidia");
  EXPECT_EQ(gsp["kind"], "gsp");
  EXPECT_EQ(gsp["fw_version"], "535.113.01");
  EXPECT_EQ(gsp["file_size"], 38061600);
  bool ad10x = false;
  for (const auto& region : gsp["regions"]) {
    if (region["name"] == ".fwsignature_ad10x") {
      ad10x = true;
      EXPECT_EQ(region["offset"], "0x244a04b");
      EXPECT_EQ(region["size"], 0x1000);
    }
  }
  EXPECT_TRUE(ad10x) << gsp.dump(1);
  const auto& bl = json["files"][1];
  EXPECT_EQ(bl["kind"], "bootloader");
  EXPECT_EQ(bl["fields"]["RM_RISCV_UCODE_DESC.version"], "0x4");
  EXPECT_EQ(bl["fields"]["RM_RISCV_UCODE_DESC.bootloaderSize"], "0x488");
}

// Every file of firmware-nvidia-graphics 20250410, through its links: one invocation, 474 paths, no error.
TEST(NvFwCommandTest, InfoParsesEveryFileOfThePackage) {
  REQUIRE_NVIDIA_FIRMWARE(root);
  std::vector<std::string> args = {"fw", "info", "--json"};
  for (const auto& e : std::filesystem::recursive_directory_iterator(
           root + "/nvidia", std::filesystem::directory_options::follow_directory_symlink)) {
    if (e.is_regular_file()) args.push_back(e.path().string());
  }
  ASSERT_EQ(args.size(), 3u + 474);
  auto r = RunBaregpu(args);
  ASSERT_EQ(r.exit_status, 0) << r.err.substr(0, 2000);
  auto json = nlohmann::json::parse(r.out, nullptr, false);
  ASSERT_FALSE(json.is_discarded());
  ASSERT_EQ(json["files"].size(), 474u);
  int parsed = 0;
  for (const auto& f : json["files"]) {
    EXPECT_FALSE(f.contains("error")) << f.dump();
    EXPECT_EQ(f["vendor"], "nvidia") << f["file"];
    parsed += f["parsed"].get<bool>() ? 1 : 0;
  }
  EXPECT_EQ(parsed, 151);  // 135 nvfw_bin_hdr files and 16 GSP-RM images (links included)
}

TEST(NvFwCommandTest, InfoReportsAMalformedBooter) {
  REQUIRE_NVIDIA_FIRMWARE(root);
  absl::StatusOr<std::string> data = base::ReadFile(root + "/nvidia/ad102/gsp/booter_load-535.113.01.bin");
  ASSERT_TRUE(data.ok());
  const std::string path = FreshDir() + "/booter_load-535.113.01.bin";
  // Cut inside the payload: data_offset 0x378 + data_size 0xd700 no longer fits.
  ASSERT_TRUE(Write(path, data->substr(0, 0x1000)));
  auto r = RunBaregpu({"fw", "info", path});
  EXPECT_NE(r.exit_status, 0);
  EXPECT_TRUE(absl::StrContains(r.err,
                                "payload (nvfw_bin_hdr.data_offset, nvfw_bin_hdr.data_size) spans "
                                "0x378..0xda78"))
      << r.err;
}

// A renamed booter is not recognised by its name; --kind says what it is.
TEST(NvFwCommandTest, InfoKindForcesAnNvidiaParser) {
  REQUIRE_NVIDIA_FIRMWARE(root);
  const std::string path = FreshDir() + "/renamed.bin";
  std::filesystem::copy_file(root + "/nvidia/ga102/gsp/booter_load-535.113.01.bin", path);
  auto plain = RunBaregpu({"fw", "info", path});
  EXPECT_NE(plain.exit_status, 0);
  auto r = RunBaregpu({"fw", "info", "--kind=booter_load", path});
  ASSERT_EQ(r.exit_status, 0) << r.err;
  EXPECT_TRUE(absl::StrContains(r.out, "NVIDIA booter_load firmware, nvfw_bin_hdr + nvfw_hs_header_v2")) << r.out;
  EXPECT_TRUE(absl::StrContains(r.out, "*patch_loc                                   0x8410")) << r.out;
}

TEST(NvFwCommandTest, NeedAd102FindsFourFilesAndTheSharedImage) {
  REQUIRE_NVIDIA_FIRMWARE(root);
  auto r = RunBaregpu({"fw", "need", "ad102"}, {"BAREGPU_FIRMWARE_PATH=" + root});
  ASSERT_EQ(r.exit_status, 0) << r.out << r.err;
  EXPECT_TRUE(absl::StrContains(r.out,
                                "Firmware for ad102 (AD102 (Ada): GSP-RM 535.113.01, signature section "
                                ".fwsignature_ad10x)"))
      << r.out;
  for (const char* name : {"gsp", "booter_load", "booter_unload", "bootloader"}) {
    EXPECT_TRUE(absl::StrContains(r.out, root + "/nvidia/ad102/gsp/" + name + "-535.113.01.bin")) << r.out;
  }
  EXPECT_TRUE(absl::StrContains(r.out, "-> ")) << r.out;
  EXPECT_TRUE(absl::StrContains(r.out, "/nvidia/ga102/gsp/gsp-535.113.01.bin, ELF64")) << r.out;
  EXPECT_TRUE(absl::StrContains(r.out, ".fwversion: 535.113.01")) << r.out;
  EXPECT_FALSE(absl::StrContains(r.out, "PROBLEM")) << r.out;
  EXPECT_TRUE(absl::StrContains(r.out,
                                "versions: every file is named for 535.113.01 and the GSP-RM image's "
                                ".fwversion says so too"))
      << r.out;
}

// A chip's file that is a link to another release's file: found and parsed, and the versions' disagreement noted.
TEST(NvFwCommandTest, NeedNotesALinkToAnotherRelease) {
  REQUIRE_NVIDIA_FIRMWARE(root);
  const std::string fw = FreshDir();
  const std::string gsp = fw + "/nvidia/tu102/gsp";
  std::filesystem::create_directories(gsp);
  for (const char* name : {"gsp", "booter_load", "booter_unload"}) {
    const std::string file = std::string(name) + "-535.113.01.bin";
    std::filesystem::create_symlink(root + "/nvidia/tu102/gsp/" + file, gsp + "/" + file);
  }
  std::filesystem::copy_file(root + "/nvidia/tu102/gsp/bootloader-535.113.01.bin", fw + "/bootloader-570.144.bin");
  std::filesystem::create_symlink("../../../bootloader-570.144.bin", gsp + "/bootloader-535.113.01.bin");
  auto r = RunBaregpu({"fw", "need", "tu102", "--json"}, {"BAREGPU_FIRMWARE_PATH=" + fw});
  ASSERT_EQ(r.exit_status, 0) << r.err;
  auto json = nlohmann::json::parse(r.out, nullptr, false);
  ASSERT_FALSE(json.is_discarded()) << r.out;
  ASSERT_EQ(json["version_notes"].size(), 1u) << r.out;
  EXPECT_EQ(json["version_notes"][0],
            "bootloader-535.113.01.bin resolves to a file named for version '570.144', not 535.113.01");
}

TEST(NvFwCommandTest, NeedGa102AndVirtualAd102Json) {
  REQUIRE_NVIDIA_FIRMWARE(root);
  auto ga = RunBaregpu({"fw", "need", "ga102"}, {"BAREGPU_FIRMWARE_PATH=" + root});
  EXPECT_EQ(ga.exit_status, 0) << ga.out << ga.err;
  auto r = RunBaregpu({"fw", "need", "sim:ad102", "--json"}, {"BAREGPU_FIRMWARE_PATH=" + root});
  ASSERT_EQ(r.exit_status, 0) << r.err;
  auto json = nlohmann::json::parse(r.out, nullptr, false);
  ASSERT_FALSE(json.is_discarded()) << r.out;
  EXPECT_EQ(json["schema"], "baregpu.fw.need_nv/1");
  EXPECT_EQ(json["profile"], "ad102");
  EXPECT_EQ(json["virtual"], true);
  EXPECT_EQ(json["signature_section"], ".fwsignature_ad10x");
  ASSERT_EQ(json["files"].size(), 4u);
  for (const auto& f : json["files"]) EXPECT_EQ(f["ok"], true) << f.dump();
  EXPECT_EQ(
      json["files"][0]["resolved"].get<std::string>().find("/nvidia/ga102/gsp/gsp-535.113.01.bin") != std::string::npos,
      true);
}

// A firmware root whose GA102 booter_unload is corrupt: that file is a PROBLEM, the rest found, exit non-zero.
TEST(NvFwCommandTest, NeedNamesTheCorruptFile) {
  REQUIRE_NVIDIA_FIRMWARE(root);
  const std::string fw = FreshDir();
  const std::string gsp = fw + "/nvidia/ga102/gsp";
  std::filesystem::create_directories(gsp);
  for (const char* name : {"gsp", "booter_load", "bootloader"}) {
    const std::string file = std::string(name) + "-535.113.01.bin";
    std::filesystem::create_symlink(root + "/nvidia/ga102/gsp/" + file, gsp + "/" + file);
  }
  absl::StatusOr<std::string> unload = base::ReadFile(root + "/nvidia/ga102/gsp/booter_unload-535.113.01.bin");
  ASSERT_TRUE(unload.ok());
  std::string bad = *unload;
  bad[0x18 + 24] = 0x7f;  // nvfw_hs_header_v2.num_sig (the offset of the count) -> far past the end
  bad[0x18 + 25] = 0x7f;
  bad[0x18 + 26] = 0x7f;
  ASSERT_TRUE(Write(gsp + "/booter_unload-535.113.01.bin", bad));
  auto r = RunBaregpu({"fw", "need", "ga102"}, {"BAREGPU_FIRMWARE_PATH=" + fw});
  EXPECT_NE(r.exit_status, 0);
  EXPECT_TRUE(absl::StrContains(r.out, "PROBLEM:  ")) << r.out;
  EXPECT_TRUE(absl::StrContains(r.out, "field *nvfw_hs_header_v2.num_sig spans")) << r.out;
  EXPECT_TRUE(absl::StrContains(r.err, "1 of 4 firmware files for ga102 are missing or unusable")) << r.err;
}

TEST(NvFwCommandTest, NeedListsWhereItLookedWhenMissing) {
  if (base::PathExists("/lib/firmware/nvidia/tu102")) GTEST_SKIP() << "this machine has /lib/firmware/nvidia/tu102";
  const std::string empty = FreshDir();
  auto r = RunBaregpu({"fw", "need", "tu102"}, {"BAREGPU_FIRMWARE_PATH=" + empty});
  EXPECT_NE(r.exit_status, 0);
  EXPECT_TRUE(absl::StrContains(r.out, "MISSING; tried:")) << r.out;
  EXPECT_TRUE(absl::StrContains(r.out, empty + "/nvidia/tu102/gsp/gsp-535.113.01.bin.zst")) << r.out;
  EXPECT_TRUE(absl::StrContains(r.out, "/lib/firmware/nvidia/tu102/gsp/bootloader-535.113.01.bin.xz")) << r.out;
  EXPECT_TRUE(absl::StrContains(r.err, "4 of 4 firmware files for tu102")) << r.err;
}

}  // namespace
}  // namespace firmware::nv
