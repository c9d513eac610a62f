#include "firmware/nv/virtual_vbios.h"

#include <bit>
#include <cstring>
#include <optional>
#include <tuple>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/sha256.h"
#include "firmware/nv/vbios.h"

namespace firmware::nv {
namespace {

// Sizes and places chosen for the virtual image (ROM offsets within their image). They are this image's choices,
// not NVIDIA's; every reader finds them through the pointers the format defines.
constexpr uint32_t kImage0Size = 0x400;
constexpr uint32_t kEfiImageSize = 0x400;
constexpr uint32_t kPcirPlace = 0x40;
constexpr uint16_t kPcirStructLength = 0x18;  // the PCI data structure through its reserved field (kPcirMinSize)
constexpr uint8_t kPcirStructRevision = 3;    // PCI Firmware Specification 3.0's PCIR revision
constexpr uint16_t kNpdeRevision11 = 0x101;   // nv.py NV_PCI_DATA_EXT_REV_11
constexpr uint32_t kTextPlace = 0x100;
constexpr uint32_t kBitPlace = kTinygradBitOffset;  // tinygrad reads the BIT only here; nouveau searches for it
constexpr uint16_t kBitBcdVersion = 0x0100;         // [BIT] BCD Version 1.00
constexpr uint32_t kBiosDataPlace = 0x1e0;
constexpr uint16_t kBiosDataSize = 5;    // nv.py BIT_DATA_BIOSDATA_BINVER_SIZE_5: BIOS version (32), OEM version (8)
constexpr uint8_t kBiosDataVersion = 2;  // [BIT] BIT_BIOSDATA (Version 2)
constexpr uint32_t kVirtualBiosVersion = 0x00000001;  // virtual: no NVIDIA release carries this
constexpr uint32_t kFalconDataPlace = 0x1f0;
constexpr uint32_t kExtensionDataPlace = 0x100;  // first FWSEC descriptor in the extension image
constexpr uint32_t kDescAlignment = 16;          // between the blobs in the extension image (a layout choice)
constexpr uint8_t kX86FarReturn = 0xcb;          // RETF at the PC-AT entry point (offset 3): returns at once
constexpr uint32_t kX86EntryPoint = 3;
constexpr uint32_t kPcAtInitSizeOffset = 2;  // the legacy ROM header's size byte, in 512-byte units
// The DMEMMAPPER fields nouveau and tinygrad do not read are modelled: the fourcc "DMAP" as its signature, version
// 3 as its struct, and one mask bit per command id this ucode accepts.
constexpr uint32_t kDmemMapperSignature = 0x50414d44;  // "DMAP"
constexpr uint16_t kDmemMapperVersion = 3;

class Bytes {
 public:
  explicit Bytes(size_t size) : data_(size, '\0') {}
  void U8(size_t at, uint8_t v) { data_.at(at) = static_cast<char>(v); }
  void U16(size_t at, uint16_t v) {
    U8(at, v & 0xff);
    U8(at + 1, v >> 8);
  }
  void U32(size_t at, uint32_t v) {
    U16(at, v & 0xffff);
    U16(at + 2, v >> 16);
  }
  void Put(size_t at, absl::string_view s) {
    if (at + s.size() > data_.size()) data_.resize(at + s.size(), '\0');  // never: callers size first
    std::memcpy(data_.data() + at, s.data(), s.size());
  }
  std::string& str() { return data_; }

