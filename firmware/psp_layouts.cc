// PSP containers: sOS packages (v1.0-v1.3 with legacy descriptors, v2.0/v2.1 with typed descriptors), TA
// packages (v1.0, v2.0), and the single-image TOC, ASD and CAP files. Layouts: Linux 6.12 amdgpu_ucode.h;
// where each descriptor's offset counts from: amdgpu_psp.c (psp_init_sos_microcode, parse_ta_v1_microcode,
// parse_sos_bin_descriptor, psp_init_{asd,toc,cap}_microcode).
#include "absl/strings/str_format.h"
#include "base/status_macros.h"
#include "firmware/layout.h"

namespace firmware::layout {
namespace {

// amdgpu_ucode.h: UCODE_MAX_PSP_PACKAGING, the number of descriptors the 256-byte header union could hold
// (((256 - 32 - 4) / 16) * 2 = 26); the driver refuses a count at or above it.
constexpr uint32_t kMaxPspPackaging = 26;
constexpr uint32_t kBinDescSize = 16;  // struct psp_fw_bin_desc: fw_type, fw_version, offset_bytes, size_bytes

Region Legacy(const std::string& desc, const std::string& name, LoadPath load, uint32_t type) {
  return Region{name,
                Base::kUcodeArray,
                desc + ".offset_bytes",
                Unit::kBytes,
                desc + ".size_bytes",
                Unit::kBytes,
                load,
                {type},
                desc + ".fw_version",
                ""};
}

// Typed descriptors (struct psp_fw_bin_desc) after the count; offsets count from the ucode array.
absl::Status ParseBinDescriptors(State& s, uint64_t table_offset, LoadPath load, uint32_t aux_index) {
  const uint32_t count =
      s.values.contains("psp_fw_bin_count") ? s.Value("psp_fw_bin_count") : s.Value("ta_fw_bin_count");
  const char* count_field = s.values.contains("psp_fw_bin_count") ? "psp_fw_bin_count" : "ta_fw_bin_count";
  if (count >= kMaxPspPackaging) {
    return s.reader.Malformed(absl::StrFormat(
        "%s = %d is at or above the driver's limit of %d descriptors (UCODE_MAX_PSP_PACKAGING); the file is corrupt",
        count_field, count, kMaxPspPackaging));
  }
  BAREGPU_RETURN_IF_ERROR(s.reader.CheckRange(table_offset, uint64_t{count} * kBinDescSize,
                                              absl::StrFormat("the descriptor table (%s = %d)", count_field, count)));
  for (uint32_t i = 0; i < count; ++i) {
    const uint64_t at = table_offset + uint64_t{i} * kBinDescSize;
    const std::string prefix = absl::StrFormat("descriptor[%d].", i);
    BAREGPU_ASSIGN_OR_RETURN(uint32_t type, s.reader.U32(at, prefix + "fw_type"));
    BAREGPU_ASSIGN_OR_RETURN(uint32_t version, s.reader.U32(at + 4, prefix + "fw_version"));
    BAREGPU_ASSIGN_OR_RETURN(uint32_t offset, s.reader.U32(at + 8, prefix + "offset_bytes"));
    BAREGPU_ASSIGN_OR_RETURN(uint32_t size, s.reader.U32(at + 12, prefix + "size_bytes"));
    std::string name = ShortTypeName(load, type).value_or(absl::StrFormat("type %d", type));
    if (!ShortTypeName(load, type)) {
      s.out.notes.push_back(
          absl::StrFormat("descriptor[%d] has fw_type %d, unknown to the driver (it skips it)", i, type));
    }
    if (i >= aux_index) name += " (aux)";
    // The TOC goes to the PSP through LOAD_TOC (psp_load_toc), the register list through LOAD_IP_FW as
    // GFX_FW_TYPE_REG_LIST (psp_rl_load); the rest through the bootloader.
    LoadPath path = load;
    uint32_t loaded_type = type;
    if (load == LoadPath::kBootloader && type == psp_fw_type::kToc) path = LoadPath::kToc;
    if (load == LoadPath::kBootloader && type == psp_fw_type::kRl) {
      path = LoadPath::kIpFirmware;
      loaded_type = gfx_fw_type::kRegList;
    }
    BAREGPU_RETURN_IF_ERROR(s.Add(Component{name, s.UcodeArray() + offset, size, version, path, {loaded_type}},
                                  absl::StrFormat("%soffset_bytes = 0x%x, %ssize_bytes = 0x%x, from the ucode array",
                                                  prefix, offset, prefix, size)));
  }
  return absl::OkStatus();
}

absl::Status SosV20(State& s) {
  return ParseBinDescriptors(s, kCommonHeaderSize + 4, LoadPath::kBootloader, UINT32_MAX);
}

absl::Status SosV21(State& s) {
  const uint32_t count = s.Value("psp_fw_bin_count");
  const uint32_t aux = s.Value("psp_aux_fw_bin_index");
  if (aux > count) {
    return s.reader.Malformed(
        absl::StrFormat("psp_aux_fw_bin_index = %d is beyond psp_fw_bin_count = %d; the file is corrupt", aux, count));
  }
  return ParseBinDescriptors(s, kCommonHeaderSize + 8, LoadPath::kBootloader, aux);
}

absl::Status TaV20(State& s) {
  return ParseBinDescriptors(s, kCommonHeaderSize + 4, LoadPath::kTrustedApp, UINT32_MAX);
}

}  // namespace

void AddPspLayouts(std::vector<Layout>& layouts) {
  using namespace psp_fw_type;
  const std::vector<FileKind> sos = {FileKind::kSos};
  // v1.x: the system driver is everything before the sOS image (psp_init_sos_base_fw).
  const Region sys_drv{"sys_drv",    Base::kUcodeArray,     "",        Unit::kBytes, "sos.offset_bytes",
                       Unit::kBytes, LoadPath::kBootloader, {kSysDrv}, "",           ""};
  const Region sos_image = Legacy("sos", "sos", LoadPath::kBootloader, kSos);
  // The TOC inside an sOS package goes to the PSP through LOAD_TOC, not the bootloader (psp_load_toc).
  const Region toc = Legacy("toc", "toc", LoadPath::kToc, kToc);
  const Region kdb = Legacy("kdb", "kdb", LoadPath::kBootloader, kKdb);

  layouts.push_back({Family::kPsp, sos, 1, 0, "psp_firmware_header_v1_0", LegacyDesc("sos"), {sys_drv, sos_image}});
  layouts.push_back({Family::kPsp,
                     sos,
                     1,
                     1,
                     "psp_firmware_header_v1_1",
                     Concat({LegacyDesc("sos"), LegacyDesc("toc"), LegacyDesc("kdb")}),
                     {sys_drv, sos_image, toc, kdb}});
  layouts.push_back({Family::kPsp,
                     sos,
                     1,
                     2,
                     "psp_firmware_header_v1_2",
                     Concat({LegacyDesc("sos"), LegacyDesc("res"), LegacyDesc("kdb")}),
                     {sys_drv, sos_image, kdb}});
  layouts.push_back({Family::kPsp,
                     sos,
                     1,
                     3,
                     "psp_firmware_header_v1_3",
                     Concat({LegacyDesc("sos"), LegacyDesc("toc"), LegacyDesc("kdb"), LegacyDesc("spl"),
                             LegacyDesc("rl"), LegacyDesc("sys_drv_aux"), LegacyDesc("sos_aux")}),
                     {sys_drv, sos_image, toc, kdb, Legacy("spl", "spl", LoadPath::kBootloader, kSpl),
                      Legacy("rl", "rl", LoadPath::kIpFirmware, gfx_fw_type::kRegList),  // psp_rl_load
                      Legacy("sys_drv_aux", "sys_drv (aux)", LoadPath::kBootloader, kSysDrv),
                      Legacy("sos_aux", "sos (aux)", LoadPath::kBootloader, kSos)}});
  layouts.push_back({Family::kPsp, sos, 2, 0, "psp_firmware_header_v2_0", {"psp_fw_bin_count"}, {}, SosV20});
  layouts.push_back(
      {Family::kPsp, sos, 2, 1, "psp_firmware_header_v2_1", {"psp_fw_bin_count", "psp_aux_fw_bin_index"}, {}, SosV21});

  // TOC, ASD and CAP: one image; the driver reads them through psp_firmware_header_v1_0 whatever the minor
  // version, and uses only sos.fw_version (the feature version) from its descriptor.
  auto single = [&](FileKind kind, const char* name, LoadPath load, std::vector<uint32_t> types) {
    layouts.push_back({Family::kPsp,
                       {kind},
                       1,
                       -1,
                       "psp_firmware_header_v1_0",
                       LegacyDesc("sos"),
                       {Region{name, Base::kUcodeArray, "", Unit::kBytes, "header.ucode_size_bytes", Unit::kBytes, load,
                               std::move(types), "sos.fw_version", ""}}});
  };
  single(FileKind::kToc, "toc", LoadPath::kToc, {psp_fw_type::kToc});
  single(FileKind::kAsd, "asd", LoadPath::kTrustedApp, {ta_fw_type::kAsd});
  single(FileKind::kCap, "cap", LoadPath::kIpFirmware, {gfx_fw_type::kCap});

  // TA v1.0: XGMI and HDCP start at the ucode array; RAS, DTM and secure display count from there too.
  using namespace ta_fw_type;
  auto ta = [](const std::string& desc, uint32_t type, bool at_array) {
    Region r = Legacy(desc, desc, LoadPath::kTrustedApp, type);
    if (at_array) r.offset_field.clear();
    return r;
  };
  layouts.push_back({Family::kTa,
                     {},
                     1,
                     0,
                     "ta_firmware_header_v1_0",
                     Concat({LegacyDesc("xgmi"), LegacyDesc("ras"), LegacyDesc("hdcp"), LegacyDesc("dtm"),
                             LegacyDesc("securedisplay")}),
                     {ta("xgmi", kXgmi, true), ta("ras", kRas, false), ta("hdcp", kHdcp, true), ta("dtm", kDtm, false),
                      ta("securedisplay", kSecureDisplay, false)}});
  layouts.push_back({Family::kTa, {}, 2, 0, "ta_firmware_header_v2_0", {"ta_fw_bin_count"}, {}, TaV20});
}

}  // namespace firmware::layout
