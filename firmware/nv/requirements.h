// Which firmware files an NVIDIA GPU needs to boot GSP-RM 535.113.01, and where to find them. The four names per chip
// come from Linux 6.12 nouveau nvkm/subdev/gsp/r535.c (r535_gsp_load: gsp, booter_load, booter_unload,
// bootloader, as "gsp/NAME-VERSION" under nvidia/CHIP/; the chips: its NVKM_GSP_FIRMWARE list); the signature
// section each chip takes from the GSP-RM image: .sig_section in tu102.c, tu116.c, ga100.c, ga102.c and ad102.c.
#ifndef BAREGPU_FIRMWARE_NV_REQUIREMENTS_H_
#define BAREGPU_FIRMWARE_NV_REQUIREMENTS_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "firmware/nv/file_kind.h"
#include "firmware/store.h"

namespace firmware::nv {

// The GSP-RM release nouveau 6.12 boots (r535.c: NVKM_GSP_FIRMWARE's file names).
inline constexpr char kGspRmVersion[] = "535.113.01";

struct ChipProfile {
  std::string name;               // "ad102": the directory under nvidia/
  std::string description;        // "AD102 (Ada)"
  std::string signature_section;  // ".fwsignature_ad10x"
};

const std::vector<ChipProfile>& ChipProfiles();
absl::StatusOr<ChipProfile> FindChipProfile(absl::string_view name);

// A device named on the command line: a chip ("ad102") or a virtual device of that chip ("sim:ad102",
// "sim:ad102:test"), as firmware::ResolveDeviceName reads AMD names. NotFound when the name is no NVIDIA chip.
struct ChipTarget {
  ChipProfile profile;
  bool is_virtual = false;
};
absl::StatusOr<ChipTarget> ResolveChipName(absl::string_view device);

struct RequiredFile {
  std::string name;           // "booter_load-535.113.01.bin"
  std::string relative_path;  // "nvidia/ad102/gsp/booter_load-535.113.01.bin", under a firmware root
  NvFileKind kind;
  std::string role;  // what the driver does with it
};
std::vector<RequiredFile> RequiredFiles(const ChipProfile& chip);

// ROOT/relative_path, .zst, .xz for each root in order, as firmware::Store looks for amdgpu/ files.
Location Locate(const std::vector<std::string>& roots, absl::string_view relative_path);

// What a chip requires of a parsed file beyond parsing: the GSP-RM image carries the chip's signature section and
// says the version the file names say.
absl::Status CheckForChip(const ChipProfile& chip, const RequiredFile& required, const NvFileInfo& info);

}  // namespace firmware::nv

#endif  // BAREGPU_FIRMWARE_NV_REQUIREMENTS_H_
