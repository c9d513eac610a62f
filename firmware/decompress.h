// Decompression of the .bin.zst and .bin.xz firmware files current distributions ship (libzstd, liblzma).
#ifndef BAREGPU_FIRMWARE_DECOMPRESS_H_
#define BAREGPU_FIRMWARE_DECOMPRESS_H_

#include <cstddef>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace firmware {

// Firmware images are at most a few MiB; anything that inflates past this is refused as corrupt or hostile.
inline constexpr size_t kMaxFirmwareSize = size_t{64} << 20;

enum class Compression { kNone, kZstd, kXz };

// From the file name: ".zst" and ".xz" suffixes.
Compression CompressionOf(absl::string_view path);

// Decompresses `data` read from `path` (named in errors); kNone returns it unchanged.
absl::StatusOr<std::string> Decompress(absl::string_view path, std::string data, Compression compression,
                                       size_t max_size = kMaxFirmwareSize);

}  // namespace firmware

#endif  // BAREGPU_FIRMWARE_DECOMPRESS_H_
