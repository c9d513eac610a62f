// Firmware type numbers the PSP understands, and how a component reaches it.
//
// Values from Linux 6.12 drivers/gpu/drm/amd/amdgpu/psp_gfx_if.h (enum psp_gfx_fw_type, the LOAD_IP_FW type) and
// amdgpu_ucode.h (enum psp_fw_type for sOS bootloader components, enum ta_fw_type for trusted applications).
#ifndef BAREGPU_FIRMWARE_FW_TYPES_H_
#define BAREGPU_FIRMWARE_FW_TYPES_H_

#include <cstdint>
#include <optional>
#include <string>

#include "absl/strings/string_view.h"

namespace firmware {

// psp_gfx_if.h: enum psp_gfx_fw_type (only the values baregpu names; any uint32_t is representable).
namespace gfx_fw_type {
inline constexpr uint32_t kCpMe = 1, kCpPfp = 2, kCpCe = 3, kCpMec = 4, kCpMecMe1 = 5, kCpMecMe2 = 6, kRlcV = 7,
                          kRlcG = 8, kSdma0 = 9, kSdma1 = 10, kDmcuEram = 11, kDmcuIsr = 12, kVcn = 13, kUvd = 14,
                          kVce = 15, kIsp = 16, kSmu = 18, kRlcRestoreListGpmMem = 20, kRlcRestoreListSrmMem = 21,
                          kRlcRestoreListSrmCntl = 22, kToc = 24, kRlcP = 25, kRlcIram = 26, kGlobalTapDelays = 27,
                          kSe0TapDelays = 28, kSe1TapDelays = 29, kCpMes = 33, kMesStack = 34, kRlcDramBoot = 48,
                          kSdma2 = 52, kSdma7 = 57, kCap = 62, kSe2TapDelays = 65, kSe3TapDelays = 66, kRegList = 67,
                          kImuI = 68, kImuD = 69, kSdmaUcodeTh0 = 71, kSdmaUcodeTh1 = 72, kPptable = 73, kDmub = 51,
                          kCpMesKiq = 81, kMesKiqStack = 82, kUmschData = 83, kUmschUcode = 84, kRs64Pfp = 87,
                          kRs64Me = 88, kRs64Mec = 89, kRs64PfpP0Stack = 90, kRs64PfpP1Stack = 91, kRs64MeP0Stack = 92,
                          kRs64MeP1Stack = 93, kRs64MecP0Stack = 94, kRs64MecP1Stack = 95, kRs64MecP2Stack = 96,
                          kRs64MecP3Stack = 97, kVpecFw1 = 100, kVpecFw2 = 101, kP2sTable = 129;
}  // namespace gfx_fw_type

// amdgpu_ucode.h: enum psp_fw_type, the components of a PSP sOS package.
namespace psp_fw_type {
inline constexpr uint32_t kSos = 1, kSysDrv = 2, kKdb = 3, kToc = 4, kSpl = 5, kRl = 6, kSocDrv = 7, kIntfDrv = 8,
                          kDbgDrv = 9, kRasDrv = 10, kIpKeyMgrDrv = 11;
}  // namespace psp_fw_type

// amdgpu_ucode.h: enum ta_fw_type, the trusted applications in a TA package.
namespace ta_fw_type {
inline constexpr uint32_t kAsd = 1, kXgmi = 2, kRas = 3, kHdcp = 4, kDtm = 5, kRap = 6, kSecureDisplay = 7;
}  // namespace ta_fw_type

// How the driver hands a component to the hardware; each path has its own type numbering.
enum class LoadPath {
  kBootloader,  // sOS bootloader (PSP_BL__LOAD_*), typed by psp_fw_type
  kIpFirmware,  // GFX_CMD_ID_LOAD_IP_FW, typed by psp_gfx_fw_type
  kTrustedApp,  // GFX_CMD_ID_LOAD_TA, typed by ta_fw_type
  kToc,         // GFX_CMD_ID_LOAD_TOC (the table of contents that sizes the TMR)
  kDriver,      // read by the driver itself (register lists, power-play tables, jump-table views)
};

absl::string_view LoadPathName(LoadPath path);
// "GFX_FW_TYPE_RS64_MEC", "PSP_FW_TYPE_PSP_KDB", "TA_FW_TYPE_PSP_RAS"; "GFX_FW_TYPE 200" for unknown numbers.
std::string TypeName(LoadPath path, uint32_t type);
// Short lower-case component name for a bootloader or TA type ("kdb", "sys_drv", "ras"); nullopt when unknown.
std::optional<std::string> ShortTypeName(LoadPath path, uint32_t type);

}  // namespace firmware

#endif  // BAREGPU_FIRMWARE_FW_TYPES_H_
