#include "nv/gsp/booter_image.h"

#include <bit>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/status_macros.h"
#include "nv/regs/ga102.h"
#include "nv/regs/known_registers.h"

namespace nv::gsp {
namespace {

// ga100_flcn_fw_signature's engine_id bits, tested in this order, and the fuse bank each selects.
struct FuseBank {
  uint32_t engine_id_bit;
  const char* register_name;  // in nv/regs/known_registers.h
};
constexpr FuseBank kFuseBanks[] = {
    {0x1, "FUSE_UCODE_VERSION_ENGINE_ID_BIT0"},
    {0x4, "FUSE_UCODE_VERSION_ENGINE_ID_BIT2"},
    {0x400, "FUSE_UCODE_VERSION_ENGINE_ID_BIT10"},
};

absl::Status CheckDmaLoad(const FalconLoad& load, const char* what, absl::string_view file) {
  if (load.size == 0 || load.size % kFalconDmaChunk != 0) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s: the booter's %s is 0x%x bytes; nvkm_falcon_dma_wr moves whole %d-byte chunks (the file is not a "
        "GA102/AD102 booter, or corrupt)",
        file, what, load.size, kFalconDmaChunk));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<uint32_t> BooterFuseRegister(uint32_t engine_id, uint32_t ucode_id) {
  if (ucode_id == 0) {
    return absl::InvalidArgumentError(
        "booter signature fuse: ucode id (HS meta[2]) is 0; the fuse bank is indexed by ucode_id - 1");
  }
  for (const FuseBank& bank : kFuseBanks) {
    if ((engine_id & bank.engine_id_bit) == 0) continue;
    const regs::known::KnownRegister* r = regs::known::FindKnownRegister(bank.register_name);
    if (r == nullptr) return absl::InternalError(absl::StrCat(bank.register_name, " missing from known_registers"));
    return r->offset + (ucode_id - 1) * r->stride;
  }
  return absl::InvalidArgumentError(absl::StrFormat(
      "booter signature fuse: engine id mask 0x%x (HS meta[1]) has none of bits 0x1, 0x4, 0x400, the engines "
      "ga100_flcn_fw_signature knows a fuse bank for",
      engine_id));
}

absl::StatusOr<uint32_t> SelectBooterSignature(uint32_t fuse_ver, uint32_t num_sig, uint32_t fuse_register_value) {
  if (num_sig == 0) return absl::InvalidArgumentError("booter signature: the file carries no signatures");
  uint32_t index;
  if (fuse_register_value == 0) {
    index = num_sig - 1;
  } else {
    // fls: the 1-based position of the highest set bit.
    const uint32_t fused = static_cast<uint32_t>(std::bit_width(fuse_register_value));
    if (fuse_ver < fused) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "booter signature: the chip's fuse 0x%x says ucode revision %d, the file's signatures are for revision %d "
          "and older (HS meta[0]); this booter cannot run on this chip, use a newer firmware release",
          fuse_register_value, fused, fuse_ver));
    }
    index = fuse_ver - fused;
  }
  if (index >= num_sig) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "booter signature: fuse 0x%x with signature fuse version %d selects signature %d, but the file has %d",
        fuse_register_value, fuse_ver, index, num_sig));
  }
  return index;
}

