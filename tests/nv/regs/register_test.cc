// The typed NVIDIA registers (nv/regs/ga102.h, ad102.h) against facts read from the vendored headers' text. Each
// expectation names the header and macro it was read from.
#include <cstdint>

#include "gtest/gtest.h"
#include "nv/regs/ad102.h"
#include "nv/regs/ga102.h"

namespace nv::regs {
namespace {

using namespace ga102;  // NOLINT: the header's names are long enough

TEST(RegisterTest, ChipIdRegisters) {
  // open-gpu-doc manuals/ampere/ga100/dev_boot.ref.txt: NV_PMC_BOOT_0 0x00000000, NV_PMC_BOOT_42 0x00000A00,
  // NV_PMC_BOOT_0_MINOR_REVISION 3:0, NV_PMC_BOOT_42_MINOR_EXTENDED_REVISION 11:8.
  EXPECT_EQ(NV_PMC_BOOT_0::kOffset, 0x0u);
  EXPECT_EQ(NV_PMC_BOOT_0::kUnit, Unit::kAbsolute);
  EXPECT_EQ(NV_PMC_BOOT_42::kOffset, 0xa00u);
  EXPECT_EQ(NV_PMC_BOOT_0::FromRaw(0xabcd1235).minor_revision(), 0x5u);
  EXPECT_EQ(NV_PMC_BOOT_42::FromRaw(0x00000700).minor_extended_revision(), 0x7u);
}

TEST(RegisterTest, FalconRegistersAreRelativeToTheEngine) {
  // dev_falcon_v4.h: NV_PFALCON_FALCON_CPUCTL 0x00000100, _STARTCPU 1:1, _HALTED 4:4, _ALIAS_EN 6:6 (a field of
  // CPUCTL, defined before the CPUCTL_ALIAS register at 0x130).
  EXPECT_EQ(NV_PFALCON_FALCON_CPUCTL::kUnit, Unit::kFalcon);
  EXPECT_EQ(NV_PFALCON_FALCON_CPUCTL::kOffset, 0x100u);
  EXPECT_EQ(NV_PFALCON_FALCON_CPUCTL{}.startcpu(1).raw(), 0x2u);
  EXPECT_EQ(NV_PFALCON_FALCON_CPUCTL::FromRaw(0x10).halted(), 1u);
  EXPECT_EQ(NV_PFALCON_FALCON_CPUCTL{}.alias_en(1).raw(), 0x40u);
  EXPECT_EQ(NV_PFALCON_FALCON_CPUCTL::STARTCPU_TRUE, 1u);
  EXPECT_EQ(NV_PFALCON_FALCON_CPUCTL_ALIAS::kOffset, 0x130u);
  // dev_falcon_v4_addendum.h adds NV_PFALCON_FALCON_HWCFG2_RESET_READY 31:31 to dev_falcon_v4.h's HWCFG2 (0xf4).
  EXPECT_EQ(NV_PFALCON_FALCON_HWCFG2::kOffset, 0xf4u);
  EXPECT_EQ(NV_PFALCON_FALCON_HWCFG2::FromRaw(0x80000000).reset_ready(), 1u);
  // dev_riscv_pri.h: NV_PRISCV_RISCV_CPUCTL 0x00000388, relative to NV_FALCON2_GSP_BASE; _ACTIVE_STAT 7:7.
  EXPECT_EQ(NV_PRISCV_RISCV_CPUCTL::kUnit, Unit::kRiscv);
  EXPECT_EQ(NV_PRISCV_RISCV_CPUCTL::kOffset, 0x388u);
  EXPECT_EQ(NV_PRISCV_RISCV_CPUCTL::FromRaw(0x80).active_stat(), 1u);
}

TEST(RegisterTest, EngineBasesPlaceRelativeRegisters) {
  // dev_gsp.h: NV_PGSP 0x113fff:0x110000, NV_PGSP_FBIF_BASE 0x110600; dev_riscv_pri.h: NV_FALCON2_GSP_BASE
  // 0x00111000; dev_sec_pri.h: NV_PSEC 0x843fff:0x840000; dev_falcon_second_pri.h: NV_FALCON2_SEC_BASE 0x00841000.
  EXPECT_EQ(kGsp.falcon, 0x110000u);
  EXPECT_EQ(kGsp.fbif, 0x110600u);
  EXPECT_EQ(kGsp.AddressOf<NV_PFALCON_FALCON_CPUCTL>(), 0x110100u);
  EXPECT_EQ(kGsp.AddressOf<NV_PRISCV_RISCV_CPUCTL>(), 0x111388u);
  EXPECT_EQ(kSec2.AddressOf<NV_PFALCON_FALCON_MAILBOX0>(), 0x840040u);
  EXPECT_EQ(kSec2.AddressOf<NV_PFALCON2_FALCON_MOD_SEL>(), 0x841180u);
  // dev_fbif_v4.h: NV_PFALCON_FBIF_TRANSCFG(i) (0x00000000+(i)*4).
  EXPECT_EQ(kGsp.AddressOf<NV_PFALCON_FBIF_TRANSCFG>(2), 0x110608u);
  // Absolute registers keep their offset: the GSP's own view of its falcon's mailbox is the same address.
  EXPECT_EQ(kGsp.AddressOf<NV_PGSP_FALCON_MAILBOX0>(), kGsp.AddressOf<NV_PFALCON_FALCON_MAILBOX0>());
}

TEST(RegisterTest, ArrayRegistersAndFields) {
  // dev_gsp.h: NV_PGSP_MAILBOX(i) (0x110804+(i)*4), __SIZE_1 4; NV_PGSP_QUEUE_HEAD(i) (0x110c00+(i)*8), 8.
  EXPECT_EQ(NV_PGSP_MAILBOX::address(0), 0x110804u);
  EXPECT_EQ(NV_PGSP_MAILBOX::address(3), 0x110810u);
  EXPECT_EQ(NV_PGSP_MAILBOX::kCount, 4u);
  EXPECT_EQ(NV_PGSP_QUEUE_HEAD::address(1), 0x110c08u);
  EXPECT_EQ(NV_PGSP_QUEUE_HEAD::kCount, 8u);
  // dev_falcon_v4.h: NV_PFALCON_FALCON_DMEMC(i) (0x000001c0+(i)*8) has no __SIZE_1: count 0, unknown.
  EXPECT_EQ(NV_PFALCON_FALCON_DMEMC::kStride, 8u);
  EXPECT_EQ(NV_PFALCON_FALCON_DMEMC::kCount, 0u);
  // dev_boot.h: NV_PMC_ENABLE 0x200 with NV_PMC_ENABLE_DEVICE(i) (i):(i), __SIZE_1 32, and _NVDEC 15:15.
  EXPECT_EQ(NV_PMC_ENABLE::kOffset, 0x200u);
  EXPECT_EQ(NV_PMC_ENABLE{}.device(5, 1).raw(), 0x20u);
  EXPECT_EQ(NV_PMC_ENABLE::FromRaw(0x8000).device(15), 1u);
  EXPECT_EQ(NV_PMC_ENABLE::FromRaw(0x8000).nvdec(), 1u);
  // dev_boot.h: NV_PMC_DEVICE_ENABLE(i) (0x000000600+(i)*4), __SIZE_1 1.
  EXPECT_EQ(NV_PMC_DEVICE_ENABLE::address(0), 0x600u);
}

TEST(RegisterTest, ResetValuesFromInitValues) {
  // dev_riscv_pri.h, NV_PRISCV_RISCV_BCR_CTRL: _VALID_FALSE (R-I-V) 0 at 0:0, _CORE_SELECT_FALCON (RWI-V) 0 at
  // 4:4, _BRFETCH_TRUE (RWI-V) 1 at 8:8: the register comes out of reset as 0x100.
  EXPECT_EQ(NV_PRISCV_RISCV_BCR_CTRL::kResetValue, 0x100u);
  EXPECT_EQ(NV_PRISCV_RISCV_BCR_CTRL::kResetMask, 0x111u);
  // dev_gsp.h: NV_PGSP_FALCON_ENGINE_RESET_FALSE 0 (RWI-V) at 0:0.
  EXPECT_EQ(NV_PGSP_FALCON_ENGINE::kResetValue, 0u);
  EXPECT_EQ(NV_PGSP_FALCON_ENGINE::kResetMask, 1u);
}

TEST(RegisterTest, AliasesOfScratchRegisters) {
  // dev_gc6_island.h: NV_PGC6_AON_SECURE_SCRATCH_GROUP_05(i) (0x00118234+(i)*4); the addendum names element 0
  // NV_PGC6_AON_SECURE_SCRATCH_GROUP_05_0_GFW_BOOT with _PROGRESS 7:0, _PROGRESS_COMPLETED 0xFF.
  using Gfw = NV_PGC6_AON_SECURE_SCRATCH_GROUP_05_0_GFW_BOOT;
  EXPECT_EQ(Gfw::kOffset, 0x118234u);
  EXPECT_EQ(Gfw::FromRaw(0x1ff).progress(), Gfw::PROGRESS_COMPLETED);
  // NV_USABLE_FB_SIZE_IN_MB is NV_PGC6_AON_SECURE_SCRATCH_GROUP_42, 0x001183a4.
  EXPECT_EQ(NV_USABLE_FB_SIZE_IN_MB::kOffset, 0x1183a4u);
  // NV_PGC6_AON_FRTS_INPUT_WPR_SIZE_SECURE_SCRATCH_GROUP_03_0 is GROUP_03(0), (0x00118214+(i)*4); WPR_SIZE 15:0.
  EXPECT_EQ(NV_PGC6_AON_FRTS_INPUT_WPR_SIZE_SECURE_SCRATCH_GROUP_03_0::kOffset, 0x118214u);
  EXPECT_EQ(NV_PGC6_AON_FRTS_INPUT_WPR_SIZE_SECURE_SCRATCH_GROUP_03_0::WPR_SIZE_1MB_IN_4K, 0x100u);
  // dev_gc6_island_addendum.h: NV_PGC6_BSI_SECURE_SCRATCH_14_BOOT_STAGE_3_HANDOFF 26:26 of BSI_SECURE_SCRATCH_14
  // (0x001180f8).
  EXPECT_EQ(NV_PGC6_BSI_SECURE_SCRATCH_14::kOffset, 0x1180f8u);
  EXPECT_EQ(NV_PGC6_BSI_SECURE_SCRATCH_14{}.boot_stage_3_handoff(1).raw(), 1u << 26);
}

TEST(RegisterTest, Ad102AddsItsOwnHeaders) {
  // ada/ad102/dev_gc6_island.h: NV_PGC6_BSI_SECURE_SCRATCH_15 0x001180fc; its addendum:
  // NV_PGC6_BSI_VPR_SECURE_SCRATCH_15_SCRUBBER_HANDOFF 31:29, _DONE 0x3.
  EXPECT_EQ(ad102::NV_PGC6_BSI_SECURE_SCRATCH_15::kOffset, 0x1180fcu);
  EXPECT_EQ(ad102::NV_PGC6_BSI_VPR_SECURE_SCRATCH_15::FromRaw(0x60000000).scrubber_handoff(),
            ad102::NV_PGC6_BSI_VPR_SECURE_SCRATCH_15::SCRUBBER_HANDOFF_DONE);
  // ada/ad102/dev_bus.h: NV_PBUS_SW_SCRATCH(i) (0x00001400+(i)*4), __SIZE_1 64.
  EXPECT_EQ(ad102::NV_PBUS_SW_SCRATCH::address(2), 0x1408u);
  EXPECT_EQ(ad102::NV_PBUS_SW_SCRATCH::kCount, 64u);
  // And GA102's falcon registers, which Ada's GSP shares.
  EXPECT_EQ(ad102::NV_PGSP_FALCON_MAILBOX0::kOffset, 0x110040u);
}

TEST(RegisterTest, DecodeListsFieldsInHeaderOrder) {
  auto fields = NV_PFALCON_FALCON_DMACTL::FromRaw(0x6).Decode();
  ASSERT_EQ(fields.size(), 3u);
  EXPECT_EQ(fields[0], (FieldValue{"REQUIRE_CTX", 0}));
  EXPECT_EQ(fields[1], (FieldValue{"DMEM_SCRUBBING", 1}));
  EXPECT_EQ(fields[2], (FieldValue{"IMEM_SCRUBBING", 1}));
}

}  // namespace
}  // namespace nv::regs
