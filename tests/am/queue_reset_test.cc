// Recovery after a hang or a fault: the driver notices (a bounded wait that names where the queue stands), resets
// the queue, reports exactly which packets were lost, and the queue runs new work afterwards. The virtual Navi31's
// injected hangs and real page faults stand in for the hardware's.
#include "am/queue_reset.h"

#include <atomic>
#include <cstring>

#include "am/device.h"
#include "am/gfx.h"
#include "am/gmc.h"
#include "am/ih.h"
#include "am/regs/ih_constants.h"
#include "am/regs/pm4_constants.h"
#include "am/regs/pm4_event_constants.h"
#include "am/regs/pm4_packets.h"
#include "am/sdma.h"
#include "am/sim/navi31.h"
#include "base/bits.h"
#include "firmware/store.h"
#include "gtest/gtest.h"
#include "pci/open.h"
#include "pci/sim/persistent_state.h"
#include "tests/am/sim/sim_state_dir.h"

namespace am {
namespace {

namespace pm4 = regs::pm4;

auto* const kStateDir = sim::testing::RegisterSimStateDir();
constexpr absl::Duration kShortWait = absl::Milliseconds(200);
constexpr absl::Duration kLongWait = absl::Seconds(5);

class QueueResetTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(pci::sim::PersistentState::PowerCycle("sim:navi31:reset").ok());
    auto pci = pci::Open("sim:navi31:reset");
    ASSERT_TRUE(pci.ok()) << pci.status();
    sim_ = static_cast<sim::Navi31*>(pci->get());
    auto device = Device::Open(std::move(*pci), Options());
    ASSERT_TRUE(device.ok()) << device.status();
    device_ = std::move(*device);
    ASSERT_TRUE(device_->Boot().ok());
    auto fence = device_->memory().AllocBoot(4096);
    ASSERT_TRUE(fence.ok());
    fence_ = *fence;
  }

  virtual DeviceOptions Options() const { return {}; }

  uint32_t FenceValue() {
    std::span<uint8_t> view = *device_->memory().CpuView(fence_, 4);
    return std::atomic_ref<uint32_t>(*reinterpret_cast<uint32_t*>(view.data())).load();
  }
  bool WaitForFence(uint32_t value) {
    const absl::Time deadline = absl::Now() + kLongWait;
    while (FenceValue() != value) {
      if (absl::Now() > deadline) return false;
    }
    return true;
  }
  // RELEASE_MEM writing `value` to `address` at end of pipe (8 dwords).
  static std::array<uint32_t, pm4::ReleaseMem::kDwords> ReleaseMem(uint64_t address, uint32_t value) {
    return pm4::ReleaseMem::Encode(address, pm4::ReleaseData::kLow32, value);
  }

  sim::Navi31* sim_ = nullptr;  // owned by device_
  std::unique_ptr<Device> device_;
  uint64_t fence_ = 0;
};

TEST_F(QueueResetTest, AnIdleDeviceHasNothingToRecover) {
  auto resets = device_->RecoverQueues();
  ASSERT_TRUE(resets.ok()) << resets.status();
  EXPECT_TRUE(resets->empty());
}

