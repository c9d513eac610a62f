// The IP discovery binary the virtual Navi31 carries at the top of VRAM (VRAM size - 64 KiB), in the format of
// Linux's include/discovery.h (am/regs/discovery.h): binary header, IP discovery table, GC info, harvest table,
// each with its byte-sum checksum. Register bases come from the SoC15 offset table (navi31_ip_offsets.h).
#ifndef BAREGPU_AM_SIM_DISCOVERY_TABLE_H_
#define BAREGPU_AM_SIM_DISCOVERY_TABLE_H_

#include <cstdint>
#include <vector>

namespace am::sim {

// GPU configuration of an RX 7900 XTX as its gc_info v1.2 table states it (amdgpu_discovery.c's
// amdgpu_discovery_get_gfx_info reads every field into adev->gfx.config / cu_info). Each value's source is beside
// it; docs/fidelity.md ("NBIO, doorbells, discovery, PCI") has the decisions where no public source gives one.
struct Navi31GcConfig {
  // 96 CUs (a real 7900 XTX: ilya-zlobintsev/LACT#533 "Compute Units: 96") as 6 shader engines of 2 shader arrays
  // of 4 WGPs; amdgpu: CUs per SA = 2 * (gc_num_wgp0_per_sa + gc_num_wgp1_per_sa).
  uint32_t num_se = 6;
  uint32_t num_sa_per_se = 2;
  uint32_t num_wgp0_per_sa = 4;
  uint32_t num_wgp1_per_sa = 0;
  uint32_t num_rb_per_se = 4;  // decision (docs/fidelity.md): 24 render backends
  uint32_t num_gl2c = 16;      // decision (docs/fidelity.md): GL2 channels, amdgpu's max_texture_channel_caches
  // VGPRs per SIMD lane in wave32: gfx1100 has the 1.5x register file (LLVM's gfx1100 target:
  // FeatureGFX11FullVGPRs, 1536 VGPRs).
  uint32_t num_gprs = 1536;
  // Graphics-pipeline sizes no public source gives for Navi31 and no compute path reads (amdgpu copies them to
  // gfx.config and the INFO ioctl only): 0, a visible "unknown" (docs/fidelity.md).
  uint32_t num_max_gs_thds = 0;
  uint32_t gs_table_depth = 0;
  uint32_t gsprim_buff_depth = 0;
  uint32_t parameter_cache_depth = 0;
  uint32_t double_offchip_lds_buffer = 0;
  uint32_t wave_size = 32;
  // 16 wave slots per SIMD32 on gfx11 (AMD GPUOpen "Occupancy explained", as ROCm/rocm-libraries#9702 cites).
  uint32_t max_waves_per_simd = 16;
  // Decision (docs/fidelity.md): one scratch slot per wave slot of the CU, 2 SIMDs x 16 = 32; tinygrad sizes its
  // scratch from this field (its mock AM GPU, a GC 12.0.0 part with as many wave slots, states 32).
  uint32_t max_scratch_slots_per_cu = 32;
  uint32_t lds_size_kib = 64;  // LDS a workgroup can allocate (rocminfo's GROUP segment on gfx11: 64 KB)
  uint32_t num_sc_per_se = 0;  // graphics only, unknown (see above; amdgpu divides it by num_sa_per_se)
  uint32_t num_packer_per_sc = 0;
  uint32_t num_gl2a = 0;
  // v1.1: one vector L0 cache (TCP) per CU.
  uint32_t num_tcp_per_sa = 8;
  uint32_t num_sdp_interface = 0;  // unknown (see above)
  uint32_t num_tcps = 96;
  // v1.2, the caches KFD's CRAT reports from them (kfd_crat.c kfd_fill_gpu_cache_info_from_gfx_config), in KiB:
  uint32_t num_tcp_per_wpg = 2;
  uint32_t tcp_l1_size_kib = 32;  // LACT#533 on a real 7900 XTX: "L1 Cache (Per CU): 32 KiB"
  // RDNA WGP: one instruction cache (32 KiB) and one scalar data cache (16 KiB) shared by the WGP's two CUs
  // (AMD's RDNA whitepaper).
  uint32_t num_sqc_per_wgp = 1;
  uint32_t l1_instruction_cache_size_per_sqc_kib = 32;
  uint32_t l1_data_cache_size_per_sqc_kib = 16;
  uint32_t gl1c_per_sa = 1;                   // one graphics L1 per shader array (RDNA whitepaper)
  uint32_t gl1c_size_per_instance_kib = 256;  // RDNA3's 256 KiB GL1 (AMD's RDNA3 architecture presentation)
  uint32_t gl2c_per_gpu_kib = 6144;           // LACT#533: "L2 Cache: 6144 KiB"
};

std::vector<uint8_t> BuildNavi31Discovery(const Navi31GcConfig& gc = {});

}  // namespace am::sim

#endif  // BAREGPU_AM_SIM_DISCOVERY_TABLE_H_
