// GSP-RM's booter (booter_load / booter_unload) made ready for SEC2, as Linux 6.12 nouveau prepares it for GA102 and
// AD102: nvkm/subdev/gsp/ga102.c ga102_gsp_booter_ctor (ad102.c uses it too) reads the HS header v2 and the load
// header, nvkm/falcon/fw.c nvkm_falcon_fw_sign / nvkm_falcon_fw_patch copy the signature the fuse selects
// (nvkm/falcon/ga100.c ga100_flcn_fw_signature, through ga102_flcn_fw) into the image at the patch location,
// nvkm/falcon/ga102.c ga102_flcn_fw_load DMAs app 0 into IMEM and the OS data into DMEM, and ga102_flcn_fw_boot
// writes the BROM parameters before the falcon starts at the boot vector. tinygrad's NV_FLCN.prep_booter /
// execute_hs (support/nv/ip.py) prepare and load the same way (its files are 570's).
//
// Everything is derived from the file and one fuse register value the caller read; nothing touches a device.
#ifndef BAREGPU_NV_GSP_BOOTER_IMAGE_H_
#define BAREGPU_NV_GSP_BOOTER_IMAGE_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "firmware/nv/hs_header.h"

namespace nv::gsp {

// The fuse register whose value selects the signature (ga100_flcn_fw_signature): one bank per engine_id bit,
// element ucode_id - 1 (nv/regs/known_registers.h FUSE_UCODE_VERSION_ENGINE_ID_BIT0/2/10). InvalidArgument when
// engine_id has none of bits 0, 2, 10 (nouveau: WARN_ON, -ENOSYS) or ucode_id is 0.
absl::StatusOr<uint32_t> BooterFuseRegister(uint32_t engine_id, uint32_t ucode_id);

// ga100_flcn_fw_signature: with the register at 0 (an unfused chip), the last signature; otherwise signature
// fuse_ver - fls(register). InvalidArgument where nouveau fails (fls(register) > fuse_ver: the chip is fused past
// the file's signatures) and where it would read past the signatures (an index >= num_sig, which nouveau does not
// check).
absl::StatusOr<uint32_t> SelectBooterSignature(uint32_t fuse_ver, uint32_t num_sig, uint32_t fuse_register_value);

// One DMA into falcon memory (ga102_flcn_fw_load through nvkm_falcon_dma_wr): `size` bytes of the image from
// `image_offset` to falcon memory offset `mem_offset`, 256 bytes per transfer.
struct FalconLoad {
  uint32_t image_offset = 0;
  uint32_t mem_offset = 0;
  uint32_t size = 0;
  bool secure = false;  // the transfer's SEC bit (IMEM of an HS ucode)
};
// nvkm_falcon_dma_wr's transfer size; sizes and DMEM's image offset (its DMA base, >> 8) must be multiples of it.
inline constexpr uint32_t kFalconDmaChunk = 256;

// What the driver needs to put a booter on SEC2 and start it.
struct BooterImage {
  std::string image;  // the payload (nvfw_bin_hdr data), the selected signature patched in; DMA it whole
  uint32_t signature_index = 0;
  uint32_t fuse_register = 0;  // the BAR0 register the fuse value came from
  // nvfw_hs_load_header_v2, kept to show: ga102 loads only app 0 and the OS data (not the OS code).
  uint32_t os_code_offset = 0;
  uint32_t os_code_size = 0;
  uint32_t os_data_offset = 0;
  uint32_t os_data_size = 0;
  uint32_t app_offset = 0;
  uint32_t app_size = 0;
  FalconLoad imem;  // app 0 -> IMEM 0, secure
  FalconLoad dmem;  // OS data -> DMEM 0
  // nvkm_falcon_fw.boot_addr = app[0].offset: NV_PFALCON_FALCON_BOOTVEC.
  uint32_t boot_vector = 0;
  // ga102_flcn_fw_boot: NV_PFALCON2_FALCON_BROM_PARAADDR(0) = the signature's DMEM offset (dmem_sign, patch
  // location - os_data_offset), BROM_ENGIDMASK = meta[1], BROM_CURR_UCODE_ID = meta[2], MOD_SEL = ALGO_RSA3K.
  uint32_t brom_pkc_data_offset = 0;
  uint32_t brom_engine_id_mask = 0;
  uint32_t brom_ucode_id = 0;
  uint32_t brom_mod_sel_algo = 0;
};

// Builds the image from a parsed booter and the file it came from. `fuse_register_value` is what the register
// BooterFuseRegister(booter.engine_id, booter.ucode_id) reads. InvalidArgument/DataLoss for a booter without meta
// data (a Turing file), a fuse the file has no signature for, or loads nouveau's DMA cannot do.
absl::StatusOr<BooterImage> PrepareBooter(const firmware::nv::Booter& booter, absl::string_view file_data,
                                          uint32_t fuse_register_value);

// Parses `data` (the booter_load or booter_unload file named `file`) and prepares it.
absl::StatusOr<BooterImage> PrepareBooterFile(absl::string_view file, absl::string_view data,
                                              uint32_t fuse_register_value);

}  // namespace nv::gsp

#endif  // BAREGPU_NV_GSP_BOOTER_IMAGE_H_
