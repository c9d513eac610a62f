// Graphs: recorded once, replayed with new values, ordered with the device's other work.
#include "hcq/graph.h"

#include <cstring>

#include "hcq/device.h"
#include "tests/hcq/hcq_fixture.h"

namespace hcq {
namespace {

auto* const kStateDir = am::sim::testing::RegisterSimStateDir();

using GraphTest = testing::HcqTest;

TEST_F(GraphTest, CopyChainReplaysInOrderAHundredTimes) {
  auto a = dev_->allocator().alloc(8192), b = dev_->allocator().alloc(8192), c = dev_->allocator().alloc(8192);
  ASSERT_TRUE(a.ok() && b.ok() && c.ok());
  Graph graph(0);
  graph.AddCopy(*dev_, b->va(), a->va(), 8192);
  graph.AddCopy(*dev_, c->va(), b->va(), 8192);
  ASSERT_TRUE(graph.Finalize().ok());
  EXPECT_EQ(graph.queues(), 1u);
  for (uint32_t run = 0; run < 100; ++run) {
    std::memset(a->cpu(), static_cast<int>(run & 0xff), 8192);
    ASSERT_TRUE(graph.Run({}).ok());
    ASSERT_TRUE(dev_->synchronize().ok());
    ASSERT_EQ(c->cpu()[0], static_cast<uint8_t>(run)) << run;
    ASSERT_EQ(c->cpu()[8191], static_cast<uint8_t>(run)) << run;
  }
  // Each run advanced the timeline once.
  EXPECT_EQ(dev_->timeline_signal().value(), 100u);
}

TEST_F(GraphTest, RunsOrderWithOtherWorkOnTheTimeline) {
  auto a = dev_->allocator().alloc(4096), b = dev_->allocator().alloc(4096);
  ASSERT_TRUE(a.ok() && b.ok());
  auto gate = dev_->NewSignal(0);
  ASSERT_TRUE(gate.ok());
  Graph graph(0);
  graph.AddCopy(*dev_, b->va(), a->va(), 4096);
  ASSERT_TRUE(graph.Finalize().ok());
  // Earlier work on the timeline that waits for the host: the graph must wait behind it.
  auto blocker = dev_->NewComputeQueue();
  blocker->wait(*gate, 1).signal(dev_->timeline_signal(), dev_->next_timeline());
  ASSERT_TRUE(blocker->submit(*dev_).ok());
  std::memset(a->cpu(), 0x5a, 4096);
  std::memset(b->cpu(), 0, 4096);
  ASSERT_TRUE(graph.Run({}).ok());
  EXPECT_FALSE(dev_->timeline_signal().wait(dev_->timeline_value() - 1, absl::Milliseconds(30)).ok());
  EXPECT_EQ(b->cpu()[0], 0);
  gate->set_value(1);
  ASSERT_TRUE(dev_->synchronize().ok());
  EXPECT_EQ(b->cpu()[0], 0x5a);
}

TEST_F(GraphTest, RunNeedsEveryVariable) {
  auto a = dev_->allocator().alloc(4096);
  ASSERT_TRUE(a.ok());
  Graph graph(2);
  graph.AddCopy(*dev_, a->va(), a->va(), 16);
  ASSERT_TRUE(graph.Finalize().ok());
  const uint64_t one[] = {1};
  EXPECT_EQ(graph.Run(one).code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace hcq
