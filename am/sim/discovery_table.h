// The IP discovery binary the virtual Navi31 carries at the top of VRAM (VRAM size - 64 KiB), in the format of
// Linux's include/discovery.h (am/regs/discovery.h): binary header, IP discovery table, GC info, harvest table,
// each with its byte-sum checksum. Register bases come from the SoC15 offset table (navi31_ip_offsets.h).
#ifndef BAREGPU_AM_SIM_DISCOVERY_TABLE_H_
#define BAREGPU_AM_SIM_DISCOVERY_TABLE_H_

#include <cstdint>
#include <vector>

namespace am::sim {

// GPU configuration of an RX 7900 XTX as its gc_info table states it: 6 shader engines of 2 shader arrays,
// 96 compute units (amdgpu: CUs per SA = 2 * (gc_num_wgp0_per_sa + gc_num_wgp1_per_sa)), wave32, 64 KiB LDS.
struct Navi31GcConfig {
  uint32_t num_se = 6;
  uint32_t num_sa_per_se = 2;
  uint32_t num_wgp0_per_sa = 4;
  uint32_t num_wgp1_per_sa = 0;
  uint32_t num_rb_per_se = 4;
  uint32_t num_gl2c = 16;
  uint32_t num_gprs = 1536;
  uint32_t wave_size = 32;
  uint32_t max_waves_per_simd = 16;
  uint32_t lds_size_kib = 64;
};

std::vector<uint8_t> BuildNavi31Discovery(const Navi31GcConfig& gc = {});

}  // namespace am::sim

#endif  // BAREGPU_AM_SIM_DISCOVERY_TABLE_H_
