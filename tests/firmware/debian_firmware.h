// Test helper: Debian's real amdgpu firmware, which tools/fetch_firmware.sh (run by tools/setup.sh) unpacks into
// .cache/firmware/debian/VERSION/amdgpu.
#ifndef BAREGPU_TESTS_FIRMWARE_DEBIAN_FIRMWARE_H_
#define BAREGPU_TESTS_FIRMWARE_DEBIAN_FIRMWARE_H_

#include <cstdlib>
#include <string>
#include <vector>

#include "base/file.h"

namespace firmware::testing {

// firmware-amd-graphics versions tools/fetch_firmware.sh fetches.
inline const std::vector<std::string>& DebianFirmwareVersions() {
  static const auto* versions = new std::vector<std::string>{"20250410-2~bpo12+1", "20230210-5"};
  return *versions;
}

// The amdgpu directory of one version, or "" when it was not fetched.
inline std::string DebianFirmwareDir(const std::string& version) {
  const char* cache = std::getenv("BAREGPU_FIRMWARE_CACHE");
  const char* root = std::getenv("BAREGPU_SOURCE_ROOT");
  const std::string base = cache != nullptr ? cache : std::string(root ? root : ".") + "/.cache/firmware";
  const std::string dir = base + "/debian/" + version + "/amdgpu";
  return base::PathExists(dir) ? dir : "";
}

}  // namespace firmware::testing

// Fails (not skips) when the cache is missing: tools/setup.sh fetches it before every test run, so a missing cache
// is a set-up failure to see, not a reason to test less.
#define REQUIRE_DEBIAN_FIRMWARE(dir, version)                                                                \
  const std::string dir = ::firmware::testing::DebianFirmwareDir(version);                                   \
  ASSERT_FALSE(dir.empty()) << "Debian's firmware-amd-graphics " << (version)                                \
                            << " is not in .cache/firmware/debian (tools/fetch_firmware.sh fetches it; run " \
                               "tools/setup.sh)"

#endif  // BAREGPU_TESTS_FIRMWARE_DEBIAN_FIRMWARE_H_
