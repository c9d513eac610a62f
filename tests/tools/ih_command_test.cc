// `baregpu ih DEVICE`: interrupts left in the ring by one process, drained and decoded by another.
#include "absl/strings/match.h"
#include "am/device.h"
#include "am/sim/navi31.h"
#include "firmware/store.h"
#include "gtest/gtest.h"
#include "pci/open.h"
#include "pci/sim/persistent_state.h"
#include "tests/am/sim/sim_state_dir.h"
#include "tests/tools/run_cli.h"

namespace cli {
namespace {

using ::cli::testing::RunBaregpu;

auto* const kStateDir = am::sim::testing::RegisterSimStateDir();

TEST(IhCommandTest, DrainsAndDecodesWhatTheDeviceLeft) {
  ASSERT_TRUE(pci::sim::PersistentState::PowerCycle("sim:navi31:ih").ok());
  {
    auto pci = pci::Open("sim:navi31:ih");
    ASSERT_TRUE(pci.ok()) << pci.status();
    auto* sim = static_cast<am::sim::Navi31*>(pci->get());
    auto device = am::Device::Open(std::move(*pci));
    ASSERT_TRUE(device.ok()) << device.status();
    ASSERT_TRUE((*device)->Boot().ok());
    sim->InjectRasInterrupt(am::sim::RasEvent::kCpEccError);
    sim->gmc().InjectPageFault({am::sim::Hub::kGc, 0, 3, "test"}, 0x7f00'0000'5000);
  }
  auto r = RunBaregpu({"ih", "sim:navi31:ih"});
  ASSERT_EQ(r.exit_status, 0) << r.err;
  // Sources by their irqsrcs_gfx_11_0_0.h names (issue 20: "source 0xc5" before).
  EXPECT_TRUE(absl::StrContains(r.out, "GRBM_CP CP_ECC_ERROR (me 0 pipe 0 queue 0)")) << r.out;
  EXPECT_TRUE(absl::StrContains(r.out, "GFX UTCL2_FAULT: page fault at 0x7f0000005000 (vmid 0, write)")) << r.out;
  // B13: the hub's own L2_PROTECTION_FAULT_STATUS, decoded field by field (an invalid page written: 0x5).
  EXPECT_TRUE(absl::StrContains(r.out,
                                "STATUS 0x00040650: VMID 0, CID 0x3 (GE2), RW write, MORE_FAULTS 0, WALKER_ERROR 0, "
                                "PERMISSION_FAULTS 0x5 (valid, write), MAPPING_ERROR 0"))
      << r.out;
  EXPECT_TRUE(absl::StrContains(r.out, "2 entries")) << r.out;
  auto again = RunBaregpu({"ih", "sim:navi31:ih"});  // drained: nothing left
  ASSERT_EQ(again.exit_status, 0) << again.err;
  EXPECT_TRUE(absl::StrContains(again.out, "0 entries")) << again.out;
}

TEST(IhCommandTest, ADeviceWithoutARingSaysSo) {
  ASSERT_TRUE(pci::sim::PersistentState::PowerCycle("sim:navi31:noih").ok());
  auto r = RunBaregpu({"ih", "sim:navi31:noih"});
  EXPECT_EQ(r.exit_status, 1);
  EXPECT_TRUE(absl::StrContains(r.err, "not enabled")) << r.err;
  EXPECT_EQ(RunBaregpu({"ih"}).exit_status, 2);
}

}  // namespace
}  // namespace cli
