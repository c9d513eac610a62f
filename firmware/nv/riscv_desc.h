// GSP-RM's RISC-V bootloader (nvidia/CHIP/gsp/bootloader-VERSION.bin): an nvfw_bin_hdr container whose
// header_offset points at an RM_RISCV_UCODE_DESC (NVIDIA open-gpu-kernel-modules 535.113.01,
// src/nvidia/arch/nvalloc/common/inc/rmRiscvUcode.h) and whose payload is the image the descriptor's offsets are
// relative to. nouveau copies the payload and takes monitorCodeOffset, monitorDataOffset, manifestOffset and
// appVersion (Linux 6.12 nvkm/subdev/gsp/r535.c, r535_gsp_rm_boot_ctor).
#ifndef BAREGPU_FIRMWARE_NV_RISCV_DESC_H_
#define BAREGPU_FIRMWARE_NV_RISCV_DESC_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "firmware/nv/bin_header.h"

namespace firmware::nv {

// rmRiscvUcode.h: RM_RISCV_UCODE_DESC, in its order. The structure grew with its version: the version-4 files
// (TU10x, GA100) hold 19 u32s, up to swbromDataSize; version 5 (GA10x, AD10x) adds fbReservedSize and
// bSignedAsCode. Offsets are from the start of the payload (nvfw_bin_hdr.data_offset).
struct RiscvUcodeDesc {
  uint32_t version = 0;
  uint32_t bootloader_offset = 0;
  uint32_t bootloader_size = 0;
  uint32_t bootloader_param_offset = 0;
  uint32_t bootloader_param_size = 0;
  uint32_t riscv_elf_offset = 0;
  uint32_t riscv_elf_size = 0;
  uint32_t app_version = 0;  // "Changelist number associated with the image"; 0 in the 535.113.01 files
  uint32_t manifest_offset = 0;
  uint32_t manifest_size = 0;
  uint32_t monitor_data_offset = 0;
  uint32_t monitor_data_size = 0;
  uint32_t monitor_code_offset = 0;
  uint32_t monitor_code_size = 0;
  uint32_t is_monitor_enabled = 0;  // bIsMonitorEnabled
  uint32_t swbrom_code_offset = 0;
  uint32_t swbrom_code_size = 0;
  uint32_t swbrom_data_offset = 0;
  uint32_t swbrom_data_size = 0;
  std::optional<uint32_t> fb_reserved_size;  // absent in a 19-word descriptor
  std::optional<uint32_t> signed_as_code;    // bSignedAsCode; absent in a 19-word descriptor
};
// u32s up to and including swbromDataSize, and the whole 535.113.01 structure.
inline constexpr uint32_t kRiscvDescMinWords = 19;
inline constexpr uint32_t kRiscvDescWords = 21;

struct Bootloader {
  BinFile bin;
  RiscvUcodeDesc desc;
  uint32_t desc_words = 0;  // how many u32s of the descriptor the file holds
  std::vector<std::string> notes;
};

absl::StatusOr<Bootloader> ParseBootloader(absl::string_view file, absl::string_view data);

}  // namespace firmware::nv

#endif  // BAREGPU_FIRMWARE_NV_RISCV_DESC_H_
