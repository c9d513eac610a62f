// What a firmware file is for. The amdgpu container headers do not say which engine a file belongs to; the
// driver knows it from the name it asked for, and so does baregpu (names from amdgpu_ucode.c, gfx_v*.c,
// psp_v*.c, sdma_v*.c, smu_v*.c, imu_v11_0.c, mes_v11_0.c and amdgpu_mes.c in Linux 6.12).
#ifndef BAREGPU_FIRMWARE_FILE_KIND_H_
#define BAREGPU_FIRMWARE_FILE_KIND_H_

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace firmware {

enum class FileKind {
  kSos,      // PSP secure OS package (*_sos.bin)
  kTa,       // PSP trusted applications (*_ta.bin)
  kToc,      // PSP table of contents (*_toc.bin)
  kAsd,      // PSP application security driver (*_asd.bin)
  kCap,      // PSP SR-IOV capability firmware (*_cap.bin)
  kPfp,      // CP prefetch parser
  kMe,       // CP micro engine
  kCe,       // CP constant engine
  kMec,      // CP compute micro engine
  kMec2,     // second compute micro engine
  kRlc,      // run list controller
  kSdma,     // system DMA
  kSmc,      // SMU (MP1) firmware (*_smc.bin, smu_*.bin)
  kImu,      // integrated management unit (gfx11)
  kMes,      // micro engine scheduler, scheduler pipe (*_mes.bin, *_mes_2.bin)
  kMesKiq,   // micro engine scheduler, KIQ pipe (*_mes1.bin)
  kMc,       // memory controller
  kGpuInfo,  // gpu_info table
  kUvd,      // unified video decoder (pre-VCN parts)
  kVce,      // video compression engine (pre-VCN parts)
  kVcn,      // video core next (*_vcn.bin, vcn_4_0_0.bin)
  kIsp,      // image signal processor (isp_4_1_1.bin)
  kDmcu,     // display micro-controller unit
  kDmcub,    // display micro-controller unit B (*_dmcub.bin)
  kVpe,      // video processing engine (vpe_6_1_0.bin)
  kUmschMm,  // multimedia user-mode scheduler (umsch_mm_4_0_0.bin)
};

// The container layout family a kind is stored in (amdgpu_ucode.h struct families).
// kUcode: the common header alone, its ucode array the one image (UVD, VCE, VCN, ISP).
enum class Family {
  kPsp,
  kTa,
  kGfx,
  kRlc,
  kSdma,
  kSmc,
  kImu,
  kMes,
  kMc,
  kGpuInfo,
  kUcode,
  kDmcu,
  kDmcub,
  kVpe,
  kUmsch
};

struct FileRole {
  FileKind kind;
  int instance = 0;  // SDMA engine number for navi10_sdma1.bin style names
};

absl::string_view FileKindName(FileKind kind);
absl::string_view FamilyName(Family family);
Family FamilyOf(FileKind kind);

// The role of "amdgpu/gc_11_0_0_mes_2.bin", "navi10_sdma1.bin.zst", ... from the file name alone.
absl::StatusOr<FileRole> RoleFromFileName(absl::string_view path);
// Parses a --kind value: a FileKindName ("rlc", "mes1" is written "mes_kiq", "sdma3" gives instance 3).
absl::StatusOr<FileRole> RoleFromKindName(absl::string_view name);

}  // namespace firmware

#endif  // BAREGPU_FIRMWARE_FILE_KIND_H_
