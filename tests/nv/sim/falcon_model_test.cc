// nv/sim/falcon_model: the virtual GPU's GSP and SEC2 falcons, driven through raw BAR0 accesses (not the driver), so
// each expectation is a register value worked out from the headers' field positions (dev_falcon_v4.h,
// dev_fbif_v4.h, dev_falcon_second_pri.h, dev_riscv_pri.h, dev_gsp.h) shown beside it.
#include "nv/sim/falcon_model.h"

#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_join.h"
#include "gtest/gtest.h"
#include "tests/nv/sim/falcon_test_bench.h"

namespace nv::sim {
namespace {

using testing::FalconTestBench;

// BAR0 addresses of the GSP's registers: NV_PGSP 0x110000 + the falcon offset, NV_FALCON2_GSP_BASE 0x111000 + the
// falcon2/RISC-V offset, NV_PGSP_FBIF_BASE 0x110600 + the FBIF offset.
constexpr uint32_t kGspEngine = 0x1103c0;  // NV_PGSP_FALCON_ENGINE
constexpr uint32_t kMailbox0 = 0x110040;
constexpr uint32_t kHwcfg2 = 0x1100f4;
constexpr uint32_t kHwcfg = 0x110108;
constexpr uint32_t kDmactl = 0x11010c;
constexpr uint32_t kDmaBase = 0x110110;
constexpr uint32_t kDmaMoffs = 0x110114;
constexpr uint32_t kDmaCmd = 0x110118;
constexpr uint32_t kDmaFboffs = 0x11011c;
constexpr uint32_t kDmaBase1 = 0x110128;
constexpr uint32_t kImemc = 0x110180;
constexpr uint32_t kImemd = 0x110184;
constexpr uint32_t kImemt = 0x110188;
constexpr uint32_t kDmemc = 0x1101c0;
constexpr uint32_t kDmemd = 0x1101c4;
constexpr uint32_t kCpuctl = 0x110100;
constexpr uint32_t kCpuctlAlias = 0x110130;
constexpr uint32_t kTranscfg0 = 0x110600;
constexpr uint32_t kFbifCtl = 0x110624;
constexpr uint32_t kRiscvCpuctl = 0x111388;
constexpr uint32_t kBcrCtrl = 0x111668;
constexpr uint32_t kSec2Hwcfg2 = 0x8400f4;

std::string Log(const FalconModel& falcon) { return absl::StrJoin(falcon.log(), "\n"); }

// Physical DMA set-up as nouveau ga102_flcn_fw_load does it: FBIF_CTL.ALLOW_PHYS_NO_CTX (bit 7) = 0x80, DMACTL = 0,
// TRANSCFG(0) = MEM_TYPE_PHYSICAL (bit 2) | target.
void PhysicalDma(pci::Mmio bar0, uint32_t target) {
  bar0.Write32(kFbifCtl, 0x80);
  bar0.Write32(kDmactl, 0);
  bar0.Write32(kTranscfg0, 0x4 | target);
}

TEST(FalconModelTest, ResetClearsMemoriesAndScrubsForAFixedNumberOfReads) {
  FalconTestBench bench;
  pci::Mmio bar0 = bench.bar0();
  bar0.Write32(kDmemc, 1u << 24);  // AINCW, address 0
  bar0.Write32(kDmemd, 0x12345678);
  EXPECT_EQ(bench.gsp().Dmem(0, 4), (std::vector<uint8_t>{0x78, 0x56, 0x34, 0x12}));

  bar0.Write32(kGspEngine, 1);  // RESET_TRUE
  EXPECT_EQ(bar0.Read32(kGspEngine), 1u);
  EXPECT_TRUE(bench.gsp().in_reset());
  bar0.Write32(kGspEngine, 0);
  // HWCFG2: RISCV 10:10 = 1 (0x400), MEM_SCRUBBING 12:12 (0x1000), RESET_READY 31:31 (0x80000000).
  for (int i = 0; i < FalconModel::kScrubStatusReads; ++i) EXPECT_EQ(bar0.Read32(kHwcfg2), 0x80001400u) << i;
  EXPECT_EQ(bar0.Read32(kHwcfg2), 0x80000400u);
  EXPECT_EQ(bench.gsp().Dmem(0, 4), (std::vector<uint8_t>{0, 0, 0, 0}));
  // DMACTL: REQUIRE_CTX 0:0 comes out of reset set (the model's choice), scrubbing bits 1 and 2 done.
  EXPECT_EQ(bar0.Read32(kDmactl), 0x1u);
  // BCR_CTRL's init value (dev_riscv_pri.h): CORE_SELECT falcon, VALID false, BRFETCH true = 0x100.
  EXPECT_EQ(bar0.Read32(kBcrCtrl), 0x100u);
}

TEST(FalconModelTest, DmactlReportsTheScrubToo) {
  FalconTestBench bench;
  pci::Mmio bar0 = bench.bar0();
  bar0.Write32(kGspEngine, 1);
  bar0.Write32(kGspEngine, 0);
  EXPECT_EQ(bar0.Read32(kDmactl), 0x7u);  // REQUIRE_CTX | DMEM_SCRUBBING (1:1) | IMEM_SCRUBBING (2:2)
  EXPECT_EQ(bar0.Read32(kDmactl), 0x7u);
  EXPECT_EQ(bar0.Read32(kDmactl), 0x1u);
}

TEST(FalconModelTest, RegistersIgnoreWritesWhileTheEngineIsInReset) {
  FalconTestBench bench;
  pci::Mmio bar0 = bench.bar0();
  bar0.Write32(kGspEngine, 1);
  bar0.Write32(kMailbox0, 0xabcd);
  EXPECT_EQ(bar0.Read32(kMailbox0), 0u);
  EXPECT_TRUE(absl::StrContains(Log(bench.gsp()), "while the engine is held in reset")) << Log(bench.gsp());
}

TEST(FalconModelTest, HwcfgGivesTheMemorySizesIn256ByteBlocks) {
  FalconTestBench bench;
  // 64 KiB each (chosen): IMEM_SIZE 8:0 = 0x100 blocks; DMEM size 17:9 (nouveau nvkm_falcon_oneinit) = 0x100 << 9.
  EXPECT_EQ(bench.bar0().Read32(kHwcfg), 0x100u | 0x100u << 9);
}

TEST(FalconModelTest, SecHasNoRiscvCore) {
  FalconTestBench bench;
  EXPECT_EQ(bench.bar0().Read32(kSec2Hwcfg2), 0x80000000u);  // RESET_READY only
}

TEST(FalconModelTest, PioPortsAutoIncrement) {
  FalconTestBench bench;
  pci::Mmio bar0 = bench.bar0();
  // DMEMC: BLK 23:8 = 1 (0x100), OFFS 7:2 = 1 (word 1): byte address 0x104; AINCW 24:24.
  bar0.Write32(kDmemc, 1u << 24 | 0x100 | 1u << 2);
  bar0.Write32(kDmemd, 0x11111111);
  bar0.Write32(kDmemd, 0x22222222);
  EXPECT_EQ(bar0.Read32(kDmemc), 1u << 24 | 0x100 | 3u << 2);  // advanced two words
  // Reads advance with bit 25 (nouveau gm200_flcn_pio_dmem_rd_init), not without.
  bar0.Write32(kDmemc, 0x104);
  EXPECT_EQ(bar0.Read32(kDmemd), 0x11111111u);
  EXPECT_EQ(bar0.Read32(kDmemd), 0x11111111u);
  bar0.Write32(kDmemc, 1u << 25 | 0x104);
  EXPECT_EQ(bar0.Read32(kDmemd), 0x11111111u);
  EXPECT_EQ(bar0.Read32(kDmemd), 0x22222222u);

  // IMEM with the secure bit (28) and a tag (nouveau gm200_flcn_pio_imem_wr_init / _wr): block 2.
  bar0.Write32(kImemc, 1u << 28 | 1u << 24 | 0x200);
  bar0.Write32(kImemt, 0x2);
  for (uint32_t i = 0; i < 64; ++i) bar0.Write32(kImemd, i);
  const std::vector<uint8_t> block = bench.gsp().Imem(0x200, 256);
  ASSERT_EQ(block.size(), 256u);
  EXPECT_EQ(block[4 * 63], 63);
  bar0.Write32(kImemc, 0x200);
  EXPECT_EQ(bar0.Read32(kImemt), 0x2u);
}

TEST(FalconModelTest, PioPastTheEndIsIgnoredAndLogged) {
  FalconTestBench bench;
  pci::Mmio bar0 = bench.bar0();
  // The last word of 64 KiB: BLK 0xff, OFFS 63 = 0xfffc.
  bar0.Write32(kDmemc, 1u << 24 | 0xff00 | 63u << 2);
  bar0.Write32(kDmemd, 0xaaaaaaaa);
  bar0.Write32(kDmemd, 0xbbbbbbbb);  // 0x10000: past the end
  EXPECT_EQ(bench.gsp().Dmem(0xfffc, 4), (std::vector<uint8_t>{0xaa, 0xaa, 0xaa, 0xaa}));
  EXPECT_TRUE(absl::StrContains(Log(bench.gsp()), "DMEM PIO write at 0x10000, past the end")) << Log(bench.gsp());
}

TEST(FalconModelTest, DmaCopiesFromFbIn256ByteBlocks) {
  FalconTestBench bench;
  pci::Mmio bar0 = bench.bar0();
  std::vector<uint8_t> pattern(512);
  for (size_t i = 0; i < pattern.size(); ++i) pattern[i] = static_cast<uint8_t>(i * 7);
  ASSERT_TRUE(bench.memory().WriteFb(0x200000, pattern));
  PhysicalDma(bar0, 0);  // TARGET 0: local FB
  bar0.Write32(kDmaBase, 0x200000 >> 8);
  bar0.Write32(kDmaBase1, 0);
  bar0.Write32(kDmaMoffs, 0x100);
  bar0.Write32(kDmaFboffs, 0x100);
  // DMATRFCMD: IMEM 4:4 (0x10), SIZE 10:8 = 6 (256 B, 0x600), SEC 3:2 = 1 (0x4).
  bar0.Write32(kDmaCmd, 0x614);
  EXPECT_EQ(bar0.Read32(kDmaCmd), 0x616u);  // the command back, IDLE 1:1 set, FULL 0:0 clear
  EXPECT_EQ(bench.gsp().Imem(0x100, 256), std::vector<uint8_t>(pattern.begin() + 256, pattern.end()));
  EXPECT_TRUE(bench.gsp().log().empty()) << Log(bench.gsp());
}

TEST(FalconModelTest, DmaFromSystemMemoryUsesBase1) {
  FalconTestBench bench;
  pci::Mmio bar0 = bench.bar0();
  std::vector<uint8_t> data(256, 0x5a);
  const uint64_t address = FalconTestBench::kSystemBase + 0x1000;
  ASSERT_TRUE(bench.memory().WriteSystem(address, data));
  PhysicalDma(bar0, 1);  // TARGET 1: coherent system memory
  // (2^40 + 0x1000) >> 8 = 0x1'0000'0010: DMATRFBASE 0x10, DMATRFBASE1 1.
  bar0.Write32(kDmaBase, 0x10);
  bar0.Write32(kDmaBase1, 1);
  bar0.Write32(kDmaMoffs, 0);
  bar0.Write32(kDmaFboffs, 0);
  bar0.Write32(kDmaCmd, 0x600);  // DMEM, 256 B
  EXPECT_EQ(bar0.Read32(kDmaCmd), 0x602u);
  EXPECT_EQ(bench.gsp().Dmem(0, 256), data);
}

struct DmaFaultCase {
  const char* name;
  uint32_t transcfg;  // written to TRANSCFG(0) (after FBIF_CTL/DMACTL set-up unless skip_setup)
  bool skip_setup;
  uint64_t address;
  uint32_t command;
  const char* log;
};

class DmaFaultTest : public ::testing::TestWithParam<DmaFaultCase> {};

TEST_P(DmaFaultTest, LeavesTheEngineBusyAndSaysWhy) {
  const DmaFaultCase& c = GetParam();
  FalconTestBench bench;
  pci::Mmio bar0 = bench.bar0();
  if (!c.skip_setup) PhysicalDma(bar0, 0);
  bar0.Write32(kTranscfg0, c.transcfg);
  bar0.Write32(kDmaBase, static_cast<uint32_t>(c.address >> 8));
  bar0.Write32(kDmaBase1, static_cast<uint32_t>(c.address >> 40));
  bar0.Write32(kDmaMoffs, 0);
  bar0.Write32(kDmaFboffs, 0);
  bar0.Write32(kDmaCmd, c.command);
  EXPECT_EQ(bar0.Read32(kDmaCmd) & 0x3, 0u) << "IDLE and FULL both clear: busy";
  EXPECT_TRUE(absl::StrContains(Log(bench.gsp()), c.log)) << Log(bench.gsp());
  EXPECT_EQ(bench.gsp().Dmem(0, 4), (std::vector<uint8_t>{0, 0, 0, 0}));
  // Only a reset clears it.
  bar0.Write32(kGspEngine, 1);
  bar0.Write32(kGspEngine, 0);
  EXPECT_EQ(bar0.Read32(kDmaCmd) & 0x2, 0x2u);
}

INSTANTIATE_TEST_SUITE_P(
    Faults, DmaFaultTest,
    ::testing::Values(DmaFaultCase{"RequireCtx", 0x4, /*skip_setup=*/true, 0, 0x600, "DMACTL.REQUIRE_CTX is set"},
                      DmaFaultCase{"VirtualMemType", 0x0, false, 0, 0x600, "MEM_TYPE is virtual"},
                      DmaFaultCase{"TargetThree", 0x7, false, 0, 0x600, "TARGET 3 is no memory target"},
                      DmaFaultCase{"PastFb", 0x4, false, FalconTestBench::kFbSize, 0x600,
                                   "out of the falcon's reach (past the end"},
                      DmaFaultCase{"UnmappedBusAddress", 0x5, false, 0x1000, 0x600, "not a mapped bus address"},
                      DmaFaultCase{"SizeSeven", 0x4, false, 0, 0x700, "DMATRFCMD.SIZE 7"}),
    [](const ::testing::TestParamInfo<DmaFaultCase>& info) { return std::string(info.param.name); });

TEST(FalconModelTest, AnImageNoModelRecognisesIsRefused) {
  FalconTestBench bench;
  pci::Mmio bar0 = bench.bar0();
  bar0.Write32(kMailbox0, 0xcafebeef);
  bar0.Write32(kCpuctl, 0x2);              // STARTCPU 1:1
  EXPECT_EQ(bar0.Read32(kCpuctl), 0x10u);  // HALTED 4:4
  // FLCN_ERR_HS_CHK_INVALID_INPUT (flcnretval.h 0xA0), the model's choice for a refused image.
  EXPECT_EQ(bar0.Read32(kMailbox0), 0xa0u);
  EXPECT_EQ(bench.gsp().hs_starts(), 1);
  EXPECT_TRUE(absl::StrContains(Log(bench.gsp()), "BROM refused the image")) << Log(bench.gsp());
  EXPECT_TRUE(absl::StrContains(Log(bench.gsp()), "\"BAREGPU_VFWSEC\"")) << Log(bench.gsp());
}

TEST(FalconModelTest, AliasEnRoutesTheStartThroughCpuctlAlias) {
  FalconTestBench bench;
  pci::Mmio bar0 = bench.bar0();
  bar0.Write32(kCpuctl, 0x40);  // ALIAS_EN 6:6
  EXPECT_EQ(bar0.Read32(kCpuctl), 0x40u);
  bar0.Write32(kCpuctl, 0x42);  // STARTCPU through CPUCTL while aliased: ignored
  EXPECT_EQ(bench.gsp().hs_starts(), 0);
  EXPECT_TRUE(absl::StrContains(Log(bench.gsp()), "start through CPUCTL_ALIAS")) << Log(bench.gsp());
  bar0.Write32(kCpuctlAlias, 0x2);
  EXPECT_EQ(bench.gsp().hs_starts(), 1);
  EXPECT_EQ(bar0.Read32(kCpuctl), 0x50u);  // HALTED | ALIAS_EN
}

TEST(FalconModelTest, CpuctlAliasWithoutAliasEnIsIgnored) {
  FalconTestBench bench;
  bench.bar0().Write32(kCpuctlAlias, 0x2);
  EXPECT_EQ(bench.gsp().hs_starts(), 0);
  EXPECT_TRUE(absl::StrContains(Log(bench.gsp()), "ALIAS_EN is clear")) << Log(bench.gsp());
}

TEST(FalconModelTest, RiscvSelectionStartsTheRiscvSeam) {
  FalconTestBench bench;
  pci::Mmio bar0 = bench.bar0();
  bar0.Write32(kBcrCtrl, 0x111);  // ga102_gsp_reset: CORE_SELECT RISCV, VALID, BRFETCH
  EXPECT_EQ(bar0.Read32(kBcrCtrl), 0x111u);
  bar0.Write32(kCpuctl, 0x2);
  EXPECT_EQ(bench.gsp().riscv_starts(), 1);
  EXPECT_EQ(bench.gsp().hs_starts(), 0);
  EXPECT_EQ(bar0.Read32(kRiscvCpuctl), 0u);  // no RISC-V model: inactive
  EXPECT_TRUE(absl::StrContains(Log(bench.gsp()), "no RISC-V model")) << Log(bench.gsp());

  bar0.Write32(kGspEngine, 1);
  bar0.Write32(kGspEngine, 0);
  bar0.Write32(kBcrCtrl, 0x111);
  bar0.Write32(kCpuctl, 0x2);  // while the scrub runs: ignored
  EXPECT_EQ(bench.gsp().riscv_starts(), 1);
  EXPECT_TRUE(absl::StrContains(Log(bench.gsp()), "still being scrubbed")) << Log(bench.gsp());
  for (int i = 0; i < FalconModel::kScrubStatusReads; ++i) bar0.Read32(kHwcfg2);
  bench.gsp().SetRiscvStartHandler([] { return true; });
  bar0.Write32(kBcrCtrl, 0x111);
  bar0.Write32(kCpuctl, 0x2);
  EXPECT_EQ(bar0.Read32(kRiscvCpuctl), 0x80u);  // ACTIVE_STAT 7:7
  EXPECT_EQ(bench.gsp().riscv_starts(), 2);
}

TEST(FalconModelTest, SelectingTheFalconCoreMakesTheSelectionValid) {
  FalconTestBench bench;
  bench.bar0().Write32(kBcrCtrl, 0x0);
  EXPECT_EQ(bench.bar0().Read32(kBcrCtrl), 0x1u);  // VALID 0:0
}

TEST(FalconModelTest, NeverHaltInjectionKeepsHaltedClear) {
  FalconTestBench bench;
  bench.gsp().InjectNeverHalt(true);
  pci::Mmio bar0 = bench.bar0();
  bar0.Write32(kCpuctl, 0x2);
  for (int i = 0; i < 3; ++i) EXPECT_EQ(bar0.Read32(kCpuctl) & 0x10, 0u);
  EXPECT_FALSE(bench.gsp().halted());
  bar0.Write32(kCpuctl, 0x2);  // a second start while running
  EXPECT_EQ(bench.gsp().hs_starts(), 1);
}

TEST(FalconModelTest, UnmodelledOffsetsAreStorage) {
  FalconTestBench bench;
  // NV_PGSP_QUEUE_HEAD(0) 0x110c00 (dev_gsp.h): the message queues' registers, other engineers' models.
  bench.bar0().Write32(0x110c00, 0x1234);
  EXPECT_EQ(bench.bar0().Read32(0x110c00), 0x1234u);
}

}  // namespace
}  // namespace nv::sim
