// The NVIDIA VBIOS as the GSP boot needs it: the PCI expansion ROM image chain, the BIOS Information Table (BIT) and
// its tokens, the falcon ucode table the 'p' token leads to, and the FWSEC ucode (its descriptor, signatures, the
// application interface table and the DMEMMAPPER interface the driver patches the FRTS/SB command into).
//
// Sources (facts only; see docs/nv-vbios-sources.md for each field):
//   [BIT]      open-gpu-doc BIOS-Information-Table (BIT header, token, BIT_FALCON_DATA v2, the pointer adjustment
//              for pointers past the PC-compatible image).
//   [nouveau]  Linux 6.12 drivers/gpu/drm/nouveau: nvkm/subdev/bios/{base,image,pcir,npde,bit,pmu}.c and
//              nvkm/subdev/gsp/fwsec.c (descriptor v2/v3, APPIF, DMEMMAPPER, FRTS command), nvkm/subdev/gsp/ga102.c
//              (signature index from the fuse version).
//   [tinygrad] tinygrad runtime/support/nv/ip.py prep_ucode and runtime/autogen/nv.py (the same structures under
//              NVIDIA's names: PCI_EXP_ROM_*, BIT_HEADER_V1_00, FALCON_UCODE_TABLE_HDR_V1, FALCON_UCODE_DESC_V3,
//              FALCON_APPLICATION_INTERFACE_*, FWSECLIC_*).
//
// Every offset and length in the image is untrusted: every read is bounds-checked, every loop is bounded by a count
// read from a single byte or by the file size, and an error names the structure, its offset and how to fix it.
#ifndef BAREGPU_FIRMWARE_NV_VBIOS_H_
#define BAREGPU_FIRMWARE_NV_VBIOS_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace firmware::nv {

// ---- PCI expansion ROM (PCI Firmware Specification; [nouveau] image.c/pcir.c/npde.c; [tinygrad] nv.py
// PCI_EXP_ROM_*, PCI_DATA_STRUCT_*, NV_PCI_DATA_EXT_*) ----

// ROM header signatures nouveau's nvbios_imagen accepts (nv.py PCI_EXP_ROM_SIGNATURE, _NV, _NV2).
inline constexpr uint16_t kRomSignature = 0xaa55;
inline constexpr uint16_t kRomSignatureNv = 0x4e56;  // "VN"
inline constexpr uint16_t kRomSignatureNv2 = 0xbb77;
inline constexpr uint32_t kRomPcirPointerOffset = 0x18;  // nv.py OFFSETOF_PCI_EXP_ROM_PCI_DATA_STRUCT_PTR
inline constexpr uint32_t kRomHeaderSize = 0x1a;         // the 16-bit PCIR pointer ends the standard header
// PCI data structure signatures (pcir.c nvbios_pcirTe; nv.py PCI_DATA_STRUCT_SIGNATURE, _NV, _NV2).
inline constexpr uint32_t kPcirSignature = 0x52494350;     // "PCIR"
inline constexpr uint32_t kPcirSignatureNv = 0x5344504e;   // "NPDS"
inline constexpr uint32_t kPcirSignatureNv2 = 0x53494752;  // "RGIS"
// PCI data structure field offsets (pcir.c nvbios_pcirTp; nv.py OFFSETOF_PCI_DATA_STRUCT_*).
inline constexpr uint32_t kPcirVendorId = 0x04;
inline constexpr uint32_t kPcirDeviceId = 0x06;
inline constexpr uint32_t kPcirLength = 0x0a;  // the structure's length; NPDE follows it, 16-byte aligned
inline constexpr uint32_t kPcirRevision = 0x0c;
inline constexpr uint32_t kPcirClassCode = 0x0d;    // 3 bytes
inline constexpr uint32_t kPcirImageLength = 0x10;  // in kRomBlockSize units
inline constexpr uint32_t kPcirImageRevision = 0x12;
inline constexpr uint32_t kPcirCodeType = 0x14;
inline constexpr uint32_t kPcirIndicator = 0x15;  // bit 7: last image
inline constexpr uint32_t kPcirMinSize = 0x18;    // through the indicator byte and the 16-bit reserved field
inline constexpr uint32_t kRomBlockSize = 512;    // nv.py PCI_ROM_IMAGE_BLOCK_SIZE; pcir.c "* 512"
inline constexpr uint8_t kLastImageBit = 0x80;    // pcir.c/npde.c "& 0x80"
// NVIDIA's PCI data extension, 16-byte aligned after the PCI data structure (npde.c; nv.py NV_PCI_DATA_EXT_*).
inline constexpr uint32_t kNpdeSignature = 0x4544504e;  // "NPDE"
inline constexpr uint32_t kNpdeAlignment = 16;          // npde.c "(data + hdr + 0x0f) & ~0x0f"
inline constexpr uint32_t kNpdeRevision = 0x04;         // nv.py OFFSETOF_PCI_DATA_EXT_STRUCT_REV
inline constexpr uint32_t kNpdeLength = 0x06;           // ..._LEN
inline constexpr uint32_t kNpdeSubimageLength = 0x08;   // ..._SUBIMAGE_LEN, in kRomBlockSize units
inline constexpr uint32_t kNpdeIndicator = 0x0a;        // ..._LAST_IMAGE, bit 7
inline constexpr uint32_t kNpdeFlags = 0x0b;            // ..._FLAGS
inline constexpr uint32_t kNpdeMinSize = 0x0c;

