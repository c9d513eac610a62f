// The driver starts the MEC and SDMA the way Linux's gfx_v11_0 and sdma_v6_0 do, on a virtual Navi31 whose registers
// power on with the kernel's *_default.h values (issue 16: B6, B7, B8, B11 and the CP_STAT wait). Each test fails on
// the driver's former behaviour with the device error the model logs for it.
#include <atomic>
#include <string>

#include "absl/strings/match.h"
#include "absl/time/clock.h"
#include "am/device.h"
#include "am/gfx.h"
#include "am/regs/gc.h"
#include "am/regs/pm4_packets.h"
#include "am/sdma.h"
#include "am/sim/navi31.h"
#include "firmware/virtual_firmware.h"
#include "gtest/gtest.h"
#include "pci/open.h"
#include "pci/sim/persistent_state.h"
#include "tests/am/sim/sim_state_dir.h"

namespace am {
namespace {

namespace gc = regs::gc;
namespace pm4 = regs::pm4;

auto* const kStateDir = sim::testing::RegisterSimStateDir();
constexpr char kDevice[] = "sim:navi31:startup";

std::string Errors(sim::Navi31& sim) {
  std::string text;
  for (const sim::DeviceError& e : sim.errors().errors()) text += e.model + ": " + e.message + "\n";
  return text;
}

class EngineStartupTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(pci::sim::PersistentState::PowerCycle(kDevice).ok());
    Open();
  }
  void Open() {
    auto pci = pci::Open(kDevice);
    ASSERT_TRUE(pci.ok()) << pci.status();
    sim_ = static_cast<sim::Navi31*>(pci->get());
    auto device = Device::Open(std::move(*pci));
    ASSERT_TRUE(device.ok()) << device.status();
    device_ = std::move(*device);
  }

  // A RELEASE_MEM on the compute queue and a FENCE on SDMA0 both land (bounded waits).
  void BothQueuesRun(uint32_t value) {
    auto fences = device_->memory().AllocBoot(4096);
    ASSERT_TRUE(fences.ok());
    const uint64_t mc = device_->McAddress(*fences);
    ASSERT_TRUE(device_->gfx()
                    .ring()
                    .Write(pm4::ReleaseMem::Encode(mc, pm4::ReleaseData::kLow32, value, pm4::ReleaseInterrupt::kNone),
                           Gfx::kTimeout)
                    .ok());
    ASSERT_TRUE(device_->sdma().Fence(mc + 4, value).ok());
    std::span<uint8_t> view = *device_->memory().CpuView(*fences, 8);
    auto* words = reinterpret_cast<uint32_t*>(view.data());
    const absl::Time deadline = absl::Now() + absl::Seconds(5);
    while (std::atomic_ref<uint32_t>(words[0]).load() != value) {
      ASSERT_LT(absl::Now(), deadline) << "the compute queue's fence never landed:\n" << Errors(*sim_);
    }
    while (std::atomic_ref<uint32_t>(words[1]).load() != value) {
      ASSERT_LT(absl::Now(), deadline) << "the SDMA fence never landed:\n" << Errors(*sim_);
    }
  }

  // The HQD register of MEC1 pipe 0 queue 0 (the driver's queue), read under its GRBM selection.
  template <typename R>
  R ReadHqd() {
    auto g = device_->Regs<regs::Ip::kGc>();
    g.Write(gc::GRBM_GFX_CNTL{}.meid(1).pipeid(0).queueid(0));
    const R value = g.Read<R>();
    g.Write(gc::GRBM_GFX_CNTL{}.set_raw(0));
    return value;
  }

  sim::Navi31* sim_ = nullptr;  // owned by device_
  std::unique_ptr<Device> device_;
};

TEST_F(EngineStartupTest, RegistersPowerOnWithTheKernelsDefaults) {
  auto g = device_->Regs<regs::Ip::kGc>();
  EXPECT_EQ(g.Read<gc::CP_MEC_RS64_CNTL>().raw(), gc::CP_MEC_RS64_CNTL::kDefault);
  EXPECT_EQ(g.Read<gc::CP_MEC_RS64_CNTL>().mec_halt(), 1u);
  EXPECT_EQ(g.Read<gc::SDMA0_F32_CNTL>().raw(), gc::SDMA0_F32_CNTL::kDefault);
  EXPECT_EQ(g.Read<gc::SDMA0_F32_CNTL>().halt(), 1u);
  EXPECT_EQ(ReadHqd<gc::CP_HQD_PQ_CONTROL>().raw(), gc::CP_HQD_PQ_CONTROL::kDefault);
  EXPECT_EQ(ReadHqd<gc::CP_MEC_RS64_PRGRM_CNTR_START>().raw(), gc::CP_MEC_RS64_PRGRM_CNTR_START::kDefault);
}

