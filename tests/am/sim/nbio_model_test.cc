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
    ASSERT_TRUE(pci::sim::PersistentState::PowerCycle("sim:navi31:nbio").ok());  // no routing left by an earlier test
    auto device = pci::Open("sim:navi31:nbio");
    ASSERT_TRUE(device.ok()) << device.status();
    device_ = std::move(*device);
    bar5_.emplace(*device_->MapMmio(5));
    nbio_.emplace(*Nbio::Create(*bar5_, Navi31Bases()));
  }
  Navi31& navi31() { return static_cast<Navi31&>(*device_); }
  // The values nbio_v4_3_gc_doorbell_init writes (entries 0 and 3) and nbio_v4_3_sdma_doorbell_range computes for
  // Navi31 (entry 2: SDMA engine 0's dword index 0x200, 20 dwords for each of two instances). The test stands in
  // for the RSMU path the driver uses to reach them beyond BAR5.
  void ProgramS2aAsAmdgpu() {
    auto nbio = *regs::IpRegisters<regs::Ip::kNbio, RegisterFile>::Create(navi31().registers(), Navi31Bases());
    nbio.Write(regs::nbio::S2A_DOORBELL_ENTRY_0_CTRL{}.set_raw(0x30000007));
    nbio.Write(regs::nbio::S2A_DOORBELL_ENTRY_3_CTRL{}.set_raw(0x3000000d));
    nbio.Write(regs::nbio::S2A_DOORBELL_ENTRY_2_CTRL{}
                   .s2a_doorbell_port2_enable(1)
                   .s2a_doorbell_port2_awid(0xe)
                   .s2a_doorbell_port2_range_offset(kSdmaDoorbellDword)
                   .s2a_doorbell_port2_range_size(40)
                   .s2a_doorbell_port2_awaddr_31_28_value(0x3));
  }

  // amdgpu_doorbell.h: AMDGPU_NAVI10_DOORBELL_sDMA_ENGINE0 and _MEC_RING0 (64-bit indexes), as dword indexes.
  static constexpr uint64_t kSdmaDoorbellDword = 0x100 * 2;
  static constexpr uint64_t kMecDoorbellDword = 0x003 * 2;

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
  ProgramS2aAsAmdgpu();
  doorbells.Write32(0x10, 5);
  EXPECT_EQ(doorbells.Read32(0x10), 0u);
  EXPECT_EQ(navi31().dropped_doorbells(), 1u);
  nbio_->Write(regs::nbio::RCC_DEV0_EPF0_RCC_DOORBELL_APER_EN{}.bif_doorbell_aper_en(1));
  doorbells.Write32(0x10, 5);
  EXPECT_EQ(doorbells.Read32(0x10), 5u);
  EXPECT_EQ(navi31().dropped_doorbells(), 1u);
}

// Without S2A entries (the driver before issue 16 never wrote them) a doorbell reaches no engine: it is lost, and
// the device error log names its offset.
TEST_F(NbioModelTest, DoorbellOutsideEveryS2aEntryIsLostAndReported) {
  pci::Mmio doorbells = *device_->MapMmio(2);
  nbio_->Write(regs::nbio::RCC_DEV0_EPF0_RCC_DOORBELL_APER_EN{}.bif_doorbell_aper_en(1));
  doorbells.Write32(kSdmaDoorbellDword * 4, 0x40);
  EXPECT_EQ(doorbells.Read32(kSdmaDoorbellDword * 4), 0u);
  EXPECT_EQ(navi31().dropped_doorbells(), 1u);
  ASSERT_EQ(navi31().errors().errors().size(), 1u);
  const DeviceError error = navi31().errors().errors()[0];
  EXPECT_EQ(error.model, "nbio");
  EXPECT_NE(error.message.find("BAR2 offset 0x800 (dword 0x200) lost"), std::string::npos) << error.message;
}

// With the entries as nbio_v4_3 programs them, an SDMA doorbell wakes only the SDMA port's engines, a MEC doorbell
// only GC's.
TEST_F(NbioModelTest, EachDoorbellReachesOnlyThePortWhoseEntryCoversIt) {
  nbio_->Write(regs::nbio::RCC_DEV0_EPF0_RCC_DOORBELL_APER_EN{}.bif_doorbell_aper_en(1));
  ProgramS2aAsAmdgpu();
  DoorbellRouter gc(navi31().doorbells(), DoorbellPort::kGc), sdma(navi31().doorbells(), DoorbellPort::kSdma);
  int gc_wakes = 0, sdma_wakes = 0;
  gc.Subscribe(kSdmaDoorbellDword, /*is_64bit=*/true, [&] { ++gc_wakes; });
  sdma.Subscribe(kSdmaDoorbellDword, /*is_64bit=*/true, [&] { ++sdma_wakes; });
  gc.Subscribe(kMecDoorbellDword, /*is_64bit=*/true, [&] { ++gc_wakes; });
  sdma.Subscribe(kMecDoorbellDword, /*is_64bit=*/true, [&] { ++sdma_wakes; });
  pci::Mmio doorbells = *device_->MapMmio(2);
  doorbells.Write64(kSdmaDoorbellDword * 4, 0x100);
  EXPECT_EQ(sdma_wakes, 1);
  EXPECT_EQ(gc_wakes, 0);
  doorbells.Write64(kMecDoorbellDword * 4, 0x100);
  EXPECT_EQ(sdma_wakes, 1);
  EXPECT_EQ(gc_wakes, 1);
  EXPECT_EQ(navi31().dropped_doorbells(), 0u);
}

// GC's entries alone do not take SDMA's doorbells to SDMA; an entry with another AWID leads nowhere.
TEST_F(NbioModelTest, SdmaDoorbellNeedsEntry2WithSdmasAwid) {
  nbio_->Write(regs::nbio::RCC_DEV0_EPF0_RCC_DOORBELL_APER_EN{}.bif_doorbell_aper_en(1));
  ProgramS2aAsAmdgpu();
  auto nbio = *regs::IpRegisters<regs::Ip::kNbio, RegisterFile>::Create(navi31().registers(), Navi31Bases());
  nbio.Write(regs::nbio::S2A_DOORBELL_ENTRY_2_CTRL::FromRaw(nbio.Read<regs::nbio::S2A_DOORBELL_ENTRY_2_CTRL>().raw())
                 .s2a_doorbell_port2_awid(0x3));
  DoorbellRouter sdma(navi31().doorbells(), DoorbellPort::kSdma);
  int sdma_wakes = 0;
  sdma.Subscribe(kSdmaDoorbellDword, /*is_64bit=*/true, [&] { ++sdma_wakes; });
  (*device_->MapMmio(2)).Write64(kSdmaDoorbellDword * 4, 0x100);
  EXPECT_EQ(sdma_wakes, 0);
  // Delivered to GC (its entries take every doorbell no ranged entry claims), where no SDMA engine listens.
  EXPECT_EQ(navi31().nbio().RouteDoorbell(kSdmaDoorbellDword), DoorbellPort::kGc);
  nbio.Write(regs::nbio::S2A_DOORBELL_ENTRY_0_CTRL{});
  EXPECT_EQ(navi31().nbio().RouteDoorbell(kMecDoorbellDword), DoorbellPort::kNone);
}

}  // namespace
}  // namespace am::sim
