// hcq::ArgsPool: kernel arguments held by their queue and reclaimed by the fence behind its last submission, never
// by the device's timeline (issue 23, defect 6).
#include "hcq/args_pool.h"

#include <chrono>
#include <cstring>
#include <thread>

#include "hcq/device.h"
#include "tests/hcq/hcq_fixture.h"

namespace hcq {
namespace {

auto* const kStateDir = am::sim::testing::RegisterSimStateDir();

class ArgsPoolTest : public testing::HcqTest {
 protected:
  // Submits `queue` (a signal of `done` to `value`) as `holder`'s, then waits for the signal.
  void SubmitAndWait(ComputeQueue& queue, ArgsPool::Holder& holder, const Signal& done, uint64_t value) {
    queue.reset();
    queue.signal(done, value);
    ASSERT_TRUE(queue.submit(*dev_).ok());
    ASSERT_TRUE(pool_->Submitted(holder).ok());
    ASSERT_TRUE(done.wait(value, absl::Seconds(10)).ok());
  }
  void SetUp() override {
    testing::HcqTest::SetUp();
    pool_ = std::make_unique<ArgsPool>(*dev_);
  }
  void TearDown() override {
    if (dev_ != nullptr) {
      EXPECT_TRUE(dev_->synchronize().ok());
    }
    pool_.reset();
    testing::HcqTest::TearDown();
  }
  std::unique_ptr<ArgsPool> pool_;
};

TEST_F(ArgsPoolTest, RecordSubmitWaitResetReusesOneOrTwoChunks) {
  auto queue = dev_->NewComputeQueue();
  auto done = dev_->NewSignal();
  ASSERT_TRUE(done.ok());
  ArgsPool::Holder holder;
  for (uint64_t i = 1; i <= 2000; ++i) {
    auto args = pool_->Take(holder, 64, 3);
    ASSERT_TRUE(args.ok()) << args.status();
    SubmitAndWait(*queue, holder, *done, i);
    pool_->Release(holder);
  }
  // The fence lands just after the caller's own signal: the next launch may find it not yet landed and take a second.
  EXPECT_LE(pool_->chunks(), 2u);
  EXPECT_EQ(pool_->fenced(), 2000u);
}

TEST_F(ArgsPoolTest, AHeldChunkIsNeverHandedToAnotherQueue) {
  ArgsPool::Holder bound;
  auto held = pool_->Take(bound, 256, 0);
  ASSERT_TRUE(held.ok());
  std::memset(held->cpu(), 0x5a, held->size());
  auto queue = dev_->NewComputeQueue();
  auto done = dev_->NewSignal();
  ASSERT_TRUE(done.ok());
  SubmitAndWait(*queue, bound, *done, 1);  // submitted once, and still held (a bound queue submitted again later)
  ArgsPool::Holder other;
  for (uint64_t i = 2; i < 2 + 3 * ArgsPool::kChunkBytes / 256; ++i) {
    auto args = pool_->Take(other, 256, 0);
    ASSERT_TRUE(args.ok()) << args.status();
    EXPECT_NE(args->va(), held->va());
    if ((i & 63) == 0) {
      SubmitAndWait(*queue, other, *done, i);
      pool_->Release(other);
    }
  }
  for (uint64_t k = 0; k < held->size(); ++k) ASSERT_EQ(held->cpu()[k], 0x5a) << "byte " << k;
}

TEST_F(ArgsPoolTest, AReleasedChunkWaitsForItsFence) {
  auto gate = dev_->NewSignal(0);
  ASSERT_TRUE(gate.ok());
  ArgsPool::Holder first;
  auto taken = pool_->Take(first, 256, 0);
  ASSERT_TRUE(taken.ok());
  // The submission (and the fence behind it) waits for the gate: its arguments may still be read.
  auto queue = dev_->NewComputeQueue();
  queue->wait(*gate, 1);
  ASSERT_TRUE(queue->submit(*dev_).ok());
  ASSERT_TRUE(pool_->Submitted(first).ok());
  pool_->Release(first);
  ArgsPool::Holder second;
  auto next = pool_->Take(second, 256, 0);
  ASSERT_TRUE(next.ok());
  EXPECT_NE(next->va(), taken->va()) << "memory of a submission still waiting was handed out again";
  pool_->Release(second);
  gate->set_value(1);
  ASSERT_TRUE(dev_->synchronize().ok());
  // Once the fence landed (bounded wait), the first chunk is free again (the lowest free chunk comes first).
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (pool_->completed() < pool_->fenced() && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::yield();
  }
  ASSERT_EQ(pool_->completed(), pool_->fenced());
  ArgsPool::Holder third;
  auto again = pool_->Take(third, 256, 0);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->va(), taken->va());
}

TEST_F(ArgsPoolTest, ForcedCompletionFreesWhatALostFenceGuarded) {
  auto gate = dev_->NewSignal(0);
  ASSERT_TRUE(gate.ok());
  ArgsPool::Holder holder;
  auto taken = pool_->Take(holder, 256, 0);
  ASSERT_TRUE(taken.ok());
  auto queue = dev_->NewComputeQueue();
  queue->wait(*gate, 1);
  ASSERT_TRUE(queue->submit(*dev_).ok());
  ASSERT_TRUE(pool_->Submitted(holder).ok());
  pool_->Release(holder);
  EXPECT_LT(pool_->completed(), pool_->fenced());
  pool_->ForceCompletion();  // as after a queue reset dropped the fence
  EXPECT_EQ(pool_->completed(), pool_->fenced());
  gate->set_value(1);
}

}  // namespace
}  // namespace hcq
