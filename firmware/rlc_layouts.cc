// RLC containers: v1.0 and v2.0-v2.4, each minor version extending the previous one (save/restore lists, then
// IRAM/DRAM, then RLC-P/RLC-V, then tap delays). Layouts: Linux 6.12 amdgpu_ucode.h; offsets count from the
// start of the file (amdgpu_rlc.c, amdgpu_gfx_rlc_init_microcode_v2_*); PSP types: amdgpu_psp.c psp_get_fw_type.
#include "firmware/layout.h"

namespace firmware::layout {
namespace {

Region FileRegion(const std::string& name, const std::string& prefix, LoadPath load, std::vector<uint32_t> types,
                  const std::string& version = "") {
  return Region{name,         Base::kFile, prefix + "_offset_bytes", Unit::kBytes, prefix + "_size_bytes",
                Unit::kBytes, load,        std::move(types),         version,      ""};
}

}  // namespace

void AddRlcLayouts(std::vector<Layout>& layouts) {
  using namespace gfx_fw_type;
  const Region ucode{"ucode",      Base::kUcodeArray,     "",      Unit::kBytes, "header.ucode_size_bytes",
                     Unit::kBytes, LoadPath::kIpFirmware, {kRlcG}, "",           ""};
  layouts.push_back({Family::kRlc,
                     {},
                     1,
                     0,
                     "rlc_firmware_header_v1_0",
                     {"ucode_feature_version", "save_and_restore_offset", "clear_state_descriptor_offset",
                      "avail_scratch_ram_locations", "master_pkt_description_offset"},
                     {ucode}});

  const std::vector<std::string> v20 = {"ucode_feature_version",
                                        "jt_offset",
                                        "jt_size",
                                        "save_and_restore_offset",
                                        "clear_state_descriptor_offset",
                                        "avail_scratch_ram_locations",
                                        "reg_restore_list_size",
                                        "reg_list_format_start",
                                        "reg_list_format_separate_start",
                                        "starting_offsets_start",
                                        "reg_list_format_size_bytes",
                                        "reg_list_format_array_offset_bytes",
                                        "reg_list_size_bytes",
                                        "reg_list_array_offset_bytes",
                                        "reg_list_format_separate_size_bytes",
                                        "reg_list_format_separate_array_offset_bytes",
                                        "reg_list_separate_size_bytes",
                                        "reg_list_separate_array_offset_bytes"};
  const std::vector<Region> v20_regions = {
      ucode,
      Region{
          "jt", Base::kUcodeArray, "jt_offset", Unit::kDwords, "jt_size", Unit::kDwords, LoadPath::kDriver, {}, "", ""},
      Region{"reg_list_format",
             Base::kFile,
             "reg_list_format_array_offset_bytes",
             Unit::kBytes,
             "reg_list_format_size_bytes",
             Unit::kBytes,
             LoadPath::kDriver,
             {},
             "",
             ""},
      Region{"reg_list",
             Base::kFile,
             "reg_list_array_offset_bytes",
             Unit::kBytes,
             "reg_list_size_bytes",
             Unit::kBytes,
             LoadPath::kDriver,
             {},
             "",
             ""},
      Region{"reg_list_format_separate",
             Base::kFile,
             "reg_list_format_separate_array_offset_bytes",
             Unit::kBytes,
             "reg_list_format_separate_size_bytes",
             Unit::kBytes,
             LoadPath::kDriver,
             {},
             "",
             ""},
      Region{"reg_list_separate",
             Base::kFile,
             "reg_list_separate_array_offset_bytes",
             Unit::kBytes,
             "reg_list_separate_size_bytes",
             Unit::kBytes,
             LoadPath::kDriver,
             {},
             "",
             ""},
  };
  const std::vector<std::string> v21 = {"reg_list_format_direct_reg_list_length", "save_restore_list_cntl_ucode_ver",
                                        "save_restore_list_cntl_feature_ver",     "save_restore_list_cntl_size_bytes",
                                        "save_restore_list_cntl_offset_bytes",    "save_restore_list_gpm_ucode_ver",
                                        "save_restore_list_gpm_feature_ver",      "save_restore_list_gpm_size_bytes",
                                        "save_restore_list_gpm_offset_bytes",     "save_restore_list_srm_ucode_ver",
                                        "save_restore_list_srm_feature_ver",      "save_restore_list_srm_size_bytes",
                                        "save_restore_list_srm_offset_bytes"};
  const std::vector<Region> v21_regions = {
      FileRegion("save_restore_list_cntl", "save_restore_list_cntl", LoadPath::kIpFirmware, {kRlcRestoreListSrmCntl},
                 "save_restore_list_cntl_ucode_ver"),
      FileRegion("save_restore_list_gpm", "save_restore_list_gpm", LoadPath::kIpFirmware, {kRlcRestoreListGpmMem},
                 "save_restore_list_gpm_ucode_ver"),
      FileRegion("save_restore_list_srm", "save_restore_list_srm", LoadPath::kIpFirmware, {kRlcRestoreListSrmMem},
                 "save_restore_list_srm_ucode_ver"),
  };
  const std::vector<std::string> v22 = {"rlc_iram_ucode_size_bytes", "rlc_iram_ucode_offset_bytes",
                                        "rlc_dram_ucode_size_bytes", "rlc_dram_ucode_offset_bytes"};
  const std::vector<Region> v22_regions = {
      FileRegion("rlc_iram", "rlc_iram_ucode", LoadPath::kIpFirmware, {kRlcIram}),
      FileRegion("rlc_dram", "rlc_dram_ucode", LoadPath::kIpFirmware, {kRlcDramBoot}),
  };
  const std::vector<std::string> v23 = {
      "rlcp_ucode_version", "rlcp_ucode_feature_version", "rlcp_ucode_size_bytes", "rlcp_ucode_offset_bytes",
      "rlcv_ucode_version", "rlcv_ucode_feature_version", "rlcv_ucode_size_bytes", "rlcv_ucode_offset_bytes"};
  const std::vector<Region> v23_regions = {
      FileRegion("rlcp", "rlcp_ucode", LoadPath::kIpFirmware, {kRlcP}, "rlcp_ucode_version"),
      FileRegion("rlcv", "rlcv_ucode", LoadPath::kIpFirmware, {kRlcV}, "rlcv_ucode_version"),
  };
  std::vector<std::string> v24;
  std::vector<Region> v24_regions;
  for (auto [name, type] : {std::pair{"global", kGlobalTapDelays},
                            {"se0", kSe0TapDelays},
                            {"se1", kSe1TapDelays},
                            {"se2", kSe2TapDelays},
                            {"se3", kSe3TapDelays}}) {
    const std::string prefix = std::string(name) + "_tap_delays_ucode";
    v24.push_back(prefix + "_size_bytes");
    v24.push_back(prefix + "_offset_bytes");
    v24_regions.push_back(FileRegion(std::string(name) + "_tap_delays", prefix, LoadPath::kIpFirmware, {type}));
  }

  std::vector<std::string> fields = v20;
  std::vector<Region> regions = v20_regions;
  layouts.push_back({Family::kRlc, {}, 2, 0, "rlc_firmware_header_v2_0", fields, regions});
  const std::vector<std::pair<const std::vector<std::string>*, const std::vector<Region>*>> steps = {
      {&v21, &v21_regions}, {&v22, &v22_regions}, {&v23, &v23_regions}, {&v24, &v24_regions}};
  for (size_t i = 0; i < steps.size(); ++i) {
    fields.insert(fields.end(), steps[i].first->begin(), steps[i].first->end());
    regions.insert(regions.end(), steps[i].second->begin(), steps[i].second->end());
    layouts.push_back({Family::kRlc,
                       {},
                       2,
                       static_cast<int>(i + 1),
                       "rlc_firmware_header_v2_" + std::to_string(i + 1),
                       fields,
                       regions});
  }
}

}  // namespace firmware::layout
