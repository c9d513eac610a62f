#include "firmware/nv/hs_header.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/status_macros.h"

namespace firmware::nv {
namespace {

// A region of the payload named by load-header fields must lie inside the payload (nouveau copies it from there).
absl::Status CheckInPayload(const ByteReader& r, const BinHeader& bin, uint64_t offset, uint64_t size,
                            absl::string_view what) {
  if (offset > bin.data_size || size > bin.data_size - offset) {
    return r.Malformed(absl::StrFormat(
        "%s spans payload bytes 0x%x..0x%x, past the payload's end at 0x%x (nvfw_bin_hdr.data_size); the file is "
        "corrupt (reinstall it from firmware-nvidia-graphics / linux-firmware)",
        what, offset, offset + size, bin.data_size));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<Booter> ParseBooter(absl::string_view file, absl::string_view data) {
  const ByteReader r(file, data);
  Booter b;
  BAREGPU_ASSIGN_OR_RETURN(b.bin, ParseBinFile(r));
  b.notes = b.bin.notes;
  const uint64_t at = b.bin.header.header_offset;
  BAREGPU_RETURN_IF_ERROR(
      r.CheckRange(at, kHsHeaderV2Size, "nvfw_hs_header_v2 (at nvfw_bin_hdr.header_offset, 36 bytes)"));
  HsHeaderV2& hs = b.hs;
  BAREGPU_ASSIGN_OR_RETURN(hs.sig_prod_offset, r.U32(at + 0, "nvfw_hs_header_v2.sig_prod_offset"));
  BAREGPU_ASSIGN_OR_RETURN(hs.sig_prod_size, r.U32(at + 4, "nvfw_hs_header_v2.sig_prod_size"));
  BAREGPU_ASSIGN_OR_RETURN(hs.patch_loc, r.U32(at + 8, "nvfw_hs_header_v2.patch_loc"));
  BAREGPU_ASSIGN_OR_RETURN(hs.patch_sig, r.U32(at + 12, "nvfw_hs_header_v2.patch_sig"));
  BAREGPU_ASSIGN_OR_RETURN(hs.meta_data_offset, r.U32(at + 16, "nvfw_hs_header_v2.meta_data_offset"));
  BAREGPU_ASSIGN_OR_RETURN(hs.meta_data_size, r.U32(at + 20, "nvfw_hs_header_v2.meta_data_size"));
  BAREGPU_ASSIGN_OR_RETURN(hs.num_sig, r.U32(at + 24, "nvfw_hs_header_v2.num_sig"));
  BAREGPU_ASSIGN_OR_RETURN(hs.header_offset, r.U32(at + 28, "nvfw_hs_header_v2.header_offset"));
  BAREGPU_ASSIGN_OR_RETURN(hs.header_size, r.U32(at + 32, "nvfw_hs_header_v2.header_size"));

  // The indirect fields: each is the file offset of a u32.
  BAREGPU_ASSIGN_OR_RETURN(b.patch_loc, r.U32(hs.patch_loc, "*nvfw_hs_header_v2.patch_loc"));
  BAREGPU_ASSIGN_OR_RETURN(b.patch_sig, r.U32(hs.patch_sig, "*nvfw_hs_header_v2.patch_sig"));
  BAREGPU_ASSIGN_OR_RETURN(b.num_sig, r.U32(hs.num_sig, "*nvfw_hs_header_v2.num_sig"));
  if (b.num_sig == 0) {
    // nouveau divides sig_prod_size by it.
    return r.Malformed(absl::StrFormat(
        "the signature count (the u32 at nvfw_hs_header_v2.num_sig = 0x%x) is 0; a booter carries at least one "
        "production signature (the file is corrupt)",
        hs.num_sig));
  }
  if (hs.sig_prod_size % b.num_sig != 0 || hs.sig_prod_size == 0) {
    return r.Malformed(absl::StrFormat(
        "nvfw_hs_header_v2.sig_prod_size 0x%x does not divide into %d signatures of equal size (the file is corrupt)",
        hs.sig_prod_size, b.num_sig));
  }
  b.sig_size = hs.sig_prod_size / b.num_sig;
  BAREGPU_RETURN_IF_ERROR(r.CheckRange(hs.sig_prod_offset, hs.sig_prod_size,
                                       "production signatures (nvfw_hs_header_v2.sig_prod_offset, sig_prod_size)"));
  // nvkm_falcon_fw_sign copies num_sig signatures from sig_prod_offset + patch_sig.
  BAREGPU_RETURN_IF_ERROR(r.CheckRange(uint64_t{hs.sig_prod_offset} + b.patch_sig, hs.sig_prod_size,
                                       "signatures nouveau copies (sig_prod_offset + *patch_sig, sig_prod_size)"));

  if (hs.meta_data_size != 0) {
    BAREGPU_RETURN_IF_ERROR(r.CheckRange(hs.meta_data_offset, hs.meta_data_size,
                                         "meta data (nvfw_hs_header_v2.meta_data_offset, meta_data_size)"));
    if (hs.meta_data_size < kHsMetaDataWords * 4) {
      return r.Malformed(absl::StrFormat(
          "nvfw_hs_header_v2.meta_data_size is %d bytes; nouveau reads %d u32s there (fuse version, engine id, "
          "ucode id)",
          hs.meta_data_size, kHsMetaDataWords));
    }
    BAREGPU_ASSIGN_OR_RETURN(b.fuse_ver, r.U32(hs.meta_data_offset, "meta[0] (fuse version)"));
    BAREGPU_ASSIGN_OR_RETURN(b.engine_id, r.U32(hs.meta_data_offset + 4, "meta[1] (engine id)"));
    BAREGPU_ASSIGN_OR_RETURN(b.ucode_id, r.U32(hs.meta_data_offset + 8, "meta[2] (ucode id)"));
    // A chip fused at version 1 or later takes signature fuse_ver - fls(fuse) (ga100_flcn_fw_signature): with more
    // than num_sig it would index past the signatures. Shown, since a chip fused higher makes the index valid.
    if (b.fuse_ver > b.num_sig) {
      b.notes.push_back(absl::StrFormat(
          "meta[0] (fuse version) %d exceeds the %d signature(s): a chip whose fuse register's highest set bit is "
          "bit 0 would select signature %d, which the file lacks",
          b.fuse_ver, b.num_sig, b.fuse_ver - 1));
    }
  } else {
    b.notes.push_back("no meta data (nvfw_hs_header_v2.meta_data_size 0): no fuse version, engine or ucode id");
  }

  // The load header.
  HsLoadHeaderV2& l = b.load;
  BAREGPU_RETURN_IF_ERROR(r.CheckRange(hs.header_offset, hs.header_size,
                                       "nvfw_hs_load_header_v2 (nvfw_hs_header_v2.header_offset, header_size)"));
  if (hs.header_size < kHsLoadHeaderV2FixedSize) {
    return r.Malformed(absl::StrFormat(
        "nvfw_hs_header_v2.header_size %d is smaller than nvfw_hs_load_header_v2's fixed part (%d bytes)",
        hs.header_size, kHsLoadHeaderV2FixedSize));
  }
  const uint64_t lh = hs.header_offset;
  BAREGPU_ASSIGN_OR_RETURN(l.os_code_offset, r.U32(lh + 0, "nvfw_hs_load_header_v2.os_code_offset"));
  BAREGPU_ASSIGN_OR_RETURN(l.os_code_size, r.U32(lh + 4, "nvfw_hs_load_header_v2.os_code_size"));
  BAREGPU_ASSIGN_OR_RETURN(l.os_data_offset, r.U32(lh + 8, "nvfw_hs_load_header_v2.os_data_offset"));
  BAREGPU_ASSIGN_OR_RETURN(l.os_data_size, r.U32(lh + 12, "nvfw_hs_load_header_v2.os_data_size"));
  BAREGPU_ASSIGN_OR_RETURN(l.num_apps, r.U32(lh + 16, "nvfw_hs_load_header_v2.num_apps"));
  // Bounded by header_size before anything is allocated or read: num_apps comes from the file.
  const uint64_t apps_bytes = uint64_t{l.num_apps} * kHsAppSize;
  if (l.num_apps == 0 || apps_bytes > hs.header_size - kHsLoadHeaderV2FixedSize) {
    return r.Malformed(absl::StrFormat(
        "nvfw_hs_load_header_v2.num_apps is %d: nouveau boots app[0], so at least 1, and %d of them (8 bytes each) "
        "do not fit in nvfw_hs_header_v2.header_size %d after the %d-byte fixed part",
        l.num_apps, l.num_apps, hs.header_size, kHsLoadHeaderV2FixedSize));
  }
  for (uint32_t i = 0; i < l.num_apps; ++i) {
    HsApp app;
    const uint64_t at_app = lh + kHsLoadHeaderV2FixedSize + uint64_t{i} * kHsAppSize;
    BAREGPU_ASSIGN_OR_RETURN(app.offset, r.U32(at_app, absl::StrCat("nvfw_hs_load_header_v2.app[", i, "].offset")));
    BAREGPU_ASSIGN_OR_RETURN(app.size, r.U32(at_app + 4, absl::StrCat("nvfw_hs_load_header_v2.app[", i, "].size")));
    BAREGPU_RETURN_IF_ERROR(CheckInPayload(r, b.bin.header, app.offset, app.size,
                                           absl::StrFormat("app[%d] (nvfw_hs_load_header_v2.app[%d])", i, i)));
    l.apps.push_back(app);
  }
  const uint64_t used = kHsLoadHeaderV2FixedSize + apps_bytes;
  if (used < hs.header_size) {
    // The real booters' header_size is 0x24 with one app: 8 bytes more than the struct needs.
    b.notes.push_back(absl::StrFormat(
        "nvfw_hs_header_v2.header_size %d is %d bytes more than nvfw_hs_load_header_v2 with %d app(s) needs (%d)",
        hs.header_size, hs.header_size - used, l.num_apps, used));
  }
  BAREGPU_RETURN_IF_ERROR(CheckInPayload(r, b.bin.header, l.os_code_offset, l.os_code_size,
                                         "OS code (nvfw_hs_load_header_v2.os_code_offset, os_code_size)"));
  BAREGPU_RETURN_IF_ERROR(CheckInPayload(r, b.bin.header, l.os_data_offset, l.os_data_size,
                                         "OS data (nvfw_hs_load_header_v2.os_data_offset, os_data_size)"));
  // The signature is written at patch_loc inside the data image (dmem_sign = patch_loc - os_data_offset).
  if (b.patch_loc < l.os_data_offset ||
      uint64_t{b.patch_loc} + b.sig_size > uint64_t{l.os_data_offset} + l.os_data_size) {
    return r.Malformed(absl::StrFormat(
        "the signature patch location 0x%x (the u32 at nvfw_hs_header_v2.patch_loc) with a %d-byte signature is "
        "not inside the OS data image 0x%x..0x%x (nvfw_hs_load_header_v2.os_data_offset, os_data_size); nouveau "
        "would write the signature outside it",
        b.patch_loc, b.sig_size, l.os_data_offset, uint64_t{l.os_data_offset} + l.os_data_size));
  }
  return b;
}

}  // namespace firmware::nv
