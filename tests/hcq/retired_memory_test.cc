// A bound queue's command buffer outlives the queue until its engine has left it: destroying, resetting or
// rebinding a queue whose indirect buffer is still queued or running must not unmap it under the engine.
#include "hcq/retired_memory.h"

#include <cstring>

#include "hcq/device.h"
#include "tests/hcq/hcq_fixture.h"

namespace hcq {
namespace {

auto* const kStateDir = am::sim::testing::RegisterSimStateDir();

using RetiredMemoryTest = testing::HcqTest;

TEST_F(RetiredMemoryTest, ACopyQueueDestroyedBeforeItsIndirectBufferRanStillRunsItWhole) {
  auto a = dev_->allocator().alloc(4096), b = dev_->allocator().alloc(4096);
  auto gate = dev_->NewSignal(0), done = dev_->NewSignal(0);
  ASSERT_TRUE(a.ok() && b.ok() && gate.ok() && done.ok());
  std::memset(a->cpu(), 0x5a, 4096);
  std::memset(b->cpu(), 0, 4096);
  auto queue = dev_->NewCopyQueue();
  queue->wait(*gate, 1).copy(b->va(), a->va(), 4096).signal(*done, 1);
  ASSERT_TRUE(queue->bind(*dev_).ok());
  ASSERT_TRUE(queue->submit(*dev_).ok());
  // The engine stands at the wait inside the indirect buffer; the rest of the buffer is still to be read.
  queue.reset();
  EXPECT_EQ(dev_->retired_memory().pending(), 1u);
  gate->set_value(1);
  ASSERT_TRUE(done->wait(1).ok());
  EXPECT_EQ(b->cpu()[0], 0x5a);
  EXPECT_EQ(b->cpu()[4095], 0x5a);
  ASSERT_TRUE(dev_->synchronize().ok());
  EXPECT_EQ(dev_->retired_memory().pending(), 0u);
  EXPECT_EQ(dev_->faults(), 0u) << dev_->DescribeFaultsSince(0);
}

TEST_F(RetiredMemoryTest, AComputeQueueDestroyedBeforeItsIndirectBufferRanStillRunsItWhole) {
  auto gate = dev_->NewSignal(0), done = dev_->NewSignal(0);
  ASSERT_TRUE(gate.ok() && done.ok());
  auto queue = dev_->NewComputeQueue();
  queue->wait(*gate, 1).signal(*done, 7);
  ASSERT_TRUE(queue->bind(*dev_).ok());
  ASSERT_TRUE(queue->submit(*dev_).ok());
  queue.reset();
  EXPECT_EQ(dev_->retired_memory().pending(), 1u);
  gate->set_value(1);
  ASSERT_TRUE(done->wait(7).ok());
  ASSERT_TRUE(dev_->synchronize().ok());
  EXPECT_EQ(dev_->retired_memory().pending(), 0u);
  EXPECT_EQ(dev_->faults(), 0u) << dev_->DescribeFaultsSince(0);
}

TEST_F(RetiredMemoryTest, ResetAndRebindRetireASubmittedBindingAndFreeAnUnsubmittedOne) {
  auto gate = dev_->NewSignal(0), done = dev_->NewSignal(0);
  ASSERT_TRUE(gate.ok() && done.ok());
  auto queue = dev_->NewCopyQueue();
  queue->wait(*gate, 1).signal(*done, 1);
  ASSERT_TRUE(queue->bind(*dev_).ok());
  ASSERT_TRUE(queue->bind(*dev_).ok());  // never submitted: nothing can read the first binding
  EXPECT_EQ(dev_->retired_memory().pending(), 0u);
  ASSERT_TRUE(queue->submit(*dev_).ok());
  ASSERT_TRUE(queue->bind(*dev_).ok());  // submitted, waiting at the gate: retired
  EXPECT_EQ(dev_->retired_memory().pending(), 1u);
  ASSERT_TRUE(queue->submit(*dev_).ok());
  queue->reset();
  EXPECT_EQ(dev_->retired_memory().pending(), 2u);
  gate->set_value(1);
  ASSERT_TRUE(dev_->synchronize().ok());
  EXPECT_EQ(dev_->retired_memory().pending(), 0u);
  EXPECT_EQ(done->value(), 1u);
  EXPECT_EQ(dev_->faults(), 0u) << dev_->DescribeFaultsSince(0);
}

TEST_F(RetiredMemoryTest, AQueueResetDropsTheMarkersAndFreesWhatTheyKept) {
  auto gate = dev_->NewSignal(0);
  ASSERT_TRUE(gate.ok());
  auto queue = dev_->NewCopyQueue();
  queue->wait(*gate, 1);  // never opened
  ASSERT_TRUE(queue->bind(*dev_).ok());
  ASSERT_TRUE(queue->submit(*dev_).ok());
  queue.reset();
  EXPECT_EQ(dev_->retired_memory().pending(), 1u);
  absl::StatusOr<std::string> recovered = dev_->RecoverQueues();
  ASSERT_TRUE(recovered.ok()) << recovered.status();
  EXPECT_NE(*recovered, "");
  EXPECT_EQ(dev_->retired_memory().pending(), 0u);
  // The engine runs again, and markers after the reset count from where they were.
  auto again = dev_->NewCopyQueue();
  auto done = dev_->NewSignal(0);
  ASSERT_TRUE(done.ok());
  again->signal(*done, 3);
  ASSERT_TRUE(again->bind(*dev_).ok());
  ASSERT_TRUE(again->submit(*dev_).ok());
  again.reset();
  ASSERT_TRUE(dev_->synchronize().ok());
  EXPECT_EQ(done->value(), 3u);
  EXPECT_EQ(dev_->retired_memory().pending(), 0u);
}

TEST_F(RetiredMemoryTest, ClosingTheDeviceFreesWhatIsStillRetired) {
  auto gate = dev_->NewSignal(0);
  ASSERT_TRUE(gate.ok());
  auto queue = dev_->NewComputeQueue();
  queue->wait(*gate, 1);  // never opened: the close stops the engine with the buffer still queued
  ASSERT_TRUE(queue->bind(*dev_).ok());
  ASSERT_TRUE(queue->submit(*dev_).ok());
  queue.reset();
  EXPECT_EQ(dev_->retired_memory().pending(), 1u);
  dev_.reset();  // closes without waiting for the marker, and frees the buffer after the engines stopped (ASan)
}

}  // namespace
}  // namespace hcq
