// The fast paths allocate nothing: building a warmed-up queue, submitting it (bound or through the ring), graph
// replay and a signal wait that is answered during its spin. Counted with a global operator new in this binary, per
// thread: what the calling thread allocates. The virtual GPU's engine threads stand for the hardware, and the
// device's debug endpoint thread answers whoever connects (another process probing it, say) in its own time.
#include <cstdlib>
#include <new>

#include "hcq/device.h"
#include "hcq/graph.h"
#include "tests/hcq/hcq_fixture.h"

// The replacement new/delete below are a malloc/free pair; GCC, seeing them inlined, takes free() for a mismatch
// with the global operator new (-Wmismatched-new-delete, in optimised sanitizer builds).
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"

// clang links its ThreadSanitizer runtime statically, and that runtime defines operator new and delete itself: a
// second definition does not link. There the counting is off and the tests skip (GCC's TSan runtime is a shared
// library, which a definition here overrides as usual).
#if defined(__clang__) && defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define BAREGPU_FAST_PATH_CANNOT_COUNT 1
#endif
#endif

namespace {
#ifdef BAREGPU_FAST_PATH_CANNOT_COUNT
constexpr bool kCanCount = false;
uint64_t allocations = 0;
#else
constexpr bool kCanCount = true;
// Plain (no constructor or destructor), so that operator new may touch it on any thread at any time.
thread_local uint64_t allocations = 0;
#endif
}  // namespace

#ifndef BAREGPU_FAST_PATH_CANNOT_COUNT
void* operator new(std::size_t size) {
  ++allocations;
  if (void* p = std::malloc(size == 0 ? 1 : size)) return p;
  throw std::bad_alloc();
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
#endif

namespace hcq {
namespace {

auto* const kStateDir = am::sim::testing::RegisterSimStateDir();

class FastPathTest : public testing::HcqTest {
 protected:
  void SetUp() override {
    if (!kCanCount) GTEST_SKIP() << "allocations cannot be counted under clang's ThreadSanitizer (see the top)";
    testing::HcqTest::SetUp();
  }
};

TEST_F(FastPathTest, RebuildingAndSubmittingAWarmQueueAllocatesNothing) {
  auto signal = dev_->NewSignal(0);
  ASSERT_TRUE(signal.ok());
  auto compute = dev_->NewComputeQueue();
  auto copy = dev_->NewCopyQueue();
  auto build = [&](uint64_t v) {
    compute->reset();
    compute->wait(dev_->timeline_signal(), dev_->timeline_value() - 1)
        .memory_barrier()
        .signal(*signal, Variable{0})
        .signal(dev_->timeline_signal(), dev_->next_timeline());
    copy->reset();
    copy->wait(dev_->timeline_signal(), dev_->timeline_value() - 1)
        .signal(dev_->timeline_signal(), dev_->next_timeline());
    const uint64_t vals[] = {v};
    return compute->submit(*dev_, vals).ok() && copy->submit(*dev_).ok();
  };
  ASSERT_TRUE(build(1));  // warm-up
  ASSERT_TRUE(dev_->synchronize().ok());
  const uint64_t before = allocations;
  for (uint64_t v = 2; v < 200; ++v) ASSERT_TRUE(build(v));
  EXPECT_EQ(allocations - before, 0u);
  ASSERT_TRUE(dev_->synchronize().ok());
  EXPECT_EQ(signal->value(), 199u);
}

TEST_F(FastPathTest, BoundSubmitAndSpinningWaitAllocateNothing) {
  auto signal = dev_->NewSignal(0);
  ASSERT_TRUE(signal.ok());
  auto queue = dev_->NewCopyQueue();
  queue->signal(*signal, Variable{0});
  ASSERT_TRUE(queue->bind(*dev_).ok());
  const uint64_t first[] = {1};
  ASSERT_TRUE(queue->submit(*dev_, first).ok());
  ASSERT_TRUE(signal->wait(1, absl::Seconds(5)).ok());
  const uint64_t before = allocations;
  for (uint64_t v = 2; v < 200; ++v) {
    const uint64_t vals[] = {v};
    ASSERT_TRUE(queue->submit(*dev_, vals).ok());
    ASSERT_TRUE(signal->wait(v, absl::Seconds(5)).ok());
  }
  EXPECT_EQ(allocations - before, 0u);
}

TEST_F(FastPathTest, GraphReplayAllocatesNothing) {
  auto a = dev_->allocator().alloc(4096), b = dev_->allocator().alloc(4096);
  ASSERT_TRUE(a.ok() && b.ok());
  Graph graph(0);
  graph.AddCopy(*dev_, b->va(), a->va(), 4096);
  graph.AddCopy(*dev_, a->va(), b->va(), 4096);
  ASSERT_TRUE(graph.Finalize().ok());
  ASSERT_TRUE(graph.Run({}).ok());
  ASSERT_TRUE(dev_->synchronize().ok());
  const uint64_t before = allocations;
  for (int i = 0; i < 100; ++i) ASSERT_TRUE(graph.Run({}).ok());
  EXPECT_EQ(allocations - before, 0u);
  ASSERT_TRUE(dev_->synchronize().ok());
}

}  // namespace
}  // namespace hcq
