// Test helper: the real amdgpu firmware files under ../shared/firmware/amdgpu (not part of the repository).
#ifndef BAREGPU_TESTS_FIRMWARE_SHARED_FIRMWARE_H_
#define BAREGPU_TESTS_FIRMWARE_SHARED_FIRMWARE_H_

#include <cstdlib>
#include <string>

#include "base/file.h"

namespace firmware::testing {

// The directory holding the real files, or "" when ../shared is absent.
inline std::string SharedFirmwareDir() {
  const char* root = std::getenv("BAREGPU_SOURCE_ROOT");
  const std::string dir = std::string(root ? root : ".") + "/../shared/firmware/amdgpu";
  return base::PathExists(dir) ? dir : "";
}

inline constexpr char kNoSharedFirmware[] =
    "../shared/firmware/amdgpu is absent (real amdgpu firmware for tests; see ../shared/firmware/README.md)";

}  // namespace firmware::testing

// Skips the test when the real firmware is absent; otherwise declares `dir` as its path.
#define REQUIRE_SHARED_FIRMWARE(dir)                                \
  const std::string dir = ::firmware::testing::SharedFirmwareDir(); \
  if (dir.empty()) GTEST_SKIP() << ::firmware::testing::kNoSharedFirmware

#endif  // BAREGPU_TESTS_FIRMWARE_SHARED_FIRMWARE_H_
