// nv/regs/database.h: name and address lookup over the generated NVIDIA tables. Addresses are read from the headers.
#include "nv/regs/database.h"

#include "absl/strings/match.h"
#include "gtest/gtest.h"
#include "nv/regs/ad102.h"
#include "nv/regs/ga102.h"
#include "nv/regs/known_registers.h"

namespace nv::regs {
namespace {

TEST(NvDatabaseTest, LookupIgnoresCase) {
  auto reg = Lookup(Chip::kGa102, "nv_pgsp_falcon_mailbox1");
  ASSERT_TRUE(reg.ok()) << reg.status();
  EXPECT_EQ(reg->name(), "NV_PGSP_FALCON_MAILBOX1");
  EXPECT_EQ(reg->offset(), 0x110044u);  // dev_gsp.h
  EXPECT_EQ(reg->source(), "open-gpu-kernel-modules-535.113.01/src/common/inc/swref/published/ampere/ga102/dev_gsp.h");
}

TEST(NvDatabaseTest, UnknownNamesSuggestSimilarOnes) {
  auto reg = Lookup(Chip::kGa102, "NV_PFALCON_FALCON_CPUCTLX");
  ASSERT_FALSE(reg.ok());
  EXPECT_EQ(reg.status().code(), absl::StatusCode::kNotFound);
  // Only AD102's headers define BSI_SECURE_SCRATCH_15.
  EXPECT_FALSE(Lookup(Chip::kGa102, "NV_PGC6_BSI_SECURE_SCRATCH_15").ok());
  EXPECT_TRUE(Lookup(Chip::kAd102, "NV_PGC6_BSI_SECURE_SCRATCH_15").ok());
}

TEST(NvDatabaseTest, IndexedFieldsAreListedPerElement) {
  auto reg = Lookup(Chip::kGa102, "NV_PMC_ENABLE");
  ASSERT_TRUE(reg.ok());
  // NV_PMC_ENABLE_DEVICE(i) (i):(i), __SIZE_1 32, and _NVDEC 15:15.
  ASSERT_EQ(reg->field_count(), 33u);
  EXPECT_EQ(reg->fields()[3].name, "DEVICE(3)");
  EXPECT_EQ(reg->fields()[3].lo, 3u);
  EXPECT_EQ(reg->fields().back().name, "NVDEC");
}

TEST(NvDatabaseTest, DecodeSplitsFields) {
  auto reg = Lookup(Chip::kGa102, "NV_PFALCON_FALCON_DMATRFCMD");
  ASSERT_TRUE(reg.ok());
  // dev_falcon_v4.h: _IMEM 4:4, _WRITE 5:5, _SIZE 10:8 (_SIZE_256B 6).
  bool saw_size = false;
  for (const DecodedField& d : Decode(*reg, 0x610)) {
    if (d.field.name == "SIZE") {
      saw_size = true;
      EXPECT_EQ(d.value, 6u);
    }
    if (d.field.name == "IMEM") {
      EXPECT_EQ(d.value, 1u);
    }
    if (d.field.name == "WRITE") {
      EXPECT_EQ(d.value, 0u);
    }
  }
  EXPECT_TRUE(saw_size);
}

TEST(NvDatabaseTest, AddressesResolveEngineRelativeRegisters) {
  // NV_PGSP is 0x113fff:0x110000 (dev_gsp.h); CPUCTL is 0x100 from a falcon's base.
  auto at = FindByAddress(Chip::kGa102, 0x110100);
  ASSERT_EQ(at.size(), 1u);
  EXPECT_EQ(at[0].reg.name(), "NV_PFALCON_FALCON_CPUCTL");
  EXPECT_EQ(at[0].engine, "gsp");
  // NV_PSEC is 0x843fff:0x840000 (dev_sec_pri.h).
  at = FindByAddress(Chip::kGa102, 0x840100);
  ASSERT_EQ(at.size(), 1u);
  EXPECT_EQ(at[0].engine, "sec2");
  // NV_FALCON2_GSP_BASE 0x00111000 + NV_PRISCV_RISCV_CPUCTL 0x388.
  at = FindByAddress(Chip::kGa102, 0x111388);
  ASSERT_EQ(at.size(), 1u);
  EXPECT_EQ(at[0].reg.name(), "NV_PRISCV_RISCV_CPUCTL");
  // NV_PGSP_MAILBOX(i) (0x110804+(i)*4): 0x11080c is element 2.
  at = FindByAddress(Chip::kGa102, 0x11080c);
  ASSERT_EQ(at.size(), 1u);
  EXPECT_EQ(at[0].reg.name(), "NV_PGSP_MAILBOX");
  EXPECT_EQ(at[0].index, 2u);
  // 0x110040 is both NV_PGSP_FALCON_MAILBOX0 (dev_gsp.h) and the GSP's NV_PFALCON_FALCON_MAILBOX0 (0x40).
  at = FindByAddress(Chip::kGa102, 0x110040);
  EXPECT_EQ(at.size(), 2u);
  EXPECT_TRUE(FindByAddress(Chip::kGa102, 0x3).empty());
}

// tinygrad's autogen nv_regs/dev_fb.py, dict tu102, as read in its text:
//   'NV_PFB_PRI_MMU_WPR2_ADDR_LO': (0x0, 0x001FA824, {'val': (4, 31)}), ..._HI: (0x0, 0x001FA828, {'val': (4, 31)}).
TEST(NvDatabaseTest, Wpr2ComesFromTuringsDevFb) {
  EXPECT_EQ(ga102::NV_PFB_PRI_MMU_WPR2_ADDR_LO::kOffset, 0x1FA824u);
  EXPECT_EQ(ad102::NV_PFB_PRI_MMU_WPR2_ADDR_LO::kOffset, 0x1FA824u);
  EXPECT_EQ(ad102::NV_PFB_PRI_MMU_WPR2_ADDR_HI::kOffset, 0x1FA828u);
  EXPECT_EQ(ad102::NV_PFB_PRI_MMU_WPR2_ADDR_HI::FromRaw(0x12345670).val(), 0x1234567u);  // VAL is 31:4
  std::vector<RegisterInfo> wpr2 = Search(Chip::kAd102, "wpr2");
  ASSERT_EQ(wpr2.size(), 2u);
  EXPECT_EQ(wpr2[0].name(), "NV_PFB_PRI_MMU_WPR2_ADDR_LO");
  EXPECT_EQ(wpr2[0].source(), "tinygrad/runtime/autogen/nv_regs/dev_fb.py (tu102)");
  ASSERT_EQ(wpr2[0].fields().size(), 1u);
  EXPECT_EQ(wpr2[0].fields()[0].hi, 31u);
  EXPECT_EQ(wpr2[0].fields()[0].lo, 4u);
}

// The offsets nouveau's code uses (nv/regs/known_registers.h, each with its file and function) are those of the
// generated registers: Turing's dev_fb.h holds for GA102 and AD102 because nouveau reads WPR2 at 0x1fa824/0x1fa828
// on both (subdev/gsp/fwsec.c nvkm_gsp_fwsec_frts).
TEST(NvDatabaseTest, NouveauUsesTheSameOffsets) {
  int checked = 0;
  for (const known::NouveauUse& use : known::kNouveauUses) {
    for (Chip chip : {Chip::kGa102, Chip::kAd102}) {
      if ((use.chips & (chip == Chip::kAd102 ? known::kAd102 : known::kGa102)) == 0) continue;
      absl::StatusOr<RegisterInfo> reg = Lookup(chip, use.name);
      ASSERT_TRUE(reg.ok()) << reg.status();
      EXPECT_EQ(reg->offset(), use.offset) << ChipName(chip) << " " << use.name << " vs nouveau " << use.source;
      ++checked;
    }
  }
  EXPECT_EQ(checked, 8);
}

// Registers no header has (known_registers.h) are listed after the generated ones and found by address.
TEST(NvDatabaseTest, HandWrittenRegistersAreFound) {
  // falcon/ga100.c ga100_flcn_fw_signature: 0x8241c0 + (ucode_id - 1) * 4 for engine_id bit 0x400. Nouveau gives
  // no count, so (as for the headers' arrays without __SIZE_1) only element 0 is placed by address.
  std::vector<AddressMatch> at = FindByAddress(Chip::kAd102, 0x8241c0);
  ASSERT_EQ(at.size(), 1u);
  EXPECT_EQ(at[0].reg.name(), "FUSE_UCODE_VERSION_ENGINE_ID_BIT10");
  EXPECT_EQ(at[0].reg.stride(), 4u);
  EXPECT_EQ(at[0].reg.count(), 0u);
  EXPECT_TRUE(absl::StartsWith(at[0].reg.source(), "nv/regs/known_registers.h: Linux 6.12 nouveau falcon/ga100.c"));
  EXPECT_EQ(at[0].reg.field_count(), 0u);
  // subdev/bios/shadowrom.c nvbios_prom_read: 0x300000 + offset, offsets below 1 MiB.
  at = FindByAddress(Chip::kGa102, 0x3ffffc);
  ASSERT_EQ(at.size(), 1u);
  EXPECT_EQ(at[0].reg.name(), "PROM_DATA");
  EXPECT_EQ(at[0].index, 0x3ffffu);
  EXPECT_TRUE(FindByAddress(Chip::kGa102, 0x400000).empty());
  EXPECT_EQ(Search(Chip::kGa102, "FUSE_UCODE_VERSION").size(), 3u);
}

TEST(NvDatabaseTest, ChipNames) {
  EXPECT_EQ(*ParseChip("AD102"), Chip::kAd102);
  EXPECT_EQ(ChipName(Chip::kGa102), "ga102");
  auto bad = ParseChip("gh100");
  ASSERT_FALSE(bad.ok());
  EXPECT_TRUE(absl::StrContains(bad.status().message(), "known: ga102, ad102"));
}

}  // namespace
}  // namespace nv::regs
