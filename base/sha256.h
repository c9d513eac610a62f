// SHA-256 (FIPS 180-4): firmware components are named by it, and the virtual PSP checks every payload it loads
// against it (about 160 KiB per cold boot of sim:navi31). Dependency-free: the portable compression function, and
// where the CPU has them the x86 SHA extensions (SHA256RNDS2/MSG1/MSG2), which issue 24 needed for the cold boot:
// the portable code spent about 21 cycles a byte, 60% of the boot's instructions.
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

  // How the blocks are compressed. Both give the same digest; kShaExtensions only where Supported says so.
  enum class Engine { kPortable, kShaExtensions };
  static bool Supported(Engine engine);

  // The fastest engine this CPU supports.
  Sha256();
  // A given engine (for tests): one that is not Supported is replaced by the portable one.
  explicit Sha256(Engine engine);
  Engine engine() const { return engine_; }
  void Update(absl::string_view data);
  // Finishes the hash; the object must not be updated afterwards.
  Digest Finish();

  static Digest Hash(absl::string_view data);
  // Lower-case hex, 64 characters, as sha256sum prints it.
  static std::string HexHash(absl::string_view data);
  static std::string ToHex(const Digest& digest);

 private:
  // Compresses `blocks` consecutive 64-byte blocks into state_.
  void Compress(const uint8_t* data, size_t blocks);

  Engine engine_;
  std::array<uint32_t, 8> state_;
  uint8_t buffer_[64];
  size_t buffered_ = 0;
  uint64_t total_bytes_ = 0;
};

}  // namespace base

#endif  // BAREGPU_BASE_SHA256_H_
