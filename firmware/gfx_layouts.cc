// CP (PFP, ME, CE, MEC, MEC2) containers: gfx v1.0 (F32 code with a jump table) and gfx v2.0 (RS64: code,
// per-pipe stacks and a start address). Layouts: Linux 6.12 amdgpu_ucode.h; which range is loaded as which PSP
// type: amdgpu_ucode.c (amdgpu_ucode_init_single_fw), amdgpu_gfx.c (amdgpu_gfx_cp_init_microcode) and
// amdgpu_psp.c (psp_get_fw_type).
#include "firmware/layout.h"

namespace firmware::layout {

void AddGfxLayouts(std::vector<Layout>& layouts) {
  using namespace gfx_fw_type;
  const std::vector<std::string> v1_fields = {"ucode_feature_version", "jt_offset", "jt_size"};
  const Region jt_view{
      "jt", Base::kUcodeArray, "jt_offset", Unit::kDwords, "jt_size", Unit::kDwords, LoadPath::kDriver, {}, "", ""};
  // PFP, ME and CE load the whole image, jump table included; the JT is shown as a view into it.
  for (auto [kind, type] : {std::pair{FileKind::kPfp, kCpPfp}, {FileKind::kMe, kCpMe}, {FileKind::kCe, kCpCe}}) {
    layouts.push_back({Family::kGfx,
                       {kind},
                       1,
                       0,
                       "gfx_firmware_header_v1_0",
                       v1_fields,
                       {Region{"ucode",
                               Base::kUcodeArray,
                               "",
                               Unit::kBytes,
                               "header.ucode_size_bytes",
                               Unit::kBytes,
                               LoadPath::kIpFirmware,
                               {type},
                               "",
                               ""},
                        jt_view}});
  }
  // MEC loads its code without the trailing jump table, and the jump table separately.
  for (auto [kind, jt_type] : {std::pair{FileKind::kMec, kCpMecMe1}, {FileKind::kMec2, kCpMecMe2}}) {
    layouts.push_back({Family::kGfx,
                       {kind},
                       1,
                       0,
                       "gfx_firmware_header_v1_0",
                       v1_fields,
                       {Region{"ucode",
                               Base::kUcodeArray,
                               "",
                               Unit::kBytes,
                               "header.ucode_size_bytes",
                               Unit::kBytes,
                               LoadPath::kIpFirmware,
                               {kCpMec},
                               "",
                               "jt_size"},
                        Region{"jt",
                               Base::kUcodeArray,
                               "jt_offset",
                               Unit::kDwords,
                               "jt_size",
                               Unit::kDwords,
                               LoadPath::kIpFirmware,
                               {jt_type},
                               "",
                               ""}}});
  }

  // RS64 (gfx11+): the stack image is loaded once per pipe type (amdgpu_gfx_cp_init_microcode).
  const std::vector<std::string> v2_fields = {"ucode_feature_version", "ucode_size_bytes",  "ucode_offset_bytes",
                                              "data_size_bytes",       "data_offset_bytes", "ucode_start_addr_lo",
                                              "ucode_start_addr_hi"};
  struct Rs64 {
    FileKind kind;
    uint32_t code;
    std::vector<uint32_t> stacks;
  };
  for (const Rs64& e :
       {Rs64{FileKind::kPfp, kRs64Pfp, {kRs64PfpP0Stack, kRs64PfpP1Stack}},
        Rs64{FileKind::kMe, kRs64Me, {kRs64MeP0Stack, kRs64MeP1Stack}},
        Rs64{FileKind::kMec, kRs64Mec, {kRs64MecP0Stack, kRs64MecP1Stack, kRs64MecP2Stack, kRs64MecP3Stack}}}) {
    layouts.push_back({Family::kGfx,
                       {e.kind},
                       2,
                       0,
                       "gfx_firmware_header_v2_0",
                       v2_fields,
                       {Region{"ucode",
                               Base::kUcodeArray,
                               "",
                               Unit::kBytes,
                               "ucode_size_bytes",
                               Unit::kBytes,
                               LoadPath::kIpFirmware,
                               {e.code},
                               "",
                               ""},
                        Region{"stack", Base::kFile, "data_offset_bytes", Unit::kBytes, "data_size_bytes", Unit::kBytes,
                               LoadPath::kIpFirmware, e.stacks, "", ""}}});
  }
}

}  // namespace firmware::layout