absl::StatusOr<BooterImage> PrepareBooter(const firmware::nv::Booter& b, absl::string_view file_data,
                                          uint32_t fuse_register_value) {
  const absl::string_view file = "booter";
  if (b.hs.meta_data_size == 0) {
    return absl::InvalidArgumentError(
        "booter: no HS meta data (fuse version, engine id, ucode id); a Turing booter (tu102_gsp_booter_ctor) is "
        "not loaded this way");
  }
  if (b.load.apps.empty()) {
    return absl::InvalidArgumentError("booter: the load header has no app; ga102_gsp_booter_ctor boots app 0");
  }
  const firmware::nv::BinHeader& bin = b.bin.header;
  if (uint64_t{bin.data_offset} + bin.data_size > file_data.size() ||
      uint64_t{b.hs.sig_prod_offset} + b.patch_sig + uint64_t{b.num_sig} * b.sig_size > file_data.size()) {
    return absl::InvalidArgumentError(
        absl::StrFormat("booter: the %d bytes given are not the file the header was parsed from (payload ends at 0x%x)",
                        file_data.size(), uint64_t{bin.data_offset} + bin.data_size));
  }
  // ParseBooter checked these against the file; a Booter built elsewhere may not have been.
  const firmware::nv::HsLoadHeaderV2& load = b.load;
  const struct {
    const char* what;
    uint64_t offset;
    uint64_t size;
  } regions[] = {{"the signature patch location", b.patch_loc, b.sig_size},
                 {"app 0", load.apps[0].offset, load.apps[0].size},
                 {"the OS data", load.os_data_offset, load.os_data_size}};
  for (const auto& r : regions) {
    if (r.offset > bin.data_size || r.size > bin.data_size - r.offset) {
      return absl::InvalidArgumentError(
          absl::StrFormat("booter: %s 0x%x + 0x%x lies outside the 0x%x-byte payload (nvfw_bin_hdr.data_size)", r.what,
                          r.offset, r.size, bin.data_size));
    }
  }
  if (b.patch_loc < load.os_data_offset) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "booter: the patch location 0x%x lies before the OS data at 0x%x; the BROM finds the signature in DMEM",
        b.patch_loc, load.os_data_offset));
  }
  BooterImage out;
  BAREGPU_ASSIGN_OR_RETURN(out.fuse_register, BooterFuseRegister(b.engine_id, b.ucode_id));
  BAREGPU_ASSIGN_OR_RETURN(out.signature_index, SelectBooterSignature(b.fuse_ver, b.num_sig, fuse_register_value));

  // nvkm_falcon_fw_sign keeps the signatures from sig_prod_offset + *patch_sig; nvkm_falcon_fw_patch writes signature
  // `index` at payload offset *patch_loc, inside the OS data.
  out.image = std::string(file_data.substr(bin.data_offset, bin.data_size));
  const uint64_t signature = uint64_t{b.hs.sig_prod_offset} + b.patch_sig + uint64_t{out.signature_index} * b.sig_size;
  out.image.replace(b.patch_loc, b.sig_size, file_data.data() + signature, b.sig_size);

  out.os_code_offset = load.os_code_offset;
  out.os_code_size = load.os_code_size;
  out.os_data_offset = load.os_data_offset;
  out.os_data_size = load.os_data_size;
  out.app_offset = load.apps[0].offset;
  out.app_size = load.apps[0].size;
  // ga102_gsp_booter_ctor: imem_base_img = app[0].offset, imem_base 0; dmem_base_img = os_data_offset, dmem_base 0.
  out.imem = FalconLoad{load.apps[0].offset, 0, load.apps[0].size, true};
  out.dmem = FalconLoad{load.os_data_offset, 0, load.os_data_size, false};
  BAREGPU_RETURN_IF_ERROR(CheckDmaLoad(out.imem, "app 0 (IMEM)", file));
  BAREGPU_RETURN_IF_ERROR(CheckDmaLoad(out.dmem, "OS data (DMEM)", file));
  if (load.os_data_offset % kFalconDmaChunk != 0) {
    // ga102_flcn_dma_init writes the DMEM transfer's base (image address + os_data_offset) >> 8.
    return absl::InvalidArgumentError(absl::StrFormat(
        "booter: the OS data at payload offset 0x%x is not %d-byte aligned; the falcon's DMA base cannot point at "
        "it",
        load.os_data_offset, kFalconDmaChunk));
  }
  out.boot_vector = load.apps[0].offset;
  out.brom_pkc_data_offset = b.patch_loc - load.os_data_offset;
  out.brom_engine_id_mask = b.engine_id;
  out.brom_ucode_id = b.ucode_id;
  out.brom_mod_sel_algo = regs::ga102::NV_PFALCON2_FALCON_MOD_SEL::ALGO_RSA3K;
  return out;
}

absl::StatusOr<BooterImage> PrepareBooterFile(absl::string_view file, absl::string_view data,
                                              uint32_t fuse_register_value) {
  BAREGPU_ASSIGN_OR_RETURN(const firmware::nv::Booter booter, firmware::nv::ParseBooter(file, data));
  absl::StatusOr<BooterImage> image = PrepareBooter(booter, data, fuse_register_value);
  if (!image.ok()) {
    return absl::Status(image.status().code(), absl::StrCat(file, ": ", image.status().message()));
  }
  return image;
}

}  // namespace nv::gsp
