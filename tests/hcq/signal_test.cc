// Signals: host and device writes, waits (late, timed out, with the queue's state in the error), timestamps.
#include "hcq/signal.h"

#include <cstdlib>

#include "absl/strings/match.h"
#include "hcq/device.h"
#include "tests/hcq/hcq_fixture.h"

namespace hcq {
namespace {

auto* const kStateDir = am::sim::testing::RegisterSimStateDir();

using SignalTest = testing::HcqTest;

TEST_F(SignalTest, HostValueRoundTrips) {
  auto signal = dev_->NewSignal(7);
  ASSERT_TRUE(signal.ok()) << signal.status();
  EXPECT_EQ(signal->value(), 7u);
  signal->set_value(42);
  EXPECT_EQ(signal->value(), 42u);
  EXPECT_TRUE(signal->wait(42, absl::Milliseconds(10)).ok());
  EXPECT_EQ(signal->wait(43, absl::Milliseconds(10)).code(), absl::StatusCode::kDeadlineExceeded);
}

TEST_F(SignalTest, ComputeQueueSignalsAfterAWaitTheHostSatisfiesLate) {
  auto gate = dev_->NewSignal(0);
  auto done = dev_->NewSignal(0);
  ASSERT_TRUE(gate.ok() && done.ok());
  auto queue = dev_->NewComputeQueue();
  queue->wait(*gate, 5).signal(*done, 9);
  ASSERT_TRUE(queue->submit(*dev_).ok());
  // The queue is stuck on the wait: the error says so.
  absl::Status timed_out = done->wait(9, absl::Milliseconds(50));
  ASSERT_EQ(timed_out.code(), absl::StatusCode::kDeadlineExceeded) << timed_out;
  EXPECT_TRUE(absl::StrContains(timed_out.message(), "sim:navi31:hcq")) << timed_out;
  EXPECT_TRUE(absl::StrContains(timed_out.message(), "stopped at WAIT_REG_MEM")) << timed_out;
  EXPECT_TRUE(absl::StrContains(timed_out.message(), "rptr")) << timed_out;
  EXPECT_EQ(done->value(), 0u);
  gate->set_value(4);  // not yet enough
  EXPECT_FALSE(done->wait(9, absl::Milliseconds(20)).ok());
  gate->set_value(5);
  EXPECT_TRUE(done->wait(9, absl::Seconds(5)).ok());
  EXPECT_EQ(done->value(), 9u);
}

TEST_F(SignalTest, CopyQueueWaitsAndSignals) {
  auto gate = dev_->NewSignal(0);
  auto done = dev_->NewSignal(0);
  ASSERT_TRUE(gate.ok() && done.ok());
  auto queue = dev_->NewCopyQueue();
  queue->wait(*gate, 3).signal(*done, 11);
  ASSERT_TRUE(queue->submit(*dev_).ok());
  absl::Status timed_out = done->wait(11, absl::Milliseconds(50));
  EXPECT_TRUE(absl::StrContains(timed_out.message(), "stopped at POLL_REGMEM")) << timed_out;
  gate->set_value(3);
  EXPECT_TRUE(done->wait(11, absl::Seconds(5)).ok());
}

TEST_F(SignalTest, TimestampsComeFromTheGpuClockInMicroseconds) {
  auto a = dev_->NewSignal(0), b = dev_->NewSignal(0), c = dev_->NewSignal(0);
  ASSERT_TRUE(a.ok() && b.ok() && c.ok());
  auto compute = dev_->NewComputeQueue();
  compute->timestamp(*a).signal(*a, 1);
  ASSERT_TRUE(compute->submit(*dev_).ok());
  ASSERT_TRUE(a->wait(1, absl::Seconds(5)).ok());
  auto copy = dev_->NewCopyQueue();
  copy->timestamp(*b).signal(*b, 1);
  ASSERT_TRUE(copy->submit(*dev_).ok());
  ASSERT_TRUE(b->wait(1, absl::Seconds(5)).ok());
  EXPECT_GT(a->timestamp_ticks(), 0u);
  EXPECT_GE(b->timestamp_ticks(), a->timestamp_ticks());  // both engines read the same clock
  EXPECT_DOUBLE_EQ(a->timestamp(), static_cast<double>(a->timestamp_ticks()) / 100.0);
}

TEST_F(SignalTest, BadTimeoutEnvironmentFailsTheOpenNamingTheVariable) {
  const std::string name = "sim:navi31:timeout-env";
  ASSERT_TRUE(pci::sim::PersistentState::PowerCycle(name).ok());
  ::setenv("HCQDEV_WAIT_TIMEOUT_MS", "soon", 1);
  auto device = Device::Open(name);
  ::unsetenv("HCQDEV_WAIT_TIMEOUT_MS");
  EXPECT_EQ(device.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StrContains(device.status().message(), "HCQDEV_WAIT_TIMEOUT_MS=\"soon\"")) << device.status();
  ::setenv("HCQDEV_WAIT_TIMEOUT_MS", "20", 1);
  auto timeout = DefaultWaitTimeout();
  ::unsetenv("HCQDEV_WAIT_TIMEOUT_MS");
  ASSERT_TRUE(timeout.ok());
  EXPECT_EQ(*timeout, absl::Milliseconds(20));
}

// The limit is read once, when the device opens (a wait makes no getenv call): changing the variable later
// changes nothing for that device.
TEST_F(SignalTest, AWaitWithoutATimeoutUsesTheLimitReadAtOpen) {
  dev_.reset();
  ::setenv("HCQDEV_WAIT_TIMEOUT_MS", "20", 1);
  dev_ = testing::OpenFresh();
  ::setenv("HCQDEV_WAIT_TIMEOUT_MS", "soon", 1);
  ASSERT_NE(dev_, nullptr);
  auto signal = dev_->NewSignal(0);
  ASSERT_TRUE(signal.ok());
  absl::Status status = signal->wait(1);
  ::unsetenv("HCQDEV_WAIT_TIMEOUT_MS");
  EXPECT_EQ(status.code(), absl::StatusCode::kDeadlineExceeded) << status;
  EXPECT_TRUE(absl::StrContains(status.message(), "after 20ms waiting for 1")) << status;
}

TEST_F(SignalTest, PoolRunsOutWithAClearError) {
  std::vector<Signal> taken;
  absl::Status status;
  for (int i = 0; i < 1000; ++i) {
    auto signal = dev_->NewSignal();
    if (!signal.ok()) {
      status = signal.status();
      break;
    }
    taken.push_back(*signal);
  }
  EXPECT_EQ(status.code(), absl::StatusCode::kResourceExhausted);
  // 4096 bytes of 16-byte signals, two of them the timelines.
  EXPECT_EQ(taken.size(), 256u - 2);
  dev_->FreeSignal(taken.back());
  EXPECT_TRUE(dev_->NewSignal().ok());
}

// Issue 19, defect 5: values are 32 bits on the host as on the engines. A host value beyond 32 bits is taken modulo
// 2^32 (no stale upper half for an engine's 32-bit write to leave behind), and commands with such a constant are
// refused.
TEST_F(SignalTest, ValuesAreThirtyTwoBitsOnTheHostAsOnTheEngines) {
  auto signal = dev_->NewSignal(0);
  ASSERT_TRUE(signal.ok());
  signal->set_value((uint64_t{1} << 32) | 5);
  EXPECT_EQ(signal->value(), 5u);
  auto queue = dev_->NewComputeQueue();
  queue->signal(*signal, 7);
  ASSERT_TRUE(queue->submit(*dev_).ok());
  ASSERT_TRUE(signal->wait(7, absl::Seconds(5)).ok());
  EXPECT_EQ(signal->value(), 7u);
  auto too_big = dev_->NewComputeQueue();
  too_big->wait(*signal, uint64_t{1} << 32);
  absl::Status refused = too_big->submit(*dev_);
  EXPECT_EQ(refused.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StrContains(refused.message(), "32 bits")) << refused;
  EXPECT_EQ(signal->wait(uint64_t{1} << 32, absl::Milliseconds(1)).code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace hcq
