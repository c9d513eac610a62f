// GSP-RM's booters (nvidia/CHIP/gsp/booter_load-VERSION.bin, booter_unload-VERSION.bin): heavy-secure falcon ucode
// that SEC2 runs to start and stop GSP-RM. An nvfw_bin_hdr container whose header_offset points at an
// nvfw_hs_header_v2, which in turn points at an nvfw_hs_load_header_v2 and the production signatures. Layouts:
// Linux 6.12 drivers/gpu/drm/nouveau/include/nvfw/hs.h; how the fields are used: nvkm/subdev/gsp/tu102.c
// (tu102_gsp_booter_ctor), ga102.c (ga102_gsp_booter_ctor), nvkm/falcon/fw.c (nvkm_falcon_fw_sign,
// nvkm_falcon_fw_patch) and nvkm/falcon/ga100.c (ga100_flcn_fw_signature).
//
// Four of nvfw_hs_header_v2's fields are not values but file offsets of the values: patch_loc, patch_sig, num_sig
// and meta_data_offset (nouveau reads `*(u32 *)(data + hshdr->patch_loc)`). Both are kept here.
#ifndef BAREGPU_FIRMWARE_NV_HS_HEADER_H_
#define BAREGPU_FIRMWARE_NV_HS_HEADER_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "firmware/byte_reader.h"
#include "firmware/nv/bin_header.h"

namespace firmware::nv {

// include/nvfw/hs.h: struct nvfw_hs_header_v2 (nine u32). Offsets are from the start of the file.
struct HsHeaderV2 {
  uint32_t sig_prod_offset = 0;   // the production signatures, num_sig of them back to back
  uint32_t sig_prod_size = 0;     // all of them: one is sig_prod_size / num_sig bytes
  uint32_t patch_loc = 0;         // file offset of the u32: where in the payload a signature is written
  uint32_t patch_sig = 0;         // file offset of the u32: the first signature's offset from sig_prod_offset
  uint32_t meta_data_offset = 0;  // the u32s fuse_ver, engine_id, ucode_id (ga102_gsp_booter_ctor's meta[0..2])
  uint32_t meta_data_size = 0;
  uint32_t num_sig = 0;        // file offset of the u32: how many signatures
  uint32_t header_offset = 0;  // the nvfw_hs_load_header_v2
  uint32_t header_size = 0;
};
inline constexpr uint32_t kHsHeaderV2Size = 9 * 4;

// include/nvfw/hs.h: struct nvfw_hs_load_header_v2's app[] element. Offsets are from the start of the payload.
struct HsApp {
  uint32_t offset = 0;
  uint32_t size = 0;
};
// include/nvfw/hs.h: struct nvfw_hs_load_header_v2 (five u32, then num_apps {offset, size} pairs).
struct HsLoadHeaderV2 {
  uint32_t os_code_offset = 0;  // payload offsets: the non-secure code, the data (DMEM) image
  uint32_t os_code_size = 0;
  uint32_t os_data_offset = 0;
  uint32_t os_data_size = 0;
  uint32_t num_apps = 0;
  std::vector<HsApp> apps;  // app[0] is the secure code nouveau loads into IMEM and boots
};
inline constexpr uint32_t kHsLoadHeaderV2FixedSize = 5 * 4;
inline constexpr uint32_t kHsAppSize = 2 * 4;
// ga102_gsp_booter_ctor reads meta[0], meta[1], meta[2].
inline constexpr uint32_t kHsMetaDataWords = 3;

struct Booter {
  BinFile bin;
  HsHeaderV2 hs;
  // The values the offsets in `hs` point at.
  uint32_t patch_loc = 0;  // payload offset the selected signature is copied to (inside os_data)
  uint32_t patch_sig = 0;  // offset of signature 0 from sig_prod_offset
  uint32_t num_sig = 0;
  uint32_t sig_size = 0;  // sig_prod_size / num_sig
  // meta[0..2] (ga102_gsp_booter_ctor): the fuse version the signatures are for, the engine and ucode ids.
  // ga100_flcn_fw_signature picks signature fuse_ver - fls(fuse register) (the register chosen by engine_id's bit
  // and ucode_id), or the last one (num_sig - 1) on a chip whose fuse register reads 0. TU10x's booters
  // (tu102_gsp_booter_ctor) do not read the meta data.
  uint32_t fuse_ver = 0;
  uint32_t engine_id = 0;
  uint32_t ucode_id = 0;
  HsLoadHeaderV2 load;
  std::vector<std::string> notes;
};

// Parses a booter file; every offset and size is checked against the file (header fields) or the payload (load
// header fields, the patch location) before it is used.
absl::StatusOr<Booter> ParseBooter(absl::string_view file, absl::string_view data);

}  // namespace firmware::nv

#endif  // BAREGPU_FIRMWARE_NV_HS_HEADER_H_
