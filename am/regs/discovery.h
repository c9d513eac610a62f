// The IP discovery binary that AMD GPUs carry in VRAM (and firmware files carry for virtual devices): which IP
// blocks exist, their versions and their register segment bases, plus the GC and harvest tables.
// Layouts from Linux 6.12 drivers/gpu/drm/amd/include/discovery.h (packed, little-endian); checked against the
// kernel's own by tests/am/regs/layouts_test.cc. Constants: am/regs/discovery_constants.h, hardware ids:
// am/regs/hw_id_constants.h.
#ifndef BAREGPU_AM_REGS_DISCOVERY_H_
#define BAREGPU_AM_REGS_DISCOVERY_H_

#include <cstdint>

#include "am/regs/discovery_constants.h"

namespace am::regs::discovery {

#pragma pack(push, 1)

// discovery.h: table_info — one entry of the binary header's table list.
struct TableInfo {
  uint16_t offset;    // bytes from the start of the binary
  uint16_t checksum;  // byte sum of the table
  uint16_t size;
  uint16_t padding;
};

// discovery.h: binary_header — at the start of the binary; table_list is indexed by IP_DISCOVERY, GC, ....
struct BinaryHeader {
  uint32_t binary_signature;  // BINARY_SIGNATURE
  uint16_t version_major;
  uint16_t version_minor;
  uint16_t binary_checksum;  // byte sum of everything after this field, up to binary_size
  uint16_t binary_size;
  TableInfo table_list[TOTAL_TABLES];
};

// discovery.h: die_info
struct DieInfo {
  uint16_t die_id;
  uint16_t die_offset;  // byte offset of the die's DieHeader
};

// discovery.h: ip_discovery_header — at table_list[IP_DISCOVERY].offset.
struct IpDiscoveryHeader {
  uint32_t signature;  // DISCOVERY_TABLE_SIGNATURE
  uint16_t version;
  uint16_t size;
  uint32_t id;
  uint16_t num_dies;
  DieInfo die_info[16];
  union {
    uint16_t padding[1];                      // versions up to 3
    struct {                                  // version 4
      uint8_t base_addr_64_bit_and_reserved;  // bit 0: the IP entries carry 64-bit base addresses
      uint8_t reserved2;
    };
  };
  bool base_addr_64_bit() const { return (base_addr_64_bit_and_reserved & 1) != 0; }
};

// discovery.h: die_header — followed by num_ips IP entries.
struct DieHeader {
  uint16_t die_id;
  uint16_t num_ips;
};

// discovery.h: ip (IP entry of table versions 1 and 2), followed by num_base_address 32-bit bases.
struct Ip {
  uint16_t hw_id;  // a *_HWID of am/regs/hw_id_constants.h
  uint8_t number_instance;
  uint8_t num_base_address;
  uint8_t major;
  uint8_t minor;
  uint8_t revision;
  uint8_t harvest_and_reserved;  // harvest in bits 3:0 (little-endian bitfield order)
  uint32_t base_address[0];      // zero-length, as the kernel's flexible array
  uint8_t harvest() const { return harvest_and_reserved & 0xf; }
};

// discovery.h: ip_v3 (table version 3), followed by num_base_address 32-bit bases.
struct IpV3 {
  uint16_t hw_id;
  uint8_t instance_number;
  uint8_t num_base_address;
  uint8_t major;
  uint8_t minor;
  uint8_t revision;
  uint8_t sub_revision_and_variant;  // sub_revision in bits 3:0, variant in 7:4
  uint32_t base_address[0];          // zero-length, as the kernel's flexible array
  uint8_t sub_revision() const { return sub_revision_and_variant & 0xf; }
  uint8_t variant() const { return sub_revision_and_variant >> 4; }
};

// discovery.h: ip_v4 (table version 4): followed by num_base_address bases, 64-bit when the IP discovery
// header says base_addr_64_bit, else 32-bit.
struct IpV4 {
  uint16_t hw_id;
  uint8_t instance_number;
  uint8_t num_base_address;
  uint8_t major;
  uint8_t minor;
  uint8_t revision;
  uint8_t sub_revision_and_variant;  // sub_revision in bits 3:0, variant in 7:4
  union {                            // zero-length, as the kernel's flexible arrays: sizeof(IpV4) is the fixed part
    uint32_t base_address[0];
    uint64_t base_address_64[0];
  };
  uint8_t sub_revision() const { return sub_revision_and_variant & 0xf; }
  uint8_t variant() const { return sub_revision_and_variant >> 4; }
};

// discovery.h: gpu_info_header — at table_list[GC].offset; table_id is GC_TABLE_ID, the version picks the layout.
struct GpuInfoHeader {
  uint32_t table_id;
  uint16_t version_major;
  uint16_t version_minor;
  uint32_t size;  // header and data, in bytes
};

// discovery.h: gc_info_v1_0
struct GcInfoV1_0 {
  GpuInfoHeader header;
  uint32_t gc_num_se;
  uint32_t gc_num_wgp0_per_sa;
  uint32_t gc_num_wgp1_per_sa;
  uint32_t gc_num_rb_per_se;
  uint32_t gc_num_gl2c;
  uint32_t gc_num_gprs;
  uint32_t gc_num_max_gs_thds;
  uint32_t gc_gs_table_depth;
  uint32_t gc_gsprim_buff_depth;
  uint32_t gc_parameter_cache_depth;
  uint32_t gc_double_offchip_lds_buffer;
  uint32_t gc_wave_size;
  uint32_t gc_max_waves_per_simd;
  uint32_t gc_max_scratch_slots_per_cu;
  uint32_t gc_lds_size;
  uint32_t gc_num_sc_per_se;
  uint32_t gc_num_sa_per_se;
  uint32_t gc_num_packer_per_sc;
  uint32_t gc_num_gl2a;
};

// discovery.h: gc_info_v1_1
struct GcInfoV1_1 {
  GpuInfoHeader header;
  uint32_t gc_num_se;
  uint32_t gc_num_wgp0_per_sa;
  uint32_t gc_num_wgp1_per_sa;
  uint32_t gc_num_rb_per_se;
  uint32_t gc_num_gl2c;
  uint32_t gc_num_gprs;
  uint32_t gc_num_max_gs_thds;
  uint32_t gc_gs_table_depth;
  uint32_t gc_gsprim_buff_depth;
  uint32_t gc_parameter_cache_depth;
  uint32_t gc_double_offchip_lds_buffer;
  uint32_t gc_wave_size;
  uint32_t gc_max_waves_per_simd;
  uint32_t gc_max_scratch_slots_per_cu;
  uint32_t gc_lds_size;
  uint32_t gc_num_sc_per_se;
  uint32_t gc_num_sa_per_se;
  uint32_t gc_num_packer_per_sc;
  uint32_t gc_num_gl2a;
  uint32_t gc_num_tcp_per_sa;
  uint32_t gc_num_sdp_interface;
  uint32_t gc_num_tcps;
};

// discovery.h: gc_info_v1_2
struct GcInfoV1_2 {
  GpuInfoHeader header;
  uint32_t gc_num_se;
  uint32_t gc_num_wgp0_per_sa;
  uint32_t gc_num_wgp1_per_sa;
  uint32_t gc_num_rb_per_se;
  uint32_t gc_num_gl2c;
  uint32_t gc_num_gprs;
  uint32_t gc_num_max_gs_thds;
  uint32_t gc_gs_table_depth;
  uint32_t gc_gsprim_buff_depth;
  uint32_t gc_parameter_cache_depth;
  uint32_t gc_double_offchip_lds_buffer;
  uint32_t gc_wave_size;
  uint32_t gc_max_waves_per_simd;
  uint32_t gc_max_scratch_slots_per_cu;
  uint32_t gc_lds_size;
  uint32_t gc_num_sc_per_se;
  uint32_t gc_num_sa_per_se;
  uint32_t gc_num_packer_per_sc;
  uint32_t gc_num_gl2a;
  uint32_t gc_num_tcp_per_sa;
  uint32_t gc_num_sdp_interface;
  uint32_t gc_num_tcps;
  uint32_t gc_num_tcp_per_wpg;
  uint32_t gc_tcp_l1_size;
  uint32_t gc_num_sqc_per_wgp;
  uint32_t gc_l1_instruction_cache_size_per_sqc;
  uint32_t gc_l1_data_cache_size_per_sqc;
  uint32_t gc_gl1c_per_sa;
  uint32_t gc_gl1c_size_per_instance;
  uint32_t gc_gl2c_per_gpu;
};

// discovery.h: gc_info_v1_3
struct GcInfoV1_3 {
  GpuInfoHeader header;
  uint32_t gc_num_se;
  uint32_t gc_num_wgp0_per_sa;
  uint32_t gc_num_wgp1_per_sa;
  uint32_t gc_num_rb_per_se;
  uint32_t gc_num_gl2c;
  uint32_t gc_num_gprs;
  uint32_t gc_num_max_gs_thds;
  uint32_t gc_gs_table_depth;
  uint32_t gc_gsprim_buff_depth;
  uint32_t gc_parameter_cache_depth;
  uint32_t gc_double_offchip_lds_buffer;
  uint32_t gc_wave_size;
  uint32_t gc_max_waves_per_simd;
  uint32_t gc_max_scratch_slots_per_cu;
  uint32_t gc_lds_size;
  uint32_t gc_num_sc_per_se;
  uint32_t gc_num_sa_per_se;
  uint32_t gc_num_packer_per_sc;
  uint32_t gc_num_gl2a;
  uint32_t gc_num_tcp_per_sa;
  uint32_t gc_num_sdp_interface;
  uint32_t gc_num_tcps;
  uint32_t gc_num_tcp_per_wpg;
  uint32_t gc_tcp_l1_size;
  uint32_t gc_num_sqc_per_wgp;
  uint32_t gc_l1_instruction_cache_size_per_sqc;
  uint32_t gc_l1_data_cache_size_per_sqc;
  uint32_t gc_gl1c_per_sa;
  uint32_t gc_gl1c_size_per_instance;
  uint32_t gc_gl2c_per_gpu;
  uint32_t gc_tcp_size_per_cu;
  uint32_t gc_tcp_cache_line_size;
  uint32_t gc_instruction_cache_size_per_sqc;
  uint32_t gc_instruction_cache_line_size;
  uint32_t gc_scalar_data_cache_size_per_sqc;
  uint32_t gc_scalar_data_cache_line_size;
  uint32_t gc_tcc_size;
  uint32_t gc_tcc_cache_line_size;
};

// discovery.h: gc_info_v2_0
struct GcInfoV2_0 {
  GpuInfoHeader header;
  uint32_t gc_num_se;
  uint32_t gc_num_cu_per_sh;
  uint32_t gc_num_sh_per_se;
  uint32_t gc_num_rb_per_se;
  uint32_t gc_num_tccs;
  uint32_t gc_num_gprs;
  uint32_t gc_num_max_gs_thds;
  uint32_t gc_gs_table_depth;
  uint32_t gc_gsprim_buff_depth;
  uint32_t gc_parameter_cache_depth;
  uint32_t gc_double_offchip_lds_buffer;
  uint32_t gc_wave_size;
  uint32_t gc_max_waves_per_simd;
  uint32_t gc_max_scratch_slots_per_cu;
  uint32_t gc_lds_size;
  uint32_t gc_num_sc_per_se;
  uint32_t gc_num_packer_per_sc;
};

// discovery.h: gc_info_v2_1
struct GcInfoV2_1 {
  GpuInfoHeader header;
  uint32_t gc_num_se;
  uint32_t gc_num_cu_per_sh;
  uint32_t gc_num_sh_per_se;
  uint32_t gc_num_rb_per_se;
  uint32_t gc_num_tccs;
  uint32_t gc_num_gprs;
  uint32_t gc_num_max_gs_thds;
  uint32_t gc_gs_table_depth;
  uint32_t gc_gsprim_buff_depth;
  uint32_t gc_parameter_cache_depth;
  uint32_t gc_double_offchip_lds_buffer;
  uint32_t gc_wave_size;
  uint32_t gc_max_waves_per_simd;
  uint32_t gc_max_scratch_slots_per_cu;
  uint32_t gc_lds_size;
  uint32_t gc_num_sc_per_se;
  uint32_t gc_num_packer_per_sc;
  uint32_t gc_num_tcp_per_sh;
  uint32_t gc_tcp_size_per_cu;
  uint32_t gc_num_sdp_interface;
  uint32_t gc_num_cu_per_sqc;
  uint32_t gc_instruction_cache_size_per_sqc;
  uint32_t gc_scalar_data_cache_size_per_sqc;
  uint32_t gc_tcc_size;
};

// discovery.h: harvest_info_header — at table_list[HARVEST_INFO].offset.
struct HarvestInfoHeader {
  uint32_t signature;  // HARVEST_TABLE_SIGNATURE
  uint32_t version;
};

// discovery.h: harvest_info — an IP instance that is fused off.
struct HarvestInfo {
  uint16_t hw_id;
  uint8_t number_instance;
  uint8_t reserved;
};

// discovery.h: harvest_table
struct HarvestTable {
  HarvestInfoHeader header;
  HarvestInfo list[32];
};

#pragma pack(pop)

}  // namespace am::regs::discovery

#endif  // BAREGPU_AM_REGS_DISCOVERY_H_
