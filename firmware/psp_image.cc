#include "firmware/psp_image.h"

#include <algorithm>
#include <cstring>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/status_macros.h"
#include "firmware/byte_reader.h"

namespace firmware {
namespace {

// Header field offsets (PSPTool psptool/header_file.py, HeaderFile._parse).
constexpr uint32_t kSizeSignedOffset = 0x14, kEncryptedOffset = 0x18, kSignedOffset = 0x30, kSignatureTypeOffset = 0x34,
                   kKeyIdOffset = 0x38, kCompressedOffset = 0x48, kImageKindOffset = 0x58, kVersionOffset = 0x60,
                   kRomSizeOffset = 0x6c;
// PSPTool's SignatureType: type 0 is SHA256 with a 0x100-byte (RSA-2048) signature, type 2 SHA384 with 0x200.
constexpr uint32_t kSignatureRsa2048 = 0, kSignatureRsa4096 = 2;
constexpr uint32_t kRsa2048Bytes = 0x100, kRsa4096Bytes = 0x200;

// The signing keys of Navi31's components, named by their key_id's first four bytes (every Navi31 component of
// both Debian releases; psp_image_test checks each against the files).
constexpr uint32_t kKeyGfx = 0x298b2688;   // TOC, RLC, CP (RS64 PFP/ME/MEC, MES), SDMA
constexpr uint32_t kKeySos = 0xfc0fe9a8;   // SYS_DRV and SOS
constexpr uint32_t kKeySpl = 0xe14e6fe2;   // SPL
constexpr uint32_t kKeyRl = 0x48cc41fe;    // the register list (RL)
constexpr uint32_t kKeyPmfw = 0xd63dc7c3;  // the SMU's PMFW
constexpr uint32_t kKeyImu = 0x66249371;   // IMU instruction and data

// gc_11_0_0_{pfp,me,mec}.bin of both releases: gfx_firmware_header_v2_0 ucode_start_addr_lo 0x3000, _hi 0x70000
// (psp_image_test reads them from the files).
constexpr uint64_t kRs64UcodeStart = uint64_t{0x70000} << 32 | 0x3000;

namespace gfx = gfx_fw_type;
namespace pspfw = psp_fw_type;

// Image kinds (header byte 0x58) as the real files have them, per load path and type. The byte differs per kind of
// component and is the same in both releases; within the GFX key, it is what tells an MEC image from an ME one.
const std::vector<RealImageIdentity>& Identities() {
  static const auto* table = new std::vector<RealImageIdentity>{
      {LoadPath::kBootloader, pspfw::kSysDrv, 0x0a, kKeySos},
      {LoadPath::kBootloader, pspfw::kSos, 0x09, kKeySos},
      {LoadPath::kBootloader, pspfw::kSpl, 0x56, kKeySpl},
      {LoadPath::kToc, pspfw::kToc, 0x0e, kKeyGfx},
      {LoadPath::kIpFirmware, gfx::kRegList, 0x35, kKeyRl},  // psp_rl_load hands the sOS package's RL over
      {LoadPath::kIpFirmware, gfx::kSmu, 0x01, kKeyPmfw, /*version_big_endian=*/true},
      {LoadPath::kIpFirmware, gfx::kImuI, 0x3b, kKeyImu},
      {LoadPath::kIpFirmware, gfx::kImuD, 0x3c, kKeyImu},
      {LoadPath::kIpFirmware, gfx::kSdmaUcodeTh0, 0x3e, kKeyGfx},
      {LoadPath::kIpFirmware, gfx::kSdmaUcodeTh1, 0x3f, kKeyGfx},
      {LoadPath::kIpFirmware, gfx::kRlcG, 0x09, kKeyGfx},
      {LoadPath::kIpFirmware, gfx::kRlcV, 0x0a, kKeyGfx},
      {LoadPath::kIpFirmware, gfx::kRlcRestoreListGpmMem, 0x0b, kKeyGfx},
      {LoadPath::kIpFirmware, gfx::kRlcRestoreListSrmMem, 0x0c, kKeyGfx},
      {LoadPath::kIpFirmware, gfx::kRlcP, 0x0f, kKeyGfx},
      {LoadPath::kIpFirmware, gfx::kRlcIram, 0x16, kKeyGfx},
      {LoadPath::kIpFirmware, gfx::kRlcDramBoot, 0x17, kKeyGfx},
      {LoadPath::kIpFirmware, gfx::kCpMes, 0x07, kKeyGfx},
      {LoadPath::kIpFirmware, gfx::kMesStack, 0x08, kKeyGfx},
      {LoadPath::kIpFirmware, gfx::kCpMesKiq, 0x42, kKeyGfx},
      {LoadPath::kIpFirmware, gfx::kMesKiqStack, 0x43, kKeyGfx},
      {LoadPath::kIpFirmware, gfx::kRs64Pfp, 0x44, kKeyGfx, false, kRs64UcodeStart},
      {LoadPath::kIpFirmware, gfx::kRs64PfpP0Stack, 0x45, kKeyGfx},
      {LoadPath::kIpFirmware, gfx::kRs64PfpP1Stack, 0x45, kKeyGfx},
      {LoadPath::kIpFirmware, gfx::kRs64Me, 0x46, kKeyGfx, false, kRs64UcodeStart},
      {LoadPath::kIpFirmware, gfx::kRs64MeP0Stack, 0x47, kKeyGfx},
      {LoadPath::kIpFirmware, gfx::kRs64MeP1Stack, 0x47, kKeyGfx},
      {LoadPath::kIpFirmware, gfx::kRs64Mec, 0x48, kKeyGfx, false, kRs64UcodeStart},
      {LoadPath::kIpFirmware, gfx::kRs64MecP0Stack, 0x49, kKeyGfx},
      {LoadPath::kIpFirmware, gfx::kRs64MecP1Stack, 0x49, kKeyGfx},
      {LoadPath::kIpFirmware, gfx::kRs64MecP2Stack, 0x49, kKeyGfx},
      {LoadPath::kIpFirmware, gfx::kRs64MecP3Stack, 0x49, kKeyGfx},
  };
  return *table;
}

}  // namespace

uint32_t PspImageHeader::SignatureBytes() const {
  if (signed_flag == 0) return 0;
  if (signature_type == kSignatureRsa2048) return kRsa2048Bytes;
  if (signature_type == kSignatureRsa4096) return kRsa4096Bytes;
  return 0;
}

uint32_t PspImageHeader::KeyPrefix() const {
  return uint32_t{key_id[0]} << 24 | uint32_t{key_id[1]} << 16 | uint32_t{key_id[2]} << 8 | key_id[3];
}

bool IsPspImage(absl::string_view image) {
  return image.size() >= kPspImageHeaderSize &&
         std::memcmp(image.data() + kPspImageMagicOffset, kPspImageMagic, sizeof(kPspImageMagic)) == 0;
}

absl::StatusOr<PspImageHeader> ParsePspImageHeader(absl::string_view what, absl::string_view image) {
  ByteReader reader(what, image);
  if (image.size() < kPspImageHeaderSize) {
    return reader.Malformed(
        absl::StrFormat("%d bytes, shorter than the %d-byte PSP image header", image.size(), kPspImageHeaderSize));
  }
  if (!IsPspImage(image)) return reader.Malformed("no \"$PS1\" marker at offset 0x10: not a PSP image");
  PspImageHeader header;
  BAREGPU_ASSIGN_OR_RETURN(header.size_signed, reader.U32(kSizeSignedOffset, "size_signed"));
  BAREGPU_ASSIGN_OR_RETURN(const uint32_t encrypted, reader.U32(kEncryptedOffset, "encrypted"));
  BAREGPU_ASSIGN_OR_RETURN(header.signed_flag, reader.U32(kSignedOffset, "signed"));
  BAREGPU_ASSIGN_OR_RETURN(header.signature_type, reader.U32(kSignatureTypeOffset, "signature type"));
  BAREGPU_ASSIGN_OR_RETURN(const uint32_t compressed, reader.U32(kCompressedOffset, "compressed"));
  BAREGPU_ASSIGN_OR_RETURN(header.rom_size, reader.U32(kRomSizeOffset, "rom_size"));
  header.encrypted = encrypted == 1;
  header.compressed = compressed == 1;
  std::memcpy(header.key_id.data(), image.data() + kKeyIdOffset, header.key_id.size());
  header.image_kind = static_cast<uint8_t>(image[kImageKindOffset]);
  std::memcpy(header.version.data(), image.data() + kVersionOffset, header.version.size());

  if (header.encrypted || header.compressed) {
    return reader.Malformed(absl::StrFormat("the image is %s; GPU firmware images are neither",
                                            header.encrypted ? "encrypted" : "compressed"));
  }
  const uint64_t expected_rom = uint64_t{kPspImageHeaderSize} + header.size_signed + header.SignatureBytes();
  if (header.rom_size != expected_rom) {
    return reader.Malformed(absl::StrFormat(
        "rom_size %#x is not header %#x + size_signed %#x + signature %#x (signed %#x, signature type %d)",
        header.rom_size, kPspImageHeaderSize, header.size_signed, header.SignatureBytes(), header.signed_flag,
        header.signature_type));
  }
  return header;
}

std::optional<RealImageIdentity> FindRealImageIdentity(LoadPath load, uint32_t type) {
  for (const RealImageIdentity& identity : Identities()) {
    if (identity.load == load && identity.type == type) return identity;
  }
  return std::nullopt;
}

uint32_t RealImageVersion(const PspImageHeader& header, const RealImageIdentity& identity) {
  const auto& v = header.version;
  if (identity.version_big_endian) {
    return uint32_t{v[0]} << 24 | uint32_t{v[1]} << 16 | uint32_t{v[2]} << 8 | v[3];
  }
  return uint32_t{v[3]} << 24 | uint32_t{v[2]} << 16 | uint32_t{v[1]} << 8 | v[0];
}

RealImageVerdict ValidateRealImage(absl::string_view image, LoadPath load, uint32_t type) {
  auto fail = [](std::string why) { return RealImageVerdict{std::move(why)}; };
  const std::optional<RealImageIdentity> identity = FindRealImageIdentity(load, type);
  if (!identity) {
    return fail(absl::StrFormat("no real Navi31 firmware provides %s, so the virtual PSP cannot tell what it does",
                                TypeName(load, type)));
  }
  absl::StatusOr<PspImageHeader> header = ParsePspImageHeader(TypeName(load, type), image);
  if (!header.ok()) return fail(std::string(header.status().message()));
  if (header->signed_flag != 1 || header->signature_type != kSignatureRsa2048) {
    return fail(
        absl::StrFormat("not signed with RSA-2048 (signed %#x, signature type %d); the PSP runs only "
                        "signed images",
                        header->signed_flag, header->signature_type));
  }
  if (header->KeyPrefix() != identity->key_prefix) {
    return fail(absl::StrFormat("signed by key %08x, but %s images are signed by key %08x", header->KeyPrefix(),
                                TypeName(load, type), identity->key_prefix));
  }
  if (header->image_kind != identity->image_kind) {
    std::string is = absl::StrFormat("image kind %#04x", header->image_kind);
    for (const RealImageIdentity& other : Identities()) {
      if (other.image_kind == header->image_kind && other.key_prefix == header->KeyPrefix()) {
        is = absl::StrCat(TypeName(other.load, other.type), " (image kind ",
                          absl::StrFormat("%#04x", header->image_kind), ")");
        break;
      }
    }
    return fail(
        absl::StrFormat("the image is %s, not %s (image kind %#04x)", is, TypeName(load, type), identity->image_kind));
  }
  if (header->rom_size > image.size()) {
    return fail(absl::StrFormat("the image is %d bytes (rom_size) but only %d were handed over (truncated)",
                                header->rom_size, image.size()));
  }
  const absl::string_view tail = image.substr(header->rom_size);
  if (std::any_of(tail.begin(), tail.end(), [](char c) { return c != 0; })) {
    return fail(absl::StrFormat("%d bytes handed over after the image's end (rom_size %#x) are not zero padding",
                                tail.size(), header->rom_size));
  }
  return {"", RealImageVersion(*header, *identity), identity->ucode_start};
}

}  // namespace firmware
