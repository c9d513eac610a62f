#include "am/sim/engine_wakeup.h"

#include <chrono>
#include <mutex>
#include <thread>

#include "gtest/gtest.h"

namespace am::sim {
namespace {

using std::chrono::seconds;

// Long enough never to expire on a working wakeup, short enough that a lost wakeup fails instead of hanging.
constexpr seconds kBound{60};

// Wait() may return spuriously (a late notification meant for an earlier epoch): the engine's loop, bounded.
bool WaitForChange(EngineWakeup& wakeup, std::unique_lock<std::mutex>& lock, uint64_t seen, bool spin) {
  const auto deadline = std::chrono::steady_clock::now() + kBound;
  while (!wakeup.Wait(lock, seen, spin, kBound)) {
    if (std::chrono::steady_clock::now() >= deadline) return false;
  }
  return true;
}

TEST(EngineWakeupTest, ANotificationBeforeTheWaitIsNotLost) {
  EngineWakeup wakeup;
  const uint64_t seen = wakeup.epoch();
  wakeup.Notify();  // after the engine looked at its inputs, before it waits
  std::unique_lock lock(wakeup.mu());
  EXPECT_TRUE(wakeup.Wait(lock, seen, /*spin=*/false, kBound));
  EXPECT_TRUE(lock.owns_lock());
  EXPECT_EQ(wakeup.sleepers(), 0u);
}

TEST(EngineWakeupTest, WithoutANotificationTheWaitTimesOut) {
  EngineWakeup wakeup;
  std::unique_lock lock(wakeup.mu());
  EXPECT_FALSE(wakeup.Wait(lock, wakeup.epoch(), /*spin=*/true, std::chrono::milliseconds(1)));
  EXPECT_TRUE(lock.owns_lock());
}

TEST(EngineWakeupTest, ANotificationWakesASleeper) {
  EngineWakeup wakeup;
  bool woken = false;
  std::thread engine([&] {
    std::unique_lock lock(wakeup.mu());
    woken = WaitForChange(wakeup, lock, wakeup.epoch(), /*spin=*/false);
  });
  // The notification must take the slow path: wait until the engine sleeps.
  while (wakeup.sleepers() == 0) std::this_thread::yield();
  wakeup.Notify();
  engine.join();
  EXPECT_TRUE(woken);
}

TEST(EngineWakeupTest, ANotificationEndsASpin) {
  EngineWakeup wakeup;
  for (int round = 0; round < 100; ++round) {
    const uint64_t seen = wakeup.epoch();
    bool woken = false;
    std::thread engine([&] {
      std::unique_lock lock(wakeup.mu());
      woken = WaitForChange(wakeup, lock, seen, /*spin=*/true);
    });
    wakeup.Notify();  // lands while the engine spins, sleeps or has not started waiting: never lost
    engine.join();
    EXPECT_TRUE(woken) << "round " << round;
  }
}

TEST(EngineWakeupTest, ManyNotifiersNeverLoseTheLastChange) {
  // The engine consumes a counter the producers raise; it must see the final value without a timeout.
  EngineWakeup wakeup;
  std::atomic<int> produced{0};
  constexpr int kPerProducer = 2000;
  std::thread engine([&] {
    std::unique_lock lock(wakeup.mu());
    while (true) {
      const uint64_t seen = wakeup.epoch();
      if (produced.load() == 2 * kPerProducer) return;
      ASSERT_TRUE(WaitForChange(wakeup, lock, seen, /*spin=*/(seen % 2) == 0)) << "lost wakeup at " << produced.load();
    }
  });
  auto produce = [&] {
    for (int i = 0; i < kPerProducer; ++i) {
      produced.fetch_add(1);
      wakeup.Notify();
    }
  };
  std::thread a(produce), b(produce);
  a.join();
  b.join();
  engine.join();
  EXPECT_EQ(produced.load(), 2 * kPerProducer);
}

}  // namespace
}  // namespace am::sim
