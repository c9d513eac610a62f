// Bounds-checked little-endian reads from an untrusted firmware image. Every read and every region a header
// points at goes through here, so a malformed file yields one clear error (file, field, value, limit) instead
// of an out-of-bounds access.
#ifndef BAREGPU_FIRMWARE_BYTE_READER_H_
#define BAREGPU_FIRMWARE_BYTE_READER_H_

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "base/printable.h"

namespace firmware {

class ByteReader {
 public:
  // `file` names the image in messages; `data` must outlive the reader.
  ByteReader(absl::string_view file, absl::string_view data) : file_(base::Printable(file)), data_(data) {}

  // The name as messages show it (base::Printable).
  absl::string_view file() const { return file_; }
  absl::string_view data() const { return data_; }
  uint64_t size() const { return data_.size(); }

  absl::StatusOr<uint32_t> U32(uint64_t offset, absl::string_view field) const;
  absl::StatusOr<uint16_t> U16(uint64_t offset, absl::string_view field) const;

  // Checks that [offset, offset + size) lies inside the file. `what` names the region and the header fields
  // that placed it ("component 'sos' (sos.offset_bytes, sos.size_bytes)").
  absl::Status CheckRange(uint64_t offset, uint64_t size, absl::string_view what) const;
  absl::StatusOr<absl::string_view> Bytes(uint64_t offset, uint64_t size, absl::string_view what) const;

  // A DataLoss error prefixed with the file name: the image is malformed.
  absl::Status Malformed(absl::string_view message) const;

 private:
  std::string file_;
  absl::string_view data_;
};

}  // namespace firmware

#endif  // BAREGPU_FIRMWARE_BYTE_READER_H_
