// How a model engine's thread waits for work, and how the threads that give it work (a doorbell write, a register
// hook, a stop request) wake it. A hardware engine notices a doorbell within nanoseconds and the driver's doorbell
// write costs one posted MMIO store. The model comes close to both: a notification is one atomic increment and, only
// while the engine sleeps, a lock and a futex wake; an engine that has just finished work polls for more for
// kSpinBeforeSleep before it sleeps (a driver submitting in a loop, or a host waiting on a signal round trip, rings
// again within microseconds), so a busy queue never pays for a system call and an idle device costs nothing.
//
// Protocol: the engine reads epoch() before it looks at its inputs, and if they hold no work calls Wait() with that
// epoch, holding mu(). Producers publish their change (an atomic store, or under mu()) and then call Notify() without
// holding mu(). Wait() returns when the epoch moved (spurious returns are allowed: the engine re-checks).
#ifndef BAREGPU_AM_SIM_ENGINE_WAKEUP_H_
#define BAREGPU_AM_SIM_ENGINE_WAKEUP_H_

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>

#include "pci/sim/dma_space.h"

namespace am::sim {

class EngineWakeup {
 public:
  // How long an engine that just ran out of work keeps polling before it sleeps.
  static constexpr std::chrono::microseconds kSpinBeforeSleep{50};

  std::mutex& mu() { return mu_; }
  uint64_t epoch() const { return epoch_.load(std::memory_order_seq_cst); }

  // Something the engine may be waiting for changed. Lock-free unless the engine sleeps. Must not be called with
  // mu() held.
  void Notify() {
    epoch_.fetch_add(1, std::memory_order_seq_cst);
    if (sleepers_.load(std::memory_order_seq_cst) != 0) {
      { std::lock_guard lock(mu_); }  // a sleeper between its epoch check and cv_.wait holds mu_: let it get there
      cv_.notify_all();
    }
  }

  // Engine side, `lock` holding mu(): nothing to do as of `seen` (an epoch() read before the inputs were checked).
  // With `spin`, first polls (mu() released) for up to kSpinBeforeSleep; then sleeps until a Notify() or `timeout`.
  // Engines ask for `spin` once they have run work since they started: a fresh one has no driver feeding it yet.
  // Returns whether the epoch has moved past `seen`.
  // `asleep`: the engine thread's DMA accessor, when the engine holds no host pointer while it waits (it is taken
  // offline for the sleep, so that memory freed meanwhile goes back to the host at once; pci/sim/dma_space.h).
  template <typename Rep, typename Period>
  bool Wait(std::unique_lock<std::mutex>& lock, uint64_t seen, bool spin, std::chrono::duration<Rep, Period> timeout,
            pci::sim::DmaSpace::Accessor* asleep = nullptr) {
    return WaitThen(lock, seen, spin, asleep, [&] { cv_.wait_for(lock, timeout); });
  }
  bool Wait(std::unique_lock<std::mutex>& lock, uint64_t seen, bool spin,
            pci::sim::DmaSpace::Accessor* asleep = nullptr) {
    return WaitThen(lock, seen, spin, asleep, [&] { cv_.wait(lock); });
  }

  // Threads inside Wait()'s sleep (for tests: a notification to a sleeper takes the slow path).
  uint32_t sleepers() const { return sleepers_.load(std::memory_order_seq_cst); }

  // How the engine's Wait()s went so far, for tests of when an engine polls: `polled` counts the waits that polled
  // first, `slept` those that went to sleep (after polling or not).
  struct Waits {
    uint64_t polled = 0;
    uint64_t slept = 0;
  };
  Waits waits() const { return {polled_.load(std::memory_order_acquire), slept_.load(std::memory_order_acquire)}; }

 private:
  // Both Waits: polls (with `spin`), then, unless the epoch has moved, counts itself a sleeper and runs `sleep`.
  template <typename Sleep>
  bool WaitThen(std::unique_lock<std::mutex>& lock, uint64_t seen, bool spin, pci::sim::DmaSpace::Accessor* asleep,
                Sleep sleep) {
    if (spin && Spin(lock, seen)) return true;
    sleepers_.fetch_add(1, std::memory_order_seq_cst);
    if (epoch_.load(std::memory_order_seq_cst) == seen) {
      slept_.fetch_add(1, std::memory_order_release);
      if (asleep != nullptr) asleep->Offline();
      sleep();
      if (asleep != nullptr) asleep->Online();
    }
    sleepers_.fetch_sub(1, std::memory_order_seq_cst);
    return epoch() != seen;
  }
  // True when the epoch moved while polling. `lock` is released while polling and held again on return.
  bool Spin(std::unique_lock<std::mutex>& lock, uint64_t seen) {
    polled_.fetch_add(1, std::memory_order_release);
    lock.unlock();
    const auto deadline = std::chrono::steady_clock::now() + kSpinBeforeSleep;
    bool moved = false;
    for (uint32_t i = 1; !moved; ++i) {
      if (epoch_.load(std::memory_order_acquire) != seen)
        moved = true;
      else if (i % 64 == 0 && std::chrono::steady_clock::now() >= deadline)
        break;
      else
        CpuRelax();
    }
    lock.lock();
    return moved;
  }
  static void CpuRelax() {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    asm volatile("yield");
#endif
  }

  // The epoch first: a holder that puts its own wake-up flags just before it shares a line with them.
  std::atomic<uint64_t> epoch_{0};
  std::atomic<uint32_t> sleepers_{0};
  std::mutex mu_;
  std::condition_variable cv_;
  // Written by waiters only, after the members a notifier touches (off the epoch's cache line).
  std::atomic<uint64_t> polled_{0};
  std::atomic<uint64_t> slept_{0};
};

}  // namespace am::sim

#endif  // BAREGPU_AM_SIM_ENGINE_WAKEUP_H_