// PCI code types (PCI Firmware Specification; nv.py NV_BCRT_HASH_INFO_BASE_CODE_TYPE_VBIOS_BASE/_EXT; image.c
// treats 0x70 as always last and looks for the 0xe0 image to rebase pointers into).
enum class CodeType : uint8_t {
  kPcAt = 0x00,       // x86 PC-compatible (legacy VBIOS); holds the BIT
  kEfi = 0x03,        // UEFI (GOP driver)
  kNbsi = 0x70,       // notebook system information; image.c: always the last image, no NPDE
  kExtension = 0xe0,  // NVIDIA's extension image(s) (FwSec): falcon ucode table, descriptors, ucode
};
std::string CodeTypeName(uint8_t code_type);

struct NpdeInfo {       // [nouveau] nvbios_npdeT; [tinygrad] NV_PCI_DATA_EXT_*
  uint64_t offset = 0;  // in the file
  uint16_t revision = 0;
  uint16_t length = 0;
  uint32_t image_size = 0;  // subimage length * 512
  bool last = false;
  uint8_t flags = 0;
};

struct RomImage {       // [nouveau] nvbios_image + nvbios_pcirT
  uint64_t offset = 0;  // in the file
  uint16_t signature = 0;
  uint64_t pcir_offset = 0;  // in the file
  uint32_t pcir_signature = 0;
  uint16_t vendor_id = 0;
  uint16_t device_id = 0;
  uint16_t pcir_length = 0;
  uint8_t pcir_revision = 0;
  uint32_t class_code = 0;       // base class << 16 | subclass << 8 | interface
  uint32_t pcir_image_size = 0;  // PCIR image length * 512
  uint16_t image_revision = 0;
  uint8_t code_type = 0;
  bool pcir_last = false;
  std::optional<NpdeInfo> npde;
  // Code type 0x00 only: whether the image's bytes sum to 0 mod 256 (nouveau's shadow.c nvbios_checksum; a PC-AT
  // image that fails it scores lower, and ACPI-shadowed ones are rejected).
  std::optional<bool> checksum_ok;
  // What the chain walk uses, as nouveau's nvbios_imagen decides: the NPDE's size and last flag where there is one
  // (and the code type is not 0x70), else the PCIR's; a 0x70 image is always last.
  uint32_t size = 0;
  bool last = false;
};

