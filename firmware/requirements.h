// Which firmware files an AMD GPU needs, from its IP versions: "IP versions in, file list out", so IP discovery
// can feed it. File names and the layout each is expected in follow the Linux 6.12 driver
// (amdgpu_ucode_ip_version_decode, gfx_v11_0.c, psp_v13_0.c, smu_v13_0.c, sdma_v6_0.c, imu_v11_0.c,
// amdgpu_mes.c) and tinygrad's AM driver (runtime/support/am/amdev.py, AMFirmware).
#ifndef BAREGPU_FIRMWARE_REQUIREMENTS_H_
#define BAREGPU_FIRMWARE_REQUIREMENTS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "firmware/container.h"
#include "firmware/file_kind.h"
#include "firmware/fw_types.h"

namespace firmware {

struct IpVersion {
  int major = 0;
  int minor = 0;
  int rev = 0;

  std::string ToString() const;     // "11.0.0"
  std::string Underscored() const;  // "11_0_0", as in file names
  friend bool operator==(const IpVersion&, const IpVersion&) = default;
};

// The IP versions firmware selection depends on (discovery's GC_HWIP, MP0_HWIP, MP1_HWIP, SDMA0_HWIP). IMU and
// MES firmware are named after the GC version, as the driver does.
struct IpVersions {
  IpVersion gc;
  IpVersion mp0;  // PSP
  IpVersion mp1;  // SMU
  IpVersion sdma;
};

struct AsicProfile {
  std::string name;  // "navi31"
  std::string description;
  IpVersions ip;
};

const std::vector<AsicProfile>& AsicProfiles();
absl::StatusOr<AsicProfile> FindAsicProfile(absl::string_view name);

// A device named on the command line: an ASIC profile ("navi31") or a virtual device ("sim:navi31").
struct DeviceFirmwareTarget {
  AsicProfile profile;
  bool is_virtual = false;
};
absl::StatusOr<DeviceFirmwareTarget> ResolveDeviceName(absl::string_view device);

struct ProvidedType {
  LoadPath load;
  uint32_t type;
  // The driver loads it when the file has it and boots without it (amdgpu's is_psp_fw_valid for the sOS
  // components, psp_init_ta_microcode for TAs, the RLC's size checks for its lists); real files lack some.
  bool optional = false;
};

struct RequiredFile {
  std::string name;                    // "psp_13_0_0_sos.bin"
  std::vector<std::string> fallbacks;  // tried when `name` is missing ("gc_11_0_0_mes.bin")
  std::string block;                   // "PSP (MP0 13.0.0)"
  IpVersion ip;                        // the version of the block that loads it
  FileRole role;
  uint16_t header_major = 0;  // the layout the driver expects for this generation
  uint16_t header_minor = 0;
  std::vector<ProvidedType> provides;  // what the PSP is given from it
  std::string source;                  // where the name and layout come from
};

absl::StatusOr<std::vector<RequiredFile>> RequiredFiles(const IpVersions& ip);

// Checks a parsed file against what is required of it: the expected header version and every provided type.
absl::Status CheckProvides(const RequiredFile& required, const Container& container);

}  // namespace firmware

#endif  // BAREGPU_FIRMWARE_REQUIREMENTS_H_
