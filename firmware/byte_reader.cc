#include "firmware/byte_reader.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace firmware {

absl::Status ByteReader::Malformed(absl::string_view message) const {
  return absl::DataLossError(absl::StrCat(file_, ": ", message));
}

absl::Status ByteReader::CheckRange(uint64_t offset, uint64_t size, absl::string_view what) const {
  // Both operands come from 32-bit fields (or sums of two), so the 64-bit sum cannot wrap.
  if (offset > data_.size() || size > data_.size() - offset) {
    return Malformed(absl::StrFormat(
        "%s spans 0x%x..0x%x (offset 0x%x, size 0x%x), past the end of the file at 0x%x; the file is truncated "
        "or corrupt (reinstall it from linux-firmware)",
        what, offset, offset + size, offset, size, data_.size()));
  }
  return absl::OkStatus();
}

absl::StatusOr<absl::string_view> ByteReader::Bytes(uint64_t offset, uint64_t size, absl::string_view what) const {
  if (absl::Status status = CheckRange(offset, size, what); !status.ok()) return status;
  return data_.substr(offset, size);
}

absl::StatusOr<uint32_t> ByteReader::U32(uint64_t offset, absl::string_view field) const {
  if (absl::Status status = CheckRange(offset, 4, absl::StrCat("field ", field)); !status.ok()) return status;
  const auto* p = reinterpret_cast<const uint8_t*>(data_.data() + offset);
  return uint32_t{p[0]} | uint32_t{p[1]} << 8 | uint32_t{p[2]} << 16 | uint32_t{p[3]} << 24;
}

absl::StatusOr<uint16_t> ByteReader::U16(uint64_t offset, absl::string_view field) const {
  if (absl::Status status = CheckRange(offset, 2, absl::StrCat("field ", field)); !status.ok()) return status;
  const auto* p = reinterpret_cast<const uint8_t*>(data_.data() + offset);
  return static_cast<uint16_t>(p[0] | p[1] << 8);
}

}  // namespace firmware
