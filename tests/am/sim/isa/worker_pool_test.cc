// The interpreter's worker pool: every index of a job runs once, on the caller for 0 and on distinct workers for
// the rest; Run returns only after all of them; the pool survives many rounds and closes with idle workers.
#include "am/sim/isa/worker_pool.h"

#include <atomic>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

#include "gtest/gtest.h"

namespace am::sim::isa {
namespace {

TEST(WorkerPoolTest, EachIndexRunsOnceAndIndexZeroOnTheCaller) {
  WorkerPool pool(3);
  std::vector<std::atomic<int>> runs(3);
  std::mutex mu;
  std::set<std::thread::id> threads;
  std::thread::id index_zero_thread;
  pool.Run(3, [&](int index) {
    runs[index].fetch_add(1);
    std::lock_guard lock(mu);
    threads.insert(std::this_thread::get_id());
    if (index == 0) index_zero_thread = std::this_thread::get_id();
  });
  for (const auto& count : runs) EXPECT_EQ(count.load(), 1);
  EXPECT_EQ(threads.size(), 3u);
  EXPECT_EQ(index_zero_thread, std::this_thread::get_id());
}

TEST(WorkerPoolTest, RunReturnsAfterEveryIndexFinished) {
  WorkerPool pool(2);
  for (int round = 0; round < 1000; ++round) {
    std::atomic<int> finished{0};
    pool.Run(2, [&](int) { finished.fetch_add(1); });
    ASSERT_EQ(finished.load(), 2) << "round " << round;
  }
}

TEST(WorkerPoolTest, CountIsClampedToThePoolsThreads) {
  WorkerPool pool(2);
  std::atomic<int> calls{0}, highest{-1};
  pool.Run(8, [&](int index) {
    calls.fetch_add(1);
    int seen = highest.load();
    while (index > seen && !highest.compare_exchange_weak(seen, index)) {
    }
  });
  EXPECT_EQ(calls.load(), 2);
  EXPECT_EQ(highest.load(), 1);
  calls = 0;
  pool.Run(0, [&](int) { calls.fetch_add(1); });  // at least the caller's share
  EXPECT_EQ(calls.load(), 1);
}

TEST(WorkerPoolTest, ASmallerJobLeavesTheOtherWorkersOut) {
  WorkerPool pool(3);
  std::vector<std::atomic<int>> runs(3);
  pool.Run(3, [&](int index) { runs[index].fetch_add(1); });  // starts both workers
  pool.Run(2, [&](int index) { runs[index].fetch_add(1); });
  EXPECT_EQ(runs[0].load(), 2);
  EXPECT_EQ(runs[1].load(), 2);
  EXPECT_EQ(runs[2].load(), 1);
}

TEST(WorkerPoolTest, ClosesWithWorkersAsleepOrNeverStarted) {
  { WorkerPool never_used(4); }
  WorkerPool pool(2);
  pool.Run(2, [](int) {});
  // Its worker polls for a while and then sleeps; closing wakes it either way (no wait needed to reach either).
}

}  // namespace
}  // namespace am::sim::isa
