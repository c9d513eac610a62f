// The PSP image header that prefixes every component a real amdgpu firmware file hands to the PSP (the ucode of
// gc_11_0_0_mec.bin, the sOS and TOC of psp_13_0_0_sos.bin, the PMFW of smu_13_0_0.bin, ...): 256 bytes with the
// marker "$PS1", the signed body, then the signature. AMD does not publish it; the field offsets are those
// PSPTool reads (PSPReverse/PSPTool, psptool/header_file.py, HeaderFile._parse), and every one used here was
// checked against all Navi31 components of Debian's firmware-amd-graphics 20230210-5 and 20250410-2~bpo12+1
// (tests/firmware/psp_image_test.cc).
//
// The virtual PSP uses it to accept real firmware: it cannot verify AMD's RSA signature, so it checks what it can
// (the layout, the signature's presence and type, the signing key and the image kind against the firmware type the
// driver names) and then emulates the firmware's effect (docs/fidelity.md, "Real firmware").
#ifndef BAREGPU_FIRMWARE_PSP_IMAGE_H_
#define BAREGPU_FIRMWARE_PSP_IMAGE_H_

#include <array>
#include <cstdint>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "firmware/fw_types.h"

namespace firmware {

inline constexpr uint32_t kPspImageHeaderSize = 0x100;  // PSPTool: HeaderFile.HEADER_LEN
inline constexpr char kPspImageMagic[4] = {'$', 'P', 'S', '1'};
inline constexpr uint32_t kPspImageMagicOffset = 0x10;

struct PspImageHeader {
  uint32_t size_signed = 0;          // 0x14: body bytes after the header that the signature covers
  bool encrypted = false;            // 0x18 == 1
  uint32_t signed_flag = 0;          // 0x30: 1 when signed (PSPTool: 0, 1 or 0xffff0000)
  uint32_t signature_type = 0;       // 0x34: 0 = RSA-2048 (0x100-byte signature), 2 = RSA-4096 (0x200)
  std::array<uint8_t, 16> key_id{};  // 0x38: the fingerprint of the key that signed it
  bool compressed = false;           // 0x48 == 1
  uint8_t image_kind = 0;            // 0x58: what the image is (see ImageKind below; PSPTool names only bits of 0x5b)
  std::array<uint8_t, 4> version{};  // 0x60..0x63 as stored
  uint32_t rom_size = 0;             // 0x6c: header + body + signature

  // The signature's length for signature_type, 0 when unsigned or of an unknown type.
  uint32_t SignatureBytes() const;
  // The first 4 bytes of key_id as they appear in the file, big-endian: the short key name used in messages
  // and in the key table ("298b2688").
  uint32_t KeyPrefix() const;
};

// True when `image` carries the "$PS1" marker.
bool IsPspImage(absl::string_view image);

// Parses the header of `image` (at least kPspImageHeaderSize bytes) and checks its own consistency: the marker,
// rom_size = header + size_signed + signature, not encrypted, not compressed. `what` names the image in errors.
absl::StatusOr<PspImageHeader> ParsePspImageHeader(absl::string_view what, absl::string_view image);

// What a real image must be to be loaded as `type` through `load`: the image kind byte and the signing key, as
// every Navi31 component of both Debian releases has them. nullopt: a type no real Navi31 file provides.
struct RealImageIdentity {
  LoadPath load;
  uint32_t type;
  uint8_t image_kind;
  uint32_t key_prefix;
  // How the image header stores the firmware's version: the words of the PMFW (MP1) are big-endian, every other
  // component's little-endian (checked against the containers' ucode_version in psp_image_test).
  bool version_big_endian = false;
  // For the RS64 CP engines: where the firmware starts (the container's ucode_start_addr_hi << 32 | _lo, which
  // the PSP does not receive), so that the driver's CP_*_PRGRM_CNTR_START can be checked. 0: not an RS64 ucode.
  uint64_t ucode_start = 0;
};
std::optional<RealImageIdentity> FindRealImageIdentity(LoadPath load, uint32_t type);

// The version a real image's header states, decoded as its identity says.
uint32_t RealImageVersion(const PspImageHeader& header, const RealImageIdentity& identity);

struct RealImageVerdict {
  std::string error;  // empty when accepted
  uint32_t version = 0;
  uint64_t ucode_start = 0;  // the identity's (RS64 CP ucode), else 0
  bool ok() const { return error.empty(); }
};

// Checks `image` (the bytes the driver handed over, `image.size()` of them) as a real component loaded as `type`
// through `load`: a consistent header, signed with RSA-2048 by the expected key, of the expected kind, no longer
// than what was handed over, and zero after its end (the driver pads stacks to their region size).
RealImageVerdict ValidateRealImage(absl::string_view image, LoadPath load, uint32_t type);

}  // namespace firmware

#endif  // BAREGPU_FIRMWARE_PSP_IMAGE_H_
