// `baregpu regs find|decode --chip=...` (the NVIDIA registers) run as a user would, through the built binary.
#include <nlohmann/json.hpp>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/am/sim/sim_state_dir.h"
#include "tests/tools/run_cli.h"

namespace cli {
namespace {

using ::cli::testing::RunBaregpu;
using ::testing::ContainsRegex;
using ::testing::HasSubstr;

auto* const kStateDir = am::sim::testing::RegisterSimStateDir();

TEST(NvRegsCommandTest, FindByName) {
  auto r = RunBaregpu({"regs", "find", "MAILBOX", "--chip=ga102"});
  ASSERT_EQ(r.exit_status, 0) << r.err;
  // dev_gsp.h: NV_PGSP_MAILBOX(i) (0x110804+(i)*4), __SIZE_1 4; dev_falcon_v4.h: NV_PFALCON_FALCON_MAILBOX0 0x40.
  EXPECT_THAT(r.out, ContainsRegex("BAR0 +0x110804\\+i\\*0x4 \\(4\\) +NV_PGSP_MAILBOX +1"));
  EXPECT_THAT(r.out, ContainsRegex("falcon base +0x40 +NV_PFALCON_FALCON_MAILBOX0 +0"));
  EXPECT_TRUE(r.err.empty()) << r.err;
}

TEST(NvRegsCommandTest, FindByAddressResolvesEngines) {
  // NV_PGSP 0x113fff:0x110000 + NV_PFALCON_FALCON_CPUCTL 0x100.
  auto r = RunBaregpu({"regs", "find", "0x110100", "--chip=ad102"});
  ASSERT_EQ(r.exit_status, 0) << r.err;
  EXPECT_THAT(r.out, ContainsRegex("gsp falcon base +0x100 +NV_PFALCON_FALCON_CPUCTL +3"));
  auto json = RunBaregpu({"regs", "find", "0x11080c", "--chip=ga102", "--json"});
  ASSERT_EQ(json.exit_status, 0) << json.err;
  auto doc = nlohmann::json::parse(json.out, nullptr, /*allow_exceptions=*/false);
  ASSERT_FALSE(doc.is_discarded()) << json.out;
  ASSERT_EQ(doc["registers"].size(), 1u);
  EXPECT_EQ(doc["registers"][0]["name"], "NV_PGSP_MAILBOX");
  EXPECT_EQ(doc["registers"][0]["index"], 2);
  auto none = RunBaregpu({"regs", "find", "0x3", "--chip=ga102"});
  EXPECT_EQ(none.exit_status, 1);
  EXPECT_THAT(none.err, HasSubstr("no ga102 register is at BAR0 byte 0x3"));
}

TEST(NvRegsCommandTest, DecodePrintsFields) {
  // dev_falcon_v4.h NV_PFALCON_FALCON_DMATRFCMD: _IMEM 4:4, _WRITE 5:5, _SIZE 10:8.
  auto r = RunBaregpu({"regs", "decode", "--chip=ga102", "NV_PFALCON_FALCON_DMATRFCMD", "0x610"});
  ASSERT_EQ(r.exit_status, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("ga102 NV_PFALCON_FALCON_DMATRFCMD = 0x00000610  (falcon base 0x118)"));
  EXPECT_THAT(r.out, ContainsRegex("SIZE +\\[10:8\\] += 0x6 \\(6\\)"));
  EXPECT_THAT(r.out, ContainsRegex("IMEM +\\[4\\] += 0x1 \\(1\\)"));
  // NV_PMC_BOOT_0 (the GA100 manual): _ARCHITECTURE 28:24, so 0x192000a1 has 0x19 there.
  auto boot = RunBaregpu({"regs", "decode", "--chip=ad102", "nv_pmc_boot_0", "0x192000a1", "--json"});
  ASSERT_EQ(boot.exit_status, 0) << boot.err;
  auto doc = nlohmann::json::parse(boot.out, nullptr, /*allow_exceptions=*/false);
  ASSERT_FALSE(doc.is_discarded()) << boot.out;
  bool saw = false;
  for (const auto& f : doc["fields"]) {
    if (f["name"] == "ARCHITECTURE") {
      saw = true;
      EXPECT_EQ(f["value"], 0x19);
      EXPECT_EQ(f["hi"], 28);
      EXPECT_EQ(f["mask"], "0x1f000000");
      EXPECT_EQ(f["lo"], 24);
    }
  }
  EXPECT_TRUE(saw) << boot.out;
}

TEST(NvRegsCommandTest, FindsWpr2) {
  // tinygrad's autogen dev_fb.py (tu102): NV_PFB_PRI_MMU_WPR2_ADDR_LO 0x001FA824, _HI 0x001FA828, one field each.
  auto r = RunBaregpu({"regs", "find", "WPR2", "--chip=ad102"});
  ASSERT_EQ(r.exit_status, 0) << r.err;
  EXPECT_THAT(r.out, ContainsRegex("BAR0 +0x1fa824 +NV_PFB_PRI_MMU_WPR2_ADDR_LO +1"));
  EXPECT_THAT(r.out, ContainsRegex("BAR0 +0x1fa828 +NV_PFB_PRI_MMU_WPR2_ADDR_HI +1"));
}

TEST(NvRegsCommandTest, Errors) {
  auto chip = RunBaregpu({"regs", "find", "X", "--chip=gh100"});
  EXPECT_EQ(chip.exit_status, 2);
  EXPECT_THAT(chip.err, HasSubstr("unknown NVIDIA chip 'gh100'"));
  auto mixed = RunBaregpu({"regs", "find", "X", "--chip=ga102", "--ip=gc"});
  EXPECT_EQ(mixed.exit_status, 2);
  EXPECT_THAT(mixed.err, HasSubstr("--chip (NVIDIA) does not combine"));
  auto unknown = RunBaregpu({"regs", "decode", "--chip=ga102", "NV_PFALCON_FALCON_CPUCTLX", "1"});
  EXPECT_EQ(unknown.exit_status, 1);
  EXPECT_THAT(unknown.err, HasSubstr("no ga102 register is named 'NV_PFALCON_FALCON_CPUCTLX'"));
  // Without --chip, find is the AMD database as before.
  auto amd = RunBaregpu({"regs", "find", "CP_HQD_PQ_CONTROL"});
  EXPECT_EQ(amd.exit_status, 0) << amd.err;
}

// On an NVIDIA device, read and write take AD102 registers by name, engine.NAME or address, and decode them; an
// engine's register without its engine is refused with the two spellings that work.
TEST(RegsCommandTest, ReadsAndWritesTheVirtualAd102sRegistersByName) {
  auto boot42 = RunBaregpu({"regs", "sim:ad102:regs", "read", "NV_PMC_BOOT_42"});
  ASSERT_EQ(boot42.exit_status, 0) << boot42.err;
  // AD102 (architecture 0x19, implementation 2; nouveau's chipset 0x192), revision A1.
  EXPECT_THAT(boot42.out, HasSubstr("NV_PMC_BOOT_42 = 0x192a1000  (BAR0 0xa00)"));
  EXPECT_THAT(boot42.out, HasSubstr("ARCHITECTURE = 0x19"));
  auto hwcfg2 = RunBaregpu({"regs", "sim:ad102:regs", "read", "gsp.NV_PFALCON_FALCON_HWCFG2", "--json"});
  ASSERT_EQ(hwcfg2.exit_status, 0) << hwcfg2.err;
  auto j = nlohmann::json::parse(hwcfg2.out);
  EXPECT_EQ(j["address"], "0x1100f4");  // NV_PGSP 0x110000 + NV_PFALCON_FALCON_HWCFG2 0xf4
  auto write = RunBaregpu({"regs", "sim:ad102:regs", "write", "NV_PBUS_SW_SCRATCH(14)=0x5"});
  ASSERT_EQ(write.exit_status, 0) << write.err;
  EXPECT_THAT(write.out, HasSubstr("NV_PBUS_SW_SCRATCH(14) = 0x00000005  (BAR0 0x1438)"));
  auto bare = RunBaregpu({"regs", "sim:ad102:regs", "read", "NV_PFALCON_FALCON_CPUCTL"});
  EXPECT_EQ(bare.exit_status, 1);
  EXPECT_THAT(bare.err, HasSubstr("gsp.NV_PFALCON_FALCON_CPUCTL or sec2.NV_PFALCON_FALCON_CPUCTL"));
}

}  // namespace
}  // namespace cli