TEST_F(QueueResetTest, AHungComputeQueueIsReportedResetAndRunsAgain) {
  ASSERT_TRUE(sim_->gfx().InjectQueueHang(0, 0));
  ASSERT_TRUE(device_->gfx().ring().Write(ReleaseMem(device_->McAddress(fence_), 42), Gfx::kTimeout).ok());

  absl::Status wait = device_->gfx().WaitIdle(kShortWait);
  EXPECT_EQ(wait.code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_NE(wait.message().find("MEC1 pipe 0 queue 0"), std::string::npos) << wait;
  EXPECT_NE(wait.message().find("wptr 0x8"), std::string::npos) << wait;
  EXPECT_NE(wait.message().find("stuck at RELEASE_MEM"), std::string::npos) << wait;

  auto resets = device_->RecoverQueues();
  ASSERT_TRUE(resets.ok()) << resets.status();
  ASSERT_EQ(resets->size(), 1u);
  const QueueReset& reset = resets->front();
  EXPECT_EQ(reset.queue, "compute queue (MEC1 pipe 0 queue 0)");
  EXPECT_EQ(reset.rptr, 0u);
  EXPECT_EQ(reset.wptr, 8u);
  EXPECT_EQ(reset.lost_dwords, 8u);
  EXPECT_EQ(reset.lost_packets, std::vector<std::string>{"RELEASE_MEM"});
  EXPECT_NE(reset.ToString().find("lost 8 dwords (RELEASE_MEM)"), std::string::npos) << reset.ToString();
  EXPECT_TRUE(device_->gfx().idle());

  // The lost fence never lands; new work after it does.
  ASSERT_TRUE(device_->gfx().ring().Write(ReleaseMem(device_->McAddress(fence_), 43), Gfx::kTimeout).ok());
  EXPECT_TRUE(WaitForFence(43));
  EXPECT_TRUE(device_->gfx().WaitIdle(kLongWait).ok());
  EXPECT_TRUE(device_->RecoverQueues()->empty());
}

// B13: with amdgpu's defaults (vm_fault_stop 0) every hub redirects a faulting access to the dummy page
// (VM_CONTEXTn_CNTL and L2_PROTECTION_FAULT_CNTL *_PROTECTION_FAULT_ENABLE_DEFAULT): the queue runs on, the write
// lands in the dummy page, and the fault still reaches the interrupt ring decoded from the hub's status register.
// Before B13 the model stopped the queue on every fault, whatever the hub's set-up said.
TEST_F(QueueResetTest, AFaultingWriteLandsInTheDummyPageAndTheQueueRunsOn) {
  const uint64_t unmapped = VaAllocator::kStart + base::GiB(1000) + 0x40;
  ASSERT_TRUE(device_->gfx().ring().Write(ReleaseMem(unmapped, 0x5eed), Gfx::kTimeout).ok());
  ASSERT_TRUE(device_->gfx().ring().Write(ReleaseMem(device_->McAddress(fence_), 2), Gfx::kTimeout).ok());
  EXPECT_TRUE(device_->gfx().WaitIdle(kLongWait).ok());
  EXPECT_EQ(FenceValue(), 2u);
  const std::span<uint8_t> dummy = device_->gmc().dummy_page_memory();
  EXPECT_EQ(std::atomic_ref<uint32_t>(*reinterpret_cast<uint32_t*>(dummy.data() + 0x40)).load(), 0x5eedu);

  std::vector<std::string> faults;
  for (const IhEvent& event : device_->ih().Drain()) {
    if (IsPageFault(event)) faults.push_back(event.description);
  }
  ASSERT_EQ(faults.size(), 1u);
  // An invalid PTE written to: PERMISSION_FAULTS valid + write, as amdgpu's logs show (0x5).
  EXPECT_NE(faults[0].find("PERMISSION_FAULTS 0x5 (valid, write)"), std::string::npos) << faults[0];
  EXPECT_NE(faults[0].find("RW write"), std::string::npos) << faults[0];
  EXPECT_NE(faults[0].find("MAPPING_ERROR 0"), std::string::npos) << faults[0];
  EXPECT_TRUE(device_->RecoverQueues()->empty()) << "nothing stopped";
}

TEST_F(QueueResetTest, AnSdmaCopyFromAnUnmappedAddressReadsTheDummyPage) {
  auto destination = device_->memory().AllocVram(4096);
  ASSERT_TRUE(destination.ok());
  std::span<uint8_t> dummy = device_->gmc().dummy_page_memory();
  std::memset(dummy.data(), 0x5a, dummy.size());
  const uint64_t unmapped = VaAllocator::kStart + base::GiB(1000);
  ASSERT_TRUE(device_->sdma().Copy(device_->McAddress(*destination), unmapped, 4096).ok());
  ASSERT_TRUE(device_->sdma().Fence(device_->McAddress(fence_), 9).ok());
  EXPECT_TRUE(device_->sdma().WaitIdle(kLongWait).ok());
  EXPECT_EQ(FenceValue(), 9u);
  std::span<uint8_t> copied = *device_->memory().CpuView(*destination, 4096);
  EXPECT_EQ(copied[0], 0x5a);
  EXPECT_EQ(copied[4095], 0x5a);
}

// amdgpu's vm_fault_stop=2: the L2 no longer redirects faults (L2_PROTECTION_FAULT_CNTL's *_ENABLE_DEFAULT cleared),
// so the engine that faulted stops, and recovery resets it.
class FaultStopTest : public QueueResetTest {
 protected:
  DeviceOptions Options() const override { return {.vm_fault_stop = true}; }
};

TEST_F(FaultStopTest, AComputeQueueStoppedByAPageFaultIsRecovered) {
  const uint64_t unmapped = VaAllocator::kStart + base::GiB(1000);
  ASSERT_TRUE(device_->gfx().ring().Write(ReleaseMem(unmapped, 1), Gfx::kTimeout).ok());
  ASSERT_TRUE(device_->gfx().ring().Write(ReleaseMem(device_->McAddress(fence_), 2), Gfx::kTimeout).ok());
  EXPECT_FALSE(device_->gfx().WaitIdle(kShortWait).ok());
  EXPECT_NE(FenceValue(), 2u);

  // The fault reached the interrupt ring, decoded.
  bool saw_fault = false;
  for (const IhEvent& event : device_->ih().Drain()) {
    if (event.description.find("page fault") != std::string::npos) saw_fault = true;
  }
  EXPECT_TRUE(saw_fault);

  auto resets = device_->RecoverQueues();
  ASSERT_TRUE(resets.ok()) << resets.status();
  ASSERT_EQ(resets->size(), 1u);
  EXPECT_EQ(resets->front().lost_packets, (std::vector<std::string>{"RELEASE_MEM", "RELEASE_MEM"}));
  ASSERT_TRUE(device_->gfx().ring().Write(ReleaseMem(device_->McAddress(fence_), 3), Gfx::kTimeout).ok());
  EXPECT_TRUE(WaitForFence(3));
}

TEST_F(QueueResetTest, AHungSdmaEngineIsSoftResetAndRunsAgain) {
  sim_->sdma().InjectHang(0, true);
  ASSERT_TRUE(device_->sdma().Fence(device_->McAddress(fence_), 7).ok());
  ASSERT_TRUE(device_->sdma().Trap(1).ok());

  absl::Status wait = device_->sdma().WaitIdle(kShortWait);
  EXPECT_EQ(wait.code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_NE(wait.message().find("stuck at FENCE"), std::string::npos) << wait;

  auto resets = device_->RecoverQueues();
  ASSERT_TRUE(resets.ok()) << resets.status();
  ASSERT_EQ(resets->size(), 1u);
  EXPECT_EQ(resets->front().queue, "SDMA0 queue 0");
  EXPECT_EQ(resets->front().lost_packets, (std::vector<std::string>{"FENCE", "TRAP"}));
  EXPECT_EQ(resets->front().lost_dwords, 6u);
  EXPECT_NE(FenceValue(), 7u);

  // The soft reset cleared the engine's hang: new work runs.
  ASSERT_TRUE(device_->sdma().Fence(device_->McAddress(fence_), 8).ok());
  EXPECT_TRUE(WaitForFence(8));
  EXPECT_TRUE(device_->sdma().WaitIdle(kLongWait).ok());
}

TEST_F(FaultStopTest, AnSdmaCopyThatFaultsIsReportedAndTheQueueRecovers) {
  auto source = device_->memory().AllocVram(base::MiB(1));
  ASSERT_TRUE(source.ok());
  const uint64_t unmapped = VaAllocator::kStart + base::GiB(1000);
  ASSERT_TRUE(device_->sdma().Copy(unmapped, device_->McAddress(*source), 4096).ok());
  ASSERT_TRUE(device_->sdma().Fence(device_->McAddress(fence_), 9).ok());
  EXPECT_FALSE(device_->sdma().WaitIdle(kShortWait).ok());
  EXPECT_NE(FenceValue(), 9u);

  auto resets = device_->RecoverQueues();
  ASSERT_TRUE(resets.ok()) << resets.status();
  ASSERT_EQ(resets->size(), 1u);
  EXPECT_EQ(resets->front().lost_packets, (std::vector<std::string>{"COPY_LINEAR", "FENCE"}));
  ASSERT_TRUE(device_->sdma().Fence(device_->McAddress(fence_), 10).ok());
  EXPECT_TRUE(WaitForFence(10));
}

TEST_F(QueueResetTest, ALostDoorbellIsATimeoutAndRecoveryRunsTheNextSubmission) {
  // The 64-bit doorbell write is lost: the engine never hears of the fence.
  sim_->doorbells().InjectDrop(1);
  ASSERT_TRUE(device_->sdma().Fence(device_->McAddress(fence_), 11).ok());
  absl::Status wait = device_->sdma().WaitIdle(kShortWait);
  EXPECT_EQ(wait.code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_NE(wait.message().find("stuck at FENCE"), std::string::npos) << wait;
  EXPECT_EQ(sim_->dropped_doorbells(), 1u);

  auto resets = device_->RecoverQueues();
  ASSERT_TRUE(resets.ok()) << resets.status();
  ASSERT_EQ(resets->size(), 1u);
  EXPECT_EQ(resets->front().lost_packets, std::vector<std::string>{"FENCE"});
  ASSERT_TRUE(device_->sdma().Fence(device_->McAddress(fence_), 12).ok());
  EXPECT_TRUE(WaitForFence(12));
}

TEST_F(QueueResetTest, RecoveredQueuesDequeueCleanlyAtFini) {
  ASSERT_TRUE(sim_->gfx().InjectQueueHang(0, 0));
  sim_->sdma().InjectHang(0, true);
  ASSERT_TRUE(device_->gfx().ring().Write(ReleaseMem(device_->McAddress(fence_), 1), Gfx::kTimeout).ok());
  ASSERT_TRUE(device_->sdma().Fence(device_->McAddress(fence_), 2).ok());
  auto resets = device_->RecoverQueues();
  ASSERT_TRUE(resets.ok()) << resets.status();
  EXPECT_EQ(resets->size(), 2u);
  EXPECT_TRUE(device_->Fini().ok());
  EXPECT_FALSE(sim_->gfx().QueueRunning(0, 0));
}

}  // namespace
}  // namespace am
