// Queues: building, submitting through the ring (wrap-around, back-pressure), binding, variables, the timeline and
// its rollover, memory barriers.
#include "hcq/hw_queue.h"

#include <cstring>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "hcq/device.h"
#include "tests/hcq/hcq_fixture.h"

namespace hcq {
namespace {

auto* const kStateDir = am::sim::testing::RegisterSimStateDir();

using HwQueueTest = testing::HcqTest;

TEST_F(HwQueueTest, SignalValuesComeFromVariablesAtEachSubmit) {
  auto signal = dev_->NewSignal(0);
  ASSERT_TRUE(signal.ok());
  const Variable value{0};
  auto queue = dev_->NewComputeQueue();
  queue->signal(*signal, value);
  ASSERT_EQ(queue->patches().size(), 1u);
  for (uint64_t v : {5u, 17u, 1234u}) {
    const uint64_t vals[] = {v};
    ASSERT_TRUE(queue->submit(*dev_, vals).ok());
    ASSERT_TRUE(signal->wait(v, absl::Seconds(5)).ok());
    EXPECT_EQ(signal->value(), v);
  }
}

TEST_F(HwQueueTest, WaitValuesComeFromVariablesToo) {
  auto gate = dev_->NewSignal(0), done = dev_->NewSignal(0);
  ASSERT_TRUE(gate.ok() && done.ok());
  auto queue = dev_->NewCopyQueue();
  queue->wait(*gate, Variable{1}).signal(*done, Variable{0});
  const uint64_t first[] = {1, 0};  // waits for 0: runs at once
  ASSERT_TRUE(queue->submit(*dev_, first).ok());
  ASSERT_TRUE(done->wait(1, absl::Seconds(5)).ok());
  const uint64_t second[] = {2, 3};  // waits for the gate to reach 3
  ASSERT_TRUE(queue->submit(*dev_, second).ok());
  EXPECT_FALSE(done->wait(2, absl::Milliseconds(30)).ok());
  gate->set_value(3);
  EXPECT_TRUE(done->wait(2, absl::Seconds(5)).ok());
}

TEST_F(HwQueueTest, MissingVariableValueIsAnError) {
  auto signal = dev_->NewSignal(0);
  ASSERT_TRUE(signal.ok());
  auto queue = dev_->NewComputeQueue();
  queue->signal(*signal, Variable{2});
  const uint64_t vals[] = {1, 2};
  absl::Status status = queue->submit(*dev_, vals);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StrContains(status.message(), "variable 2")) << status;
}

TEST_F(HwQueueTest, BoundQueuesRunByReferenceAndPatchInPlace) {
  auto signal = dev_->NewSignal(0);
  ASSERT_TRUE(signal.ok());
  for (bool copy : {false, true}) {
    std::unique_ptr<HwQueue> queue;
    if (copy) {
      auto q = dev_->NewCopyQueue();
      q->signal(*signal, Variable{0});
      queue = std::move(q);
    } else {
      auto q = dev_->NewComputeQueue();
      q->memory_barrier().signal(*signal, Variable{0});
      queue = std::move(q);
    }
    ASSERT_TRUE(queue->bind(*dev_).ok());
    EXPECT_TRUE(queue->bound());
    for (uint64_t v = 1; v <= 100; ++v) {
      const uint64_t vals[] = {v + (copy ? 1000 : 0)};
      ASSERT_TRUE(queue->submit(*dev_, vals).ok()) << v;
      ASSERT_TRUE(signal->wait(vals[0], absl::Seconds(5)).ok()) << v;
    }
    EXPECT_EQ(signal->value(), copy ? 1100u : 100u);
  }
}

TEST_F(HwQueueTest, ManySubmitsWrapBothRings) {
  auto signal = dev_->NewSignal(0);
  ASSERT_TRUE(signal.ok());
  auto compute = dev_->NewComputeQueue();
  auto copy = dev_->NewCopyQueue();
  // Ping-pong between the engines: 64 KiB rings, 3000 submits of 15 (PM4) or 10 (SDMA) dwords go around each
  // several times, and each engine runs ahead of the host until the ring is full (back-pressure).
  for (uint64_t v = 1; v <= 3000; ++v) {
    compute->reset();
    compute->wait(*signal, v * 2 - 2).signal(*signal, v * 2 - 1);
    ASSERT_TRUE(compute->submit(*dev_).ok()) << v;
    copy->reset();
    copy->wait(*signal, v * 2 - 1).signal(*signal, v * 2);
    ASSERT_TRUE(copy->submit(*dev_).ok()) << v;
  }
  absl::Status done = signal->wait(6000, absl::Seconds(10));
  EXPECT_TRUE(done.ok()) << done;
}

TEST_F(HwQueueTest, TimelineOrdersQueuesAcrossEngines) {
  auto compute = dev_->NewComputeQueue();
  auto copy = dev_->NewCopyQueue();
  const Signal& timeline = dev_->timeline_signal();
  for (int i = 0; i < 50; ++i) {
    compute->reset();
    compute->wait(timeline, dev_->timeline_value() - 1).signal(timeline, dev_->next_timeline());
    ASSERT_TRUE(compute->submit(*dev_).ok());
    copy->reset();
    copy->wait(timeline, dev_->timeline_value() - 1).signal(timeline, dev_->next_timeline());
    ASSERT_TRUE(copy->submit(*dev_).ok());
  }
  ASSERT_TRUE(dev_->synchronize().ok());
  EXPECT_EQ(timeline.value(), 100u);
  EXPECT_EQ(dev_->timeline_value(), 101u);
}

class RolloverTest : public testing::HcqTest {
 protected:
  DeviceOptions Options() override { return {.timeline_wrap = 10}; }
};

TEST_F(RolloverTest, SynchronizePastTheWrapContinuesOnTheShadowSignal) {
  const uint64_t first = dev_->timeline_signal().value_address();
  const uint64_t shadow = dev_->shadow_timeline_signal().value_address();
  ASSERT_NE(first, shadow);
  auto queue = dev_->NewComputeQueue();
  for (int i = 0; i < 12; ++i) {
    queue->reset();
    queue->wait(dev_->timeline_signal(), dev_->timeline_value() - 1)
        .signal(dev_->timeline_signal(), dev_->next_timeline());
    ASSERT_TRUE(queue->submit(*dev_).ok());
  }
  ASSERT_TRUE(dev_->synchronize().ok());
  EXPECT_EQ(dev_->timeline_signal().value_address(), shadow);
  EXPECT_EQ(dev_->shadow_timeline_signal().value_address(), first);
  EXPECT_EQ(dev_->timeline_value(), 1u);
  EXPECT_EQ(dev_->timeline_signal().value(), 0u);
  EXPECT_EQ(dev_->shadow_timeline_signal().value(), 12u);
  // Work continues from 1 on the new signal.
  queue->reset();
  queue->wait(dev_->timeline_signal(), dev_->timeline_value() - 1)
      .signal(dev_->timeline_signal(), dev_->next_timeline());
  ASSERT_TRUE(queue->submit(*dev_).ok());
  ASSERT_TRUE(dev_->synchronize().ok());
  EXPECT_EQ(dev_->timeline_signal().value(), 1u);
}

TEST_F(HwQueueTest, QueueTooBigForTheRingMustBeBound) {
  auto signal = dev_->NewSignal(0);
  ASSERT_TRUE(signal.ok());
  auto queue = dev_->NewComputeQueue();
  for (int i = 0; i < 3000; ++i) queue->signal(*signal, i);  // 24000 dwords > the 16384-dword ring
  absl::Status status = queue->submit(*dev_);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StrContains(status.message(), "bind")) << status;
  ASSERT_TRUE(queue->bind(*dev_).ok());
  ASSERT_TRUE(queue->submit(*dev_).ok());
  EXPECT_TRUE(signal->wait(2999, absl::Seconds(10)).ok());
}

