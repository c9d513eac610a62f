// Sleeping waits: a wait that outlasts its spin sleeps on the device's interrupt and is woken by the engine that
// writes a signal (the MEC's end-of-pipe interrupt, the SDMA trap) or by a host write, each sleeper on its own.
#include "hcq/interrupt_sleep.h"

#include <memory>
#include <thread>
#include <vector>

#include "absl/time/clock.h"
#include "hcq/device.h"
#include "tests/hcq/hcq_fixture.h"

namespace hcq {
namespace {

auto* const kStateDir = am::sim::testing::RegisterSimStateDir();

constexpr absl::Duration kLimit = absl::Seconds(10);

class InterruptSleepTest : public testing::HcqTest {
 protected:
  // A gate in host memory that no device knows: writing it wakes no sleeper, so in these tests only an engine's
  // interrupt can (a queue waits on the gate, then writes the signal a host thread sleeps on).
  Signal RawGate() {
    auto buffer = dev_->allocator().alloc(Signal::kBytes, {.kind = MemoryKind::kHost});
    EXPECT_TRUE(buffer.ok()) << buffer.status();
    if (!buffer.ok()) return Signal();
    gate_buffer_ = *buffer;
    return Signal(/*device=*/nullptr, buffer->va(), buffer->cpu());
  }
  // Until `count` waits sleep on the device's interrupt.
  void AwaitSleepers(uint32_t count) {
    const absl::Time deadline = absl::Now() + kLimit;
    while (dev_->sleeping_waits() < count) {
      ASSERT_LT(absl::Now(), deadline) << "the waits never went to sleep on the interrupt";
      std::this_thread::yield();
    }
  }
  // Waits in threads of their own for `signal` to reach `value`, each wait's status in `results`.
  std::vector<std::thread> SleepOn(const Signal& signal, uint64_t value, std::vector<absl::Status>& results) {
    std::vector<std::thread> threads;
    for (absl::Status& result : results) {
      threads.emplace_back([&signal, value, &result] { result = signal.wait(value, kLimit); });
    }
    return threads;
  }

  // `queue` waits on a raw gate, then signals; `sleepers` threads wait for that signal, asleep on the device's
  // interrupt, before the host opens the gate, which wakes nobody: only the engine's interrupt can.
  template <typename Queue>
  void SignalBehindAGate(std::unique_ptr<Queue> queue, size_t sleepers) {
    Signal gate = RawGate();
    auto done = dev_->NewSignal(0);
    ASSERT_TRUE(gate.valid() && done.ok());
    queue->wait(gate, 1).signal(*done, 1);
    ASSERT_TRUE(queue->submit(*dev_).ok());
    std::vector<absl::Status> results(sleepers);
    std::vector<std::thread> waiters = SleepOn(*done, 1, results);
    AwaitSleepers(static_cast<uint32_t>(sleepers));
    gate.set_value(1);  // even when AwaitSleepers failed: the waiters then end
    for (std::thread& t : waiters) t.join();
    for (const absl::Status& result : results) EXPECT_TRUE(result.ok()) << result;
  }

  Buffer gate_buffer_;
};

TEST_F(InterruptSleepTest, TheEndOfPipeInterruptWakesASleepingWait) {
  const Device::WaitStats before = dev_->wait_stats();
  ASSERT_NO_FATAL_FAILURE(SignalBehindAGate(dev_->NewComputeQueue(), 1));
  // The MEC's RELEASE_MEM with INT_SEL was the only writer of the eventfd.
  const Device::WaitStats after = dev_->wait_stats();
  EXPECT_GE(after.interrupt_wakes - before.interrupt_wakes, 1u) << "woken only by the sleep's limit";
  EXPECT_EQ(after.blind_waits, before.blind_waits);
  EXPECT_EQ(dev_->sleeping_waits(), 0u);
}

TEST_F(InterruptSleepTest, TheSdmaTrapWakesASleepingWait) {
  const Device::WaitStats before = dev_->wait_stats();
  ASSERT_NO_FATAL_FAILURE(SignalBehindAGate(dev_->NewCopyQueue(), 1));
  EXPECT_GE(dev_->wait_stats().interrupt_wakes - before.interrupt_wakes, 1u) << "woken only by the sleep's limit";
}

TEST_F(InterruptSleepTest, OneInterruptWakesEverySleeper) {
  const Device::WaitStats before = dev_->wait_stats();
  ASSERT_NO_FATAL_FAILURE(SignalBehindAGate(dev_->NewComputeQueue(), 3));
  // Each sleeper has its own edge-triggered epoll and none reads the eventfd, so none takes another's wake-up.
  EXPECT_GE(dev_->wait_stats().interrupt_wakes - before.interrupt_wakes, 3u);
}

TEST_F(InterruptSleepTest, AHostWriteWakesASleepingWait) {
  auto signal = dev_->NewSignal(0);
  ASSERT_TRUE(signal.ok());
  const Device::WaitStats before = dev_->wait_stats();
  std::vector<absl::Status> results(1);
  std::vector<std::thread> waiters = SleepOn(*signal, 5, results);
  ASSERT_NO_FATAL_FAILURE(AwaitSleepers(1));
  signal->set_value(5);  // no engine writes it: the host write adds to the eventfd itself
  for (std::thread& t : waiters) t.join();
  EXPECT_TRUE(results[0].ok()) << results[0];
  EXPECT_GE(dev_->wait_stats().interrupt_wakes - before.interrupt_wakes, 1u) << "woken only by the sleep's limit";
}

TEST_F(InterruptSleepTest, ATimedOutSleepingWaitSaysSoAndLeavesNoSleeper) {
  auto signal = dev_->NewSignal(0);
  ASSERT_TRUE(signal.ok());
  const Device::WaitStats before = dev_->wait_stats();
  absl::Status late = signal->wait(1, absl::Milliseconds(20));
  EXPECT_EQ(late.code(), absl::StatusCode::kDeadlineExceeded) << late;
  const Device::WaitStats after = dev_->wait_stats();
  EXPECT_GE(after.timer_wakes - before.timer_wakes, 1u);
  EXPECT_EQ(dev_->sleeping_waits(), 0u);
  // The device goes on: a queue's signal after it reaches a later wait.
  auto queue = dev_->NewComputeQueue();
  queue->signal(*signal, 1);
  ASSERT_TRUE(queue->submit(*dev_).ok());
  EXPECT_TRUE(signal->wait(1, kLimit).ok());
}

TEST_F(InterruptSleepTest, ASignalOfNoDeviceSleepsInSteps) {
  // No device, no interrupt to sleep on: the wait sleeps blind in growing steps, times out, then sees a late write.
  Signal gate = RawGate();
  ASSERT_TRUE(gate.valid());
  const Device::WaitStats before = dev_->wait_stats();
  EXPECT_EQ(gate.wait(1, absl::Milliseconds(20)).code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_EQ(dev_->wait_stats().sleeps, before.sleeps);
  gate.set_value(1);
  EXPECT_TRUE(gate.wait(1, absl::Milliseconds(20)).ok());
}

}  // namespace
}  // namespace hcq
