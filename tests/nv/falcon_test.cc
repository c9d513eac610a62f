// nv/falcon: the driver's falcon operations against the virtual falcons (tests/nv/sim/falcon_test_bench.h). The model
// is the hardware's advocate: these tests check the driver's sequence leaves the falcon in the state the headers'
// fields describe, and that each failure the model can produce reaches the driver as a decoded error.
#include "nv/falcon.h"

#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_join.h"
#include "gtest/gtest.h"
#include "tests/nv/sim/falcon_test_bench.h"

namespace nv {
namespace {

using sim::testing::FalconTestBench;

constexpr absl::Duration kShortTimeout = absl::Milliseconds(20);

std::string Log(const sim::FalconModel& falcon) { return absl::StrJoin(falcon.log(), "\n"); }

std::vector<uint8_t> Pattern(size_t size, uint8_t seed) {
  std::vector<uint8_t> bytes(size);
  for (size_t i = 0; i < size; ++i) bytes[i] = static_cast<uint8_t>(seed + i * 13);
  return bytes;
}

TEST(FalconTest, ResetWaitsForTheScrubAndWritesBoot0IntoRm) {
  FalconTestBench bench;
  bench.SetRegister(0x0, 0x19200000);  // NV_PMC_BOOT_0 (any value: the driver copies it)
  Falcon gsp(bench.bar0(), kAd102GspFalcon);
  ASSERT_TRUE(gsp.Reset().ok());
  EXPECT_FALSE(bench.gsp().in_reset());
  EXPECT_EQ(bench.bar0().Read32(0x1100f4) & 0x1000, 0u);  // HWCFG2.MEM_SCRUBBING done
  EXPECT_EQ(bench.bar0().Read32(0x110084), 0x19200000u);  // NV_PFALCON_FALCON_RM
  EXPECT_TRUE(bench.gsp().log().empty()) << Log(bench.gsp());
}

TEST(FalconTest, AScrubThatNeverFinishesTimesOut) {
  FalconTestBench bench;
  bench.gsp().InjectStuckScrub(true);
  Falcon gsp(bench.bar0(), kAd102GspFalcon, kShortTimeout, kShortTimeout);
  const absl::Status status = gsp.Reset();
  EXPECT_EQ(status.code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_TRUE(absl::StrContains(status.message(), "GSP falcon: reset: memory scrub did not finish within 20ms"))
      << status;
  // RISCV=0x1 MEM_SCRUBBING=0x1 RESET_READY=0x1: 0x80001400.
  EXPECT_TRUE(absl::StrContains(status.message(), "NV_PFALCON_FALCON_HWCFG2 = 0x80001400")) << status;
}

TEST(FalconTest, SelectRiscvThenResetReturnsToTheFalconCore) {
  FalconTestBench bench;
  Falcon gsp(bench.bar0(), kAd102GspFalcon);
  gsp.SelectRiscv();
  EXPECT_EQ(bench.bar0().Read32(0x111668), 0x111u);  // BCR_CTRL: VALID, CORE_SELECT_RISCV, BRFETCH
  ASSERT_TRUE(gsp.Reset().ok());
  EXPECT_EQ(bench.bar0().Read32(0x111668) & 0x10, 0u);  // CORE_SELECT_FALCON
}

TEST(FalconTest, DmaLoadFillsImemAndDmemFromFb) {
  FalconTestBench bench;
  Falcon gsp(bench.bar0(), kAd102GspFalcon);
  ASSERT_TRUE(gsp.Reset().ok());
  const std::vector<uint8_t> code = Pattern(0x300, 1), data = Pattern(0x200, 2);
  ASSERT_TRUE(bench.memory().WriteFb(0x40000, code));
  ASSERT_TRUE(bench.memory().WriteFb(0x50000, data));
  gsp.DisableContextRequirement();
  gsp.SetPhysicalTarget(0, DmaTarget::kLocalFb);
  EXPECT_EQ(bench.bar0().Read32(0x110600), 0x4u);  // TRANSCFG(0): MEM_TYPE_PHYSICAL, TARGET 0
  ASSERT_TRUE(gsp.DmaLoad(FalconMemory::kImem, 0x100, 0x40000, 0x300, /*secure=*/true).ok());
  ASSERT_TRUE(gsp.DmaLoad(FalconMemory::kDmem, 0x0, 0x50000, 0x200, /*secure=*/false).ok());
  EXPECT_EQ(bench.gsp().Imem(0x100, 0x300), code);
  EXPECT_EQ(bench.gsp().Dmem(0, 0x200), data);
  EXPECT_TRUE(bench.gsp().log().empty()) << Log(bench.gsp());
}

TEST(FalconTest, DmaLoadFromSystemMemoryAboveFourGigabytes) {
  FalconTestBench bench;
  Falcon gsp(bench.bar0(), kAd102GspFalcon);
  ASSERT_TRUE(gsp.Reset().ok());
  const std::vector<uint8_t> data = Pattern(0x100, 3);
  const uint64_t address = FalconTestBench::kSystemBase + 0x2000;
  ASSERT_TRUE(bench.memory().WriteSystem(address, data));
  gsp.DisableContextRequirement();
  gsp.SetPhysicalTarget(0, DmaTarget::kCoherentSysmem);
  ASSERT_TRUE(gsp.DmaLoad(FalconMemory::kDmem, 0x400, address, 0x100, false).ok());
  EXPECT_EQ(bench.gsp().Dmem(0x400, 0x100), data);
  // (2^40 + 0x2000) >> 8 = 0x1'0000'0020: DMATRFBASE 0x20, DMATRFBASE1 1.
  EXPECT_EQ(bench.bar0().Read32(0x110110), 0x20u);
  EXPECT_EQ(bench.bar0().Read32(0x110128), 0x1u);
}

TEST(FalconTest, DmaLoadRefusesWhatTheEngineCannotMove) {
  FalconTestBench bench;
  Falcon gsp(bench.bar0(), kAd102GspFalcon);
  const absl::Status status = gsp.DmaLoad(FalconMemory::kImem, 0, 0x1000, 0x180, true);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StrContains(status.message(), "GSP falcon: DMA: IMEM load of 0x180 bytes")) << status;
  EXPECT_EQ(gsp.DmaLoad(FalconMemory::kImem, 0, 0x1080, 0x100, true).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(gsp.DmaLoad(FalconMemory::kDmem, 0, 0x1000, 0x100, false, 8).code(), absl::StatusCode::kInvalidArgument);
}

TEST(FalconTest, DmaFromAnUnmappedRangeTimesOutWithTheCommandDecoded) {
  FalconTestBench bench;
  Falcon gsp(bench.bar0(), kAd102GspFalcon, kShortTimeout, kShortTimeout);
  ASSERT_TRUE(gsp.Reset().ok());
  gsp.DisableContextRequirement();
  gsp.SetPhysicalTarget(0, DmaTarget::kCoherentSysmem);
  const absl::Status status = gsp.DmaLoad(FalconMemory::kImem, 0, 0x7000'0000, 0x100, true);
  EXPECT_EQ(status.code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_TRUE(absl::StrContains(status.message(), "IMEM block 0x0 from 0x70000000 did not complete")) << status;
  EXPECT_TRUE(absl::StrContains(status.message(), "NV_PFALCON_FALCON_DMATRFCMD = 0x00000614 (FULL=0 IDLE=0 SEC=0x1"))
      << status;
  EXPECT_TRUE(absl::StrContains(Log(bench.gsp()), "not a mapped bus address")) << Log(bench.gsp());
}

TEST(FalconTest, DmaWithoutDisablingTheContextRequirementFaults) {
  FalconTestBench bench;
  Falcon gsp(bench.bar0(), kAd102GspFalcon, kShortTimeout, kShortTimeout);
  ASSERT_TRUE(gsp.Reset().ok());
  gsp.SetPhysicalTarget(0, DmaTarget::kLocalFb);
  EXPECT_EQ(gsp.DmaLoad(FalconMemory::kDmem, 0, 0x1000, 0x100, false).code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_TRUE(absl::StrContains(Log(bench.gsp()), "DMACTL.REQUIRE_CTX is set")) << Log(bench.gsp());
}

TEST(FalconTest, StartGoesThroughTheAliasWhenAliasEnIsSet) {
  FalconTestBench bench;
  Falcon gsp(bench.bar0(), kAd102GspFalcon);
  ASSERT_TRUE(gsp.Reset().ok());
  bench.bar0().Write32(0x110100, 0x40);  // CPUCTL.ALIAS_EN, as an HS ucode may leave it
  gsp.Start();
  EXPECT_EQ(bench.gsp().hs_starts(), 1);
  EXPECT_TRUE(gsp.WaitForHalt("test").ok());
}

TEST(FalconTest, ExecuteHsOfAnUnknownImageReturnsTheBromsRefusal) {
  FalconTestBench bench;
  Falcon gsp(bench.bar0(), kAd102GspFalcon);
  ASSERT_TRUE(gsp.Reset().ok());
  const HsUcodeLoad load{.image_address = 0x100000,
                         .imem_size = 0x200,
                         .dmem_image_offset = 0x200,
                         .dmem_size = 0x100,
                         .pkc_offset = 0x0,
                         .engine_id_mask = 0x400,
                         .ucode_id = 1};
  absl::StatusOr<FalconMailboxes> mailboxes = gsp.ExecuteHs(load, "zeros");
  ASSERT_TRUE(mailboxes.ok()) << mailboxes.status();
  EXPECT_EQ(mailboxes->mailbox0, 0xa0u);  // FLCN_ERR_HS_CHK_INVALID_INPUT, the model's refusal
  // The BROM registers as ga102_flcn_fw_boot writes them: PARAADDR(0), ENGIDMASK, CURR_UCODE_ID, MOD_SEL RSA3K.
  EXPECT_EQ(bench.bar0().Read32(0x11119c), 0x400u);
  EXPECT_EQ(bench.bar0().Read32(0x111198), 0x1u);
  EXPECT_EQ(bench.bar0().Read32(0x111180), 0x1u);
  EXPECT_TRUE(absl::StrContains(Log(bench.gsp()), "BROM refused the image")) << Log(bench.gsp());
}

TEST(FalconTest, AFalconThatNeverHaltsTimesOut) {
  FalconTestBench bench;
  bench.gsp().InjectNeverHalt(true);
  Falcon gsp(bench.bar0(), kAd102GspFalcon, kShortTimeout, kShortTimeout);
  ASSERT_TRUE(gsp.Reset().ok());
  gsp.Start();
  const absl::Status status = gsp.WaitForHalt("the test ucode");
  EXPECT_EQ(status.code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_TRUE(absl::StrContains(status.message(), "GSP falcon: run: the test ucode did not halt within 20ms"))
      << status;
  EXPECT_TRUE(absl::StrContains(status.message(), "NV_PFALCON_FALCON_CPUCTL = 0x00000000 (STARTCPU=0 HALTED=0"))
      << status;
}

TEST(FalconTest, RiscvActiveReadsTheRiscvCore) {
  FalconTestBench bench;
  bench.gsp().SetRiscvStartHandler([] { return true; });
  Falcon gsp(bench.bar0(), kAd102GspFalcon);
  ASSERT_TRUE(gsp.Reset().ok());
  EXPECT_FALSE(gsp.RiscvActive());
  gsp.SelectRiscv();
  gsp.Start();
  EXPECT_TRUE(gsp.RiscvActive());
  EXPECT_EQ(bench.gsp().riscv_starts(), 1);
}

TEST(FalconTest, Sec2ResetSkipsTheCoreSelection) {
  FalconTestBench bench;
  Falcon sec2(bench.bar0(), kAd102Sec2Falcon);
  ASSERT_TRUE(sec2.Reset().ok());
  EXPECT_FALSE(bench.sec2().in_reset());
  EXPECT_TRUE(bench.sec2().log().empty()) << Log(bench.sec2());
}

}  // namespace
}  // namespace nv