// A copy with variable addresses split into several packets: each packet's addresses are the variables plus the
// bytes copied before it (and the caller's addend), patched at submit as a low and a high dword.
class SmallCopyPacketTest : public testing::HcqTest {
 protected:
  DeviceOptions Options() override { return {.max_copy_packet_bytes = kPacket}; }
  static constexpr uint64_t kPacket = 1000;  // not a power of two: pieces end mid-word
};

TEST_F(SmallCopyPacketTest, VariableAddressesSplitIntoPacketsWithAddends) {
  constexpr uint64_t kBytes = 3500, kFrom = 24, kTo = 40;  // 4 packets: 1000, 1000, 1000, 500
  auto source = dev_->allocator().alloc(kFrom + kBytes, {.kind = MemoryKind::kHost});
  auto destination = dev_->allocator().alloc(kTo + kBytes, {.kind = MemoryKind::kHost});
  auto done = dev_->NewSignal(0);
  ASSERT_TRUE(source.ok() && destination.ok() && done.ok());
  for (uint64_t i = 0; i < kFrom + kBytes; ++i) source->cpu()[i] = static_cast<uint8_t>(i * 31 + 3);
  std::memset(destination->cpu(), 0, kTo + kBytes);
  auto queue = dev_->NewCopyQueue();
  queue->copy(Value(Variable{0}, kTo), Value(Variable{1}, kFrom), kBytes).signal(*done, 1);
  EXPECT_EQ(queue->patches().size(), 4u * 4u);  // per packet: destination lo/hi, source lo/hi
  ASSERT_TRUE(queue->bind(*dev_).ok());
  const uint64_t vals[] = {destination->va(), source->va()};
  ASSERT_TRUE(queue->submit(*dev_, vals).ok());
  ASSERT_TRUE(done->wait(1, absl::Seconds(10)).ok());
  EXPECT_EQ(std::memcmp(destination->cpu() + kTo, source->cpu() + kFrom, kBytes), 0);
  EXPECT_EQ(destination->cpu()[kTo - 1], 0);
}

