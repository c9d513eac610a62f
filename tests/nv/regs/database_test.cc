// nv/regs/database.h: name and address lookup over the generated NVIDIA tables. Addresses are read from the headers.
#include "nv/regs/database.h"

#include "absl/strings/match.h"
#include "gtest/gtest.h"

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

TEST(NvDatabaseTest, ChipNames) {
  EXPECT_EQ(*ParseChip("AD102"), Chip::kAd102);
  EXPECT_EQ(ChipName(Chip::kGa102), "ga102");
  auto bad = ParseChip("gh100");
  ASSERT_FALSE(bad.ok());
  EXPECT_TRUE(absl::StrContains(bad.status().message(), "known: ga102, ad102"));
}

}  // namespace
}  // namespace nv::regs
