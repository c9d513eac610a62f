// Virtual firmware: the files a virtual device needs, with the real amdgpu names, container layouts and header
// versions of its generation, whose component payloads are plainly not AMD microcode: each carries a marker,
// the ASIC, the IP version, the firmware type(s) it may be loaded as, and a SHA-256 checksum. The virtual PSP
// accepts a component only through ValidateVirtualFirmware.
//
// Payload layout (little-endian), VirtualPayload format 1:
//   0  char magic[16] = "BAREGPU_VIRT_FW\0"     40 uint8_t ip_major, ip_minor, ip_rev, load_path
//   16 uint32_t format = 1                      44 uint32_t type_count (1..4)
//   20 uint32_t size (whole payload)            48 uint32_t types[4]
//   24 char asic[16] ("navi31", NUL-padded)     64 uint8_t sha256[32] over the payload with this field zeroed
//   96 an ASCII line saying what this is, then filler to `size`
#ifndef BAREGPU_FIRMWARE_VIRTUAL_FIRMWARE_H_
#define BAREGPU_FIRMWARE_VIRTUAL_FIRMWARE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "firmware/fw_types.h"
#include "firmware/requirements.h"

namespace firmware {

inline constexpr char kVirtualPayloadMagic[16] = "BAREGPU_VIRT_FW";
inline constexpr uint32_t kVirtualPayloadFormat = 1;
inline constexpr uint32_t kVirtualPayloadHeaderSize = 96;
inline constexpr size_t kVirtualPayloadMaxTypes = 4;

// The ucode start address (gfx_firmware_header_v2_0 ucode_start_addr_lo/hi, a byte address in the engine's
// instruction space) the virtual PFP, ME and MEC files carry: recognisable and different per engine, and never the
// MEC's power-on program counter (CP_MEC_RS64_PRGRM_CNTR_START resets to 0x800 dwords), so a driver that does not
// program it is caught.
constexpr uint64_t VirtualUcodeStartAddress(FileKind kind) { return 0x10000u * (static_cast<uint32_t>(kind) + 1); }

struct VirtualPayloadSpec {
  std::string asic;  // at most 15 characters
  IpVersion ip;
  LoadPath load = LoadPath::kIpFirmware;
  std::vector<uint32_t> types;  // 1..4; several when the driver loads one range as several types (RS64 stacks)
  uint32_t size = 4096;         // >= kVirtualPayloadHeaderSize
};

std::string BuildVirtualPayload(const VirtualPayloadSpec& spec);

// What the virtual PSP expects when the driver loads a component.
struct VirtualFirmwareExpectation {
  std::string asic;
  IpVersion ip;
  LoadPath load;
  uint32_t type = 0;  // in `load`'s numbering; ignored for kToc
};

// The check that failed, in the order they are made: integrity first, then identity.
enum class VirtualFirmwareCheck {
  kOk,
  kTooSmall,        // shorter than the payload header
  kBadMagic,        // not virtual firmware (real AMD microcode, or garbage)
  kBadFormat,       // an unknown payload format
  kSizeMismatch,    // the image is not exactly the payload's size (truncated or padded)
  kBadChecksum,     // corrupted
  kWrongAsic,       // built for another ASIC
  kWrongIpVersion,  // built for another IP version
  kWrongLoadPath,   // e.g. a trusted application handed to LOAD_IP_FW
  kWrongType,       // e.g. RS64 ME code handed over as RS64 MEC
};
absl::string_view VirtualFirmwareCheckName(VirtualFirmwareCheck check);

struct VirtualFirmwareVerdict {
  VirtualFirmwareCheck check = VirtualFirmwareCheck::kOk;
  std::string detail;  // empty when ok; else what was found and what was expected
  bool ok() const { return check == VirtualFirmwareCheck::kOk; }
};

VirtualFirmwareVerdict ValidateVirtualFirmware(absl::string_view image, const VirtualFirmwareExpectation& expected);

struct VirtualFirmwareFile {
  std::string name;  // "gc_11_0_0_mec.bin"
  std::string data;
};

// Every file RequiredFiles(profile.ip) lists, as virtual firmware for `profile`.
absl::StatusOr<std::vector<VirtualFirmwareFile>> BuildVirtualFirmware(const AsicProfile& profile);

// The root (holding amdgpu/) of the virtual firmware generated at build time: the build tree's
// firmware/virtual for a library in its build tree, else PREFIX/share/baregpu/firmware. BAREGPU_VIRTUAL_FIRMWARE_DIR
// overrides both.
std::string VirtualFirmwareDir();
inline constexpr char kVirtualFirmwareDirEnv[] = "BAREGPU_VIRTUAL_FIRMWARE_DIR";

}  // namespace firmware

#endif  // BAREGPU_FIRMWARE_VIRTUAL_FIRMWARE_H_
