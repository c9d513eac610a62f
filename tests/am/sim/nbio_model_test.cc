// NBIO/HDP behaviour of the virtual Navi31, through its BARs as a driver meets it.
#include "am/sim/nbio_model.h"

#include "am/regs/nbio.h"
#include "am/regs/register_space.h"
#include "am/sim/navi31.h"
#include "gtest/gtest.h"
#include "pci/open.h"
#include "tests/am/sim/bar5.h"
#include "tests/am/sim/sim_state_dir.h"

namespace am::sim {
namespace {

auto* const kStateDir = testing::RegisterSimStateDir();

using ::am::sim::testing::Bar5;
using Nbio = regs::IpRegisters<regs::Ip::kNbio, Bar5>;

class NbioModelTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto device = pci::Open("sim:navi31:nbio");
    ASSERT_TRUE(device.ok()) << device.status();
    device_ = std::move(*device);
    bar5_.emplace(*device_->MapMmio(5));
    nbio_.emplace(*Nbio::Create(*bar5_, Navi31Bases()));
  }
  Navi31& navi31() { return static_cast<Navi31&>(*device_); }

  std::unique_ptr<pci::Device> device_;
  std::optional<Bar5> bar5_;
  std::optional<Nbio> nbio_;
};

TEST_F(NbioModelTest, HdpFlushRequestIsAnsweredInDone) {
  EXPECT_EQ(nbio_->Read<regs::nbio::BIF_BX_PF0_GPU_HDP_FLUSH_DONE>().cp0(), 0u);
  nbio_->Write(regs::nbio::BIF_BX_PF0_GPU_HDP_FLUSH_REQ{}.cp0(1).sdma0(1));
  auto done = nbio_->Read<regs::nbio::BIF_BX_PF0_GPU_HDP_FLUSH_DONE>();
  EXPECT_EQ(done.cp0(), 1u);
  EXPECT_EQ(done.sdma0(), 1u);
  EXPECT_EQ(done.cp1(), 0u);
  EXPECT_EQ(navi31().nbio().hdp_flushes(), 1u);
}

TEST_F(NbioModelTest, RemappedFlushPageFlushesAndIsNotARegister) {
  // The driver picks a page in BAR5 (Linux: the MMIO register hole) and points the remap register at it.
  constexpr uint32_t kFlushPage = 0x7f000;
  pci::Mmio bar5 = *device_->MapMmio(5);
  bar5.Write32(kFlushPage, 0);  // before remapping: an ordinary register write
  EXPECT_EQ(navi31().nbio().hdp_flushes(), 0u);
  nbio_->Write(regs::nbio::BIF_BX0_REMAP_HDP_MEM_FLUSH_CNTL{}.set_raw(kFlushPage));
  bar5.Write32(kFlushPage, 0x1234);
  EXPECT_EQ(navi31().nbio().hdp_flushes(), 1u);
  EXPECT_EQ(bar5.Read32(kFlushPage), 0u);  // the flush write did not land in the register behind it
}

TEST_F(NbioModelTest, DoorbellsNeedTheApertureEnabled) {
  pci::Mmio doorbells = *device_->MapMmio(2);
  doorbells.Write32(0x10, 5);
  EXPECT_EQ(doorbells.Read32(0x10), 0u);
  EXPECT_EQ(navi31().dropped_doorbells(), 1u);
  nbio_->Write(regs::nbio::RCC_DEV0_EPF0_RCC_DOORBELL_APER_EN{}.bif_doorbell_aper_en(1));
  doorbells.Write32(0x10, 5);
  EXPECT_EQ(doorbells.Read32(0x10), 5u);
  EXPECT_EQ(navi31().dropped_doorbells(), 1u);
}

}  // namespace
}  // namespace am::sim
