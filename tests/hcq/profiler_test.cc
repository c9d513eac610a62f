// Profiling: copies (and kernels) bracketed by GPU timestamps, exported as Chrome trace JSON.
#include "hcq/profiler.h"

#include <cstring>

#include "absl/strings/match.h"
#include "hcq/device.h"
#include "hcq/graph.h"
#include "tests/hcq/hcq_fixture.h"

namespace hcq {
namespace {

auto* const kStateDir = am::sim::testing::RegisterSimStateDir();

TEST(JsonStringTest, EscapesQuotesBackslashesAndControlCharacters) {
  EXPECT_EQ(JsonString("plain"), "\"plain\"");
  EXPECT_EQ(JsonString("a\"b\\c"), "\"a\\\"b\\\\c\"");
  EXPECT_EQ(JsonString("line\nnext\ttab\x01"), "\"line\\nnext\\ttab\\u0001\"");
}

class ProfilerTest : public testing::HcqTest {
 protected:
  DeviceOptions Options() override { return {.profile = true}; }
};

TEST_F(ProfilerTest, CopiesAreBracketedByTimestamps) {
  auto a = dev_->allocator().alloc(1 << 20), b = dev_->allocator().alloc(1 << 20);
  ASSERT_TRUE(a.ok() && b.ok());
  auto queue = dev_->NewCopyQueue();
  queue->wait(dev_->timeline_signal(), dev_->timeline_value() - 1)
      .copy(b->va(), a->va(), 1 << 20)
      .signal(dev_->timeline_signal(), dev_->next_timeline());
  ASSERT_TRUE(queue->submit(*dev_).ok());
  ASSERT_TRUE(dev_->synchronize().ok());
  ASSERT_EQ(dev_->profiler().events().size(), 1u);
  const ProfileEvent& e = dev_->profiler().events()[0];
  EXPECT_EQ(e.name, "copy 1048576 bytes");
  EXPECT_EQ(e.queue, "copy");
  EXPECT_GT(e.start_us, 0);
  EXPECT_GE(e.end_us, e.start_us);
  const std::string json = dev_->profiler().ChromeTraceJson();
  EXPECT_TRUE(absl::StartsWith(json, "{\"traceEvents\":[")) << json;
  EXPECT_TRUE(absl::StrContains(json, "\"ph\":\"X\",\"name\":\"copy 1048576 bytes\"")) << json;
  EXPECT_TRUE(absl::StrContains(json, "\"pid\":\"sim:navi31:hcq\"")) << json;
  EXPECT_TRUE(absl::EndsWith(json, "]}")) << json;
}

TEST_F(ProfilerTest, GraphReplaysAreProfiledPerEntryAndRun) {
  auto a = dev_->allocator().alloc(4096), b = dev_->allocator().alloc(4096), c = dev_->allocator().alloc(4096);
  ASSERT_TRUE(a.ok() && b.ok() && c.ok());
  Graph graph(0);
  graph.AddCopy(*dev_, b->va(), a->va(), 4096);
  graph.AddCopy(*dev_, c->va(), b->va(), 2048);
  ASSERT_TRUE(graph.Finalize().ok());
  double previous_end = 0;
  for (int run = 0; run < 3; ++run) {
    std::memset(a->cpu(), run + 1, 4096);
    ASSERT_TRUE(graph.Run({}).ok());
    ASSERT_TRUE(graph.Wait().ok());  // records this run's spans
    EXPECT_EQ(c->cpu()[2047], run + 1);
    const std::vector<ProfileEvent>& events = dev_->profiler().events();
    ASSERT_EQ(events.size(), 2u * (run + 1));
    const ProfileEvent& first = events[2 * run];
    const ProfileEvent& second = events[2 * run + 1];
    EXPECT_EQ(first.name, "copy 4096 bytes");
    EXPECT_EQ(second.name, "copy 2048 bytes");
    EXPECT_EQ(second.queue, "copy");
    // Each span is this run's: after the previous run, in recorded order, never backwards.
    EXPECT_GE(first.start_us, previous_end) << run;
    EXPECT_GE(first.end_us, first.start_us) << run;
    EXPECT_GE(second.start_us, first.end_us) << run;
    EXPECT_GE(second.end_us, second.start_us) << run;
    previous_end = second.end_us;
  }
  ASSERT_TRUE(graph.Wait().ok());  // nothing new ran: nothing is recorded twice
  EXPECT_EQ(dev_->profiler().events().size(), 6u);
}

TEST_F(ProfilerTest, OffByDefault) {
  auto plain = testing::OpenFresh("sim:navi31:hcq-plain");
  ASSERT_NE(plain, nullptr);
  auto queue = plain->NewCopyQueue();
  queue->copy(0x1000, 0x2000, 16);
  EXPECT_EQ(queue->dwords().size(), 7u);  // COPY_LINEAR only, no timestamps
}

}  // namespace
}  // namespace hcq
