#include "firmware/nv/riscv_desc.h"

#include <algorithm>
#include <array>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/status_macros.h"

namespace firmware::nv {
namespace {

// RM_RISCV_UCODE_DESC's fields in rmRiscvUcode.h's order, as messages name them.
constexpr std::array<const char*, kRiscvDescWords> kFieldNames = {
    "version",           "bootloaderOffset", "bootloaderSize",    "bootloaderParamOffset", "bootloaderParamSize",
    "riscvElfOffset",    "riscvElfSize",     "appVersion",        "manifestOffset",        "manifestSize",
    "monitorDataOffset", "monitorDataSize",  "monitorCodeOffset", "monitorCodeSize",       "bIsMonitorEnabled",
    "swbromCodeOffset",  "swbromCodeSize",   "swbromDataOffset",  "swbromDataSize",        "fbReservedSize",
    "bSignedAsCode"};

}  // namespace

absl::StatusOr<Bootloader> ParseBootloader(absl::string_view file, absl::string_view data) {
  const ByteReader r(file, data);
  Bootloader b;
  BAREGPU_ASSIGN_OR_RETURN(b.bin, ParseBinFile(r));
  b.notes = b.bin.notes;
  const BinHeader& h = b.bin.header;
  // The descriptor runs from header_offset to the payload when the payload follows it (as in every real file),
  // else to the end of the file; the structure's version decides nothing here, the space does.
  const uint64_t end = h.data_offset > h.header_offset ? h.data_offset : r.size();
  const uint64_t space = end - h.header_offset;
  b.desc_words = static_cast<uint32_t>(std::min<uint64_t>(space / 4, kRiscvDescWords));
  if (b.desc_words < kRiscvDescMinWords) {
    return r.Malformed(absl::StrFormat(
        "RM_RISCV_UCODE_DESC at nvfw_bin_hdr.header_offset 0x%x has room for %d bytes before 0x%x (the payload or "
        "the end of the file); it needs at least %d (version, offsets and sizes up to swbromDataSize)",
        h.header_offset, space, end, kRiscvDescMinWords * 4));
  }
  std::array<uint32_t, kRiscvDescWords> w{};
  for (uint32_t i = 0; i < b.desc_words; ++i) {
    BAREGPU_ASSIGN_OR_RETURN(
        w[i], r.U32(h.header_offset + uint64_t{i} * 4, absl::StrCat("RM_RISCV_UCODE_DESC.", kFieldNames[i])));
  }
  RiscvUcodeDesc& d = b.desc;
  d.version = w[0];
  d.bootloader_offset = w[1];
  d.bootloader_size = w[2];
  d.bootloader_param_offset = w[3];
  d.bootloader_param_size = w[4];
  d.riscv_elf_offset = w[5];
  d.riscv_elf_size = w[6];
  d.app_version = w[7];
  d.manifest_offset = w[8];
  d.manifest_size = w[9];
  d.monitor_data_offset = w[10];
  d.monitor_data_size = w[11];
  d.monitor_code_offset = w[12];
  d.monitor_code_size = w[13];
  d.is_monitor_enabled = w[14];
  d.swbrom_code_offset = w[15];
  d.swbrom_code_size = w[16];
  d.swbrom_data_offset = w[17];
  d.swbrom_data_size = w[18];
  if (b.desc_words > 19) d.fb_reserved_size = w[19];
  if (b.desc_words > 20) d.signed_as_code = w[20];
  if (b.desc_words < kRiscvDescWords) {
    b.notes.push_back(absl::StrFormat(
        "RM_RISCV_UCODE_DESC version %d holds %d u32s (up to %s); 535.113.01's structure has %d (%s absent)", d.version,
        b.desc_words, kFieldNames[b.desc_words - 1], kRiscvDescWords,
        b.desc_words == 19 ? "fbReservedSize, bSignedAsCode" : "bSignedAsCode"));
  }
  // Every region the descriptor names lies in the payload; nouveau hands the monitor's and the manifest's offsets to
  // GSP-RM, which would read past the image.
  struct Region {
    const char* name;
    uint32_t offset, size;
  };
  for (const Region& region : {Region{"bootloader", d.bootloader_offset, d.bootloader_size},
                               Region{"bootloaderParam", d.bootloader_param_offset, d.bootloader_param_size},
                               Region{"riscvElf", d.riscv_elf_offset, d.riscv_elf_size},
                               Region{"manifest", d.manifest_offset, d.manifest_size},
                               Region{"monitorData", d.monitor_data_offset, d.monitor_data_size},
                               Region{"monitorCode", d.monitor_code_offset, d.monitor_code_size},
                               Region{"swbromCode", d.swbrom_code_offset, d.swbrom_code_size},
                               Region{"swbromData", d.swbrom_data_offset, d.swbrom_data_size}}) {
    if (region.size == 0) continue;  // absent (offset 0, size 0 in the real files)
    if (region.offset > h.data_size || region.size > h.data_size - region.offset) {
      return r.Malformed(absl::StrFormat(
          "RM_RISCV_UCODE_DESC's %s region (%sOffset 0x%x, %sSize 0x%x) ends past the payload (nvfw_bin_hdr.data_size "
          "0x%x); the file is corrupt",
          region.name, region.name, region.offset, region.name, region.size, h.data_size));
    }
  }
  return b;
}

}  // namespace firmware::nv
