#include "am/discovery.h"

#include <cstdlib>
#include <cstring>
#include <random>

#include "absl/strings/match.h"
#include "am/regs/discovery.h"
#include "am/regs/hw_id_constants.h"
#include "am/regs/nbio.h"
#include "am/sim/discovery_table.h"
#include "gtest/gtest.h"
#include "pci/open.h"
#include "tests/am/sim/sim_state_dir.h"

namespace am {
namespace {

namespace d = regs::discovery;
auto* const kStateDir = sim::testing::RegisterSimStateDir();

// The IP versions of an RX 7900 XTX (issue 5: GC 11.0.0, SDMA 6.0.0, MMHUB 3.0.0, NBIO 4.3.0, MP0/MP1 13.0.0,
// HDP 6.0.0, OSSSYS 6.0.0).
void ExpectNavi31(const Discovery& discovery) {
  EXPECT_EQ(discovery.VersionOf(d::GC_HWID), (IpVersion{11, 0, 0}));
  EXPECT_EQ(discovery.VersionOf(d::SDMA0_HWID), (IpVersion{6, 0, 0}));
  EXPECT_EQ(discovery.VersionOf(d::MMHUB_HWID), (IpVersion{3, 0, 0}));
  EXPECT_EQ(discovery.VersionOf(d::NBIF_HWID), (IpVersion{4, 3, 0}));
  EXPECT_EQ(discovery.VersionOf(d::MP0_HWID), (IpVersion{13, 0, 0}));
  EXPECT_EQ(discovery.VersionOf(d::MP1_HWID), (IpVersion{13, 0, 0}));
  EXPECT_EQ(discovery.VersionOf(d::HDP_HWID), (IpVersion{6, 0, 0}));
  EXPECT_EQ(discovery.VersionOf(d::OSSSYS_HWID), (IpVersion{6, 0, 0}));
  int sdma_instances = 0;
  for (const DiscoveredIp& ip : discovery.ips) sdma_instances += ip.hw_id == d::SDMA0_HWID;
  EXPECT_EQ(sdma_instances, 2);
  // Six UMCs (B15): umc_v8_10_channel_idx_tbl's 6 nodes, 24 channels of the 384-bit bus; 4 would select the
  // 256-bit table (gmc_v11_0_set_umc_funcs).
  int umc_instances = 0;
  for (const DiscoveredIp& ip : discovery.ips) {
    if (ip.hw_id != d::UMC_HWID) continue;
    EXPECT_EQ(ip.instance, umc_instances);
    EXPECT_EQ(ip.version, (IpVersion{8, 10, 0}));
    ++umc_instances;
  }
  EXPECT_EQ(umc_instances, 6);
  ASSERT_TRUE(discovery.gc.has_value());
  EXPECT_EQ(discovery.gc->num_se, 6u);
  EXPECT_EQ(discovery.gc->total_cus(), 96u);
  EXPECT_EQ(discovery.gc->wave_size, 32u);
  EXPECT_EQ(discovery.gc->lds_size_kib, 64u);
  EXPECT_TRUE(discovery.harvested.empty());
  regs::IpBases bases = discovery.Bases();
  EXPECT_EQ(*bases.Base(regs::Ip::kGc, 0, 0), 0x1260u);     // sienna_cichlid GC_BASE__INST0_SEG0
  EXPECT_EQ(*bases.Base(regs::Ip::kNbio, 0, 2), 0xd20u);    // NBIO_BASE__INST0_SEG2
  EXPECT_EQ(*bases.Base(regs::Ip::kMp1, 0, 1), 0xdc0000u);  // MP1_BASE__INST0_SEG1
}

TEST(DiscoveryTest, ReadsTheVirtualNavi31ThroughBar0) {
  auto device = pci::Open("sim:navi31:discovery");
  ASSERT_TRUE(device.ok()) << device.status();
  auto found = ReadDiscovery(**device);
  ASSERT_TRUE(found.ok()) << found.status();
  EXPECT_EQ(found->vram_size, uint64_t{24} << 30);
  EXPECT_EQ(found->table_address, (uint64_t{24} << 30) - (64 << 10));
  EXPECT_FALSE(found->through_mm_index);
  ExpectNavi31(found->discovery);
}

// nbio_4_3_0_offset.h puts registers at BASE_IDX 5 (regRCC_DEV0_EPF2_STRAP2, which nbio_v4_3_init_registers
// writes): the table lists NBIO's sixth segment, so they resolve (before issue 16 it listed five).
TEST(DiscoveryTest, NbioListsTheSixSegmentsItsRegistersUse) {
  const std::vector<uint8_t> binary = sim::BuildNavi31Discovery();
  absl::StatusOr<Discovery> discovery = ParseDiscovery(binary, "the virtual Navi31 table");
  ASSERT_TRUE(discovery.ok()) << discovery.status();
  const DiscoveredIp* nbio = nullptr;
  for (const DiscoveredIp& ip : discovery->ips) {
    if (ip.hw_id == d::NBIF_HWID) nbio = &ip;
  }
  ASSERT_NE(nbio, nullptr);
  ASSERT_EQ(nbio->segments.size(), 6u);
  EXPECT_EQ(nbio->segments[0], 0u);           // NBIO's first segment really is at 0
  EXPECT_EQ(nbio->segments[5], 0x04040000u);  // dimgrey_cavefish_ip_offset.h NBIO_BASE__INST0_SEG5
  const auto strap = discovery->Bases().Resolve(regs::Ip::kNbio, 0, regs::nbio::RCC_DEV0_EPF2_STRAP2::kSegment,
                                                regs::nbio::RCC_DEV0_EPF2_STRAP2::kOffset);
  ASSERT_TRUE(strap.ok()) << strap.status();
  EXPECT_EQ(*strap, 0x04040000u + regs::nbio::RCC_DEV0_EPF2_STRAP2::kOffset);
}

// Every gc_info v1.2 field a driver reads for compute has Navi31's value (tinygrad sizes scratch from
// gc_max_scratch_slots_per_cu; KFD's CRAT reports the caches from the v1.2 fields).
TEST(DiscoveryTest, GcInfoCarriesNavi31sComputeFields) {
  const std::vector<uint8_t> binary = sim::BuildNavi31Discovery();
  d::BinaryHeader header;
  std::memcpy(&header, binary.data(), sizeof(header));
  d::GcInfoV1_2 gc;
  ASSERT_EQ(header.table_list[d::GC].size, sizeof(gc));
  std::memcpy(&gc, binary.data() + header.table_list[d::GC].offset, sizeof(gc));
  EXPECT_EQ(gc.header.version_major, 1);
  EXPECT_EQ(gc.header.version_minor, 2);
  EXPECT_EQ(gc.gc_max_scratch_slots_per_cu, 32u);
  EXPECT_EQ(gc.gc_max_waves_per_simd, 16u);
  EXPECT_EQ(gc.gc_num_gprs, 1536u);
  EXPECT_EQ(gc.gc_num_tcps, 96u);
  EXPECT_EQ(gc.gc_tcp_l1_size, 32u);
  EXPECT_EQ(gc.gc_num_sqc_per_wgp, 1u);
  EXPECT_EQ(gc.gc_l1_instruction_cache_size_per_sqc, 32u);
  EXPECT_EQ(gc.gc_l1_data_cache_size_per_sqc, 16u);
  EXPECT_EQ(gc.gc_gl1c_per_sa * gc.gc_gl1c_size_per_instance, 256u);
  EXPECT_EQ(gc.gc_gl2c_per_gpu, 6144u);
}

TEST(DiscoveryTest, ReadsThroughMmIndexWhenBar0IsSmall) {
  ::setenv("BAREGPU_SIM_SMALL_BAR", "1", 1);
  auto device = pci::Open("sim:navi31:discovery-small");
  ::unsetenv("BAREGPU_SIM_SMALL_BAR");
  ASSERT_TRUE(device.ok()) << device.status();
  auto found = ReadDiscovery(**device);
  ASSERT_TRUE(found.ok()) << found.status();
  EXPECT_TRUE(found->through_mm_index);
  ExpectNavi31(found->discovery);
}

TEST(DiscoveryTest, AnUninitialisedVramSaysSo) {
  auto device = pci::Open("sim:navi31:wiped");
  ASSERT_TRUE(device.ok());
  auto vram = (*device)->MapMemory(0);
  std::memset(vram->data() + vram->size() - (64 << 10), 0, 1024);
  auto found = ReadDiscovery(**device);
  ASSERT_FALSE(found.ok());
  EXPECT_TRUE(absl::StrContains(found.status().message(), "no IP discovery binary")) << found.status();
  EXPECT_TRUE(absl::StrContains(found.status().message(), "sim:navi31:wiped VRAM at 0x5ffff0000")) << found.status();
}

TEST(DiscoveryTest, CorruptTablesFailTheirChecksum) {
  std::vector<uint8_t> binary = sim::BuildNavi31Discovery();
  ASSERT_TRUE(ParseDiscovery(binary, "test").ok());
  d::BinaryHeader header;
  std::memcpy(&header, binary.data(), sizeof(header));
  // A flipped bit inside the IP table: the binary checksum catches it first.
  std::vector<uint8_t> corrupt = binary;
  corrupt[header.table_list[d::IP_DISCOVERY].offset + 40] ^= 0x10;
  auto parsed = ParseDiscovery(corrupt, "test");
  ASSERT_FALSE(parsed.ok());
  EXPECT_EQ(parsed.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_TRUE(absl::StrContains(parsed.status().message(), "binary checksum")) << parsed.status();
  // A wrong per-table checksum, with the binary checksum made to match: the per-table check must fire.
  corrupt = binary;
  auto* table = reinterpret_cast<d::BinaryHeader*>(corrupt.data());
  table->table_list[d::IP_DISCOVERY].checksum ^= 1;
  uint16_t sum = 0;
  for (size_t i = offsetof(d::BinaryHeader, binary_checksum) + 2; i < table->binary_size; ++i) sum += corrupt[i];
  table->binary_checksum = sum;
  parsed = ParseDiscovery(corrupt, "test");
  ASSERT_FALSE(parsed.ok());
  EXPECT_TRUE(absl::StrContains(parsed.status().message(), "IP discovery table checksum")) << parsed.status();
}

TEST(DiscoveryTest, TruncatedBinariesAreRejectedNotOverread) {
  std::vector<uint8_t> binary = sim::BuildNavi31Discovery();
  for (size_t size : {size_t{0}, size_t{4}, sizeof(d::BinaryHeader) - 1, sizeof(d::BinaryHeader) + 8, binary.size() / 2,
                      binary.size() - 1}) {
    std::vector<uint8_t> truncated(binary.begin(), binary.begin() + size);
    auto parsed = ParseDiscovery(truncated, "test");
    EXPECT_FALSE(parsed.ok()) << size;
  }
}

// Random corruption, re-checksummed so that the parser's structural checks (not only the checksums) are hit.
TEST(DiscoveryTest, RandomlyCorruptedTablesNeverCrash) {
  const std::vector<uint8_t> binary = sim::BuildNavi31Discovery();
  std::mt19937 rng(20261202);
  int accepted = 0;
  for (int iteration = 0; iteration < 20000; ++iteration) {
    std::vector<uint8_t> mutated = binary;
    const int flips = 1 + static_cast<int>(rng() % 8);
    for (int i = 0; i < flips; ++i) mutated[rng() % mutated.size()] = static_cast<uint8_t>(rng());
    auto* header = reinterpret_cast<d::BinaryHeader*>(mutated.data());
    for (uint32_t t : {d::IP_DISCOVERY, d::GC, d::HARVEST_INFO}) {
      d::TableInfo& info = header->table_list[t];
      size_t size = info.size;
      if (info.offset >= mutated.size() || size > mutated.size() - info.offset) continue;
      uint16_t sum = 0;
      for (size_t i = 0; i < size; ++i) sum += mutated[info.offset + i];
      info.checksum = sum;
    }
    if (header->binary_size <= mutated.size()) {
      uint16_t sum = 0;
      for (size_t i = offsetof(d::BinaryHeader, binary_checksum) + 2; i < header->binary_size; ++i) sum += mutated[i];
      header->binary_checksum = sum;
    }
    accepted += ParseDiscovery(mutated, "fuzz").ok();
  }
  // Some mutations only touch values (a version, a base) and still parse; most break a structure.
  EXPECT_GT(accepted, 0);
  EXPECT_LT(accepted, 20000);
}

}  // namespace
}  // namespace am
