#include "firmware/fw_types.h"

#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"

namespace firmware {
namespace {

struct TypeEntry {
  uint32_t value;
  const char* name;
};

// psp_gfx_if.h (Linux 6.12): enum psp_gfx_fw_type, names without the GFX_FW_TYPE_ prefix.
constexpr TypeEntry kGfxTypes[] = {
    {0, "NONE"},
    {1, "CP_ME"},
    {2, "CP_PFP"},
    {3, "CP_CE"},
    {4, "CP_MEC"},
    {5, "CP_MEC_ME1"},
    {6, "CP_MEC_ME2"},
    {7, "RLC_V"},
    {8, "RLC_G"},
    {9, "SDMA0"},
    {10, "SDMA1"},
    {11, "DMCU_ERAM"},
    {12, "DMCU_ISR"},
    {13, "VCN"},
    {14, "UVD"},
    {15, "VCE"},
    {16, "ISP"},
    {17, "ACP"},
    {18, "SMU"},
    {19, "MMSCH"},
    {20, "RLC_RESTORE_LIST_GPM_MEM"},
    {21, "RLC_RESTORE_LIST_SRM_MEM"},
    {22, "RLC_RESTORE_LIST_SRM_CNTL"},
    {23, "UVD1"},
    {24, "TOC"},
    {25, "RLC_P"},
    {26, "RLC_IRAM"},
    {27, "GLOBAL_TAP_DELAYS"},
    {28, "SE0_TAP_DELAYS"},
    {29, "SE1_TAP_DELAYS"},
    {30, "GLOBAL_SE0_SE1_SKEW_DELAYS"},
    {31, "SDMA0_JT"},
    {32, "SDMA1_JT"},
    {33, "CP_MES"},
    {34, "MES_STACK"},
    {35, "RLC_SRM_DRAM_SR"},
    {36, "RLCG_SCRATCH_SR"},
    {37, "RLCP_SCRATCH_SR"},
    {38, "RLCV_SCRATCH_SR"},
    {39, "RLX6_DRAM_SR"},
    {40, "SDMA0_PG_CONTEXT"},
    {41, "SDMA1_PG_CONTEXT"},
    {42, "GLOBAL_MUX_SELECT_RAM"},
    {43, "SE0_MUX_SELECT_RAM"},
    {44, "SE1_MUX_SELECT_RAM"},
    {45, "ACCUM_CTRL_RAM"},
    {46, "RLCP_CAM"},
    {47, "RLC_SPP_CAM_EXT"},
    {48, "RLC_DRAM_BOOT"},
    {49, "VCN0_RAM"},
    {50, "VCN1_RAM"},
    {51, "DMUB"},
    {52, "SDMA2"},
    {53, "SDMA3"},
    {54, "SDMA4"},
    {55, "SDMA5"},
    {56, "SDMA6"},
    {57, "SDMA7"},
    {58, "VCN1"},
    {62, "CAP"},
    {65, "SE2_TAP_DELAYS"},
    {66, "SE3_TAP_DELAYS"},
    {67, "REG_LIST"},
    {68, "IMU_I"},
    {69, "IMU_D"},
    {70, "LSDMA"},
    {71, "SDMA_UCODE_TH0"},
    {72, "SDMA_UCODE_TH1"},
    {73, "PPTABLE"},
    {74, "DISCRETE_USB4"},
    {75, "TA"},
    {76, "RS64_MES"},
    {77, "RS64_MES_STACK"},
    {78, "RS64_KIQ"},
    {79, "RS64_KIQ_STACK"},
    {80, "ISP_DATA"},
    {81, "CP_MES_KIQ"},
    {82, "MES_KIQ_STACK"},
    {83, "UMSCH_DATA"},
    {84, "UMSCH_UCODE"},
    {85, "UMSCH_CMD_BUFFER"},
    {86, "USB_DP_COMBO_PHY"},
    {87, "RS64_PFP"},
    {88, "RS64_ME"},
    {89, "RS64_MEC"},
    {90, "RS64_PFP_P0_STACK"},
    {91, "RS64_PFP_P1_STACK"},
    {92, "RS64_ME_P0_STACK"},
    {93, "RS64_ME_P1_STACK"},
    {94, "RS64_MEC_P0_STACK"},
    {95, "RS64_MEC_P1_STACK"},
    {96, "RS64_MEC_P2_STACK"},
    {97, "RS64_MEC_P3_STACK"},
    {100, "VPEC_FW1"},
    {101, "VPEC_FW2"},
    {102, "VPE"},
    {128, "JPEG_RAM"},
    {129, "P2S_TABLE"},
};

// amdgpu_ucode.h (Linux 6.12): enum psp_fw_type, names without the PSP_FW_TYPE_PSP_ prefix, lower case.
constexpr TypeEntry kPspTypes[] = {
    {1, "sos"},     {2, "sys_drv"},  {3, "kdb"},     {4, "toc"},      {5, "spl"},           {6, "rl"},
    {7, "soc_drv"}, {8, "intf_drv"}, {9, "dbg_drv"}, {10, "ras_drv"}, {11, "ipkeymgr_drv"},
};

// amdgpu_ucode.h (Linux 6.12): enum ta_fw_type, names without the TA_FW_TYPE_PSP_ prefix, lower case.
constexpr TypeEntry kTaTypes[] = {
    {1, "asd"}, {2, "xgmi"}, {3, "ras"}, {4, "hdcp"}, {5, "dtm"}, {6, "rap"}, {7, "securedisplay"},
};

template <size_t N>
const char* Find(const TypeEntry (&table)[N], uint32_t value) {
  for (const TypeEntry& entry : table) {
    if (entry.value == value) return entry.name;
  }
  return nullptr;
}

}  // namespace

absl::string_view LoadPathName(LoadPath path) {
  switch (path) {
    case LoadPath::kBootloader:
      return "bootloader";
    case LoadPath::kIpFirmware:
      return "LOAD_IP_FW";
    case LoadPath::kTrustedApp:
      return "LOAD_TA";
    case LoadPath::kToc:
      return "LOAD_TOC";
    case LoadPath::kDriver:
      return "driver";
  }
  return "?";
}

std::optional<std::string> ShortTypeName(LoadPath path, uint32_t type) {
  const char* name = nullptr;
  if (path == LoadPath::kBootloader || path == LoadPath::kToc) name = Find(kPspTypes, type);
  if (path == LoadPath::kTrustedApp) name = Find(kTaTypes, type);
  if (path == LoadPath::kIpFirmware) name = Find(kGfxTypes, type);
  if (name == nullptr) return std::nullopt;
  return std::string(name);
}

std::string TypeName(LoadPath path, uint32_t type) {
  switch (path) {
    case LoadPath::kBootloader:
    case LoadPath::kToc:
      if (const char* name = Find(kPspTypes, type))
        return absl::AsciiStrToUpper(absl::StrCat("PSP_FW_TYPE_PSP_", name));
      return absl::StrCat("PSP_FW_TYPE ", type);
    case LoadPath::kTrustedApp:
      if (const char* name = Find(kTaTypes, type)) return absl::AsciiStrToUpper(absl::StrCat("TA_FW_TYPE_PSP_", name));
      return absl::StrCat("TA_FW_TYPE ", type);
    case LoadPath::kIpFirmware:
      if (const char* name = Find(kGfxTypes, type)) return absl::StrCat("GFX_FW_TYPE_", name);
      return absl::StrCat("GFX_FW_TYPE ", type);
    case LoadPath::kDriver:
      break;
  }
  return absl::StrCat(type);
}

}  // namespace firmware