// ---- BIOS Information Table ([BIT] "BIT Header", "BIT Token Structure"; [nouveau] bit.c; [tinygrad]
// BIT_HEADER_V1_00, BIT_TOKEN_V1_00) ----
inline constexpr uint16_t kBitHeaderId = 0xb8ff;       // [BIT] ID
inline constexpr uint32_t kBitSignature = 0x00544942;  // [BIT] "BIT\0"
inline constexpr uint32_t kBitHeaderSize = 12;         // [BIT] Header Size; bit.c's first token at +12
inline constexpr uint32_t kBitTokenSize = 6;           // [BIT] Token Size (ID 8, version 8, size 16, pointer 16)
inline constexpr uint64_t kTinygradBitOffset = 0x1b0;  // tinygrad's prep_ucode reads the BIT header here only
inline constexpr uint8_t kBitTokenFalconData = 0x70;   // [BIT] BIT_TOKEN_FALCON_DATA ('p')
inline constexpr uint8_t kBitTokenBiosData = 0x42;     // [BIT] BIT_TOKEN_BIOSDATA ('B'); nv.py BIT_TOKEN_BIOSDATA
inline constexpr uint8_t kBitTokenNop = 0x4e;          // [BIT] BIT_TOKEN_NOP ('N')
inline constexpr uint8_t kFalconDataVersion = 2;       // [BIT] BIT_FALCON_DATA (Version 2); pmu.c "version == 2"
inline constexpr uint16_t kFalconDataMinSize = 4;      // nv.py BIT_DATA_FALCON_DATA_V2_SIZE_4; pmu.c "length >= 4"

struct BitHeader {
  uint64_t offset = 0;  // in the file
  uint16_t bcd_version = 0;
  uint8_t header_size = 0;
  uint8_t token_size = 0;
  uint8_t token_count = 0;
  uint8_t checksum = 0;
};

struct BitToken {
  uint64_t offset = 0;  // of the token, in the file
  uint8_t id = 0;
  uint8_t data_version = 0;
  uint16_t data_size = 0;
  uint16_t data_pointer = 0;            // as stored; 0 = no data ([BIT]: treat as BIT_NOP)
  std::optional<uint64_t> data_offset;  // in the file, after Vbios::Resolve; absent when the pointer is 0
};

// ---- Falcon ucode table (BIT_FALCON_DATA v2's FalconUcodeTablePtr; [nouveau] pmu.c nvbios_pmuT/E; [tinygrad]
// FALCON_UCODE_TABLE_HDR_V1, FALCON_UCODE_TABLE_ENTRY_V1) ----
inline constexpr uint8_t kUcodeTableVersion = 1;     // nv.py FALCON_UCODE_TABLE_HDR_V1_VERSION
inline constexpr uint8_t kUcodeTableHeaderSize = 6;  // nv.py FALCON_UCODE_TABLE_HDR_V1_SIZE_6
inline constexpr uint8_t kUcodeTableEntrySize = 6;   // nv.py FALCON_UCODE_TABLE_ENTRY_V1_SIZE_6
// Application ids (nv.py FALCON_UCODE_ENTRY_APPID_*; fwsec.c looks for 0x85).
inline constexpr uint8_t kAppIdFirmwareSecLic = 0x05;
inline constexpr uint8_t kAppIdFwsecDbg = 0x45;
inline constexpr uint8_t kAppIdFwsecProd = 0x85;
std::string ApplicationIdName(uint8_t id);

struct UcodeEntry {
  uint64_t offset = 0;  // of the entry, in the file
  uint8_t application_id = 0;
  uint8_t target_id = 0;
  uint32_t desc_pointer = 0;  // as stored
  uint64_t desc_offset = 0;   // in the file, after Vbios::Resolve
  uint32_t desc_header = 0;   // FALCON_UCODE_DESC_HEADER vDesc, when inside the file (else 0)
};

struct UcodeTable {
  uint64_t offset = 0;   // in the file
  uint32_t pointer = 0;  // FalconUcodeTablePtr as stored
  uint8_t version = 0;
  uint8_t header_size = 0;
  uint8_t entry_size = 0;
  uint8_t entry_count = 0;
  uint8_t desc_version = 0;
  uint8_t desc_size = 0;
  std::vector<UcodeEntry> entries;
};

