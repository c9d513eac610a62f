// The virtual Navi31's interrupt ring, programmed through BAR5 as ih_v6_0.c does, read from VRAM through BAR0.
#include "am/sim/ih_model.h"

#include <poll.h>
#include <unistd.h>

#include <cstring>

#include "am/regs/gfx_srcid_constants.h"
#include "am/regs/ih_constants.h"
#include "am/regs/mmhub.h"
#include "am/regs/nbif_srcid_constants.h"
#include "am/regs/osssys.h"
#include "am/regs/register_space.h"
#include "am/sim/navi31.h"
#include "gtest/gtest.h"
#include "pci/open.h"
#include "pci/sim/persistent_state.h"
#include "tests/am/sim/bar5.h"
#include "tests/am/sim/sim_state_dir.h"
#include "tests/am/sim/vm_context.h"

namespace am::sim {
namespace {

auto* const kStateDir = testing::RegisterSimStateDir();

using ::am::sim::testing::Bar5;
using Mmhub = regs::IpRegisters<regs::Ip::kMmhub, Bar5>;
using Osssys = regs::IpRegisters<regs::Ip::kOsssys, Bar5>;

class IhModelTest : public ::testing::Test {
 protected:
  static constexpr uint64_t kRing = 0x200000;
  static constexpr uint64_t kWptr = 0x210000;

  void SetUp() override {
    // Each test starts from a powered-off device (the state would otherwise carry over from the last test).
    ASSERT_TRUE(pci::sim::PersistentState::PowerCycle("sim:navi31:ih").ok());
    auto device = pci::Open("sim:navi31:ih");
    ASSERT_TRUE(device.ok()) << device.status();
    device_ = std::move(*device);
    bar5_.emplace(*device_->MapMmio(5));
    mmhub_.emplace(*Mmhub::Create(*bar5_, Navi31Bases()));
    osssys_.emplace(*Osssys::Create(*bar5_, Navi31Bases()));
    vram_ = *device_->MapMemory(0);
    ASSERT_TRUE(device_->SetBusMaster(true).ok());
    // The MMHUB system aperture over the FB, so that the ring's MC address reaches VRAM.
    const uint64_t fb_start = uint64_t{mmhub_->Read<regs::mmhub::MMMC_VM_FB_LOCATION_BASE>().fb_base()} << 24;
    const uint64_t fb_end = (uint64_t{mmhub_->Read<regs::mmhub::MMMC_VM_FB_LOCATION_TOP>().fb_top()} << 24) | 0xffffff;
    mmhub_->Write(regs::mmhub::MMMC_VM_SYSTEM_APERTURE_LOW_ADDR{}.set_raw(fb_start >> 18));
    mmhub_->Write(regs::mmhub::MMMC_VM_SYSTEM_APERTURE_HIGH_ADDR{}.set_raw(fb_end >> 18));
    testing::EnableHubTlb(*bar5_, Hub::kMm);  // mmhub_v3_0_init_tlb_regs: without it the hub translates nothing
    fb_start_ = fb_start;
  }
  Navi31& navi31() { return static_cast<Navi31&>(*device_); }

  void Enable(uint32_t rb_size_log2_dwords, bool intr = true) {
    osssys_->Write(regs::osssys::IH_RB_BASE{}.set_raw(static_cast<uint32_t>((fb_start_ + kRing) >> 8)));
    osssys_->Write(regs::osssys::IH_RB_BASE_HI{}.set_raw(static_cast<uint32_t>((fb_start_ + kRing) >> 40)));
    osssys_->Write(regs::osssys::IH_RB_WPTR_ADDR_LO{}.set_raw(static_cast<uint32_t>(fb_start_ + kWptr)));
    osssys_->Write(regs::osssys::IH_RB_WPTR_ADDR_HI{}.set_raw((fb_start_ + kWptr) >> 32));
    osssys_->Write(regs::osssys::IH_RB_WPTR{}.set_raw(0));
    osssys_->Write(regs::osssys::IH_RB_RPTR{}.set_raw(0));
    osssys_->Write(regs::osssys::IH_RB_CNTL{}
                       .rb_enable(1)
                       .rb_size(rb_size_log2_dwords)
                       .wptr_writeback_enable(1)
                       .wptr_overflow_enable(1)
                       .enable_intr(intr)
                       .mc_space(4));
  }
  std::array<uint32_t, 8> Entry(int index) {
    std::array<uint32_t, 8> entry;
    std::memcpy(entry.data(), vram_.data() + kRing + index * 32, 32);
    return entry;
  }
  uint32_t WrittenBackWptr() {
    uint32_t value;
    std::memcpy(&value, vram_.data() + kWptr, 4);
    return value;
  }

