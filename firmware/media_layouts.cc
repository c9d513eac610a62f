// Multimedia and display engine containers: UVD, VCE, VCN and ISP (the common header alone), DMCU v1.0, DMCUB v1.0,
// VPE v1.0 and UMSCH_MM v1.0. Layouts: Linux 6.12 amdgpu_ucode.h; ranges and PSP types: amdgpu_ucode.c
// (amdgpu_ucode_init_single_fw) and amdgpu_psp.c (psp_get_fw_type).
#include "firmware/layout.h"

namespace firmware::layout {

void AddMediaLayouts(std::vector<Layout>& layouts) {
  using namespace gfx_fw_type;
  // The whole ucode array is the image (amdgpu_ucode_init_single_fw's default case).
  auto whole_ucode = [](uint32_t type) {
    return Region{"ucode",      Base::kUcodeArray,     "",     Unit::kBytes, "header.ucode_size_bytes",
                  Unit::kBytes, LoadPath::kIpFirmware, {type}, "",           ""};
  };
  for (auto [kind, type] : {std::pair{FileKind::kUvd, kUvd}, std::pair{FileKind::kVce, kVce},
                            std::pair{FileKind::kVcn, kVcn}, std::pair{FileKind::kIsp, kIsp}}) {
    layouts.push_back({Family::kUcode, {kind}, 1, -1, "common_firmware_header", {}, {whole_ucode(type)}});
  }

  // DMCU: the ERAM image is the ucode array less the interrupt vectors, which sit intv_offset_bytes into it.
  layouts.push_back({Family::kDmcu,
                     {},
                     1,
                     0,
                     "dmcu_firmware_header_v1_0",
                     {"intv_offset_bytes", "intv_size_bytes"},
                     {Region{"eram",
                             Base::kUcodeArray,
                             "",
                             Unit::kBytes,
                             "header.ucode_size_bytes",
                             Unit::kBytes,
                             LoadPath::kIpFirmware,
                             {kDmcuEram},
                             "",
                             ""},
                      Region{"intv",
                             Base::kUcodeArray,
                             "intv_offset_bytes",
                             Unit::kBytes,
                             "intv_size_bytes",
                             Unit::kBytes,
                             LoadPath::kIpFirmware,
                             {kDmcuIsr},
                             "",
                             ""}}});

  // DMCUB: the PSP loads the instruction/constant region; bss/data is the driver's (dm's dmub_srv).
  layouts.push_back({Family::kDmcub,
                     {},
                     1,
                     0,
                     "dmcub_firmware_header_v1_0",
                     {"inst_const_bytes", "bss_data_bytes"},
                     {Region{"inst_const",
                             Base::kUcodeArray,
                             "",
                             Unit::kBytes,
                             "inst_const_bytes",
                             Unit::kBytes,
                             LoadPath::kIpFirmware,
                             {kDmub},
                             "",
                             ""}}});

  // VPE: the context thread at the ucode array, the control thread at ctl_ucode_offset from the file's start.
  layouts.push_back({Family::kVpe,
                     {},
                     1,
                     0,
                     "vpe_firmware_header_v1_0",
                     {"ucode_feature_version", "ctx_ucode_size_bytes", "ctx_jt_offset", "ctx_jt_size",
                      "ctl_ucode_offset", "ctl_ucode_size_bytes", "ctl_jt_offset", "ctl_jt_size"},
                     {Region{"ctx",
                             Base::kUcodeArray,
                             "",
                             Unit::kBytes,
                             "ctx_ucode_size_bytes",
                             Unit::kBytes,
                             LoadPath::kIpFirmware,
                             {kVpecFw1},
                             "ucode_feature_version",
                             ""},
                      Region{"ctl",
                             Base::kFile,
                             "ctl_ucode_offset",
                             Unit::kBytes,
                             "ctl_ucode_size_bytes",
                             Unit::kBytes,
                             LoadPath::kIpFirmware,
                             {kVpecFw2},
                             "ucode_feature_version",
                             ""}}});

  // UMSCH_MM: code at the ucode array, data at its own offset from the file's start.
  layouts.push_back(
      {Family::kUmsch,
       {},
       1,
       0,
       "umsch_mm_firmware_header_v1_0",
       {"umsch_mm_ucode_version", "umsch_mm_ucode_size_bytes", "umsch_mm_ucode_offset_bytes",
        "umsch_mm_ucode_data_version", "umsch_mm_ucode_data_size_bytes", "umsch_mm_ucode_data_offset_bytes",
        "umsch_mm_irq_start_addr_lo", "umsch_mm_irq_start_addr_hi", "umsch_mm_uc_start_addr_lo",
        "umsch_mm_uc_start_addr_hi", "umsch_mm_data_start_addr_lo", "umsch_mm_data_start_addr_hi"},
       {Region{"ucode",
               Base::kUcodeArray,
               "",
               Unit::kBytes,
               "umsch_mm_ucode_size_bytes",
               Unit::kBytes,
               LoadPath::kIpFirmware,
               {kUmschUcode},
               "umsch_mm_ucode_version",
               ""},
        Region{"data",
               Base::kFile,
               "umsch_mm_ucode_data_offset_bytes",
               Unit::kBytes,
               "umsch_mm_ucode_data_size_bytes",
               Unit::kBytes,
               LoadPath::kIpFirmware,
               {kUmschData},
               "umsch_mm_ucode_data_version",
               ""}}});
}

}  // namespace firmware::layout
