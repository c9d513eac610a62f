// SHA-256 (FIPS 180-4), for naming firmware components by content. Small and dependency-free on purpose: the
// only user is diagnostics, and pulling in a crypto library for one hash is not worth a package.
#ifndef BAREGPU_BASE_SHA256_H_
#define BAREGPU_BASE_SHA256_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/strings/string_view.h"

namespace base {

class Sha256 {
 public:
  using Digest = std::array<uint8_t, 32>;

  Sha256();
  void Update(absl::string_view data);
  // Finishes the hash; the object must not be updated afterwards.
  Digest Finish();

  static Digest Hash(absl::string_view data);
  // Lower-case hex, 64 characters, as sha256sum prints it.
  static std::string HexHash(absl::string_view data);
  static std::string ToHex(const Digest& digest);

 private:
  void Compress(const uint8_t block[64]);

  std::array<uint32_t, 8> state_;
  uint8_t buffer_[64];
  size_t buffered_ = 0;
  uint64_t total_bytes_ = 0;
};

}  // namespace base

#endif  // BAREGPU_BASE_SHA256_H_
