// What an NVIDIA firmware file is, and a description of it for `baregpu fw info`. The kind comes from the file's
// name and place (nvidia/CHIP/SUBDIR/NAME, as nouveau asks for it) and, for names that two formats share
// (acr/ucode_load.bin is an nvfw_bin_hdr container for GP102 and later, raw falcon code for GM20x), from the magic.
//
// Parsed: the four GSP-RM files (booters, bootloader, GSP-RM ELF) in full, and every other nvfw_bin_hdr container's
// outer header. Classified only (their formats are raw falcon code and data, signature blobs, netlists and
// register lists that nouveau reads without a container): the rest of firmware-nvidia-graphics, with a size check.
// File names: Linux 6.12 nouveau nvkm/subdev/gsp/r535.c (gsp/*-VERSION.bin), nvkm/engine/gr/gf100.c, gk20a.c,
// gp102.c, tu102.c, ga102.c (gr/*), nvkm/subdev/acr/*.c and lsfw.c (acr/*, sec2/*, pmu/*), nvkm/engine/nvdec
// (nvdec/scrubber.bin); the ccg_*.cyacd files are the USB-C controller firmware of Turing boards, which the
// package ships and no GPU driver loads.
#ifndef BAREGPU_FIRMWARE_NV_FILE_KIND_H_
#define BAREGPU_FIRMWARE_NV_FILE_KIND_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace firmware::nv {

enum class NvFileKind {
  kBooterLoad,    // gsp/booter_load-VERSION.bin: nvfw_bin_hdr + nvfw_hs_header_v2 (hs_header.h)
  kBooterUnload,  // gsp/booter_unload-VERSION.bin: the same layout
  kBootloader,    // gsp/bootloader-VERSION.bin: nvfw_bin_hdr + RM_RISCV_UCODE_DESC (riscv_desc.h)
  kGspRm,         // gsp/gsp-VERSION.bin: ELF64 (gsp_elf.h)
  kBinContainer,  // any other nvfw_bin_hdr file (ACR ucode, scrubber, hs_bl_sig): the outer header parsed
  kFalconUcode,   // raw falcon code or data (gr/fecs_inst.bin, sec2/image.bin, acr/bl.bin of GM20x, ...)
  kSignature,     // signature blobs (gr/fecs_sig.bin, sec2/sig.bin)
  kDescriptor,    // LS firmware descriptors (sec2/desc.bin, pmu/desc.bin; nvkm/subdev/acr/lsfw.c)
  kNetlist,       // gr/NET_img.bin: the GA10x netlist image (nvkm/engine/gr/ga102.c)
  kRegisterList,  // gr/sw_ctx.bin, sw_nonctx.bin, sw_bundle_init.bin, ...: address/value lists (gf100.c)
  kUsbcFirmware,  // ccg_*.cyacd: Cypress CCGx USB-C controller firmware (text), not GPU firmware
};

absl::string_view NvFileKindName(NvFileKind kind);
// The kinds `fw info --kind` may force, by NvFileKindName: those with a parser (booter_load, booter_unload,
// bootloader, gsp, bin_container). nullopt for any other name.
std::optional<NvFileKind> NvFileKindFromName(absl::string_view name);

// The kind from the path alone: the GSP-RM names anywhere ("booter_load-535.113.01.bin"), the other names only
// under an "nvidia/" directory. nullopt: not an NVIDIA name. kFalconUcode for names that may also be containers.
std::optional<NvFileKind> NvKindFromPath(absl::string_view path);
// The kind from the path and the bytes: a raw-looking name whose file starts with nvfw_bin_hdr's magic is a
// kBinContainer. nullopt: not an NVIDIA file.
std::optional<NvFileKind> DetectNvFile(absl::string_view path, absl::string_view data);

// The chip directory ("ad102") of nvidia/CHIP/..., and the version of a GSP-RM name ("535.113.01"), or "".
std::string ChipFromPath(absl::string_view path);
std::string VersionFromPath(absl::string_view path);

struct NvField {
  std::string name;  // the source's field name, prefixed by its structure ("nvfw_hs_header_v2.patch_loc")
  uint64_t value;
};
struct NvRegion {
  std::string name;  // "payload", "app[0]", ".fwimage", ...
  uint64_t offset;   // from the start of the file
  uint64_t size;
};

struct NvFileInfo {
  std::string file;
  NvFileKind kind;
  std::string layout;  // the structures read ("nvfw_bin_hdr + nvfw_hs_header_v2 + nvfw_hs_load_header_v2")
  bool parsed = true;  // false: classified by name and size only
  std::string chip;
  std::string version;
  uint64_t file_size = 0;
  std::vector<NvField> fields;
  std::vector<NvRegion> regions;
  std::string fw_version;  // .fwversion of a GSP-RM image
  std::vector<std::string> notes;
};

// Parses (or classifies) one file of a known kind.
absl::StatusOr<NvFileInfo> DescribeNvFile(absl::string_view path, absl::string_view data, NvFileKind kind);

}  // namespace firmware::nv

#endif  // BAREGPU_FIRMWARE_NV_FILE_KIND_H_
