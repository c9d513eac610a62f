// Debian's real amdgpu firmware (firmware-amd-graphics, both versions tools/fetch_firmware.sh unpacks): every file
// parses, and Navi31's files are what the driver's requirements say, header versions included.
#include "tests/firmware/debian_firmware.h"

#include <string>

#include "absl/strings/match.h"
#include "base/file.h"
#include "firmware/container.h"
#include "firmware/requirements.h"
#include "gtest/gtest.h"

namespace firmware {
namespace {

class DebianFirmwareTest : public ::testing::TestWithParam<std::string> {};

TEST_P(DebianFirmwareTest, EveryFileParsesWithItsComponentsInside) {
  REQUIRE_DEBIAN_FIRMWARE(dir, GetParam());
  absl::StatusOr<std::vector<std::string>> names = base::ListDirectory(dir);
  ASSERT_TRUE(names.ok()) << names.status();
  int parsed = 0;
  for (const std::string& name : *names) {
    if (!absl::EndsWith(name, ".bin")) continue;
    absl::StatusOr<std::string> data = base::ReadFile(dir + "/" + name);
    ASSERT_TRUE(data.ok()) << data.status();
    absl::StatusOr<Container> container = ParseContainer(name, *data);
    EXPECT_TRUE(container.ok()) << GetParam() << " " << name << ": " << container.status();
    if (!container.ok()) continue;
    ++parsed;
    for (const Component& component : container->components) {
      EXPECT_LE(component.offset + component.size, data->size()) << name << " " << component.name;
    }
  }
  EXPECT_GT(parsed, 0);
  std::cout << "parsed " << parsed << " files of firmware-amd-graphics " << GetParam() << "\n";
}

// What the driver needs for Navi31, with the header versions amdgpu reads: every real file satisfies it (the SMU
// firmware is an smc_firmware_header v2.1 container).
TEST_P(DebianFirmwareTest, Navi31FilesMeetTheDriversRequirements) {
  REQUIRE_DEBIAN_FIRMWARE(dir, GetParam());
  absl::StatusOr<AsicProfile> navi31 = FindAsicProfile("navi31");
  ASSERT_TRUE(navi31.ok()) << navi31.status();
  absl::StatusOr<std::vector<RequiredFile>> required = RequiredFiles(navi31->ip);
  ASSERT_TRUE(required.ok()) << required.status();
  for (const RequiredFile& file : *required) {
    std::string name = file.name;
    for (size_t i = 0; !base::PathExists(dir + "/" + name) && i < file.fallbacks.size(); ++i) name = file.fallbacks[i];
    absl::StatusOr<std::string> data = base::ReadFile(dir + "/" + name);
    ASSERT_TRUE(data.ok()) << GetParam() << ": " << data.status();
    absl::StatusOr<Container> container = ParseContainer(name, *data);
    ASSERT_TRUE(container.ok()) << GetParam() << " " << name << ": " << container.status();
    EXPECT_TRUE(CheckProvides(file, *container).ok()) << GetParam() << ": " << CheckProvides(file, *container);
    if (file.role.kind == FileKind::kSmc) {
      EXPECT_EQ(container->header.header_version_major, 2) << name;
      EXPECT_EQ(container->header.header_version_minor, 1) << name;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Versions, DebianFirmwareTest, ::testing::ValuesIn(testing::DebianFirmwareVersions()),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           std::string name = info.param.substr(0, info.param.find('-'));
                           return "v" + name;
                         });

}  // namespace
}  // namespace firmware
