// Test helpers for firmware/nv: Debian's firmware-nvidia-graphics, which tools/fetch_firmware.sh unpacks into
// .cache/firmware/debian/VERSION/nvidia, and a little-endian writer for synthetic files.
#ifndef BAREGPU_TESTS_FIRMWARE_NV_NV_FIRMWARE_H_
#define BAREGPU_TESTS_FIRMWARE_NV_NV_FIRMWARE_H_

#include <cstdint>
#include <cstdlib>
#include <string>

#include "base/file.h"

namespace firmware::nv::testing {

// The firmware-nvidia-graphics version tools/fetch_firmware.sh fetches.
inline constexpr char kNvidiaPackageVersion[] = "20250410-2~bpo12+1";

// The version directory (a firmware root: it holds nvidia/), or "" when the NVIDIA package was not fetched.
inline std::string NvidiaFirmwareRoot() {
  const char* cache = std::getenv("BAREGPU_FIRMWARE_CACHE");
  const char* root = std::getenv("BAREGPU_SOURCE_ROOT");
  const std::string base = cache != nullptr ? cache : std::string(root ? root : ".") + "/.cache/firmware";
  const std::string dir = base + "/debian/" + kNvidiaPackageVersion;
  return base::PathExists(dir + "/.complete-nvidia") ? dir : "";
}

// A file under construction: little-endian u32s at given offsets, growing as needed.
class Bytes {
 public:
  explicit Bytes(size_t size = 0) : data_(size, '\0') {}
  Bytes& U32(size_t offset, uint32_t value) {
    Grow(offset + 4);
    for (int i = 0; i < 4; ++i) data_[offset + i] = static_cast<char>(value >> (8 * i));
    return *this;
  }
  Bytes& U16(size_t offset, uint16_t value) {
    Grow(offset + 2);
    data_[offset] = static_cast<char>(value);
    data_[offset + 1] = static_cast<char>(value >> 8);
    return *this;
  }
  Bytes& U64(size_t offset, uint64_t value) {
    U32(offset, static_cast<uint32_t>(value));
    return U32(offset + 4, static_cast<uint32_t>(value >> 32));
  }
  Bytes& Text(size_t offset, const std::string& text) {
    Grow(offset + text.size());
    data_.replace(offset, text.size(), text);
    return *this;
  }
  Bytes& Resize(size_t size) {
    data_.resize(size, '\0');
    return *this;
  }
  const std::string& str() const { return data_; }
  size_t size() const { return data_.size(); }

 private:
  void Grow(size_t size) {
    if (data_.size() < size) data_.resize(size, '\0');
  }
  std::string data_;
};

}  // namespace firmware::nv::testing

// Skips when the cache lacks the NVIDIA package (tools/setup.sh runs tools/fetch_firmware.sh, which adds it).
#define REQUIRE_NVIDIA_FIRMWARE(root)                                                                    \
  const std::string root = ::firmware::nv::testing::NvidiaFirmwareRoot();                                \
  if (root.empty())                                                                                      \
  GTEST_SKIP() << "Debian's firmware-nvidia-graphics " << ::firmware::nv::testing::kNvidiaPackageVersion \
               << " is not in .cache/firmware/debian (tools/fetch_firmware.sh fetches it; run tools/setup.sh)"

#endif  // BAREGPU_TESTS_FIRMWARE_NV_NV_FIRMWARE_H_