// ---- The falcon ucode descriptor ([nouveau] fwsec.c nvkm_falcon_ucode_desc_v2/v3; [tinygrad]
// FALCON_UCODE_DESC_HEADER, FALCON_UCODE_DESC_V3) ----
// vDesc: bit 0 = version available (nv.py NV_BIT_FALCON_UCODE_DESC_HEADER_VDESC_FLAGS_VERSION_AVAILABLE; fwsec.c
// rejects a descriptor without it), bits 15:8 = version, bits 31:16 = size of the descriptor including what follows
// it before the ucode (v3: the signatures). fwsec.c: "size = (Hdr & 0xffff0000) >> 16; vers = (Hdr & 0xff00) >> 8".
inline constexpr uint32_t kDescFlagVersionAvailable = 0x1;
inline constexpr uint32_t kDescVersionShift = 8;
inline constexpr uint32_t kDescVersionMask = 0xff;
inline constexpr uint32_t kDescSizeShift = 16;
inline constexpr uint32_t kDescV2Size = 60;      // 15 u32 fields (fwsec.c nvkm_falcon_ucode_desc_v2)
inline constexpr uint32_t kDescV3Size = 44;      // nv.py FALCON_UCODE_DESC_V3_SIZE_44; fwsec.c "desc + 0x2c" signatures
inline constexpr uint32_t kSignatureSize = 384;  // nv.py BCRT30_RSA3K_SIG_SIZE; fwsec.c "96 * 4"
// fwsec.c v3: "dmem_size = ALIGN(desc->DMEMLoadSize, 256)"; tinygrad: image length round_up(StoredSize, 256).
inline constexpr uint32_t kFalconLoadAlignment = 256;

struct FwsecDescriptor {
  uint64_t offset = 0;  // in the file
  uint32_t header = 0;  // vDesc
  uint8_t version = 0;  // 2 or 3
  uint32_t size = 0;    // vDesc >> 16: descriptor plus signatures
  uint32_t stored_size = 0;
  uint32_t interface_offset = 0;  // of the APPIF header, in DMEM
  uint32_t imem_phys_base = 0;
  uint32_t imem_load_size = 0;
  uint32_t imem_virt_base = 0;
  uint32_t dmem_phys_base = 0;
  uint32_t dmem_load_size = 0;
  // v2 only.
  uint32_t uncompressed_size = 0;
  uint32_t virtual_entry = 0;
  uint32_t imem_sec_base = 0;
  uint32_t imem_sec_size = 0;
  uint32_t dmem_offset = 0;  // of DMEM in the ucode image
  uint32_t alt_imem_load_size = 0;
  uint32_t alt_dmem_load_size = 0;
  // v3 only.
  uint32_t pkc_data_offset = 0;  // where the chosen signature is patched, in DMEM
  uint16_t engine_id_mask = 0;
  uint8_t ucode_id = 0;
  uint8_t signature_count = 0;
  uint16_t signature_versions = 0;  // one bit per fuse version a signature exists for
  // Derived.
  uint64_t signatures_offset = 0;  // in the file (v3: descriptor + 44)
  uint64_t ucode_offset = 0;       // in the file: descriptor + size
  uint32_t ucode_size = 0;         // IMEM + DMEM load sizes (what nouveau copies)
  uint32_t dmem_image_offset = 0;  // DMEM's offset in the ucode image (v3: imem_load_size; v2: dmem_offset)
};