  std::unique_ptr<pci::Device> device_;
  std::optional<Bar5> bar5_;
  std::optional<Mmhub> mmhub_;
  std::optional<Osssys> osssys_;
  std::span<uint8_t> vram_;
  uint64_t fb_start_ = 0;
};

TEST_F(IhModelTest, EntryHasTheSoc15LayoutAndTheWptrIsWrittenBack) {
  Enable(10);
  InterruptEntry entry;
  entry.client_id = 0x14;
  entry.source_id = 0xb5;
  entry.ring_id = 0x21;
  entry.vmid = 3;
  entry.pasid = 0x8001;
  entry.node_id = 2;
  entry.src_data = {1, 2, 3, 4};
  navi31().ih().Post(entry);
  navi31().ih().Post(entry);
  const std::array<uint32_t, 8> first = Entry(0), second = Entry(1);
  EXPECT_EQ(first[0], 0x14u | 0xb5u << 8 | 0x21u << 16 | 3u << 24);
  EXPECT_EQ(first[3], 0x8001u | 2u << 16);
  EXPECT_EQ(first[4], 1u);
  EXPECT_EQ(first[7], 4u);
  const uint64_t t1 = first[1] | (uint64_t{first[2] & 0xffff} << 32);
  const uint64_t t2 = second[1] | (uint64_t{second[2] & 0xffff} << 32);
  EXPECT_LE(t1, t2);
  EXPECT_EQ(osssys_->Read<regs::osssys::IH_RB_WPTR>().raw(), 64u);
  EXPECT_EQ(WrittenBackWptr(), 64u);
}

TEST_F(IhModelTest, InterruptSignalsMsiWhenEnabled) {
  auto fds = device_->EnableInterrupts(1);
  ASSERT_TRUE(fds.ok()) << fds.status();
  Enable(10, /*intr=*/true);
  navi31().ih().Post(InterruptEntry{});
  pollfd pfd{(*fds)[0], POLLIN, 0};
  ASSERT_EQ(::poll(&pfd, 1, 5000), 1);
  uint64_t count = 0;
  ASSERT_EQ(::read((*fds)[0], &count, sizeof(count)), static_cast<ssize_t>(sizeof(count)));
  EXPECT_EQ(count, 1u);

  Enable(10, /*intr=*/false);
  navi31().ih().Post(InterruptEntry{});
  EXPECT_EQ(::poll(&pfd, 1, 0), 0);
  EXPECT_EQ(navi31().ih().delivered(), 2u);
}

TEST_F(IhModelTest, DisabledRingDropsEntries) {
  navi31().ih().Post(InterruptEntry{});
  EXPECT_EQ(navi31().ih().delivered(), 0u);
  EXPECT_EQ(navi31().ih().dropped(), 1u);
}

TEST_F(IhModelTest, FullRingOverflowsUntilCleared) {
  Enable(3);  // 8 dwords... the smallest useful ring is 2^RB_SIZE dwords: here one entry, so it fills at once
  navi31().ih().Post(InterruptEntry{});
  EXPECT_EQ(navi31().ih().dropped(), 1u);
  EXPECT_EQ(osssys_->Read<regs::osssys::IH_RB_WPTR>().rb_overflow(), 1u);

  Enable(5);  // 32 dwords: four entry slots, three usable (one stays free to tell full from empty)
  osssys_->Modify<regs::osssys::IH_RB_CNTL>([](auto& r) { r.wptr_overflow_clear(1); });
  osssys_->Modify<regs::osssys::IH_RB_CNTL>([](auto& r) { r.wptr_overflow_clear(0); });
  EXPECT_EQ(osssys_->Read<regs::osssys::IH_RB_WPTR>().rb_overflow(), 0u);
  for (int i = 0; i < 4; ++i) navi31().ih().Post(InterruptEntry{.source_id = static_cast<uint32_t>(i)});
  EXPECT_EQ(navi31().ih().delivered(), 3u);
  EXPECT_EQ(osssys_->Read<regs::osssys::IH_RB_WPTR>().rb_overflow(), 1u);
  // The driver consumes and clears: delivery resumes, wrapping to the start of the ring.
  osssys_->Write(regs::osssys::IH_RB_RPTR{}.set_raw(96));
  osssys_->Modify<regs::osssys::IH_RB_CNTL>([](auto& r) { r.wptr_overflow_clear(1); });
  ASSERT_EQ(osssys_->Read<regs::osssys::IH_RB_WPTR>().rb_overflow(), 0u);
  navi31().ih().Post(InterruptEntry{.source_id = 9});
  EXPECT_EQ(navi31().ih().dropped(), 2u);
  EXPECT_EQ(osssys_->Read<regs::osssys::IH_RB_WPTR>().offset() << 2, 0u);
  EXPECT_EQ((Entry(3)[0] >> 8) & 0xff, 9u);
}

TEST_F(IhModelTest, RptrFromTheDoorbellWhenEnabled) {
  Enable(5);
  navi31().nbio();  // the doorbell aperture must be on for BAR2 writes to land
  osssys_->Write(regs::osssys::IH_DOORBELL_RPTR{}.offset(0x30).enable(1));
  for (int i = 0; i < 3; ++i) navi31().ih().Post(InterruptEntry{});
  EXPECT_EQ(navi31().ih().delivered(), 3u);
  navi31().doorbells().Write(0x30, 96);  // the driver's rptr update through its doorbell
  navi31().ih().Post(InterruptEntry{});
  EXPECT_EQ(navi31().ih().delivered(), 4u);
}

TEST_F(IhModelTest, InjectedRasEventsArriveAsTheirInterrupts) {
  Enable(10);
  navi31().InjectRasInterrupt(RasEvent::kCpEccError);
  navi31().InjectRasInterrupt(RasEvent::kAthubErrorEvent);
  EXPECT_EQ(Entry(0)[0] & 0xffff, regs::ih::SOC21_IH_CLIENTID_GRBM_CP | regs::ih::GFX_11_0_0__SRCID__CP_ECC_ERROR << 8);
  EXPECT_EQ(Entry(1)[0] & 0xffff,
            regs::ih::SOC21_IH_CLIENTID_BIF | regs::ih::NBIF_7_4__SRCID__ERREVENT_ATHUB_INTERRUPT << 8);
  EXPECT_EQ(navi31().errors().errors().size(), 2u);
}

}  // namespace
}  // namespace am::sim
