// The virtual AD102's VBIOS: an image in the real format (firmware/nv/vbios.h's structures, from the BIT document,
// nouveau and tinygrad) whose contents are plainly not NVIDIA's. Real format: the PCI expansion ROM chain (ROM
// headers, PCIR, NPDE, code types, lengths, last-image flags, the PC-AT checksum), the BIT header and tokens,
// BIT_FALCON_DATA v2, the falcon ucode table, FWSEC descriptors v3 (or v2 on request) with their signature slots,
// the APPIF table and the DMEMMAPPER v3 interface with a command buffer large enough for the FRTS command.
// Virtual content: there is no x86, EFI or falcon code; the "ucode" is a generated body the virtual GPU recognises
// (VirtualFwsecHeader below) and the "signatures" are SHA-256-derived bytes the virtual GPU can recompute.
//
// ROM layout (offsets from the ROM's start; every pointer the image stores is a ROM pointer, rebased by readers
// into the extension image as nouveau's nvbios_addr does):
//   0x0000 image 0, PC-AT (code type 0x00), 0x400 bytes: ROM header, PCIR 0x40, NPDE 0x60, an ASCII line 0x100,
//          BIT header at 0x1b0 (where tinygrad looks) with tokens 'B', 'N', 'p'; BIT_BIOSDATA at 0x1e0;
//          BIT_FALCON_DATA at 0x1f0; last byte makes the image sum to 0.
//   0x0400 image 1, EFI (code type 0x03), 0x400 bytes: headers and an ASCII line (no EFI driver). Its PCIR marks
//          it last (what a PCI-only walker sees) while its NPDE says more follows (what nouveau follows).
//   0x0800 image 2, NVIDIA extension (code type 0xe0): headers, then FWSEC_PROD and FWSEC_DBG (descriptor +
//          signatures + IMEM + DMEM each), then the falcon ucode table at the image's end.
#ifndef BAREGPU_FIRMWARE_NV_VIRTUAL_VBIOS_H_
#define BAREGPU_FIRMWARE_NV_VIRTUAL_VBIOS_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace firmware::nv {

// The virtual board: RTX 4090 (PCI 10de:2684; AD102), VGA-compatible display controller (class 0x030000).
inline constexpr uint16_t kNvidiaVendorId = 0x10de;
inline constexpr uint16_t kVirtualAd102DeviceId = 0x2684;
inline constexpr uint32_t kDisplayVgaClassCode = 0x030000;

// The modelled fuse: the virtual AD102's FWSEC fuse register (nouveau ga102.c reads 0x8241c0 + (ucode_id - 1) * 4)
// reads this value, so nouveau's rule picks fuse version bit BIT(fls(1)) = bit 1, i.e. signature index 1 of the two
// (SignatureVersions 0x3): the last one, which is also the one tinygrad always takes.
inline constexpr uint32_t kVirtualAd102FwsecFuseRegister = 0x1;
inline constexpr uint16_t kVirtualFwsecSignatureVersions = 0x3;
inline constexpr uint8_t kVirtualFwsecUcodeId = 1;             // modelled; selects the first fuse register
inline constexpr uint16_t kVirtualFwsecEngineIdMask = 0x0400;  // ga102.c: the GSP's engine bit (fuse 0x8241c0)

// The virtual FWSEC body's identity header, at the start of IMEM (little-endian):
//   0  char magic[16] = "BAREGPU_VFWSEC"    32 char chip[16] ("ad102", NUL-padded)
//   16 uint32_t format = 1                   48 uint16_t vendor_id, device_id
//   20 uint32_t imem_size, 24 dmem_size      52 uint32_t reserved (0)
//   28 uint8_t application_id               56 uint8_t sha256[32]: over IMEM with this field zeroed, then DMEM
//   29 uint8_t desc_version, 30 u16 0          with the driver-patched parts (DMEMMAPPER init_cmd, the command
//                                              buffers, the PKC signature slot) zero, as built
//   88 an ASCII line saying what this is, then deterministic filler
inline constexpr char kVirtualFwsecMagic[16] = "BAREGPU_VFWSEC";
inline constexpr uint32_t kVirtualFwsecFormat = 1;
inline constexpr uint32_t kVirtualFwsecHashOffset = 56;
inline constexpr uint32_t kVirtualFwsecTextOffset = 88;

