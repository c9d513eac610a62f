#include "firmware/nv/vbios.h"

#include <bit>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/printable.h"
#include "base/status_macros.h"

namespace firmware::nv {
namespace {

// How to get a whole image again: every "past the end" error ends with it.
constexpr char kTruncatedFix[] =
    "the image is truncated or the field is corrupt: dump the whole ROM again (e.g. "
    "/sys/bus/pci/devices/BDF/rom after `echo 1 > rom`, or BAR0's PROM window from 0x300000)";

// Bounds-checked little-endian reads; every error is DataLoss "FILE: ..." and names the structure and field.
class Reader {
 public:
  Reader(absl::string_view file, absl::string_view data) : file_(base::Printable(file)), data_(data) {}

  uint64_t size() const { return data_.size(); }
  absl::string_view data() const { return data_; }

  absl::Status Error(absl::string_view message) const {
    return absl::DataLossError(absl::StrCat(file_, ": ", message));
  }

  bool Inside(uint64_t offset, uint64_t length) const {
    return offset <= data_.size() && length <= data_.size() - offset;
  }

  absl::Status Check(uint64_t offset, uint64_t length, absl::string_view what) const {
    if (Inside(offset, length)) return absl::OkStatus();
    return Error(absl::StrFormat("%s at 0x%x..0x%x lies past the end of the image (0x%x bytes); %s", what, offset,
                                 offset + length, data_.size(), kTruncatedFix));
  }

  absl::StatusOr<uint8_t> U8(uint64_t offset, absl::string_view what) const {
    BAREGPU_RETURN_IF_ERROR(Check(offset, 1, what));
    return static_cast<uint8_t>(data_[offset]);
  }
  absl::StatusOr<uint16_t> U16(uint64_t offset, absl::string_view what) const {
    BAREGPU_RETURN_IF_ERROR(Check(offset, 2, what));
    return Le16(offset);
  }
  absl::StatusOr<uint32_t> U32(uint64_t offset, absl::string_view what) const {
    BAREGPU_RETURN_IF_ERROR(Check(offset, 4, what));
    return Le32(offset);
  }

  // Unchecked: callers have checked the whole structure first.
  uint8_t Le8(uint64_t offset) const { return static_cast<uint8_t>(data_[offset]); }
  uint16_t Le16(uint64_t offset) const { return static_cast<uint16_t>(Le8(offset) | Le8(offset + 1) << 8); }
  uint32_t Le32(uint64_t offset) const { return uint32_t{Le16(offset)} | uint32_t{Le16(offset + 2)} << 16; }

