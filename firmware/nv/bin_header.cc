#include "firmware/nv/bin_header.h"

#include "absl/strings/str_format.h"
#include "base/status_macros.h"

namespace firmware::nv {

bool HasBinMagic(absl::string_view data) {
  ByteReader reader("", data);
  absl::StatusOr<uint32_t> magic = reader.U32(0, "");
  return magic.ok() && *magic == kBinMagic;
}

absl::StatusOr<BinFile> ParseBinFile(const ByteReader& r) {
  BinFile f;
  f.file_size = r.size();
  if (r.size() < kBinHeaderSize) {
    return r.Malformed(
        absl::StrFormat("%d bytes is shorter than nvfw_bin_hdr (%d bytes); the file is truncated (reinstall it from "
                        "firmware-nvidia-graphics / linux-firmware)",
                        r.size(), kBinHeaderSize));
  }
  BinHeader& h = f.header;
  BAREGPU_ASSIGN_OR_RETURN(h.bin_magic, r.U32(0, "nvfw_bin_hdr.bin_magic"));
  if (h.bin_magic != kBinMagic) {
    return r.Malformed(absl::StrFormat(
        "nvfw_bin_hdr.bin_magic at offset 0 is 0x%x, not 0x%x: not an NVIDIA nvfw_bin_hdr firmware file (a "
        "different kind of file, or corrupt)",
        h.bin_magic, kBinMagic));
  }
  BAREGPU_ASSIGN_OR_RETURN(h.bin_ver, r.U32(4, "nvfw_bin_hdr.bin_ver"));
  BAREGPU_ASSIGN_OR_RETURN(h.bin_size, r.U32(8, "nvfw_bin_hdr.bin_size"));
  BAREGPU_ASSIGN_OR_RETURN(h.header_offset, r.U32(12, "nvfw_bin_hdr.header_offset"));
  BAREGPU_ASSIGN_OR_RETURN(h.data_offset, r.U32(16, "nvfw_bin_hdr.data_offset"));
  BAREGPU_ASSIGN_OR_RETURN(h.data_size, r.U32(20, "nvfw_bin_hdr.data_size"));
  if (h.header_offset < kBinHeaderSize || h.header_offset >= r.size()) {
    return r.Malformed(absl::StrFormat(
        "nvfw_bin_hdr.header_offset 0x%x (at offset 0xc) is not inside the file after the %d-byte nvfw_bin_hdr "
        "(file length 0x%x); the file is truncated or corrupt",
        h.header_offset, kBinHeaderSize, r.size()));
  }
  BAREGPU_RETURN_IF_ERROR(
      r.CheckRange(h.data_offset, h.data_size, "payload (nvfw_bin_hdr.data_offset, nvfw_bin_hdr.data_size)"));
  // In the real files bin_size is neither the file's length nor data_offset + data_size (booter_load for AD102:
  // bin_size 0xdb00, file 0xda78 bytes, payload ending at 0xda78). nouveau never reads it, so neither do we.
  if (h.bin_size != r.size()) {
    f.notes.push_back(absl::StrFormat(
        "nvfw_bin_hdr.bin_size 0x%x is not the file's length 0x%x (the payload ends at 0x%x); nouveau ignores "
        "bin_size, as here",
        h.bin_size, r.size(), uint64_t{h.data_offset} + h.data_size));
  }
  return f;
}

}  // namespace firmware::nv