// The DMEM layout of the virtual FWSEC (offsets in DMEM; the descriptor carries them, readers must not assume them).
inline constexpr uint32_t kVirtualFwsecImemSize = 0x2000;
inline constexpr uint32_t kVirtualFwsecDmemSize = 0x1000;
inline constexpr uint32_t kVirtualFwsecInterfaceOffset = 0x100;
inline constexpr uint32_t kVirtualFwsecDmemMapperOffset = 0x200;
inline constexpr uint32_t kVirtualFwsecCmdInOffset = 0x400;
inline constexpr uint32_t kVirtualFwsecCmdInSize = 0x100;  // >= kFrtsCommandSize (44)
inline constexpr uint32_t kVirtualFwsecCmdOutOffset = 0x500;
inline constexpr uint32_t kVirtualFwsecCmdOutSize = 0x100;
inline constexpr uint32_t kVirtualFwsecPkcOffset = 0x800;

struct VirtualVbiosOptions {
  uint8_t desc_version = 3;  // 3 as on Ada boards; 2 to exercise the parser's v2 path
};

// The whole ROM, the same bytes every time.
absl::StatusOr<std::string> BuildVirtualVbios(absl::string_view chip = "ad102",
                                              const VirtualVbiosOptions& options = {});

// The 384-byte virtual "signature" for fuse version `fuse_version` (a bit number of SignatureVersions) of a virtual
// FWSEC whose identity hash is `ucode_sha256`: block 0 = SHA-256("baregpu virtual FWSEC signature, fuse version N:"
// + the hash), block k+1 = SHA-256(block k), concatenated and cut to 384 bytes. Lowest fuse version first.
std::string VirtualFwsecSignature(uint32_t fuse_version, absl::string_view ucode_sha256);

// What a virtual FWSEC, as the driver loaded and patched it, asks the falcon to do.
struct VirtualFwsecRun {
  uint8_t application_id = 0;  // FWSEC_PROD or FWSEC_DBG
  uint32_t init_cmd = 0;       // the DMEMMAPPER's init_cmd: kDmemMapperCmdFrts (0x15) or kDmemMapperCmdSb (0x19)
  std::string command;         // the DMEMMAPPER's command-in buffer, whole
};

// The check the virtual GPU makes when the falcon starts a heavy-secure image: `imem` and `dmem` are what was loaded
// (IMEMLoadSize and DMEMLoadSize bytes, DMEM patched), `pkc_data_offset` and `interface_offset` the descriptor's,
// `fuse_version` the bit the GPU's fuse selects (ga102.c: fls of the fuse register). Checks, in order: the identity
// header (magic, format, sizes, chip), the SHA-256 over IMEM and DMEM with the driver-patched parts zeroed (the
// DMEMMAPPER's init_cmd, its command buffers, the signature slot), the signature in the slot (VirtualFwsecSignature
// for `fuse_version`), then the APPIF/DMEMMAPPER (a command id this ucode accepts). FailedPrecondition names the
// first check that failed; a real FWSEC image fails at the magic.
absl::StatusOr<VirtualFwsecRun> CheckVirtualFwsec(absl::string_view chip, absl::string_view imem,
                                                  absl::string_view dmem, uint32_t pkc_data_offset,
                                                  uint32_t interface_offset, uint32_t fuse_version);

}  // namespace firmware::nv

#endif  // BAREGPU_FIRMWARE_NV_VIRTUAL_VBIOS_H_
