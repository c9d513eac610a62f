// IMU v1.0 (gfx11), MES v1.0, MC v1.0 and gpu_info v1.0 containers. Layouts: Linux 6.12 amdgpu_ucode.h; ranges:
// amdgpu_ucode.c (amdgpu_ucode_init_single_fw: IMU data follows the IRAM image), amdgpu_mes.c
// (amdgpu_mes_init_microcode: the _mes1 file is the KIQ pipe), amdgpu_psp.c (psp_get_fw_type).
#include "absl/strings/str_format.h"
#include "base/status_macros.h"
#include "firmware/layout.h"

namespace firmware::layout {
namespace {

// gpu_info_firmware_header_v1_0 carries two uint16_t after the common header.
absl::Status GpuInfoVersion(State& s) {
  BAREGPU_ASSIGN_OR_RETURN(uint16_t major, s.reader.U16(kCommonHeaderSize, "version_major"));
  BAREGPU_ASSIGN_OR_RETURN(uint16_t minor, s.reader.U16(kCommonHeaderSize + 2, "version_minor"));
  s.out.fields.push_back({"version_major", major});
  s.out.fields.push_back({"version_minor", minor});
  return absl::OkStatus();
}

}  // namespace

void AddMiscLayouts(std::vector<Layout>& layouts) {
  using namespace gfx_fw_type;
  layouts.push_back({Family::kImu,
                     {},
                     1,
                     0,
                     "imu_firmware_header_v1_0",
                     {"imu_iram_ucode_size_bytes", "imu_iram_ucode_offset_bytes", "imu_dram_ucode_size_bytes",
                      "imu_dram_ucode_offset_bytes"},
                     {Region{"imu_iram",
                             Base::kUcodeArray,
                             "",
                             Unit::kBytes,
                             "imu_iram_ucode_size_bytes",
                             Unit::kBytes,
                             LoadPath::kIpFirmware,
                             {kImuI},
                             "",
                             ""},
                      Region{"imu_dram",
                             Base::kUcodeArray,
                             "imu_iram_ucode_size_bytes",
                             Unit::kBytes,
                             "imu_dram_ucode_size_bytes",
                             Unit::kBytes,
                             LoadPath::kIpFirmware,
                             {kImuD},
                             "",
                             ""}}});

  const std::vector<std::string> mes_fields = {
      "mes_ucode_version",         "mes_ucode_size_bytes",        "mes_ucode_offset_bytes", "mes_ucode_data_version",
      "mes_ucode_data_size_bytes", "mes_ucode_data_offset_bytes", "mes_uc_start_addr_lo",   "mes_uc_start_addr_hi",
      "mes_data_start_addr_lo",    "mes_data_start_addr_hi"};
  for (auto [kind, code, data] :
       {std::tuple{FileKind::kMes, kCpMes, kMesStack}, std::tuple{FileKind::kMesKiq, kCpMesKiq, kMesKiqStack}}) {
    layouts.push_back({Family::kMes,
                       {kind},
                       1,
                       0,
                       "mes_firmware_header_v1_0",
                       mes_fields,
                       {Region{"ucode",
                               Base::kFile,
                               "mes_ucode_offset_bytes",
                               Unit::kBytes,
                               "mes_ucode_size_bytes",
                               Unit::kBytes,
                               LoadPath::kIpFirmware,
                               {code},
                               "mes_ucode_version",
                               ""},
                        Region{"data",
                               Base::kFile,
                               "mes_ucode_data_offset_bytes",
                               Unit::kBytes,
                               "mes_ucode_data_size_bytes",
                               Unit::kBytes,
                               LoadPath::kIpFirmware,
                               {data},
                               "mes_ucode_data_version",
                               ""}}});
  }

  // MC firmware is written by the driver itself (gmc_v*.c), not through the PSP.
  layouts.push_back({Family::kMc,
                     {},
                     1,
                     0,
                     "mc_firmware_header_v1_0",
                     {"io_debug_size_bytes", "io_debug_array_offset_bytes"},
                     {Region{"ucode",
                             Base::kUcodeArray,
                             "",
                             Unit::kBytes,
                             "header.ucode_size_bytes",
                             Unit::kBytes,
                             LoadPath::kDriver,
                             {},
                             "",
                             ""},
                      Region{"io_debug",
                             Base::kFile,
                             "io_debug_array_offset_bytes",
                             Unit::kBytes,
                             "io_debug_size_bytes",
                             Unit::kBytes,
                             LoadPath::kDriver,
                             {},
                             "",
                             ""}}});
  layouts.push_back({Family::kGpuInfo,
                     {},
                     1,
                     0,
                     "gpu_info_firmware_header_v1_0",
                     {},
                     {Region{"gpu_info",
                             Base::kUcodeArray,
                             "",
                             Unit::kBytes,
                             "header.ucode_size_bytes",
                             Unit::kBytes,
                             LoadPath::kDriver,
                             {},
                             "",
                             ""}},
                     GpuInfoVersion,
                     4});
}

}  // namespace firmware::layout
