// `baregpu pt DEVICE walk VA`: a mapping made by the driver, walked from the device's own registers and VRAM by a
// second process.
#include <regex>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_format.h"
#include "am/device.h"
#include "am/discovery.h"
#include "am/memory_manager.h"
#include "am/register_io.h"
#include "am/regs/database.h"
#include "firmware/store.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "pci/open.h"
#include "pci/sim/persistent_state.h"
#include "tests/am/sim/sim_state_dir.h"
#include "tests/tools/run_cli.h"

namespace cli {
namespace {

using ::cli::testing::RunBaregpu;

auto* const kStateDir = am::sim::testing::RegisterSimStateDir();

// Boots `name` so that its contexts are programmed as the driver programs them (range 0..2^48-1, depth 3).
void Boot(const std::string& name) {
  ASSERT_TRUE(pci::sim::PersistentState::PowerCycle(name).ok());
  auto pci = pci::Open(name);
  ASSERT_TRUE(pci.ok()) << pci.status();
  auto device = am::Device::Open(std::move(*pci));
  ASSERT_TRUE(device.ok()) << device.status();
  ASSERT_TRUE((*device)->Boot().ok());
}

// Writes a GC register of `name` by its database name, as another driver could have left it.
void WriteGcRegister(const std::string& name, const std::string& reg, uint32_t value) {
  auto device = pci::Open(name);
  ASSERT_TRUE(device.ok()) << device.status();
  auto found = am::ReadDiscovery(**device);
  ASSERT_TRUE(found.ok()) << found.status();
  const am::regs::IpBases bases = found->discovery.Bases();
  auto bar5 = (*device)->MapMmio(5);
  ASSERT_TRUE(bar5.ok()) << bar5.status();
  am::RegisterIo io(*bar5, bases);
  auto address = am::regs::ResolveAddress(bases, reg, am::regs::Ip::kGc);
  ASSERT_TRUE(address.ok()) << address.status();
  io.WriteDword(*address, value);
}

// Every "index N of M" the walk printed has N < M: no level reads past its table.
void ExpectIndicesInsideTables(const std::string& out) {
  static const std::regex kIndex(R"(index +(\d+) of +(\d+))");
  for (auto it = std::sregex_iterator(out.begin(), out.end(), kIndex); it != std::sregex_iterator(); ++it) {
    uint64_t index = 0, entries = 0;
    ASSERT_TRUE(absl::SimpleAtoi((*it)[1].str(), &index) && absl::SimpleAtoi((*it)[2].str(), &entries)) << out;
    EXPECT_LT(index, entries) << out;
  }
}

TEST(PtCommandTest, WalksADriverMappingToItsPage) {
  ASSERT_TRUE(pci::sim::PersistentState::PowerCycle("sim:navi31:pt").ok());
  uint64_t va = 0, vram = 0, va_huge = 0;
  {
    auto pci = pci::Open("sim:navi31:pt");
    ASSERT_TRUE(pci.ok()) << pci.status();
    auto device = am::Device::Open(std::move(*pci));
    ASSERT_TRUE(device.ok()) << device.status();
    ASSERT_TRUE((*device)->Boot().ok());
    vram = *(*device)->memory().AllocVram(base::MiB(4), base::MiB(2));
    va = *(*device)->memory().MapVram(vram, 4096);
    va_huge = *(*device)->memory().MapVram(vram + base::MiB(2), base::MiB(2));
  }
  auto r = RunBaregpu({"pt", "sim:navi31:pt", "walk", absl::StrFormat("%#x", va + 0x10)});
  ASSERT_EQ(r.exit_status, 0) << r.err;
  EXPECT_TRUE(absl::StrContains(r.out, absl::StrFormat("-> VRAM %#x (4 KiB page)", vram + 0x10))) << r.out;
  EXPECT_TRUE(absl::StrContains(r.out, "PDB2")) << r.out;
  EXPECT_TRUE(absl::StrContains(r.out, "READABLE WRITEABLE")) << r.out;

  auto huge = RunBaregpu({"pt", "sim:navi31:pt", "walk", absl::StrFormat("%#x", va_huge + 8), "--json"});
  ASSERT_EQ(huge.exit_status, 0) << huge.err;
  auto j = nlohmann::json::parse(huge.out);
  EXPECT_EQ(j["steps"].size(), 3u);  // PDB2, PDB1, and PDB0 holding a PDE_PTE
  EXPECT_TRUE(absl::StrContains(j["result"].get<std::string>(), "2 MiB")) << huge.out;

  auto unmapped = RunBaregpu({"pt", "sim:navi31:pt", "walk", "0x10000000"});
  ASSERT_EQ(unmapped.exit_status, 0) << unmapped.err;
  EXPECT_TRUE(absl::StrContains(unmapped.out, "not mapped")) << unmapped.out;
}

TEST(PtCommandTest, BadArgumentsAreUsageErrors) {
  EXPECT_EQ(RunBaregpu({"pt"}).exit_status, 2);
  EXPECT_EQ(RunBaregpu({"pt", "sim:navi31:pt2", "walk", "12"}).exit_status, 2);
  EXPECT_EQ(RunBaregpu({"pt", "sim:navi31:pt2", "walk", "0x1000", "--vmid=16"}).exit_status, 2);
  auto disabled = RunBaregpu({"pt", "sim:navi31:pt2", "walk", "0x1000", "--vmid=3"});
  EXPECT_EQ(disabled.exit_status, 1);
  EXPECT_TRUE(absl::StrContains(disabled.err, "disabled")) << disabled.err;
}

TEST(PtCommandTest, AnAddressPastTheContextsEndIsARangeFaultNotAWalk) {
  Boot("sim:navi31:pt3");
  // Bits above 47 make the root index 2^25 - 1 of a 512-entry table; the hardware faults on the range first.
  auto r = RunBaregpu({"pt", "sim:navi31:pt3", "walk", "0xfffffffffffff000"});
  EXPECT_EQ(r.exit_status, 1) << r.out;
  EXPECT_TRUE(absl::StrContains(r.err, "outside VM context 0's range 0x0..0xffffffffffff")) << r.err;
  EXPECT_TRUE(absl::StrContains(r.err, "range fault")) << r.err;
  EXPECT_FALSE(absl::StrContains(r.out, "index")) << r.out;

  // The last page of the range is inside it; the root table has 512 entries for the 48-bit range.
  auto last = RunBaregpu({"pt", "sim:navi31:pt3", "walk", "0xffffffffffff"});
  EXPECT_EQ(last.exit_status, 0) << last.err;
  EXPECT_TRUE(absl::StrContains(last.out, "index  511 of  512")) << last.out;
  ExpectIndicesInsideTables(last.out);
}

TEST(PtCommandTest, TheContextsProgrammedRangeBoundsTheWalk) {
  Boot("sim:navi31:pt4");
  // Context 5 covers 1 GiB from 1 GiB on (START/END are page numbers): the root table then has one entry.
  WriteGcRegister("sim:navi31:pt4", "GCVM_CONTEXT5_PAGE_TABLE_START_ADDR_LO32", 0x40000);
  WriteGcRegister("sim:navi31:pt4", "GCVM_CONTEXT5_PAGE_TABLE_END_ADDR_LO32", 0x7ffff);
  WriteGcRegister("sim:navi31:pt4", "GCVM_CONTEXT5_PAGE_TABLE_END_ADDR_HI32", 0);
  auto below = RunBaregpu({"pt", "sim:navi31:pt4", "walk", "0x3ffff000", "--vmid=5"});
  EXPECT_EQ(below.exit_status, 1) << below.out;
  EXPECT_TRUE(absl::StrContains(below.err, "outside VM context 5's range 0x40000000..0x7fffffff")) << below.err;
  auto above = RunBaregpu({"pt", "sim:navi31:pt4", "walk", "0x80000000", "--vmid=5"});
  EXPECT_EQ(above.exit_status, 1) << above.out;
  EXPECT_TRUE(absl::StrContains(above.err, "range fault")) << above.err;
  auto inside = RunBaregpu({"pt", "sim:navi31:pt4", "walk", "0x7ffff000", "--vmid=5"});
  EXPECT_EQ(inside.exit_status, 0) << inside.err;
  EXPECT_TRUE(absl::StrContains(inside.out, "index    0 of    1")) << inside.out;
  ExpectIndicesInsideTables(inside.out);
}

// Every single-bit address and its neighbours: inside the 48-bit range each level's index stays inside its table,
// outside it the answer is a range fault and nothing is read.
TEST(PtCommandTest, NoAddressWalksPastATable) {
  Boot("sim:navi31:pt5");
  for (int bit = 12; bit < 64; bit += 3) {
    for (uint64_t va : {uint64_t{1} << bit, (uint64_t{1} << bit) - 0x1000, ~uint64_t{0} << bit}) {
      auto r = RunBaregpu({"pt", "sim:navi31:pt5", "walk", absl::StrFormat("0x%x", va), "--json"});
      if (va <= 0xffff'ffff'ffff) {
        EXPECT_EQ(r.exit_status, 0) << absl::StrFormat("%#x: ", va) << r.err;
        auto j = nlohmann::json::parse(r.out, nullptr, /*allow_exceptions=*/false);
        ASSERT_FALSE(j.is_discarded()) << r.out;
        for (const auto& step : j["steps"]) {
          EXPECT_LT(step["index"].get<uint64_t>(), step["entries"].get<uint64_t>()) << r.out;
        }
      } else {
        EXPECT_EQ(r.exit_status, 1) << absl::StrFormat("%#x: ", va) << r.out;
        EXPECT_TRUE(absl::StrContains(r.err, "range fault")) << r.err;
        EXPECT_EQ(r.out, "") << r.out;
      }
    }
  }
}

}  // namespace
}  // namespace cli
