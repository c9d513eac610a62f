// SDMA containers: v1.0/v1.1 (one image per engine, with a jump table), v2.0 (gfx11 SDMA 6: context and control
// thread images), v3.0 (RS64 SDMA). Layouts: Linux 6.12 amdgpu_ucode.h; ranges: amdgpu_ucode.c
// (amdgpu_ucode_init_single_fw) and amdgpu_sdma.c (amdgpu_sdma_init_microcode).
#include "firmware/layout.h"

namespace firmware::layout {

void AddSdmaLayouts(std::vector<Layout>& layouts) {
  using namespace gfx_fw_type;
  const std::vector<std::string> v10 = {"ucode_feature_version", "ucode_change_version", "jt_offset", "jt_size"};
  const std::vector<Region> v10_regions = {
      Region{"ucode",
             Base::kUcodeArray,
             "",
             Unit::kBytes,
             "header.ucode_size_bytes",
             Unit::kBytes,
             LoadPath::kIpFirmware,
             {kSdmaInstanceType},
             "",
             ""},
      Region{
          "jt", Base::kUcodeArray, "jt_offset", Unit::kDwords, "jt_size", Unit::kDwords, LoadPath::kDriver, {}, "", ""},
  };
  layouts.push_back({Family::kSdma, {}, 1, 0, "sdma_firmware_header_v1_0", v10, v10_regions});
  layouts.push_back(
      {Family::kSdma, {}, 1, 1, "sdma_firmware_header_v1_1", Concat({v10, {"digest_size"}}), v10_regions});
  layouts.push_back({Family::kSdma,
                     {},
                     2,
                     0,
                     "sdma_firmware_header_v2_0",
                     {"ucode_feature_version", "ctx_ucode_size_bytes", "ctx_jt_offset", "ctx_jt_size",
                      "ctl_ucode_offset", "ctl_ucode_size_bytes", "ctl_jt_offset", "ctl_jt_size"},
                     {Region{"ctx_ucode",
                             Base::kUcodeArray,
                             "",
                             Unit::kBytes,
                             "ctx_ucode_size_bytes",
                             Unit::kBytes,
                             LoadPath::kIpFirmware,
                             {kSdmaUcodeTh0},
                             "",
                             ""},
                      Region{"ctl_ucode",
                             Base::kFile,
                             "ctl_ucode_offset",
                             Unit::kBytes,
                             "ctl_ucode_size_bytes",
                             Unit::kBytes,
                             LoadPath::kIpFirmware,
                             {kSdmaUcodeTh1},
                             "",
                             ""}}});
  layouts.push_back({Family::kSdma,
                     {},
                     3,
                     0,
                     "sdma_firmware_header_v3_0",
                     {"ucode_feature_version", "ucode_offset_bytes", "ucode_size_bytes"},
                     {Region{"ucode",
                             Base::kUcodeArray,
                             "",
                             Unit::kBytes,
                             "ucode_size_bytes",
                             Unit::kBytes,
                             LoadPath::kIpFirmware,
                             {kSdmaUcodeTh0},
                             "",
                             ""}}});
}

}  // namespace firmware::layout
