#include "base/pooled_thread.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <thread>
#include <vector>

#include "gtest/gtest.h"

namespace base {
namespace {

// ThreadSanitizer refuses to start a thread in the child of a multi-threaded fork ("not supported", exit status 66).
#if defined(__has_feature)
#if __has_feature(thread_sanitizer)
constexpr bool kThreadSanitizer = true;
#else
constexpr bool kThreadSanitizer = false;
#endif
#elif defined(__SANITIZE_THREAD__)
constexpr bool kThreadSanitizer = true;
#else
constexpr bool kThreadSanitizer = false;
#endif

// join() returns only after the body has: what the body wrote is there, and its captures are gone.
TEST(PooledThreadTest, JoinWaitsForTheBodyAndItsCaptures) {
  auto captured = std::make_shared<int>(7);
  std::weak_ptr<int> watch = captured;
  std::atomic<int> seen{0};
  PooledThread thread([captured = std::move(captured), &seen] {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));  // joins usually find it still running
    seen.store(*captured, std::memory_order_relaxed);
  });
  EXPECT_TRUE(thread.joinable());
  thread.join();
  EXPECT_FALSE(thread.joinable());
  EXPECT_EQ(seen.load(), 7);
  EXPECT_TRUE(watch.expired()) << "the body's captures outlived join()";
}

// A finished body's thread parks and runs the next body: the point of the cache.
TEST(PooledThreadTest, TheNextBodyRunsOnAParkedThread) {
  std::thread::id first, second;
  PooledThread a([&first] { first = std::this_thread::get_id(); });
  a.join();
  const int parked = PooledThread::parked();
  EXPECT_GE(parked, 1);
  PooledThread b([&second] { second = std::this_thread::get_id(); });
  b.join();
  EXPECT_EQ(PooledThread::parked(), parked);
  // Another test's thread may have parked between the two; the one parked last is taken first.
  EXPECT_EQ(first, second);
  EXPECT_NE(first, std::this_thread::get_id());
}

// More bodies at once than the cache keeps: all run at the same time, and only kMaxParked threads stay.
TEST(PooledThreadTest, ManyAtOnceAllRunAndAtMostTheLimitStays) {
  constexpr int kThreads = PooledThread::kMaxParked + 8;
  std::atomic<int> started{0};
  std::atomic<bool> release{false};
  std::vector<PooledThread> threads;
  for (int i = 0; i < kThreads; ++i) {
    threads.emplace_back([&] {
      started.fetch_add(1);
      // Each body waits for the others: they must all be running at once (bounded: 10 s).
      const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
      while (!release.load() && std::chrono::steady_clock::now() < deadline) std::this_thread::yield();
    });
  }
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (started.load() < kThreads && std::chrono::steady_clock::now() < deadline) std::this_thread::yield();
  EXPECT_EQ(started.load(), kThreads);
  release.store(true);
  for (PooledThread& thread : threads) thread.join();
  EXPECT_EQ(PooledThread::parked(), PooledThread::kMaxParked);
}

TEST(PooledThreadTest, MovesCarryTheBody) {
  std::atomic<bool> ran{false};
  PooledThread a([&ran] { ran.store(true); });
  PooledThread b(std::move(a));
  EXPECT_FALSE(a.joinable());
  PooledThread c;
  c = std::move(b);
  c.join();
  EXPECT_TRUE(ran.load());
}

// A fork's child has none of the parent's parked threads: it must start its own, not hand a body to a thread that
// is not there (which would wait forever).
TEST(PooledThreadTest, AForkedChildStartsItsOwnThreads) {
  if (kThreadSanitizer) GTEST_SKIP() << "ThreadSanitizer starts no thread after a multi-threaded fork";
  PooledThread warm([] {});
  warm.join();
  ASSERT_GE(PooledThread::parked(), 1);
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    std::atomic<bool> ran{false};
    PooledThread thread([&ran] { ran.store(true); });
    thread.join();
    _exit(ran.load() && PooledThread::parked() == 1 ? 0 : 1);
  }
  int status = 0;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  pid_t done = 0;
  while ((done = waitpid(child, &status, WNOHANG)) == 0 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  if (done == 0) {
    kill(child, SIGKILL);
    waitpid(child, &status, 0);
    FAIL() << "the child's PooledThread never ran its body";
  }
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
}

}  // namespace
}  // namespace base