 private:
  std::string file_;
  absl::string_view data_;
};

bool IsRomSignature(uint16_t signature) {
  return signature == kRomSignature || signature == kRomSignatureNv || signature == kRomSignatureNv2;
}
bool IsPcirSignature(uint32_t signature) {
  return signature == kPcirSignature || signature == kPcirSignatureNv || signature == kPcirSignatureNv2;
}

// The ROM header at `offset` has a ROM signature and its PCIR pointer leads to a PCI data structure signature.
bool RomHeaderAt(const Reader& r, uint64_t offset) {
  if (!r.Inside(offset, kRomHeaderSize)) return false;
  if (!IsRomSignature(r.Le16(offset))) return false;
  const uint16_t pointer = r.Le16(offset + kRomPcirPointerOffset);
  return pointer != 0 && r.Inside(offset + pointer, 4) && IsPcirSignature(r.Le32(offset + pointer));
}

std::string Fourcc(uint32_t v) {
  std::string s;
  for (int i = 0; i < 4; ++i) s.push_back(static_cast<char>(v >> (8 * i)));
  return base::Printable(s);
}

absl::StatusOr<RomImage> ParseImage(const Reader& r, uint64_t rom_offset, uint64_t offset, size_t index) {
  RomImage image;
  image.offset = offset;
  const std::string where = absl::StrFormat("image %d at 0x%x", index, offset);
  if (!r.Inside(offset, kRomHeaderSize)) {
    return r.Error(absl::StrFormat(
        "%s: the chain continues here (the previous image is not marked last) but only 0x%x bytes remain, fewer "
        "than a ROM header (0x%x); %s",
        where, r.size() - std::min<uint64_t>(offset, r.size()), kRomHeaderSize, kTruncatedFix));
  }
  image.signature = r.Le16(offset);
  if (!IsRomSignature(image.signature)) {
    return r.Error(absl::StrFormat(
        "%s: ROM signature 0x%04x is not 0xAA55 (nor NVIDIA's 0x4E56/0xBB77); the previous image's length or "
        "last-image flag (PCIR 0x15 / NPDE 0x0a bit 7) is wrong, or the dump is damaged",
        where, image.signature));
  }
  const uint16_t pcir_pointer = r.Le16(offset + kRomPcirPointerOffset);
  if (pcir_pointer == 0) {
    return r.Error(
        absl::StrFormat("%s: the PCI data structure pointer (ROM header 0x18) is 0; the ROM is corrupt", where));
  }
  image.pcir_offset = offset + pcir_pointer;
  if (!r.Inside(image.pcir_offset, kPcirMinSize)) {
    return r.Error(absl::StrFormat(
        "%s: the PCI data structure pointer 0x%x (ROM header 0x18) leads to 0x%x, and its 0x%x bytes lie past the "
        "end of the image (0x%x bytes); %s",
        where, pcir_pointer, image.pcir_offset, kPcirMinSize, r.size(), kTruncatedFix));
  }
  const uint64_t p = image.pcir_offset;
  image.pcir_signature = r.Le32(p);
  if (!IsPcirSignature(image.pcir_signature)) {
    return r.Error(absl::StrFormat(
        "%s: the PCI data structure at 0x%x (pointer 0x%x) has signature '%s', not 'PCIR' (nor 'NPDS'/'RGIS'); the "
        "pointer at ROM header 0x18 is corrupt",
        where, p, pcir_pointer, Fourcc(image.pcir_signature)));
  }
  image.vendor_id = r.Le16(p + kPcirVendorId);
  image.device_id = r.Le16(p + kPcirDeviceId);
  image.pcir_length = r.Le16(p + kPcirLength);
  image.pcir_revision = r.Le8(p + kPcirRevision);
  image.class_code = uint32_t{r.Le8(p + kPcirClassCode + 2)} << 16 | uint32_t{r.Le8(p + kPcirClassCode + 1)} << 8 |
                     r.Le8(p + kPcirClassCode);
  image.pcir_image_size = uint32_t{r.Le16(p + kPcirImageLength)} * kRomBlockSize;
  image.image_revision = r.Le16(p + kPcirImageRevision);
  image.code_type = r.Le8(p + kPcirCodeType);
  image.pcir_last = (r.Le8(p + kPcirIndicator) & kLastImageBit) != 0;
  image.size = image.pcir_image_size;
  image.last = image.pcir_last;

  if (image.code_type == static_cast<uint8_t>(CodeType::kNbsi)) {
    image.last = true;  // image.c: a 0x70 image ends the chain and has no NPDE
  } else {
    // npde.c: the NPDE follows the PCI data structure, aligned to 16 bytes in the ROM's address space.
    const uint64_t relative = image.pcir_offset - rom_offset + image.pcir_length;
    const uint64_t npde = rom_offset + (relative + kNpdeAlignment - 1) / kNpdeAlignment * kNpdeAlignment;
    if (r.Inside(npde, 4) && r.Le32(npde) == kNpdeSignature) {
      if (!r.Inside(npde, kNpdeMinSize)) {
        return r.Error(
            absl::StrFormat("%s: its NPDE at 0x%x (0x%x bytes) lies past the end of the image (0x%x "
                            "bytes); %s",
                            where, npde, kNpdeMinSize, r.size(), kTruncatedFix));
      }
      NpdeInfo info;
      info.offset = npde;
      info.revision = r.Le16(npde + kNpdeRevision);
      info.length = r.Le16(npde + kNpdeLength);
      info.image_size = uint32_t{r.Le16(npde + kNpdeSubimageLength)} * kRomBlockSize;
      info.last = (r.Le8(npde + kNpdeIndicator) & kLastImageBit) != 0;
      info.flags = r.Le8(npde + kNpdeFlags);
      image.size = info.image_size;
      image.last = info.last;
      image.npde = info;
    }
  }
  const std::string length_field = image.npde ? "NPDE subimage length (NPDE 0x08)" : "PCIR image length (PCIR 0x10)";
  if (image.size == 0) {
    return r.Error(absl::StrFormat(
        "%s: its %s is 0; an image is never empty, and a walk that does not advance would loop on this image; the "
        "ROM is corrupt",
        where, length_field));
  }
  if (!r.Inside(offset, image.size)) {
    return r.Error(
        absl::StrFormat("%s: its %s says 0x%x bytes, running to 0x%x past the end of the image (0x%x "
                        "bytes); %s",
                        where, length_field, image.size, offset + image.size, r.size(), kTruncatedFix));
  }
  if (image.pcir_offset + kPcirMinSize > offset + image.size) {
    return r.Error(
        absl::StrFormat("%s: its PCI data structure at 0x%x lies outside the image's 0x%x bytes; the "
                        "pointer at ROM header 0x18 or the image length is corrupt",
                        where, image.pcir_offset, image.size));
  }
  if (image.code_type == static_cast<uint8_t>(CodeType::kPcAt)) {
    uint8_t sum = 0;
    for (char c : r.data().substr(offset, image.size)) sum = static_cast<uint8_t>(sum + static_cast<uint8_t>(c));
    image.checksum_ok = sum == 0;
  }
  return image;
}

}  // namespace

std::string CodeTypeName(uint8_t code_type) {
  switch (static_cast<CodeType>(code_type)) {
    case CodeType::kPcAt:
      return "PC-AT (x86)";
    case CodeType::kEfi:
      return "EFI";
    case CodeType::kNbsi:
      return "NBSI";
    case CodeType::kExtension:
      return "NVIDIA extension (FwSec)";
  }
  return absl::StrFormat("unknown (0x%02x)", code_type);
}

std::string ApplicationIdName(uint8_t id) {
  switch (id) {
    case kAppIdFirmwareSecLic:
      return "FIRMWARE_SEC_LIC";
    case kAppIdFwsecDbg:
      return "FWSEC_DBG";
    case kAppIdFwsecProd:
      return "FWSEC_PROD";
    default:
      return absl::StrFormat("0x%02x", id);
  }
}

bool LooksLikeRom(absl::string_view data) { return RomHeaderAt(Reader("", data), 0); }

absl::StatusOr<std::vector<RomImage>> ParseRomImages(absl::string_view file, absl::string_view data,
                                                     uint64_t* rom_offset_out) {
  const Reader r(file, data);
  // [BIT]: a .ROM file may hold data before the expansion ROM; the ROM starts on a 512-byte boundary with 0x55AA
  // whose PCIR pointer leads to "PCIR". A file that starts with a ROM signature starts there (so a damaged first
  // image is reported, not skipped); otherwise the scan visits each boundary once.
  std::optional<uint64_t> rom_offset;
  if (r.Inside(0, 2) && IsRomSignature(r.Le16(0))) rom_offset = 0;
  for (uint64_t offset = kRomBlockSize; !rom_offset && offset + kRomHeaderSize <= r.size(); offset += kRomBlockSize) {
    if (RomHeaderAt(r, offset)) rom_offset = offset;
  }
  if (!rom_offset) {
    return r.Error(absl::StrFormat(
        "no PCI expansion ROM: no ROM signature 0xAA55 with a PCI data structure ('PCIR') at offset 0 or any 512-byte "
        "boundary of its 0x%x bytes; this is not a VBIOS dump (or it is empty)",
        r.size()));
  }
  if (rom_offset_out) *rom_offset_out = *rom_offset;
  std::vector<RomImage> images;
  // Each image is at least 512 bytes and the next starts after it, so the walk ends within size / 512 steps.
  uint64_t offset = *rom_offset;
  for (size_t index = 0;; ++index) {
    BAREGPU_ASSIGN_OR_RETURN(RomImage image, ParseImage(r, *rom_offset, offset, index));
    images.push_back(image);
    if (image.last) break;
    offset += image.size;
  }
  return images;
}

uint64_t Vbios::Resolve(uint64_t pointer) const {
  if (extension_offset && pointer >= image0_size) return pointer - image0_size + *extension_offset;
  return rom_offset + pointer;
}

const BitToken* Vbios::FindToken(uint8_t id) const {
  for (const BitToken& token : tokens) {
    if (token.id == id) return &token;
  }
  return nullptr;
}

absl::StatusOr<uint32_t> FwsecSignatureIndex(uint16_t signature_versions, uint32_t fuse_register) {
  // ga102_gsp_fwsec_signature: reg = BIT(fls(reg)); the index counts the signature versions below that bit.
  const int fls = std::bit_width(fuse_register);
  if (fls >= 16 || (signature_versions & (1u << fls)) == 0) {
    return absl::FailedPreconditionError(absl::StrFormat(
        "FWSEC has no signature for fuse version %d (fuse register 0x%x; SignatureVersions 0x%04x): the VBIOS is "
        "older than the GPU's fuses; flash a newer VBIOS",
        fls, fuse_register, signature_versions));
  }
  return static_cast<uint32_t>(std::popcount(static_cast<uint32_t>(signature_versions) & ((1u << fls) - 1)));
}

namespace {

absl::Status ParseBit(const Reader& r, Vbios& v) {
  // base.c: the BIT is found by searching for its ID and signature ("\xff\xb8" "BIT").
  static constexpr char kNeedle[] =
      "\xff\xb8"
      "BIT";
  const absl::string_view rom = r.data().substr(v.rom_offset);
  const size_t found = rom.find(absl::string_view(kNeedle, sizeof(kNeedle) - 1));
  if (found == absl::string_view::npos) {
    return r.Error(absl::StrFormat(
        "no BIT header (ID 0xB8FF, signature \"BIT\\0\") in the ROM's 0x%x bytes: not an NVIDIA VBIOS, or its "
        "PC-compatible image is damaged",
        rom.size()));
  }
  BitHeader& h = v.bit;
  h.offset = v.rom_offset + found;
  BAREGPU_RETURN_IF_ERROR(r.Check(h.offset, kBitHeaderSize, "BIT header"));
  // Field offsets: [BIT] "BIT Header" / nv.py BIT_HEADER_V1_00: ID u16 @0, Signature u32 @2, BCD Version u16 @6,
  // Header Size u8 @8, Token Size u8 @9, Token Entries u8 @10, Checksum u8 @11 (bit.c reads @9 and @10).
  if (r.Le32(h.offset + 2) != kBitSignature) {
    return r.Error(absl::StrFormat("BIT header at 0x%x: signature '%s' is not \"BIT\\0\"; the image is damaged",
                                   h.offset, Fourcc(r.Le32(h.offset + 2))));
  }
  h.bcd_version = r.Le16(h.offset + 6);
  h.header_size = r.Le8(h.offset + 8);
  h.token_size = r.Le8(h.offset + 9);
  h.token_count = r.Le8(h.offset + 10);
  h.checksum = r.Le8(h.offset + 11);
  if (h.header_size < kBitHeaderSize || h.token_size < kBitTokenSize) {
    return r.Error(absl::StrFormat(
        "BIT header at 0x%x: header size %d / token size %d is below the BIT specification's %d / %d; the header is "
        "corrupt",
        h.offset, h.header_size, h.token_size, kBitHeaderSize, kBitTokenSize));
  }
  if (h.offset - v.rom_offset != kTinygradBitOffset) {
    v.notes.push_back(absl::StrFormat("BIT header at ROM offset 0x%x, not 0x%x where tinygrad reads it",
                                      h.offset - v.rom_offset, kTinygradBitOffset));
  }
  if (h.header_size != kBitHeaderSize) {
    v.notes.push_back(
        absl::StrFormat("BIT header size %d: nouveau's bit.c reads the first token at +12 regardless", h.header_size));
  }
  const uint64_t first = h.offset + h.header_size;
  BAREGPU_RETURN_IF_ERROR(
      r.Check(first, uint64_t{h.token_count} * h.token_size,
              absl::StrFormat("BIT token table (%d tokens of %d bytes)", h.token_count, h.token_size)));
  for (int i = 0; i < h.token_count; ++i) {
    BitToken t;
    t.offset = first + uint64_t{static_cast<uint32_t>(i)} * h.token_size;
    t.id = r.Le8(t.offset);
    // [BIT] "BIT Token Structure": ID u8 @0, Data Version u8 @1, Data Size u16 @2, Data Pointer u16 @4 (bit.c).
    t.data_version = r.Le8(t.offset + 1);
    t.data_size = r.Le16(t.offset + 2);
    t.data_pointer = r.Le16(t.offset + 4);
    if (t.data_pointer != 0) {
      t.data_offset = v.Resolve(t.data_pointer);
      if (!r.Inside(*t.data_offset, t.data_size)) {
        const std::string message = absl::StrFormat(
            "BIT token '%s' (0x%02x) at 0x%x: its data (pointer 0x%x -> 0x%x, 0x%x bytes) lies past the end of the "
            "image (0x%x bytes)",
            base::Printable(std::string(1, static_cast<char>(t.id))), t.id, t.offset, t.data_pointer, *t.data_offset,
            t.data_size, r.size());
        // The falcon data token is what the boot needs: it must be sound. Others are only reported.
        if (t.id == kBitTokenFalconData) return r.Error(absl::StrCat(message, "; ", kTruncatedFix));
        v.notes.push_back(message);
      }
    }
    v.tokens.push_back(t);
  }
  return absl::OkStatus();
}

// The image (index) whose bytes contain `offset`, if any.
const RomImage* ImageContaining(const Vbios& v, uint64_t offset) {
  for (const RomImage& image : v.images) {
    if (offset >= image.offset && offset - image.offset < image.size) return &image;
  }
  return nullptr;
}

absl::Status ParseUcodeTable(const Reader& r, Vbios& v) {
  const BitToken* p = v.FindToken(kBitTokenFalconData);
  if (p == nullptr) {
    v.notes.push_back("no falcon data token 'p' (0x70): no falcon ucode table, so no FWSEC");
    return absl::OkStatus();
  }
  if (p->data_version != kFalconDataVersion || p->data_size < kFalconDataMinSize || !p->data_offset) {
    v.notes.push_back(absl::StrFormat(
        "falcon data token 'p' at 0x%x has version %d, size %d, pointer 0x%x: nouveau and tinygrad use only version "
        "2 with at least 4 bytes, so no falcon ucode table",
        p->offset, p->data_version, p->data_size, p->data_pointer));
    return absl::OkStatus();
  }
  UcodeTable table;
  table.pointer = r.Le32(*p->data_offset);  // inside: ParseBit checked the token's data range
  if (table.pointer < v.image0_size || !v.extension_offset) {
    v.notes.push_back(absl::StrFormat(
        "falcon ucode table pointer 0x%x is not rebased (image 0 is 0x%x bytes%s); tinygrad always adds the "
        "extension image's offset and would look elsewhere",
        table.pointer, v.image0_size, v.extension_offset ? "" : ", no 0xe0 image"));
  }
  table.offset = v.Resolve(table.pointer);
  const std::string where =
      absl::StrFormat("falcon ucode table at 0x%x (pointer 0x%x from token 'p')", table.offset, table.pointer);
  BAREGPU_RETURN_IF_ERROR(r.Check(table.offset, kUcodeTableHeaderSize, where));
  table.version = r.Le8(table.offset);
  // nv.py FALCON_UCODE_TABLE_HDR_V1: Version @0, HeaderSize @1, EntrySize @2, EntryCount @3, DescVersion @4,
  // DescSize @5 (u8 each; pmu.c reads @1..@3).
  table.header_size = r.Le8(table.offset + 1);
  table.entry_size = r.Le8(table.offset + 2);
  table.entry_count = r.Le8(table.offset + 3);
  table.desc_version = r.Le8(table.offset + 4);
  table.desc_size = r.Le8(table.offset + 5);
  if (table.version != kUcodeTableVersion) {
    return r.Error(absl::StrFormat("%s: version %d; only version %d is known (FALCON_UCODE_TABLE_HDR_V1)", where,
                                   table.version, kUcodeTableVersion));
  }
  if (table.header_size < kUcodeTableHeaderSize || table.entry_size < kUcodeTableEntrySize) {
    return r.Error(absl::StrFormat("%s: header size %d / entry size %d is below v1's %d / %d; the table is corrupt",
                                   where, table.header_size, table.entry_size, kUcodeTableHeaderSize,
                                   kUcodeTableEntrySize));
  }
  const uint64_t entries = table.offset + table.header_size;
  const uint64_t bytes = uint64_t{table.entry_count} * table.entry_size;
  // The table belongs to one image (which lies inside the file); entries running past it mean the count is corrupt.
  const RomImage* image = ImageContaining(v, table.offset);
  if (image == nullptr || entries + bytes > image->offset + image->size) {
    return r.Error(absl::StrFormat(
        "%s: %d entries of %d bytes run to 0x%x, past the end of %s; the entry count (table byte 3) is corrupt", where,
        table.entry_count, table.entry_size, entries + bytes,
        image ? absl::StrFormat("its image (0x%x..0x%x)", image->offset, image->offset + image->size)
              : std::string("every ROM image")));
  }
  for (int i = 0; i < table.entry_count; ++i) {
    UcodeEntry e;
    e.offset = entries + uint64_t{static_cast<uint32_t>(i)} * table.entry_size;
    e.application_id = r.Le8(e.offset);
    // nv.py FALCON_UCODE_TABLE_ENTRY_V1: ApplicationID u8 @0, TargetID u8 @1, DescPtr u32 @2 (pmu.c nvbios_pmuEp).
    e.target_id = r.Le8(e.offset + 1);
    e.desc_pointer = r.Le32(e.offset + 2);
    e.desc_offset = v.Resolve(e.desc_pointer);
    if (r.Inside(e.desc_offset, 4)) e.desc_header = r.Le32(e.desc_offset);
    table.entries.push_back(e);
  }
  v.ucode_table = std::move(table);
  return absl::OkStatus();
}

absl::Status ParseDescriptor(const Reader& r, const UcodeEntry& entry, FwsecDescriptor& d) {
  d.offset = entry.desc_offset;
  const std::string where = absl::StrFormat("FWSEC descriptor at 0x%x (ucode table entry at 0x%x, pointer 0x%x)",
                                            d.offset, entry.offset, entry.desc_pointer);
  BAREGPU_ASSIGN_OR_RETURN(d.header, r.U32(d.offset, where));
  if ((d.header & kDescFlagVersionAvailable) == 0) {
    return r.Error(
        absl::StrFormat("%s: header 0x%08x lacks the version-available flag (bit 0); the entry's pointer "
                        "is wrong or the descriptor is damaged",
                        where, d.header));
  }
  d.version = static_cast<uint8_t>((d.header >> kDescVersionShift) & kDescVersionMask);
  d.size = d.header >> kDescSizeShift;
  if (d.version != 2 && d.version != 3) {
    return r.Error(
        absl::StrFormat("%s: descriptor version %d; nouveau and this parser know versions 2 and 3", where, d.version));
  }
  const uint32_t base_size = d.version == 2 ? kDescV2Size : kDescV3Size;
  if (d.size < base_size) {
    return r.Error(
        absl::StrFormat("%s: its header says %d bytes, smaller than the v%d descriptor (%d bytes); the "
                        "descriptor size (header bits 31:16) is inconsistent",
                        where, d.size, d.version, base_size));
  }
  BAREGPU_RETURN_IF_ERROR(r.Check(d.offset, d.size, where));
  const uint64_t o = d.offset;
  d.stored_size = r.Le32(o + 4);
  if (d.version == 2) {
    // fwsec.c nvkm_falcon_ucode_desc_v2, in order.
    d.uncompressed_size = r.Le32(o + 8);
    d.virtual_entry = r.Le32(o + 12);
    d.interface_offset = r.Le32(o + 16);
    d.imem_phys_base = r.Le32(o + 20);
    d.imem_load_size = r.Le32(o + 24);
    d.imem_virt_base = r.Le32(o + 28);
    d.imem_sec_base = r.Le32(o + 32);
    d.imem_sec_size = r.Le32(o + 36);
    d.dmem_offset = r.Le32(o + 40);
    d.dmem_phys_base = r.Le32(o + 44);
    d.dmem_load_size = r.Le32(o + 48);
    d.alt_imem_load_size = r.Le32(o + 52);
    d.alt_dmem_load_size = r.Le32(o + 56);
    d.dmem_image_offset = d.dmem_offset;  // fwsec.c v2: dmem_base_img = DMEMOffset
  } else {
    // fwsec.c nvkm_falcon_ucode_desc_v3 / nv.py FALCON_UCODE_DESC_V3, in order.
    d.pkc_data_offset = r.Le32(o + 8);
    d.interface_offset = r.Le32(o + 12);
    d.imem_phys_base = r.Le32(o + 16);
    d.imem_load_size = r.Le32(o + 20);
    d.imem_virt_base = r.Le32(o + 24);
    d.dmem_phys_base = r.Le32(o + 28);
    d.dmem_load_size = r.Le32(o + 32);
    d.engine_id_mask = r.Le16(o + 36);
    d.ucode_id = r.Le8(o + 38);
    d.signature_count = r.Le8(o + 39);
    d.signature_versions = r.Le16(o + 40);
    d.dmem_image_offset = d.imem_load_size;  // fwsec.c v3: dmem_base_img = IMEMLoadSize
    d.signatures_offset = o + kDescV3Size;
    // The signatures follow the 44-byte descriptor and end where the ucode starts (desc + size).
    const uint64_t signatures = uint64_t{d.signature_count} * kSignatureSize;
    if (kDescV3Size + signatures > d.size) {
      return r.Error(absl::StrFormat(
          "%s: %d signatures of %d bytes need %d + %d = %d bytes, but the descriptor header says %d; the descriptor "
          "size (header bits 31:16) or SignatureCount is inconsistent",
          where, d.signature_count, kSignatureSize, kDescV3Size, signatures, kDescV3Size + signatures, d.size));
    }
    if (std::popcount(static_cast<uint32_t>(d.signature_versions)) != d.signature_count) {
      return r.Error(absl::StrFormat(
          "%s: SignatureCount %d but SignatureVersions 0x%04x names %d fuse versions; the signature picked by fuse "
          "version would not exist",
          where, d.signature_count, d.signature_versions, std::popcount(static_cast<uint32_t>(d.signature_versions))));
    }
  }
  d.ucode_offset = o + d.size;
  const uint64_t ucode_size = uint64_t{d.imem_load_size} + d.dmem_load_size;
  if (ucode_size > UINT32_MAX) {
    return r.Error(absl::StrFormat("%s: IMEMLoadSize 0x%x + DMEMLoadSize 0x%x overflow; the descriptor is corrupt",
                                   where, d.imem_load_size, d.dmem_load_size));
  }
  d.ucode_size = static_cast<uint32_t>(ucode_size);
  BAREGPU_RETURN_IF_ERROR(
      r.Check(d.ucode_offset, d.ucode_size,
              absl::StrFormat("FWSEC ucode (descriptor 0x%x + size %d; IMEMLoadSize 0x%x + DMEMLoadSize 0x%x)",
                              d.offset, d.size, d.imem_load_size, d.dmem_load_size)));
  if (uint64_t{d.dmem_image_offset} + d.dmem_load_size > d.ucode_size) {
    return r.Error(absl::StrFormat("%s: DMEM at 0x%x + 0x%x runs past the ucode's 0x%x bytes; DMEMOffset is corrupt",
                                   where, d.dmem_image_offset, d.dmem_load_size, d.ucode_size));
  }
  if (d.version == 3) {
    // tinygrad copies round_up(StoredSize, 256) bytes as the image and loads IMEM and DMEM from it.
    const uint64_t stored =
        (uint64_t{d.stored_size} + kFalconLoadAlignment - 1) / kFalconLoadAlignment * kFalconLoadAlignment;
    if (stored < d.ucode_size) {
      return r.Error(
          absl::StrFormat("%s: StoredSize 0x%x is smaller than IMEMLoadSize 0x%x + DMEMLoadSize 0x%x; the "
                          "descriptor is inconsistent",
                          where, d.stored_size, d.imem_load_size, d.dmem_load_size));
    }
    if (uint64_t{d.pkc_data_offset} + kSignatureSize > d.dmem_load_size) {
      return r.Error(
          absl::StrFormat("%s: PKCDataOffset 0x%x + a %d-byte signature runs past DMEM (0x%x bytes); the "
                          "signature patch would land outside DMEM",
                          where, d.pkc_data_offset, kSignatureSize, d.dmem_load_size));
    }
  }
  return absl::OkStatus();
}

absl::Status ParseInterface(const Reader& r, Fwsec& f, std::vector<std::string>& notes) {
  const FwsecDescriptor& d = f.desc;
  const uint64_t dmem = d.ucode_offset + d.dmem_image_offset;  // DMEM's first byte, in the file
  Appif& a = f.appif;
  a.dmem_offset = d.interface_offset;
  a.offset = dmem + a.dmem_offset;
  const std::string where =
      absl::StrFormat("FWSEC application interface table at DMEM 0x%x (file 0x%x)", a.dmem_offset, a.offset);
  if (uint64_t{a.dmem_offset} + kAppifHeaderSize > d.dmem_load_size) {
    return r.Error(
        absl::StrFormat("%s: InterfaceOffset 0x%x lies outside DMEM (0x%x bytes); the descriptor is "
                        "corrupt",
                        where, a.dmem_offset, d.dmem_load_size));
  }
  a.version = r.Le8(a.offset);
  // fwsec.c nvfw_falcon_appif_hdr_v1 / nv.py FALCON_APPLICATION_INTERFACE_HEADER_V1: ver @0, hdr @1, len @2, cnt @3;
  // entries (nvfw_falcon_appif_v1): id u32 @0, dmem_base u32 @4.
  a.header_size = r.Le8(a.offset + 1);
  a.entry_size = r.Le8(a.offset + 2);
  a.entry_count = r.Le8(a.offset + 3);
  if (a.version != kAppifVersion) {
    return r.Error(
        absl::StrFormat("%s: version %d; nouveau's fwsec.c accepts only version %d", where, a.version, kAppifVersion));
  }
  if (a.header_size < kAppifHeaderSize || a.entry_size < kAppifEntrySize) {
    return r.Error(absl::StrFormat("%s: header size %d / entry size %d is below v1's %d / %d; the table is corrupt",
                                   where, a.header_size, a.entry_size, kAppifHeaderSize, kAppifEntrySize));
  }
  if (a.header_size != kAppifHeaderSize || a.entry_size != kAppifEntrySize) {
    notes.push_back(absl::StrFormat("APPIF header size %d / entry size %d: tinygrad assumes %d / %d", a.header_size,
                                    a.entry_size, kAppifHeaderSize, kAppifEntrySize));
  }
  const uint64_t end = uint64_t{a.dmem_offset} + a.header_size + uint64_t{a.entry_count} * a.entry_size;
  if (end > d.dmem_load_size) {
    return r.Error(
        absl::StrFormat("%s: %d entries of %d bytes run to DMEM 0x%x, past DMEM (0x%x bytes); the entry "
                        "count is corrupt",
                        where, a.entry_count, a.entry_size, end, d.dmem_load_size));
  }
  std::optional<uint32_t> mapper;
  int mappers = 0;
  for (int i = 0; i < a.entry_count; ++i) {
    const uint64_t e = a.offset + a.header_size + uint64_t{static_cast<uint32_t>(i)} * a.entry_size;
    AppifEntry entry{r.Le32(e), r.Le32(e + 4)};
    a.entries.push_back(entry);
    if (entry.id == kAppifIdDmemMapper) {
      ++mappers;
      if (!mapper) mapper = entry.dmem_offset;  // nouveau takes the first
    }
  }
  if (!mapper) {
    return r.Error(
        absl::StrFormat("%s: no DMEMMAPPER entry (id %d) among its %d entries; the driver could not hand "
                        "FWSEC its command",
                        where, kAppifIdDmemMapper, a.entry_count));
  }
  if (mappers > 1) notes.push_back("several DMEMMAPPER entries: nouveau uses the first, tinygrad the last");
  DmemMapper& m = f.dmem_mapper;
  m.dmem_offset = *mapper;
  m.offset = dmem + m.dmem_offset;
  if (uint64_t{m.dmem_offset} + kDmemMapperSize > d.dmem_load_size) {
    return r.Error(
        absl::StrFormat("DMEMMAPPER at DMEM 0x%x: its %d bytes run past DMEM (0x%x bytes); the APPIF "
                        "entry's offset is corrupt",
                        m.dmem_offset, kDmemMapperSize, d.dmem_load_size));
  }
  const uint64_t o = m.offset;  // nv.py FALCON_APPLICATION_INTERFACE_DMEM_MAPPER_V3, in order
  m.signature = r.Le32(o);
  m.version = r.Le16(o + 4);
  m.size = r.Le16(o + 6);
  m.cmd_in_buffer_offset = r.Le32(o + 8);
  m.cmd_in_buffer_size = r.Le32(o + 12);
  m.cmd_out_buffer_offset = r.Le32(o + 16);
  m.cmd_out_buffer_size = r.Le32(o + 20);
  m.nvf_img_data_buffer_offset = r.Le32(o + 24);
  m.nvf_img_data_buffer_size = r.Le32(o + 28);
  m.printf_buffer_hdr = r.Le32(o + 32);
  m.ucode_build_time_stamp = r.Le32(o + 36);
  m.ucode_signature = r.Le32(o + 40);
  m.init_cmd = r.Le32(o + kDmemMapperInitCmdOffset);
  m.ucode_feature = r.Le32(o + 48);
  m.ucode_cmd_mask0 = r.Le32(o + 52);
  m.ucode_cmd_mask1 = r.Le32(o + 56);
  m.multi_tgt_tbl = r.Le32(o + 60);
  m.init_cmd_file_offset = o + kDmemMapperInitCmdOffset;
  m.cmd_in_buffer_file_offset = dmem + m.cmd_in_buffer_offset;
  if (uint64_t{m.cmd_in_buffer_offset} + m.cmd_in_buffer_size > d.dmem_load_size) {
    return r.Error(
        absl::StrFormat("DMEMMAPPER at DMEM 0x%x: its command buffer 0x%x + 0x%x runs past DMEM (0x%x "
                        "bytes); the driver's command would land outside FWSEC's data",
                        m.dmem_offset, m.cmd_in_buffer_offset, m.cmd_in_buffer_size, d.dmem_load_size));
  }
  if (m.cmd_in_buffer_size < kFrtsCommandSize) {
    notes.push_back(absl::StrFormat("DMEMMAPPER command buffer is %d bytes, smaller than the FRTS command (%d)",
                                    m.cmd_in_buffer_size, kFrtsCommandSize));
  }
  return absl::OkStatus();
}

absl::Status ParseFwsec(const Reader& r, Vbios& v) {
  if (!v.ucode_table) return absl::OkStatus();
  std::optional<size_t> index;
  int count = 0;
  for (size_t i = 0; i < v.ucode_table->entries.size(); ++i) {
    if (v.ucode_table->entries[i].application_id != kAppIdFwsecProd) continue;
    ++count;
    if (!index) index = i;  // fwsec.c stops at the first
  }
  if (!index) {
    v.notes.push_back("the falcon ucode table has no FWSEC_PROD (0x85) entry");
    return absl::OkStatus();
  }
  if (count > 1) v.notes.push_back("several FWSEC_PROD entries: nouveau uses the first, tinygrad the last");
  Fwsec f;
  f.entry_index = *index;
  BAREGPU_RETURN_IF_ERROR(ParseDescriptor(r, v.ucode_table->entries[*index], f.desc));
  BAREGPU_RETURN_IF_ERROR(ParseInterface(r, f, v.notes));
  v.fwsec = std::move(f);
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<Vbios> ParseVbios(absl::string_view file, absl::string_view data) {
  const Reader r(file, data);
  Vbios v;
  BAREGPU_ASSIGN_OR_RETURN(v.images, ParseRomImages(file, data, &v.rom_offset));
  v.image0_size = v.images.front().size;
  // base.c: imaged_addr is the first image after image 0 with code type 0xe0.
  for (size_t i = 1; i < v.images.size(); ++i) {
    if (v.images[i].code_type == static_cast<uint8_t>(CodeType::kExtension)) {
      v.extension_offset = v.images[i].offset;
      break;
    }
  }
  for (const RomImage& image : v.images) {
    if (image.checksum_ok && !*image.checksum_ok) {
      v.notes.push_back(
          absl::StrFormat("PC-AT image at 0x%x: its bytes do not sum to 0 (nouveau's shadow check)", image.offset));
    }
    if (image.npde && image.npde->last != image.pcir_last) {
      v.notes.push_back(absl::StrFormat(
          "image at 0x%x: PCIR says %s, NPDE says %s; nouveau follows the NPDE, a PCI-only walker would not",
          image.offset, image.pcir_last ? "last" : "not last", image.npde->last ? "last" : "not last"));
    }
    if (image.npde && image.npde->image_size != image.pcir_image_size) {
      v.notes.push_back(absl::StrFormat(
          "image at 0x%x: PCIR length 0x%x, NPDE length 0x%x; nouveau follows the NPDE, tinygrad the PCIR",
          image.offset, image.pcir_image_size, image.npde->image_size));
    }
  }
  BAREGPU_RETURN_IF_ERROR(ParseBit(r, v));
  BAREGPU_RETURN_IF_ERROR(ParseUcodeTable(r, v));
  BAREGPU_RETURN_IF_ERROR(ParseFwsec(r, v));
  return v;
}

}  // namespace firmware::nv
