// Virtual firmware: real names and layouts, payloads the virtual PSP accepts only for the right ASIC, IP version
// and type; and the files the build generated are exactly what the builder makes.
#include "firmware/virtual_firmware.h"

#include <cstdlib>

#include "absl/strings/match.h"
#include "base/file.h"
#include "firmware/container.h"
#include "gtest/gtest.h"
#include "tests/firmware/debian_firmware.h"

namespace firmware {
namespace {

const AsicProfile& Navi31() {
  static const AsicProfile profile = *FindAsicProfile("navi31");
  return profile;
}

std::string MecPayload() {
  return BuildVirtualPayload({"navi31", {11, 0, 0}, LoadPath::kIpFirmware, {gfx_fw_type::kRs64Mec}, 1024});
}
const VirtualFirmwareExpectation kMec{"navi31", {11, 0, 0}, LoadPath::kIpFirmware, gfx_fw_type::kRs64Mec};

TEST(VirtualFirmwareTest, EveryFileParsesWithTheDriversLayoutAndEveryComponentValidates) {
  auto files = BuildVirtualFirmware(Navi31());
  ASSERT_TRUE(files.ok()) << files.status();
  auto required = RequiredFiles(Navi31().ip);
  ASSERT_EQ(files->size(), required->size());
  int validated = 0;
  for (size_t i = 0; i < files->size(); ++i) {
    const VirtualFirmwareFile& file = (*files)[i];
    const RequiredFile& want = (*required)[i];
    EXPECT_EQ(file.name, want.name);
    auto c = ParseContainer(file.name, file.data);
    ASSERT_TRUE(c.ok()) << file.name << ": " << c.status();
    EXPECT_TRUE(c->notes.empty()) << file.name << ": " << c->notes[0];
    EXPECT_EQ(c->header.header_version_major, want.header_major) << file.name;
    EXPECT_EQ(c->header.header_version_minor, want.header_minor) << file.name;
    EXPECT_EQ(c->header.ip_version_major, want.ip.major) << file.name;
    EXPECT_TRUE(CheckProvides(want, *c).ok()) << CheckProvides(want, *c);
    for (const ProvidedType& p : want.provides) {
      const Component* comp = c->Find(p.load, p.type);
      ASSERT_NE(comp, nullptr) << file.name << " " << TypeName(p.load, p.type);
      VirtualFirmwareVerdict v =
          ValidateVirtualFirmware(ComponentBytes(file.data, *comp), {"navi31", want.ip, p.load, p.type});
      EXPECT_TRUE(v.ok()) << file.name << " " << comp->name << ": " << v.detail;
      EXPECT_TRUE(absl::StrContains(ComponentBytes(file.data, *comp), "baregpu virtual firmware, not AMD microcode"));
      ++validated;
    }
  }
  // sOS (8 bootloader components + TOC + the register list), TA, SMU, SDMA, PFP, ME, MEC, RLC, IMU, MES, MES KIQ.
  EXPECT_EQ(validated, 8 + 1 + 1 + 6 + 1 + 2 + 3 + 3 + 5 + 8 + 2 + 2 + 2);
}

TEST(VirtualFirmwareTest, SharedStackIsAcceptedForEachPipeOnly) {
  auto files = BuildVirtualFirmware(Navi31());
  const VirtualFirmwareFile& mec = (*files)[6];
  auto c = ParseContainer(mec.name, mec.data);
  ASSERT_TRUE(c.ok());
  const Component* stack = c->Find(LoadPath::kIpFirmware, gfx_fw_type::kRs64MecP2Stack);
  ASSERT_NE(stack, nullptr);
  EXPECT_EQ(stack->types.size(), 4u);
  auto v = ValidateVirtualFirmware(ComponentBytes(mec.data, *stack),
                                   {"navi31", {11, 0, 0}, LoadPath::kIpFirmware, gfx_fw_type::kRs64MeP0Stack});
  EXPECT_EQ(v.check, VirtualFirmwareCheck::kWrongType) << v.detail;
}

TEST(VirtualFirmwareTest, EachCheckFailsForItsOwnReason) {
  const std::string good = MecPayload();
  ASSERT_TRUE(ValidateVirtualFirmware(good, kMec).ok());
  struct Case {
    std::string image;
    VirtualFirmwareExpectation expected;
    VirtualFirmwareCheck check;
    const char* detail;
  };
  std::string corrupt = good;
  corrupt[500] ^= 1;
  std::string bad_format = good;
  bad_format[16] = 2;
  const std::vector<Case> cases = {
      {good.substr(0, 50), kMec, VirtualFirmwareCheck::kTooSmall, "image is 50 bytes"},
      {std::string(1024, '\x7f'), kMec, VirtualFirmwareCheck::kBadMagic, "virtual firmware marker"},
      {bad_format, kMec, VirtualFirmwareCheck::kBadFormat, "payload format 2"},
      {good.substr(0, 1000), kMec, VirtualFirmwareCheck::kSizeMismatch, "payload says 1024 bytes but 1000"},
      {good + "pad", kMec, VirtualFirmwareCheck::kSizeMismatch, "1027 bytes were handed over"},
      {corrupt, kMec, VirtualFirmwareCheck::kBadChecksum, "SHA-256"},
      {good,
       {"navi32", {11, 0, 0}, LoadPath::kIpFirmware, gfx_fw_type::kRs64Mec},
       VirtualFirmwareCheck::kWrongAsic,
       "built for navi31, expected navi32"},
      {good,
       {"navi31", {11, 0, 3}, LoadPath::kIpFirmware, gfx_fw_type::kRs64Mec},
       VirtualFirmwareCheck::kWrongIpVersion,
       "built for IP 11.0.0, expected 11.0.3"},
      {good,
       {"navi31", {11, 0, 0}, LoadPath::kBootloader, gfx_fw_type::kRs64Mec},
       VirtualFirmwareCheck::kWrongLoadPath,
       "built for LOAD_IP_FW, handed over through bootloader"},
      {good,
       {"navi31", {11, 0, 0}, LoadPath::kIpFirmware, gfx_fw_type::kRs64Me},
       VirtualFirmwareCheck::kWrongType,
       "image is GFX_FW_TYPE_RS64_MEC (89), expected GFX_FW_TYPE_RS64_ME (88)"},
  };
  for (const Case& c : cases) {
    VirtualFirmwareVerdict v = ValidateVirtualFirmware(c.image, c.expected);
    EXPECT_EQ(v.check, c.check) << VirtualFirmwareCheckName(v.check) << ": " << v.detail;
    EXPECT_TRUE(absl::StrContains(v.detail, c.detail)) << v.detail;
  }
}

TEST(VirtualFirmwareTest, RealMicrocodeIsNotVirtualFirmware) {
  REQUIRE_DEBIAN_FIRMWARE(dir, testing::DebianFirmwareVersions().front());
  auto data = base::ReadFile(dir + "/gc_11_0_0_mec.bin");
  ASSERT_TRUE(data.ok());
  auto c = ParseContainer("gc_11_0_0_mec.bin", *data);
  ASSERT_TRUE(c.ok());
  const Component* code = c->Find(LoadPath::kIpFirmware, gfx_fw_type::kRs64Mec);
  ASSERT_NE(code, nullptr);
  VirtualFirmwareVerdict v = ValidateVirtualFirmware(
      ComponentBytes(*data, *code), {"navi31", {11, 0, 0}, LoadPath::kIpFirmware, gfx_fw_type::kRs64Mec});
  EXPECT_EQ(v.check, VirtualFirmwareCheck::kBadMagic);
}

TEST(VirtualFirmwareTest, TheBuildGeneratedExactlyTheBuildersFiles) {
  const std::string dir = VirtualFirmwareDir();
  const char* build_root = std::getenv("BAREGPU_BUILD_ROOT");
  ASSERT_NE(build_root, nullptr);
  // This test links the build tree's libbaregpu, so it must be pointed at the build tree's files.
  EXPECT_EQ(dir, std::string(build_root) + "/firmware/virtual");
  auto files = BuildVirtualFirmware(Navi31());
  ASSERT_TRUE(files.ok());
  auto on_disk = base::ListDirectory(dir + "/amdgpu");
  ASSERT_TRUE(on_disk.ok()) << on_disk.status();
  EXPECT_EQ(on_disk->size(), files->size());
  for (const VirtualFirmwareFile& file : *files) {
    auto data = base::ReadFile(dir + "/amdgpu/" + file.name);
    ASSERT_TRUE(data.ok()) << data.status();
    EXPECT_TRUE(*data == file.data) << file.name << " differs from the builder's output; rebuild";
  }
}

TEST(VirtualFirmwareTest, EnvironmentOverridesTheDirectory) {
  setenv(kVirtualFirmwareDirEnv, "/somewhere/else", 1);
  EXPECT_EQ(VirtualFirmwareDir(), "/somewhere/else");
  unsetenv(kVirtualFirmwareDirEnv);
  EXPECT_NE(VirtualFirmwareDir(), "/somewhere/else");
}

}  // namespace
}  // namespace firmware
