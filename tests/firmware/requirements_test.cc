// IP versions in, file list out: the files and PSP types the Linux driver requests for a generation.
#include "firmware/requirements.h"

#include <optional>

#include "absl/strings/match.h"
#include "base/file.h"
#include "gtest/gtest.h"
#include "tests/firmware/debian_firmware.h"

namespace firmware {
namespace {

std::vector<std::string> Names(const std::vector<RequiredFile>& files) {
  std::vector<std::string> names;
  for (const RequiredFile& f : files) names.push_back(f.name);
  return names;
}

TEST(RequirementsTest, Navi31ProfileHasItsIpVersions) {
  auto navi31 = FindAsicProfile("navi31");
  ASSERT_TRUE(navi31.ok()) << navi31.status();
  EXPECT_EQ(navi31->ip.gc, (IpVersion{11, 0, 0}));
  EXPECT_EQ(navi31->ip.mp0, (IpVersion{13, 0, 0}));
  EXPECT_EQ(navi31->ip.mp1, (IpVersion{13, 0, 0}));
  EXPECT_EQ(navi31->ip.sdma, (IpVersion{6, 0, 0}));
}

TEST(RequirementsTest, Navi31NeedsTheFilesTheDriverRequests) {
  auto files = RequiredFiles(FindAsicProfile("navi31")->ip);
  ASSERT_TRUE(files.ok()) << files.status();
  // MODULE_FIRMWARE lines of psp_v13_0.c, smu_v13_0.c, sdma_v6_0.c, gfx_v11_0.c, imu_v11_0.c, mes_v11_0.c.
  EXPECT_EQ(Names(*files),
            (std::vector<std::string>{"psp_13_0_0_sos.bin", "psp_13_0_0_ta.bin", "smu_13_0_0.bin", "sdma_6_0_0.bin",
                                      "gc_11_0_0_pfp.bin", "gc_11_0_0_me.bin", "gc_11_0_0_mec.bin", "gc_11_0_0_rlc.bin",
                                      "gc_11_0_0_imu.bin", "gc_11_0_0_mes_2.bin", "gc_11_0_0_mes1.bin"}));
  const RequiredFile& mes = (*files)[9];
  EXPECT_EQ(mes.fallbacks, std::vector<std::string>{"gc_11_0_0_mes.bin"});
  const RequiredFile& mec = (*files)[6];
  EXPECT_EQ(mec.header_major, 2);  // RS64
  ASSERT_EQ(mec.provides.size(), 5u);
  EXPECT_EQ(mec.provides[0].type, 89u);  // GFX_FW_TYPE_RS64_MEC
  EXPECT_EQ(mec.provides[4].type, 97u);  // GFX_FW_TYPE_RS64_MEC_P3_STACK
}

TEST(RequirementsTest, OtherPspVersionsLoadATocInsteadOfAnSos) {
  IpVersions ip = FindAsicProfile("navi31")->ip;
  ip.mp0 = {13, 0, 5};
  auto files = RequiredFiles(ip);
  ASSERT_TRUE(files.ok()) << files.status();
  EXPECT_EQ((*files)[0].name, "psp_13_0_5_toc.bin");
  EXPECT_EQ((*files)[1].name, "psp_13_0_5_ta.bin");
}

TEST(RequirementsTest, UnknownGenerationsSayWhatIsKnown) {
  IpVersions ip = FindAsicProfile("navi31")->ip;
  ip.gc = {10, 3, 0};
  auto files = RequiredFiles(ip);
  ASSERT_FALSE(files.ok());
  EXPECT_EQ(files.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_TRUE(absl::StrContains(files.status().message(), "no firmware table for GC 10.3.0; baregpu knows 11.x.y"))
      << files.status();
}

TEST(RequirementsTest, DeviceNames) {
  auto plain = ResolveDeviceName("navi31");
  ASSERT_TRUE(plain.ok());
  EXPECT_FALSE(plain->is_virtual);
  auto sim = ResolveDeviceName("sim:navi31:test");
  ASSERT_TRUE(sim.ok()) << sim.status();
  EXPECT_TRUE(sim->is_virtual);
  EXPECT_EQ(sim->profile.name, "navi31");
  auto unknown = ResolveDeviceName("0000:03:00.0");
  ASSERT_FALSE(unknown.ok());
  EXPECT_TRUE(absl::StrContains(unknown.status().message(), "known: navi31")) << unknown.status();
}

// Debian's sienna_cichlid_rlc.bin (GC 10.3, both releases) is an rlc_firmware_header_v2_4 without RLC_P and RLC_V
// images (read with python's struct: bytes 8-11 are 2, 4).
TEST(RequirementsTest, CheckProvidesRejectsAnotherGenerationsLayout) {
  REQUIRE_DEBIAN_FIRMWARE(dir, testing::DebianFirmwareVersions().front());
  auto data = base::ReadFile(dir + "/sienna_cichlid_rlc.bin");
  ASSERT_TRUE(data.ok());
  auto rlc = ParseContainer("sienna_cichlid_rlc.bin", *data);
  ASSERT_TRUE(rlc.ok());
  auto files = RequiredFiles(FindAsicProfile("navi31")->ip);
  const RequiredFile& gc11_rlc = (*files)[7];
  absl::Status status = CheckProvides(gc11_rlc, *rlc);
  ASSERT_FALSE(status.ok());
  EXPECT_TRUE(absl::StrContains(status.message(), "header version 2.4, but the driver expects 2.3")) << status;

  // Same layout version, missing images: RLC_P and RLC_V are loaded only when present, so a v2.4 requirement is
  // met without them; made mandatory, their absence is named.
  RequiredFile v24 = gc11_rlc;
  v24.header_minor = 4;
  EXPECT_TRUE(CheckProvides(v24, *rlc).ok()) << CheckProvides(v24, *rlc);
  for (ProvidedType& p : v24.provides) p.optional = false;
  status = CheckProvides(v24, *rlc);
  ASSERT_FALSE(status.ok());
  EXPECT_TRUE(absl::StrContains(status.message(), "GFX_FW_TYPE_RLC_P")) << status;
  EXPECT_TRUE(absl::StrContains(status.message(), "GFX_FW_TYPE_RLC_V")) << status;
}

// What a real sOS package or RLC file may lack (Debian's psp_13_0_0_sos.bin has no SOC/INTF/DBG/RAS driver, its
// TA file no RAP or SECUREDISPLAY, its RLC file no SRM_CNTL list) is optional; what the boot cannot do without is
// not.
TEST(RequirementsTest, OnlyWhatTheBootNeedsIsRequired) {
  auto files = RequiredFiles(FindAsicProfile("navi31")->ip);
  ASSERT_TRUE(files.ok()) << files.status();
  auto optional = [&](size_t file, LoadPath load, uint32_t type) {
    for (const ProvidedType& p : (*files)[file].provides) {
      if (p.load == load && p.type == type) return std::optional<bool>(p.optional);
    }
    return std::optional<bool>();
  };
  EXPECT_EQ(optional(0, LoadPath::kBootloader, psp_fw_type::kSysDrv), false);
  EXPECT_EQ(optional(0, LoadPath::kBootloader, psp_fw_type::kSos), false);
  EXPECT_EQ(optional(0, LoadPath::kToc, psp_fw_type::kToc), false);
  EXPECT_EQ(optional(0, LoadPath::kBootloader, psp_fw_type::kRasDrv), true);
  EXPECT_EQ(optional(1, LoadPath::kTrustedApp, ta_fw_type::kRap), true);
  EXPECT_EQ(optional(7, LoadPath::kIpFirmware, gfx_fw_type::kRlcG), false);
  EXPECT_EQ(optional(7, LoadPath::kIpFirmware, gfx_fw_type::kRlcIram), false);
  EXPECT_EQ(optional(7, LoadPath::kIpFirmware, gfx_fw_type::kRlcRestoreListSrmCntl), true);
  EXPECT_EQ((*files)[2].header_major, 2) << "smu_13_0_0.bin is an smc v2.1 container";
  EXPECT_EQ((*files)[2].header_minor, 1);
}

}  // namespace
}  // namespace firmware
