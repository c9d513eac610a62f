#include "am/sim/discovery_table.h"

#include <cstring>
#include <span>

#include "am/regs/discovery.h"
#include "am/regs/hw_id_constants.h"
#include "am/sim/navi31_ip_offsets.h"

namespace am::sim {
namespace {

namespace d = regs::discovery;

// IP blocks of a Navi31 with their versions (those Linux's amdgpu_discovery.c maps to the gfx11 dGPU blocks:
// gfx_v11_0, sdma_v6_0, mmhub_v3_0, athub_v3_0, nbio_v4_3, psp_v13_0, smu_v13_0_0, hdp_v6_0, ih_v6_0,
// umc_v8_10, vcn_v4_0, dcn32) and where their segment bases come from in the SoC15 offset table.
struct IpEntry {
  uint32_t hw_id;
  uint8_t instance;
  uint8_t major, minor, revision;
  const char* offsets_block;
  int offsets_instance;
};
constexpr IpEntry kNavi31Ips[] = {
    {d::GC_HWID, 0, 11, 0, 0, "GC", 0},
    {d::SDMA0_HWID, 0, 6, 0, 0, "SDMA0", 0},
    {d::SDMA0_HWID, 1, 6, 0, 0, "SDMA1", 0},
    {d::MMHUB_HWID, 0, 3, 0, 0, "MMHUB", 0},
    {d::ATHUB_HWID, 0, 3, 0, 0, "ATHUB", 0},
    {d::NBIF_HWID, 0, 4, 3, 0, "NBIO", 0},
    {d::MP0_HWID, 0, 13, 0, 0, "MP0", 0},
    {d::MP1_HWID, 0, 13, 0, 0, "MP1", 0},
    {d::HDP_HWID, 0, 6, 0, 0, "HDP", 0},
    {d::OSSSYS_HWID, 0, 6, 0, 0, "OSSSYS", 0},
    // Six UMC instances: gmc_v11_0_set_umc_funcs picks umc_v8_10_channel_idx_tbl (6 nodes x 2 UMCs x 2 channels =
    // the 24 16-bit channels of Navi31's 384-bit bus) unless discovery lists 4 (the _ext0 table, 256-bit parts);
    // amdgpu_discovery_reg_base_init counts node_inst_num from these entries.
    {d::UMC_HWID, 0, 8, 10, 0, "UMC", 0},
    {d::UMC_HWID, 1, 8, 10, 0, "UMC", 1},
    {d::UMC_HWID, 2, 8, 10, 0, "UMC", 2},
    {d::UMC_HWID, 3, 8, 10, 0, "UMC", 3},
    {d::UMC_HWID, 4, 8, 10, 0, "UMC", 4},
    {d::UMC_HWID, 5, 8, 10, 0, "UMC", 5},
    {d::VCN_HWID, 0, 4, 0, 0, "VCN", 0},
    {d::VCN_HWID, 1, 4, 0, 0, "VCN", 1},
    {d::DMU_HWID, 0, 3, 2, 0, "DCN", 0},
};

constexpr uint16_t kBinaryVersionMajor = 1;
constexpr uint16_t kBinaryVersionMinor = 1;
constexpr uint16_t kIpDiscoveryVersion = 4;  // ip_v4 entries; 32-bit bases (base_addr_64_bit clear)
constexpr uint16_t kGcInfoMajor = 1;
constexpr uint16_t kGcInfoMinor = 2;
constexpr uint32_t kHarvestTableVersion = 1;

const IpOffsets* FindOffsets(const char* block, int instance) {
  for (const IpOffsets& offsets : kNavi31IpOffsets) {
    if (std::strcmp(offsets.block, block) == 0 && offsets.instance == instance) return &offsets;
  }
  return nullptr;
}

uint16_t ByteSum(std::span<const uint8_t> bytes) {
  uint16_t sum = 0;
  for (uint8_t b : bytes) sum = static_cast<uint16_t>(sum + b);
  return sum;
}

template <typename T>
size_t Append(std::vector<uint8_t>& out, const T& value) {
  const size_t at = out.size();
  out.resize(at + sizeof(T));
  std::memcpy(out.data() + at, &value, sizeof(T));
  return at;
}

void AlignTo(std::vector<uint8_t>& out, size_t alignment) {
  out.resize((out.size() + alignment - 1) / alignment * alignment);
}

}  // namespace

std::vector<uint8_t> BuildNavi31Discovery(const Navi31GcConfig& gc) {
  std::vector<uint8_t> out;
  Append(out, d::BinaryHeader{});
  AlignTo(out, 8);

  // IP discovery table: header, one die, its IP entries with their bases.
  const size_t ip_table = Append(out, d::IpDiscoveryHeader{});
  const size_t die = Append(out, d::DieHeader{});
  uint16_t num_ips = 0;
  for (const IpEntry& ip : kNavi31Ips) {
    const IpOffsets* offsets = FindOffsets(ip.offsets_block, ip.offsets_instance);
    if (offsets == nullptr) continue;
    // Every segment the offsets table lists, NBIO's sixth (BASE_IDX 5 in nbio_4_3_0_offset.h) among them.
    const auto num_bases = static_cast<uint8_t>(offsets->count);
    d::IpV4 entry{};
    entry.hw_id = static_cast<uint16_t>(ip.hw_id);
    entry.instance_number = ip.instance;
    entry.num_base_address = num_bases;
    entry.major = ip.major;
    entry.minor = ip.minor;
    entry.revision = ip.revision;
    Append(out, entry);
    for (uint8_t i = 0; i < num_bases; ++i) Append(out, offsets->segments[i]);
    ++num_ips;
  }
  const size_t ip_table_end = out.size();
  d::IpDiscoveryHeader ip_header{};
  ip_header.signature = d::DISCOVERY_TABLE_SIGNATURE;
  ip_header.version = kIpDiscoveryVersion;
  ip_header.size = static_cast<uint16_t>(ip_table_end - ip_table);
  ip_header.num_dies = 1;
  ip_header.die_info[0] = {0, static_cast<uint16_t>(die)};
  std::memcpy(out.data() + ip_table, &ip_header, sizeof(ip_header));
  const d::DieHeader die_header{0, num_ips};
  std::memcpy(out.data() + die, &die_header, sizeof(die_header));
  AlignTo(out, 8);

  // GC info.
  d::GcInfoV1_2 gc_info{};
  gc_info.header = {d::GC_TABLE_ID, kGcInfoMajor, kGcInfoMinor, sizeof(d::GcInfoV1_2)};
  gc_info.gc_num_se = gc.num_se;
  gc_info.gc_num_wgp0_per_sa = gc.num_wgp0_per_sa;
  gc_info.gc_num_wgp1_per_sa = gc.num_wgp1_per_sa;
  gc_info.gc_num_rb_per_se = gc.num_rb_per_se;
  gc_info.gc_num_gl2c = gc.num_gl2c;
  gc_info.gc_num_gprs = gc.num_gprs;
  gc_info.gc_num_max_gs_thds = gc.num_max_gs_thds;
  gc_info.gc_gs_table_depth = gc.gs_table_depth;
  gc_info.gc_gsprim_buff_depth = gc.gsprim_buff_depth;
  gc_info.gc_parameter_cache_depth = gc.parameter_cache_depth;
  gc_info.gc_double_offchip_lds_buffer = gc.double_offchip_lds_buffer;
  gc_info.gc_wave_size = gc.wave_size;
  gc_info.gc_max_waves_per_simd = gc.max_waves_per_simd;
  gc_info.gc_max_scratch_slots_per_cu = gc.max_scratch_slots_per_cu;
  gc_info.gc_lds_size = gc.lds_size_kib;
  gc_info.gc_num_sc_per_se = gc.num_sc_per_se;
  gc_info.gc_num_sa_per_se = gc.num_sa_per_se;
  gc_info.gc_num_packer_per_sc = gc.num_packer_per_sc;
  gc_info.gc_num_gl2a = gc.num_gl2a;
  gc_info.gc_num_tcp_per_sa = gc.num_tcp_per_sa;
  gc_info.gc_num_sdp_interface = gc.num_sdp_interface;
  gc_info.gc_num_tcps = gc.num_tcps;
  gc_info.gc_num_tcp_per_wpg = gc.num_tcp_per_wpg;
  gc_info.gc_tcp_l1_size = gc.tcp_l1_size_kib;
  gc_info.gc_num_sqc_per_wgp = gc.num_sqc_per_wgp;
  gc_info.gc_l1_instruction_cache_size_per_sqc = gc.l1_instruction_cache_size_per_sqc_kib;
  gc_info.gc_l1_data_cache_size_per_sqc = gc.l1_data_cache_size_per_sqc_kib;
  gc_info.gc_gl1c_per_sa = gc.gl1c_per_sa;
  gc_info.gc_gl1c_size_per_instance = gc.gl1c_size_per_instance_kib;
  gc_info.gc_gl2c_per_gpu = gc.gl2c_per_gpu_kib;
  const size_t gc_table = Append(out, gc_info);
  AlignTo(out, 8);

  // Harvest table: nothing is fused off on a full RX 7900 XTX.
  d::HarvestTable harvest{};
  harvest.header = {d::HARVEST_TABLE_SIGNATURE, kHarvestTableVersion};
  const size_t harvest_table = Append(out, harvest);

  d::BinaryHeader header{};
  header.binary_signature = d::BINARY_SIGNATURE;
  header.version_major = kBinaryVersionMajor;
  header.version_minor = kBinaryVersionMinor;
  header.binary_size = static_cast<uint16_t>(out.size());
  auto table = [&](uint32_t index, size_t offset, size_t size) {
    header.table_list[index] = {static_cast<uint16_t>(offset),
                                ByteSum(std::span<const uint8_t>(out).subspan(offset, size)),
                                static_cast<uint16_t>(size), 0};
  };
  table(d::IP_DISCOVERY, ip_table, ip_header.size);
  table(d::GC, gc_table, sizeof(d::GcInfoV1_2));
  table(d::HARVEST_INFO, harvest_table, sizeof(d::HarvestTable));
  std::memcpy(out.data(), &header, sizeof(header));
  // The binary checksum covers everything after its own field (amdgpu_discovery_init).
  const size_t summed_from = offsetof(d::BinaryHeader, binary_checksum) + sizeof(header.binary_checksum);
  header.binary_checksum = ByteSum(std::span<const uint8_t>(out).subspan(summed_from));
  std::memcpy(out.data(), &header, sizeof(header));
  return out;
}

}  // namespace am::sim