TEST_F(HwQueueTest, AVariableAddressIsTwoPatchesAndTheLowOneChecksAlignment) {
  auto queue = dev_->NewComputeQueue();
  queue->signal_at(Value(Variable{3}, 0x10), 1);
  ASSERT_EQ(queue->patches().size(), 2u);
  EXPECT_EQ(queue->patches()[0].variable, 3u);
  EXPECT_EQ(queue->patches()[0].shift, 0u);
  EXPECT_EQ(queue->patches()[0].addend, 0x10u);
  EXPECT_EQ(queue->patches()[0].align_mask, HwQueue::kSignalAlignment - 1);
  EXPECT_EQ(queue->patches()[1].shift, 32u);
  EXPECT_EQ(queue->patches()[1].offset, queue->patches()[0].offset + 1);  // RELEASE_MEM: address lo, then hi
  EXPECT_EQ(queue->patches()[1].align_mask, 0u);
}

}  // namespace
}  // namespace hcq

namespace hcq {
namespace {

// Issue 23, defect 1: a queue used by two threads at once is stopped where the misuse is (a library built without
// NDEBUG), not left to interleave commands into the ring. The first thread holds the queue (as it would while
// building), a second one builds into it.
TEST_F(HwQueueTest, ASecondThreadInsideAQueueAbortsWithAMessage) {
#ifdef NDEBUG
  GTEST_SKIP() << "the check is compiled out with NDEBUG";
#endif
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  auto queue = dev_->NewComputeQueue();
  const Signal& timeline = dev_->timeline_signal();
  EXPECT_DEATH(
      {
        HwQueue::UseScope held(*queue);
        std::thread([&] { queue->signal(timeline, 1); }).join();
      },
      "a queue of sim:navi31:hcq is used by two threads at once");
  // One thread holding it across calls (nested) is fine, and so is another thread after it let go.
  {
    HwQueue::UseScope held(*queue);
    queue->signal(timeline, dev_->next_timeline());
  }
  std::thread([&] { EXPECT_TRUE(queue->submit(*dev_).ok()); }).join();
  EXPECT_TRUE(dev_->synchronize().ok());
}

}  // namespace
}  // namespace hcq
