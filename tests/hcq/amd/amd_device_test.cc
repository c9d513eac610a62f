// The AMD backend against the virtual Navi31's fault injection: a hung engine is detected by the signal's timeout,
// which names the device, the queue, its pointers and the packet it stopped at; after the driver's queue
// recovery, HCQ submits to the same rings again.
#include "hcq/amd/amd_device.h"

#include "absl/strings/match.h"
#include "am/sim/navi31.h"
#include "tests/hcq/hcq_fixture.h"

namespace hcq::amd {
namespace {

auto* const kStateDir = am::sim::testing::RegisterSimStateDir();

class AmdDeviceTest : public hcq::testing::HcqTest {
 protected:
  AmdDevice& amd() { return dynamic_cast<AmdDevice&>(*dev_); }
  am::sim::Navi31& sim() { return static_cast<am::sim::Navi31&>(amd().am().pci()); }
};

TEST_F(AmdDeviceTest, HungCopyEngineIsReportedThenRecovered) {
  auto signal = dev_->NewSignal(0);
  ASSERT_TRUE(signal.ok());
  sim().sdma().InjectHang(0, true);
  auto queue = dev_->NewCopyQueue();
  queue->signal(*signal, 1);
  ASSERT_TRUE(queue->submit(*dev_).ok());
  absl::Status hung = signal->wait(1, absl::Milliseconds(50));
  ASSERT_EQ(hung.code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_TRUE(absl::StrContains(hung.message(), "sim:navi31:hcq")) << hung;
  EXPECT_TRUE(absl::StrContains(hung.message(), "copy queue (SDMA0 queue 0)")) << hung;
  EXPECT_TRUE(absl::StrContains(hung.message(), "stopped at FENCE")) << hung;
  sim().sdma().InjectHang(0, false);
  // The engine may have resumed on its own; recovery makes the queue usable either way.
  auto resets = amd().am().RecoverQueues();
  ASSERT_TRUE(resets.ok()) << resets.status();
  queue->reset();
  queue->signal(*signal, 2);
  ASSERT_TRUE(queue->submit(*dev_).ok());
  EXPECT_TRUE(signal->wait(2, absl::Seconds(5)).ok());
}

TEST_F(AmdDeviceTest, HungComputeQueueIsReportedThenRecovered) {
  auto signal = dev_->NewSignal(0);
  ASSERT_TRUE(signal.ok());
  ASSERT_TRUE(sim().gfx().InjectQueueHang(0, 0));
  auto queue = dev_->NewComputeQueue();
  queue->signal(*signal, 1);
  ASSERT_TRUE(queue->submit(*dev_).ok());
  absl::Status hung = signal->wait(1, absl::Milliseconds(50));
  ASSERT_EQ(hung.code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_TRUE(absl::StrContains(hung.message(), "compute queue (MEC1 pipe 0 queue 0)")) << hung;
  EXPECT_TRUE(absl::StrContains(hung.message(), "stopped at RELEASE_MEM")) << hung;
  auto resets = amd().am().RecoverQueues();
  ASSERT_TRUE(resets.ok()) << resets.status();
  queue->reset();
  queue->signal(*signal, 2);
  ASSERT_TRUE(queue->submit(*dev_).ok());
  EXPECT_TRUE(signal->wait(2, absl::Seconds(5)).ok());
  EXPECT_EQ(signal->value(), 2u);
}

TEST_F(AmdDeviceTest, SettingAHostSignalNeedsNoHdpFlush) {
  auto signal = dev_->NewSignal(0);
  ASSERT_TRUE(signal.ok());
  EXPECT_FALSE(signal->in_device_memory());
  const uint64_t before = sim().nbio().hdp_flushes();
  signal->set_value(5);
  EXPECT_EQ(sim().nbio().hdp_flushes(), before);
}

class VramSignalTest : public AmdDeviceTest {
 protected:
  DeviceOptions Options() override { return {.signals_in_vram = true}; }
};

TEST_F(VramSignalTest, SetValueFlushesTheHdpAndReleasesAWaitingQueue) {
  auto gate = dev_->NewSignal(0), done = dev_->NewSignal(0);
  ASSERT_TRUE(gate.ok() && done.ok());
  EXPECT_TRUE(gate->in_device_memory());
  auto queue = dev_->NewComputeQueue();
  queue->wait(*gate, 1).signal(*done, 1);
  ASSERT_TRUE(queue->submit(*dev_).ok());
  EXPECT_EQ(done->wait(1, absl::Milliseconds(20)).code(), absl::StatusCode::kDeadlineExceeded);
  const uint64_t before = sim().nbio().hdp_flushes();
  gate->set_value(1);  // through BAR0: flushed through the remapped HDP page
  EXPECT_EQ(sim().nbio().hdp_flushes(), before + 1);
  EXPECT_TRUE(done->wait(1, absl::Seconds(10)).ok());
}

}  // namespace
}  // namespace hcq::amd