// ---- The application interface table and DMEMMAPPER ([nouveau] fwsec.c nvfw_falcon_appif_*; [tinygrad]
// FALCON_APPLICATION_INTERFACE_HEADER_V1, _ENTRY_V1, _DMEM_MAPPER_V3) ----
inline constexpr uint8_t kAppifVersion = 1;               // fwsec.c "WARN_ON(hdr->v1.ver != 1)"
inline constexpr uint8_t kAppifHeaderSize = 4;            // ver, hdr, len, cnt
inline constexpr uint8_t kAppifEntrySize = 8;             // id, dmem_base
inline constexpr uint32_t kAppifIdDmemMapper = 0x4;       // NVFW_FALCON_APPIF_ID_DMEMMAPPER
inline constexpr uint32_t kDmemMapperSize = 64;           // nv.py FALCON_APPLICATION_INTERFACE_DMEM_MAPPER_V3 SIZE
inline constexpr uint32_t kDmemMapperInitCmdOffset = 44;  // the v3 struct's init_cmd
inline constexpr uint32_t kDmemMapperCmdFrts = 0x15;      // NVFW_FALCON_APPIF_DMEMMAPPER_CMD_FRTS
inline constexpr uint32_t kDmemMapperCmdSb = 0x19;        // NVFW_FALCON_APPIF_DMEMMAPPER_CMD_SB
// The FRTS command the driver writes at cmd_in_buffer_offset (fwsec.c nvfw_fwsec_frts_cmd; nv.py FWSECLIC_FRTS_CMD
// SIZE 44): read_vbios {u32 ver, u32 hdr, u64 addr, u32 size, u32 flags} = 24 bytes, then frts_region
// {u32 ver, hdr, addr, size, type} = 20 bytes.
inline constexpr uint32_t kFrtsReadVbiosSize = 24;
inline constexpr uint32_t kFrtsRegionSize = 20;
inline constexpr uint32_t kFrtsCommandSize = kFrtsReadVbiosSize + kFrtsRegionSize;
// The values nouveau (fwsec.c nvkm_gsp_fwsec_patch), tinygrad (prep_ucode) and NVIDIA's kernel_gsp_frts_tu102.c
// (FWSECLIC_READ_VBIOS_STRUCT_FLAGS, FWSECLIC_FRTS_REGION_MEDIA_FB) put in the command: both parts have version 1 and
// their own size in `hdr`; READ_VBIOS flags 2 with address and size 0; the FRTS region's offset and size in 4 KiB
// units (the size is 1 MiB: NV_PGC6_AON_FRTS_INPUT_WPR_SIZE_SECURE_SCRATCH_GROUP_03_0_WPR_SIZE_1MB_IN_4K) and media
// type FB.
inline constexpr uint32_t kFwseclicDescVersion = 1;
inline constexpr uint32_t kFwseclicReadVbiosFlags = 2;
inline constexpr uint32_t kFwseclicFrtsMediaFb = 2;
inline constexpr uint32_t kFrtsRegionUnitShift = 12;  // nouveau: frts.addr >> 12, frts.size >> 12
// Where FWSEC reports how a command went: NV_PBUS_VBIOS_SCRATCH(i) (= NV_PBUS_SW_SCRATCH(i), 0x1400 + i * 4: tinygrad's
// autogen nv_regs/dev_bus.py). FRTS: index 0xe, error code in bits 31:16, 0 = none (nouveau fwsec.c
// nvkm_gsp_fwsec_frts; NVIDIA kernel_gsp_frts_tu102.c NV_VBIOS_FWSECLIC_SCRATCH_INDEX_0E, _FRTS_ERR_CODE 31:16,
// _FRTS_ERR_CODE_NONE). SB: index 0x15, error code in bits 15:0 (nouveau fwsec.c nvkm_gsp_fwsec_sb).
inline constexpr uint32_t kFwseclicFrtsScratchIndex = 0xe;
inline constexpr uint32_t kFwseclicFrtsErrorShift = 16;
inline constexpr uint32_t kFwseclicSbScratchIndex = 0x15;
inline constexpr uint32_t kFwseclicErrorMask = 0xffff;  // both error fields are 16 bits wide

struct AppifEntry {
  uint32_t id = 0;
  uint32_t dmem_offset = 0;
};

struct Appif {
  uint64_t offset = 0;       // in the file
  uint32_t dmem_offset = 0;  // in DMEM (the descriptor's InterfaceOffset)
  uint8_t version = 0;
  uint8_t header_size = 0;
  uint8_t entry_size = 0;
  uint8_t entry_count = 0;
  std::vector<AppifEntry> entries;
};