 private:
  std::string data_;
};

uint32_t AlignUp(uint32_t v, uint32_t a) { return (v + a - 1) / a * a; }

// ROM header + PCIR + NPDE for one image of `size` bytes.
void WriteImageHeaders(Bytes& b, uint16_t device_id, uint32_t size, CodeType type, bool pcir_last, bool npde_last) {
  b.U16(0, kRomSignature);
  b.U16(kRomPcirPointerOffset, kPcirPlace);
  const uint32_t p = kPcirPlace;
  b.U32(p, kPcirSignature);
  b.U16(p + kPcirVendorId, kNvidiaVendorId);
  b.U16(p + kPcirDeviceId, device_id);
  b.U16(p + kPcirLength, kPcirStructLength);
  b.U8(p + kPcirRevision, kPcirStructRevision);
  b.U8(p + kPcirClassCode, kDisplayVgaClassCode & 0xff);
  b.U8(p + kPcirClassCode + 1, (kDisplayVgaClassCode >> 8) & 0xff);
  b.U8(p + kPcirClassCode + 2, kDisplayVgaClassCode >> 16);
  b.U16(p + kPcirImageLength, static_cast<uint16_t>(size / kRomBlockSize));
  b.U16(p + kPcirImageRevision, 0);
  b.U8(p + kPcirCodeType, static_cast<uint8_t>(type));
  b.U8(p + kPcirIndicator, pcir_last ? kLastImageBit : 0);
  const uint32_t n = AlignUp(p + kPcirStructLength, kNpdeAlignment);  // npde.c's placement
  b.U32(n, kNpdeSignature);
  b.U16(n + kNpdeRevision, kNpdeRevision11);
  b.U16(n + kNpdeLength, kNpdeMinSize);
  b.U16(n + kNpdeSubimageLength, static_cast<uint16_t>(size / kRomBlockSize));
  b.U8(n + kNpdeIndicator, npde_last ? kLastImageBit : 0);
  b.U8(n + kNpdeFlags, 0);
}

// Deterministic filler that does not compress to nothing: SHA-256 blocks of a label and a counter.
std::string Filler(absl::string_view label, size_t size) {
  std::string out;
  for (uint32_t block = 0; out.size() < size; ++block) {
    const base::Sha256::Digest d = base::Sha256::Hash(absl::StrCat(label, ":", block));
    out.append(reinterpret_cast<const char*>(d.data()), d.size());
  }
  out.resize(size);
  return out;
}

struct FwsecBlob {
  std::string desc;   // descriptor + signatures
  std::string ucode;  // IMEM then DMEM
};

FwsecBlob BuildFwsec(absl::string_view chip, uint8_t app_id, uint8_t desc_version) {
  // IMEM: the identity header, a line of text, filler.
  Bytes imem(kVirtualFwsecImemSize);
  imem.Put(0, Filler(absl::StrCat("baregpu virtual FWSEC IMEM ", chip, " ", ApplicationIdName(app_id)),
                     kVirtualFwsecImemSize));
  imem.Put(0, std::string(kVirtualFwsecTextOffset, '\0'));
  imem.Put(0, absl::string_view(kVirtualFwsecMagic, sizeof(kVirtualFwsecMagic)));
  imem.U32(16, kVirtualFwsecFormat);
  imem.U32(20, kVirtualFwsecImemSize);
  imem.U32(24, kVirtualFwsecDmemSize);
  imem.U8(28, app_id);
  imem.U8(29, desc_version);
  std::string chip_field(chip.substr(0, 15));
  chip_field.resize(16, '\0');
  imem.Put(32, chip_field);
  imem.U16(48, kNvidiaVendorId);
  imem.U16(50, kVirtualAd102DeviceId);
  const std::string text = absl::StrFormat(
      "baregpu virtual FWSEC (%s) for the virtual %s: not NVIDIA code; the virtual GPU recognises it by this header "
      "and its SHA-256.\n",
      ApplicationIdName(app_id), chip);
  imem.Put(kVirtualFwsecTextOffset, text);

  // DMEM: a line of text, the APPIF table, the DMEMMAPPER, zeroed command buffers and signature slot.
  Bytes dmem(kVirtualFwsecDmemSize);
  dmem.Put(0, absl::StrFormat("baregpu virtual FWSEC DMEM (%s)\n", chip));
  const uint32_t a = kVirtualFwsecInterfaceOffset;
  dmem.U8(a, kAppifVersion);
  dmem.U8(a + 1, kAppifHeaderSize);
  dmem.U8(a + 2, kAppifEntrySize);
  dmem.U8(a + 3, 1);  // one entry
  dmem.U32(a + kAppifHeaderSize, kAppifIdDmemMapper);
  dmem.U32(a + kAppifHeaderSize + 4, kVirtualFwsecDmemMapperOffset);
  const uint32_t m = kVirtualFwsecDmemMapperOffset;  // FALCON_APPLICATION_INTERFACE_DMEM_MAPPER_V3, in order
  dmem.U32(m, kDmemMapperSignature);
  dmem.U16(m + 4, kDmemMapperVersion);
  dmem.U16(m + 6, kDmemMapperSize);
  dmem.U32(m + 8, kVirtualFwsecCmdInOffset);
  dmem.U32(m + 12, kVirtualFwsecCmdInSize);
  dmem.U32(m + 16, kVirtualFwsecCmdOutOffset);
  dmem.U32(m + 20, kVirtualFwsecCmdOutSize);
  // nvf_img_data, printf buffer, build time stamp, ucode signature, init_cmd (patched by the driver), feature: 0.
  dmem.U32(m + 52, 1u << kDmemMapperCmdFrts | 1u << kDmemMapperCmdSb);  // ucode_cmd_mask0
  // The PKC slot (kVirtualFwsecPkcOffset, 384 bytes) stays zero until the driver patches a signature in.

  // The identity hash: IMEM with the hash field zero, then DMEM as built.
  base::Sha256 sha;
  sha.Update(imem.str());
  sha.Update(dmem.str());
  const base::Sha256::Digest digest = sha.Finish();
  const std::string hash(reinterpret_cast<const char*>(digest.data()), digest.size());
  imem.Put(kVirtualFwsecHashOffset, hash);

  FwsecBlob blob;
  blob.ucode = imem.str() + dmem.str();
  const uint32_t ucode_size = static_cast<uint32_t>(blob.ucode.size());
  if (desc_version == 2) {
    Bytes d(kDescV2Size);  // fwsec.c nvkm_falcon_ucode_desc_v2, in order
    d.U32(0, kDescV2Size << kDescSizeShift | 2u << kDescVersionShift | kDescFlagVersionAvailable);
    d.U32(4, ucode_size);                     // StoredSize
    d.U32(8, ucode_size);                     // UncompressedSize
    d.U32(12, 0);                             // VirtualEntry
    d.U32(16, kVirtualFwsecInterfaceOffset);  // InterfaceOffset
    d.U32(20, 0);                             // IMEMPhysBase
    d.U32(24, kVirtualFwsecImemSize);         // IMEMLoadSize
    d.U32(28, 0);                             // IMEMVirtBase
    d.U32(32, 0);                             // IMEMSecBase
    d.U32(36, kVirtualFwsecImemSize);         // IMEMSecSize: all of IMEM is secure
    d.U32(40, kVirtualFwsecImemSize);         // DMEMOffset: DMEM follows IMEM in the image
    d.U32(44, 0);                             // DMEMPhysBase
    d.U32(48, kVirtualFwsecDmemSize);         // DMEMLoadSize
    blob.desc = d.str();
    return blob;
  }
  const uint32_t count = static_cast<uint32_t>(std::popcount(kVirtualFwsecSignatureVersions));
  const uint32_t size = kDescV3Size + count * kSignatureSize;
  Bytes d(size);  // fwsec.c nvkm_falcon_ucode_desc_v3 / nv.py FALCON_UCODE_DESC_V3, in order
  d.U32(0, size << kDescSizeShift | 3u << kDescVersionShift | kDescFlagVersionAvailable);
  d.U32(4, ucode_size);                     // StoredSize
  d.U32(8, kVirtualFwsecPkcOffset);         // PKCDataOffset
  d.U32(12, kVirtualFwsecInterfaceOffset);  // InterfaceOffset
  d.U32(16, 0);                             // IMEMPhysBase
  d.U32(20, kVirtualFwsecImemSize);         // IMEMLoadSize
  d.U32(24, 0);                             // IMEMVirtBase
  d.U32(28, 0);                             // DMEMPhysBase
  d.U32(32, kVirtualFwsecDmemSize);         // DMEMLoadSize
  d.U16(36, kVirtualFwsecEngineIdMask);
  d.U8(38, kVirtualFwsecUcodeId);
  d.U8(39, static_cast<uint8_t>(count));  // SignatureCount
  d.U16(40, kVirtualFwsecSignatureVersions);
  // One signature per set bit of SignatureVersions, lowest version first (ga102.c counts set bits below the fuse's).
  uint32_t at = kDescV3Size;
  for (uint32_t version = 0; version < 16; ++version) {
    if ((kVirtualFwsecSignatureVersions & (1u << version)) == 0) continue;
    d.Put(at, VirtualFwsecSignature(version, hash));
    at += kSignatureSize;
  }
  blob.desc = d.str();
  return blob;
}

}  // namespace

std::string VirtualFwsecSignature(uint32_t fuse_version, absl::string_view ucode_sha256) {
  std::string out;
  std::string seed = absl::StrCat("baregpu virtual FWSEC signature, fuse version ", fuse_version, ":", ucode_sha256);
  while (out.size() < kSignatureSize) {
    const base::Sha256::Digest d = base::Sha256::Hash(seed);
    seed.assign(reinterpret_cast<const char*>(d.data()), d.size());
    out += seed;
  }
  out.resize(kSignatureSize);
  return out;
}

namespace {

uint32_t Le32(absl::string_view d, size_t at) {
  uint32_t v = 0;
  for (int i = 3; i >= 0; --i) v = v << 8 | static_cast<uint8_t>(d[at + i]);
  return v;
}

absl::Status Rejected(absl::string_view what) {
  return absl::FailedPreconditionError(absl::StrCat("virtual FWSEC rejected: ", what));
}

constexpr size_t kSha256Size = std::tuple_size_v<base::Sha256::Digest>;

bool Within(uint64_t offset, uint64_t size, uint64_t limit) { return offset <= limit && size <= limit - offset; }

}  // namespace

absl::StatusOr<VirtualFwsecRun> CheckVirtualFwsec(absl::string_view chip, absl::string_view imem,
                                                  absl::string_view dmem, uint32_t pkc_data_offset,
                                                  uint32_t interface_offset, uint32_t fuse_version) {
  if (imem.size() < kVirtualFwsecTextOffset ||
      imem.substr(0, sizeof(kVirtualFwsecMagic)) != absl::string_view(kVirtualFwsecMagic, sizeof(kVirtualFwsecMagic))) {
    return Rejected("IMEM does not start with the virtual FWSEC header (\"BAREGPU_VFWSEC\"): not virtual FWSEC");
  }
  if (Le32(imem, 16) != kVirtualFwsecFormat) return Rejected(absl::StrFormat("format %d", Le32(imem, 16)));
  if (Le32(imem, 20) != imem.size() || Le32(imem, 24) != dmem.size()) {
    return Rejected(absl::StrFormat("loaded IMEM 0x%x / DMEM 0x%x bytes, the header says 0x%x / 0x%x", imem.size(),
                                    dmem.size(), Le32(imem, 20), Le32(imem, 24)));
  }
  const absl::string_view built_for = imem.substr(32, 16).substr(0, imem.substr(32, 16).find('\0'));
  if (built_for != chip) return Rejected(absl::StrFormat("built for %s, not %s", built_for, chip));
  // The DMEMMAPPER, through the APPIF table, to know which parts the driver may have patched.
  if (!Within(interface_offset, kAppifHeaderSize, dmem.size())) return Rejected("InterfaceOffset outside DMEM");
  const uint8_t header_size = static_cast<uint8_t>(dmem[interface_offset + 1]);
  const uint8_t entry_size = static_cast<uint8_t>(dmem[interface_offset + 2]);
  const uint8_t count = static_cast<uint8_t>(dmem[interface_offset + 3]);
  std::optional<uint32_t> mapper;
  for (uint32_t i = 0; i < count && entry_size >= kAppifEntrySize; ++i) {
    const uint64_t e = uint64_t{interface_offset} + header_size + uint64_t{i} * entry_size;
    if (!Within(e, kAppifEntrySize, dmem.size())) break;
    if (Le32(dmem, e) == kAppifIdDmemMapper) {
      mapper = Le32(dmem, e + 4);
      break;
    }
  }
  if (!mapper || !Within(*mapper, kDmemMapperSize, dmem.size())) return Rejected("no DMEMMAPPER inside DMEM");
  const uint32_t in_offset = Le32(dmem, *mapper + 8), in_size = Le32(dmem, *mapper + 12);
  const uint32_t out_offset = Le32(dmem, *mapper + 16), out_size = Le32(dmem, *mapper + 20);
  if (!Within(in_offset, in_size, dmem.size()) || !Within(out_offset, out_size, dmem.size()) ||
      !Within(pkc_data_offset, kSignatureSize, dmem.size())) {
    return Rejected("a command buffer or the signature slot lies outside DMEM");
  }
  std::string unpatched(dmem);
  unpatched.replace(*mapper + kDmemMapperInitCmdOffset, 4, 4, '\0');
  unpatched.replace(in_offset, in_size, in_size, '\0');
  unpatched.replace(out_offset, out_size, out_size, '\0');
  unpatched.replace(pkc_data_offset, kSignatureSize, kSignatureSize, '\0');
  std::string imem_zeroed(imem);
  imem_zeroed.replace(kVirtualFwsecHashOffset, kSha256Size, kSha256Size, '\0');
  base::Sha256 sha;
  sha.Update(imem_zeroed);
  sha.Update(unpatched);
  const base::Sha256::Digest digest = sha.Finish();
  const std::string hash(reinterpret_cast<const char*>(digest.data()), digest.size());
  if (imem.substr(kVirtualFwsecHashOffset, hash.size()) != hash) {
    return Rejected("SHA-256 mismatch: IMEM or the unpatched parts of DMEM were changed");
  }
  if (dmem.substr(pkc_data_offset, kSignatureSize) != VirtualFwsecSignature(fuse_version, hash)) {
    return Rejected(absl::StrFormat(
        "the signature at DMEM 0x%x is not the one for fuse version %d (the driver picked the wrong one, or none)",
        pkc_data_offset, fuse_version));
  }
  VirtualFwsecRun run;
  run.application_id = static_cast<uint8_t>(imem[28]);
  run.init_cmd = Le32(dmem, *mapper + kDmemMapperInitCmdOffset);
  const uint32_t mask = Le32(dmem, *mapper + 52);  // ucode_cmd_mask0
  if (run.init_cmd >= 32 || (mask & (1u << run.init_cmd)) == 0) {
    return Rejected(
        absl::StrFormat("init_cmd 0x%x is not a command this ucode accepts (mask 0x%08x)", run.init_cmd, mask));
  }
  run.command = std::string(dmem.substr(in_offset, in_size));
  return run;
}

absl::StatusOr<std::string> BuildVirtualVbios(absl::string_view chip, const VirtualVbiosOptions& options) {
  if (chip != "ad102") {
    return absl::InvalidArgumentError(
        absl::StrFormat("no virtual VBIOS for '%s': the only virtual NVIDIA chip is ad102", chip));
  }
  if (options.desc_version != 2 && options.desc_version != 3) {
    return absl::InvalidArgumentError(
        absl::StrFormat("FWSEC descriptor version %d: the virtual VBIOS writes version 2 or 3", options.desc_version));
  }
  const uint16_t device = kVirtualAd102DeviceId;

  // Image 2 first: its size decides nothing before it, and its offsets become ROM pointers.
  const FwsecBlob prod = BuildFwsec(chip, kAppIdFwsecProd, options.desc_version);
  const FwsecBlob dbg = BuildFwsec(chip, kAppIdFwsecDbg, options.desc_version);
  const uint32_t prod_desc = kExtensionDataPlace;
  const uint32_t dbg_desc =
      AlignUp(prod_desc + static_cast<uint32_t>(prod.desc.size() + prod.ucode.size()), kDescAlignment);
  const uint32_t table = AlignUp(dbg_desc + static_cast<uint32_t>(dbg.desc.size() + dbg.ucode.size()), kDescAlignment);
  constexpr uint8_t kEntries = 2;
  const uint32_t table_end = table + kUcodeTableHeaderSize + kEntries * kUcodeTableEntrySize;
  const uint32_t ext_size = AlignUp(table_end, kRomBlockSize);
  // A ROM pointer to extension-image offset x: readers rebase pointers at or past image 0's size into the first 0xe0
  // image (nouveau: p - image0_size + ext; tinygrad: (ext - image0_size) + p), so x is stored as image0_size + x.
  auto ext_pointer = [](uint32_t x) { return kImage0Size + x; };

  Bytes ext(ext_size);
  WriteImageHeaders(ext, device, ext_size, CodeType::kExtension, /*pcir_last=*/true, /*npde_last=*/true);
  ext.Put(prod_desc, prod.desc + prod.ucode);
  ext.Put(dbg_desc, dbg.desc + dbg.ucode);
  ext.U8(table, kUcodeTableVersion);
  ext.U8(table + 1, kUcodeTableHeaderSize);
  ext.U8(table + 2, kUcodeTableEntrySize);
  ext.U8(table + 3, kEntries);
  ext.U8(table + 4, options.desc_version);                                                         // DescVersion
  ext.U8(table + 5, static_cast<uint8_t>(options.desc_version == 2 ? kDescV2Size : kDescV3Size));  // DescSize
  // The debug entry first, so a walker must skip by application id.
  const uint32_t e0 = table + kUcodeTableHeaderSize;
  ext.U8(e0, kAppIdFwsecDbg);
  ext.U8(e0 + 1, 0);  // TargetID
  ext.U32(e0 + 2, ext_pointer(dbg_desc));
  const uint32_t e1 = e0 + kUcodeTableEntrySize;
  ext.U8(e1, kAppIdFwsecProd);
  ext.U8(e1 + 1, 0);
  ext.U32(e1 + 2, ext_pointer(prod_desc));

  // Image 1: EFI. Its PCIR says last (a PCI-only walker, like system firmware, stops before NVIDIA's images); its NPDE
  // says more follows, which nouveau's image.c follows. The EFI-specific header fields are left zero: no EFI driver.
  Bytes efi(kEfiImageSize);
  WriteImageHeaders(efi, device, kEfiImageSize, CodeType::kEfi, /*pcir_last=*/true, /*npde_last=*/false);
  efi.Put(kTextPlace, absl::StrFormat("baregpu virtual %s VBIOS: EFI image placeholder, no UEFI driver\n", chip));

  // Image 0: PC-AT with the BIT.
  Bytes pc(kImage0Size);
  WriteImageHeaders(pc, device, kImage0Size, CodeType::kPcAt, /*pcir_last=*/false, /*npde_last=*/false);
  pc.U8(kPcAtInitSizeOffset, static_cast<uint8_t>(kImage0Size / kRomBlockSize));
  pc.U8(kX86EntryPoint, kX86FarReturn);
  pc.Put(kTextPlace, absl::StrFormat("baregpu virtual %s VBIOS (PCI 10de:%04x): real format, virtual content; not "
                                     "NVIDIA's\n",
                                     chip, device));
  struct Token {
    uint8_t id, version;
    uint16_t size, pointer;
  };
  const Token tokens[] = {
      {kBitTokenBiosData, kBiosDataVersion, kBiosDataSize, static_cast<uint16_t>(kBiosDataPlace)},
      {kBitTokenNop, 0, 0, 0},
      {kBitTokenFalconData, kFalconDataVersion, kFalconDataMinSize, static_cast<uint16_t>(kFalconDataPlace)},
  };
  const uint32_t bit = kBitPlace;
  pc.U16(bit, kBitHeaderId);
  pc.U32(bit + 2, kBitSignature);
  pc.U16(bit + 6, kBitBcdVersion);
  pc.U8(bit + 8, kBitHeaderSize);
  pc.U8(bit + 9, kBitTokenSize);
  pc.U8(bit + 10, static_cast<uint8_t>(std::size(tokens)));
  uint8_t bit_sum = 0;  // the checksum byte makes the header's 12 bytes sum to 0 (nobody we read checks it)
  for (uint32_t i = 0; i + 1 < kBitHeaderSize; ++i)
    bit_sum = static_cast<uint8_t>(bit_sum + static_cast<uint8_t>(pc.str()[bit + i]));
  pc.U8(bit + 11, static_cast<uint8_t>(-bit_sum));
  for (size_t i = 0; i < std::size(tokens); ++i) {
    const uint32_t t = bit + kBitHeaderSize + static_cast<uint32_t>(i) * kBitTokenSize;
    pc.U8(t, tokens[i].id);
    pc.U8(t + 1, tokens[i].version);
    pc.U16(t + 2, tokens[i].size);
    pc.U16(t + 4, tokens[i].pointer);
  }
  pc.U32(kBiosDataPlace, kVirtualBiosVersion);
  pc.U8(kBiosDataPlace + 4, 0);                  // OEM version
  pc.U32(kFalconDataPlace, ext_pointer(table));  // FalconUcodeTablePtr
  // nouveau's shadow.c: a PC-AT image's bytes sum to 0; the last byte balances them.
  uint8_t sum = 0;
  for (char c : pc.str()) sum = static_cast<uint8_t>(sum + static_cast<uint8_t>(c));
  pc.U8(kImage0Size - 1, static_cast<uint8_t>(-sum));

  return pc.str() + efi.str() + ext.str();
}

}  // namespace firmware::nv