TEST_F(EngineStartupTest, AFullBootStartsBothEnginesWithoutDeviceErrors) {
  const absl::Status boot = device_->Boot();
  ASSERT_TRUE(boot.ok()) << boot << "\n" << Errors(*sim_);
  BothQueuesRun(1);
  EXPECT_TRUE(sim_->errors().errors().empty()) << Errors(*sim_);
  EXPECT_TRUE(device_->Fini().ok());
}

TEST_F(EngineStartupTest, TheMecRunsFromTheFirmwaresStartAddress) {
  ASSERT_TRUE(device_->Boot().ok());
  const uint64_t start = firmware::VirtualUcodeStartAddress(firmware::FileKind::kMec);
  EXPECT_EQ(ReadHqd<gc::CP_MEC_RS64_PRGRM_CNTR_START>().ip_start(), static_cast<uint32_t>(start >> 2));
  EXPECT_EQ(ReadHqd<gc::CP_MEC_RS64_PRGRM_CNTR_START_HI>().ip_start(), static_cast<uint32_t>(start >> 34));
  EXPECT_FALSE(absl::StrContains(Errors(*sim_), "fetches no valid instruction")) << Errors(*sim_);
  EXPECT_FALSE(absl::StrContains(Errors(*sim_), "was not reset since")) << Errors(*sim_);
  EXPECT_FALSE(absl::StrContains(Errors(*sim_), "CP_STAT reads busy")) << Errors(*sim_);
}

TEST_F(EngineStartupTest, SdmaKeepsThePowerOnFieldsItDoesNotProgram) {
  ASSERT_TRUE(device_->Boot().ok());
  auto g = device_->Regs<regs::Ip::kGc>();
  const auto f32 = g.Read<gc::SDMA0_F32_CNTL>();
  const auto reset = gc::SDMA0_F32_CNTL::FromRaw(gc::SDMA0_F32_CNTL::kDefault);
  EXPECT_EQ(f32.halt(), 0u);
  EXPECT_EQ(f32.th1_enable(), reset.th1_enable());
  EXPECT_EQ(f32.th0_priority(), reset.th0_priority());
  EXPECT_EQ(f32.th1_priority(), reset.th1_priority());
  EXPECT_EQ(g.Read<gc::SDMA0_QUEUE0_RB_CNTL>().rb_priv(), 1u);
  EXPECT_EQ(g.Read<gc::SDMA0_QUEUE0_MINOR_PTR_UPDATE>().enable(), 0u);
  EXPECT_NE(g.Read<gc::SDMA0_WATCHDOG_CNTL>().queue_hang_count(), 0u);
  EXPECT_EQ(g.Read<gc::SDMA0_UTCL1_CNTL>().resp_mode(), 3u);
  EXPECT_FALSE(absl::StrContains(Errors(*sim_), "TH1")) << Errors(*sim_);
}

TEST_F(EngineStartupTest, TheMqdStartsFromTheRegisterDefaults) {
  ASSERT_TRUE(device_->Boot().ok());
  // gfx_v11_0_compute_mqd_init: PRELOAD_SIZE 0x55 and MIN_IB_AVAIL_SIZE 3 over the power-on values.
  EXPECT_EQ(ReadHqd<gc::CP_HQD_PERSISTENT_STATE>().raw(),
            gc::CP_HQD_PERSISTENT_STATE::FromRaw(gc::CP_HQD_PERSISTENT_STATE::kDefault).preload_size(0x55).raw());
  EXPECT_EQ(ReadHqd<gc::CP_HQD_IB_CONTROL>().raw(),
            gc::CP_HQD_IB_CONTROL::FromRaw(gc::CP_HQD_IB_CONTROL::kDefault).min_ib_avail_size(3).raw());
  EXPECT_EQ(ReadHqd<gc::CP_MQD_CONTROL>().raw(), gc::CP_MQD_CONTROL::kDefault);
}

TEST_F(EngineStartupTest, APartialBootDequeuesTheLiveQueuesBeforeRewritingThem) {
  ASSERT_TRUE(device_->Boot().ok());
  BothQueuesRun(1);
  device_.reset();  // gone without fini: both queues stay live, their write pointers past 0
  Open();
  ASSERT_TRUE(device_->Boot().ok());
  ASSERT_EQ(device_->boot_kind(), BootKind::kPartial);
  BothQueuesRun(2);
  EXPECT_TRUE(sim_->errors().errors().empty()) << Errors(*sim_);
}

}  // namespace
}  // namespace am
