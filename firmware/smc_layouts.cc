// SMU (MP1) containers: smc v1.0, v2.0 (one soft power-play table) and v2.1 (a table of soft power-play tables).
// Layouts: Linux 6.12 amdgpu_ucode.h; offsets count from the start of the file (smu_v13_0.c,
// smu_v13_0_set_pptable_v2_0/v2_1).
#include "absl/strings/str_format.h"
#include "base/status_macros.h"
#include "firmware/layout.h"

namespace firmware::layout {
namespace {

constexpr uint32_t kPptableEntrySize = 12;  // struct smc_soft_pptable_entry: id, ppt_offset_bytes, ppt_size_bytes
// tinygrad runtime/support/am/amdev.py loads the soft table with this id ("P2SX") as GFX_FW_TYPE_P2S_TABLE.
constexpr uint32_t kP2sTableId = 0x50325358;

absl::Status SmcV21(State& s) {
  const uint32_t count = s.Value("pptable_count");
  const uint64_t table = s.Value("pptable_entry_offset");
  BAREGPU_RETURN_IF_ERROR(s.reader.CheckRange(
      table, uint64_t{count} * kPptableEntrySize,
      absl::StrFormat("the soft pptable entries (pptable_entry_offset = 0x%x, pptable_count = %d)", table, count)));
  for (uint32_t i = 0; i < count; ++i) {
    const uint64_t at = table + uint64_t{i} * kPptableEntrySize;
    const std::string prefix = absl::StrFormat("pptable entry[%d].", i);
    BAREGPU_ASSIGN_OR_RETURN(uint32_t id, s.reader.U32(at, prefix + "id"));
    BAREGPU_ASSIGN_OR_RETURN(uint32_t offset, s.reader.U32(at + 4, prefix + "ppt_offset_bytes"));
    BAREGPU_ASSIGN_OR_RETURN(uint32_t size, s.reader.U32(at + 8, prefix + "ppt_size_bytes"));
    Component c{absl::StrFormat("pptable %d", id), offset, size, std::nullopt, LoadPath::kDriver, {}};
    if (id == kP2sTableId) {
      c.name = "p2s_table";
      c.load = LoadPath::kIpFirmware;
      c.types = {gfx_fw_type::kP2sTable};
    }
    BAREGPU_RETURN_IF_ERROR(s.Add(std::move(c), absl::StrFormat("%sppt_offset_bytes = 0x%x, %sppt_size_bytes = 0x%x",
                                                                prefix, offset, prefix, size)));
  }
  return absl::OkStatus();
}

}  // namespace

void AddSmcLayouts(std::vector<Layout>& layouts) {
  const Region ucode{"ucode",
                     Base::kUcodeArray,
                     "",
                     Unit::kBytes,
                     "header.ucode_size_bytes",
                     Unit::kBytes,
                     LoadPath::kIpFirmware,
                     {gfx_fw_type::kSmu},
                     "",
                     ""};
  layouts.push_back({Family::kSmc, {}, 1, 0, "smc_firmware_header_v1_0", {"ucode_start_addr"}, {ucode}});
  layouts.push_back({Family::kSmc,
                     {},
                     2,
                     0,
                     "smc_firmware_header_v2_0",
                     {"ucode_start_addr", "ppt_offset_bytes", "ppt_size_bytes"},
                     {ucode, Region{"pptable",
                                    Base::kFile,
                                    "ppt_offset_bytes",
                                    Unit::kBytes,
                                    "ppt_size_bytes",
                                    Unit::kBytes,
                                    LoadPath::kDriver,
                                    {},
                                    "",
                                    ""}}});
  layouts.push_back({Family::kSmc,
                     {},
                     2,
                     1,
                     "smc_firmware_header_v2_1",
                     {"ucode_start_addr", "pptable_count", "pptable_entry_offset"},
                     {ucode},
                     SmcV21});
}

}  // namespace firmware::layout