struct DmemMapper {          // FALCON_APPLICATION_INTERFACE_DMEM_MAPPER_V3
  uint64_t offset = 0;       // in the file
  uint32_t dmem_offset = 0;  // in DMEM (the APPIF entry's dmem_base)
  uint32_t signature = 0;
  uint16_t version = 0;
  uint16_t size = 0;
  uint32_t cmd_in_buffer_offset = 0;  // in DMEM
  uint32_t cmd_in_buffer_size = 0;
  uint32_t cmd_out_buffer_offset = 0;
  uint32_t cmd_out_buffer_size = 0;
  uint32_t nvf_img_data_buffer_offset = 0;
  uint32_t nvf_img_data_buffer_size = 0;
  uint32_t printf_buffer_hdr = 0;
  uint32_t ucode_build_time_stamp = 0;
  uint32_t ucode_signature = 0;
  uint32_t init_cmd = 0;
  uint32_t ucode_feature = 0;
  uint32_t ucode_cmd_mask0 = 0;
  uint32_t ucode_cmd_mask1 = 0;
  uint32_t multi_tgt_tbl = 0;
  // Offsets in the file of the fields the driver patches.
  uint64_t init_cmd_file_offset = 0;
  uint64_t cmd_in_buffer_file_offset = 0;
};

struct Fwsec {
  size_t entry_index = 0;  // in UcodeTable::entries
  FwsecDescriptor desc;
  Appif appif;
  DmemMapper dmem_mapper;
};

struct Vbios {
  uint64_t rom_offset = 0;  // where the first image starts in the file ([BIT]: data may precede the ROM)
  std::vector<RomImage> images;
  // nouveau's pointer adjustment (base.c nvbios_addr): a pointer at or past image0_size is rebased into the first
  // 0xe0 image: pointer - image0_size + extension_offset. [BIT] says the same with the UEFI image's length.
  uint32_t image0_size = 0;
  std::optional<uint64_t> extension_offset;  // of the first code type 0xe0 image, in the file
  BitHeader bit;
  std::vector<BitToken> tokens;
  std::optional<UcodeTable> ucode_table;  // absent when there is no usable 'p' token
  std::optional<Fwsec> fwsec;             // absent when the ucode table has no FWSEC_PROD entry
  std::vector<std::string> notes;         // accepted oddities worth a look

  // A VBIOS pointer (relative to the ROM's start) as an offset in the file, after nouveau's adjustment.
  uint64_t Resolve(uint64_t pointer) const;
  const BitToken* FindToken(uint8_t id) const;
};

// Walks the PCI expansion ROM image chain alone (works on any option ROM). The ROM starts at offset 0, or else at
// the first 512-byte boundary holding 0x55AA whose PCIR pointer leads to a "PCIR" structure ([BIT]).
absl::StatusOr<std::vector<RomImage>> ParseRomImages(absl::string_view file, absl::string_view data,
                                                     uint64_t* rom_offset = nullptr);

// Parses an NVIDIA VBIOS image (a ROM dump, or what BAR0's PROM window holds). `file` names it in messages.
// Requires the image chain and a BIT header; the falcon ucode table and FWSEC are parsed when present and must then
// be well formed.
absl::StatusOr<Vbios> ParseVbios(absl::string_view file, absl::string_view data);

// True when `data` starts like a PCI expansion ROM (a ROM signature and a valid PCI data structure at its pointer):
// `fw info` uses it to tell a VBIOS from an amdgpu container.
bool LooksLikeRom(absl::string_view data);

// The signature FWSEC must be patched with, as nouveau's ga102_gsp_fwsec_signature picks it: the fuse register
// (0x8241c0 + (ucode_id - 1) * 4 for engine mask bit 0x400) gives version bit BIT(fls(value)); that bit must be set in
// SignatureVersions, and the index is the number of set bits below it. Error when no signature fits the fuse.
absl::StatusOr<uint32_t> FwsecSignatureIndex(uint16_t signature_versions, uint32_t fuse_register);

}  // namespace firmware::nv

#endif  // BAREGPU_FIRMWARE_NV_VBIOS_H_
