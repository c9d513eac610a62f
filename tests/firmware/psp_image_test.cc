// The PSP image header of real firmware: every Navi31 component of both Debian releases is what
// firmware/psp_image.cc's table says (kind, key, version, RS64 start address), and the check refuses what a PSP
// would: another kind, another key, an unsigned, truncated, padded-with-garbage or inconsistent image.
#include "firmware/psp_image.h"

#include <random>
#include <string>

#include "base/file.h"
#include "firmware/container.h"
#include "firmware/requirements.h"
#include "gtest/gtest.h"
#include "tests/firmware/debian_firmware.h"

namespace firmware {
namespace {

struct RealComponent {
  std::string file;
  Component component;
  std::string bytes;
  Container container;
};

// Every PSP-loaded component of Navi31's files in one release (the KDB and the TAs, which the virtual PSP does not
// identify, and components the driver reads itself, excluded).
std::vector<RealComponent> Navi31Components(const std::string& dir) {
  std::vector<RealComponent> out;
  absl::StatusOr<AsicProfile> navi31 = FindAsicProfile("navi31");
  EXPECT_TRUE(navi31.ok());
  absl::StatusOr<std::vector<RequiredFile>> required = RequiredFiles(navi31->ip);
  EXPECT_TRUE(required.ok());
  for (const RequiredFile& file : *required) {
    std::string name = file.name;
    for (size_t i = 0; !base::PathExists(dir + "/" + name) && i < file.fallbacks.size(); ++i) name = file.fallbacks[i];
    absl::StatusOr<std::string> data = base::ReadFile(dir + "/" + name);
    EXPECT_TRUE(data.ok()) << data.status();
    if (!data.ok()) continue;
    absl::StatusOr<Container> container = ParseContainer(name, *data);
    EXPECT_TRUE(container.ok()) << container.status();
    if (!container.ok()) continue;
    for (const Component& component : container->components) {
      if (component.load == LoadPath::kDriver || component.load == LoadPath::kTrustedApp) continue;
      if (component.load == LoadPath::kBootloader && component.types.front() == psp_fw_type::kKdb) continue;
      out.push_back({name, component, std::string(ComponentBytes(*data, component)), *container});
    }
  }
  return out;
}

class PspImageDebianTest : public ::testing::TestWithParam<std::string> {};

TEST_P(PspImageDebianTest, EveryNavi31ComponentIsAPspImageOfItsKind) {
  REQUIRE_DEBIAN_FIRMWARE(dir, GetParam());
  const std::vector<RealComponent> components = Navi31Components(dir);
  ASSERT_GE(components.size(), 25u);
  for (const RealComponent& c : components) {
    SCOPED_TRACE(GetParam() + " " + c.file + " " + c.component.name);
    ASSERT_TRUE(IsPspImage(c.bytes));
    absl::StatusOr<PspImageHeader> header = ParsePspImageHeader(c.file, c.bytes);
    ASSERT_TRUE(header.ok()) << header.status();
    EXPECT_EQ(header->signed_flag, 1u);
    EXPECT_EQ(header->SignatureBytes(), 0x100u);
    const LoadPath load = c.component.load;
    for (uint32_t type : c.component.types) {
      const RealImageVerdict verdict = ValidateRealImage(c.bytes, load, type);
      EXPECT_TRUE(verdict.ok()) << TypeName(load, type) << ": " << verdict.error;
    }
  }
}

// The versions the headers state are the containers' (the PMFW's stored big-endian), and the RS64 engines start
// where their containers say.
TEST_P(PspImageDebianTest, VersionsAndStartAddressesAgreeWithTheContainers) {
  REQUIRE_DEBIAN_FIRMWARE(dir, GetParam());
  int checked_versions = 0, checked_starts = 0;
  for (const RealComponent& c : Navi31Components(dir)) {
    SCOPED_TRACE(GetParam() + " " + c.file + " " + c.component.name);
    const LoadPath load = c.component.load;
    const uint32_t type = c.component.types.front();
    const RealImageVerdict verdict = ValidateRealImage(c.bytes, load, type);
    ASSERT_TRUE(verdict.ok()) << verdict.error;
    const bool rs64_ucode =
        type == gfx_fw_type::kRs64Mec || type == gfx_fw_type::kRs64Me || type == gfx_fw_type::kRs64Pfp;
    if (rs64_ucode || type == gfx_fw_type::kSmu) {
      EXPECT_EQ(verdict.version, c.container.header.ucode_version);
      ++checked_versions;
    }
    if (load == LoadPath::kBootloader && c.component.version) {
      EXPECT_EQ(verdict.version, *c.component.version);
      ++checked_versions;
    }
    if (rs64_ucode) {
      const std::optional<RealImageIdentity> identity = FindRealImageIdentity(load, type);
      ASSERT_TRUE(identity.has_value());
      EXPECT_EQ(identity->ucode_start,
                *c.container.Field("ucode_start_addr_hi") << 32 | *c.container.Field("ucode_start_addr_lo"));
      ++checked_starts;
    }
  }
  EXPECT_EQ(checked_starts, 3);
  EXPECT_GE(checked_versions, 7);  // PFP, ME, MEC, SMU, SYS_DRV, SOS, SPL
}

INSTANTIATE_TEST_SUITE_P(Versions, PspImageDebianTest, ::testing::ValuesIn(testing::DebianFirmwareVersions()),
                         [](const auto& info) { return info.param.substr(0, 8); });

// A real component of the newer release, by container file and component name.
std::string Component(const std::string& file, const std::string& name) {
  const std::string dir = testing::DebianFirmwareDir(testing::DebianFirmwareVersions().front());
  EXPECT_FALSE(dir.empty()) << "run tools/setup.sh (it fetches Debian's firmware)";
  absl::StatusOr<std::string> data = base::ReadFile(dir + "/" + file);
  EXPECT_TRUE(data.ok()) << data.status();
  absl::StatusOr<Container> container = ParseContainer(file, *data);
  EXPECT_TRUE(container.ok()) << container.status();
  const firmware::Component* component = container->FindByName(name);
  EXPECT_NE(component, nullptr) << name;
  return std::string(ComponentBytes(*data, *component));
}

TEST(PspImageTest, AnImageOfAnotherKindIsNamed) {
  const std::string me = Component("gc_11_0_0_me.bin", "ucode");
  const RealImageVerdict verdict = ValidateRealImage(me, LoadPath::kIpFirmware, gfx_fw_type::kRs64Mec);
  ASSERT_FALSE(verdict.ok());
  EXPECT_NE(verdict.error.find("the image is GFX_FW_TYPE_RS64_ME (image kind 0x46), not GFX_FW_TYPE_RS64_MEC"),
            std::string::npos)
      << verdict.error;
}

TEST(PspImageTest, AnImageSignedByAnotherKeyIsRefused) {
  const std::string sos = Component("psp_13_0_0_sos.bin", "sos");
  const RealImageVerdict verdict = ValidateRealImage(sos, LoadPath::kIpFirmware, gfx_fw_type::kRlcG);
  ASSERT_FALSE(verdict.ok());
  EXPECT_NE(verdict.error.find("signed by key fc0fe9a8, but GFX_FW_TYPE_RLC_G images are signed by key 298b2688"),
            std::string::npos)
      << verdict.error;
}

TEST(PspImageTest, TruncatedUnsignedAndPaddedImagesAreRefused) {
  const std::string mec = Component("gc_11_0_0_mec.bin", "ucode");
  ASSERT_TRUE(ValidateRealImage(mec, LoadPath::kIpFirmware, gfx_fw_type::kRs64Mec).ok());

  const RealImageVerdict truncated =
      ValidateRealImage(mec.substr(0, mec.size() - 4), LoadPath::kIpFirmware, gfx_fw_type::kRs64Mec);
  EXPECT_NE(truncated.error.find("truncated"), std::string::npos) << truncated.error;

  std::string padded = mec + std::string(256, '\0');
  EXPECT_TRUE(ValidateRealImage(padded, LoadPath::kIpFirmware, gfx_fw_type::kRs64Mec).ok());
  padded.back() = 1;
  const RealImageVerdict garbage = ValidateRealImage(padded, LoadPath::kIpFirmware, gfx_fw_type::kRs64Mec);
  EXPECT_NE(garbage.error.find("are not zero padding"), std::string::npos) << garbage.error;

  std::string unsigned_image = mec;
  unsigned_image[0x30] = 0;  // signed = 0: then rom_size no longer covers a signature either
  const RealImageVerdict verdict = ValidateRealImage(unsigned_image, LoadPath::kIpFirmware, gfx_fw_type::kRs64Mec);
  EXPECT_NE(verdict.error.find("rom_size"), std::string::npos) << verdict.error;

  std::string encrypted = mec;
  encrypted[0x18] = 1;
  EXPECT_NE(ValidateRealImage(encrypted, LoadPath::kIpFirmware, gfx_fw_type::kRs64Mec).error.find("encrypted"),
            std::string::npos);
}

TEST(PspImageTest, ATypeNoRealFileProvidesIsRefused) {
  const std::string mec = Component("gc_11_0_0_mec.bin", "ucode");
  const RealImageVerdict verdict = ValidateRealImage(mec, LoadPath::kIpFirmware, gfx_fw_type::kVcn);
  EXPECT_NE(verdict.error.find("no real Navi31 firmware provides GFX_FW_TYPE_VCN"), std::string::npos) << verdict.error;
}

TEST(PspImageTest, ShortOrUnmarkedInputIsAnError) {
  EXPECT_FALSE(IsPspImage(""));
  EXPECT_FALSE(ParsePspImageHeader("x", std::string(0x20, '\0')).ok());
  EXPECT_FALSE(ParsePspImageHeader("x", std::string(0x100, '\0')).ok());
  EXPECT_FALSE(ValidateRealImage("", LoadPath::kToc, psp_fw_type::kToc).ok());
}

// Random damage to a real header and its size never crashes the check, and never yields an image accepted under
// a size that was not handed over.
TEST(PspImageTest, MutatedHeadersAreCheckedWithoutCrashing) {
  const std::string toc = Component("psp_13_0_0_sos.bin", "toc");
  std::mt19937 rng(1234);
  for (int i = 0; i < 5000; ++i) {
    std::string image = toc.substr(0, std::uniform_int_distribution<size_t>(0, toc.size())(rng));
    for (int flips = 0; flips < 4 && !image.empty(); ++flips) {
      image[std::uniform_int_distribution<size_t>(0, std::min<size_t>(image.size(), 0x100) - 1)(rng)] =
          static_cast<char>(rng());
    }
    const RealImageVerdict verdict = ValidateRealImage(image, LoadPath::kToc, psp_fw_type::kToc);
    if (verdict.ok()) {
      absl::StatusOr<PspImageHeader> header = ParsePspImageHeader("toc", image);
      ASSERT_TRUE(header.ok());
      EXPECT_LE(header->rom_size, image.size());
    }
  }
}

}  // namespace
}  // namespace firmware
