// A spin lock for critical sections of a few dozen nanoseconds on a fast path (a ring write), where even an
// uncontended pthread lock costs more than the work it guards. It spins briefly, then yields; a holder that waits
// long (a full ring) makes its contenders yield, not burn a core. Abseil's thread-safety annotations apply as to
// base::Mutex; ThreadSanitizer sees its acquire/release atomics.
#ifndef BAREGPU_BASE_SPIN_LOCK_H_
#define BAREGPU_BASE_SPIN_LOCK_H_

#include <atomic>
#include <thread>

#include "absl/base/thread_annotations.h"

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace base {

class ABSL_LOCKABLE SpinLock {
 public:
  void Lock() ABSL_EXCLUSIVE_LOCK_FUNCTION() {
    for (int spins = 0; locked_.exchange(true, std::memory_order_acquire); ++spins) {
      while (locked_.load(std::memory_order_relaxed)) {
        if (spins++ < kSpinsBeforeYield) {
          Pause();
        } else {
          std::this_thread::yield();
        }
      }
    }
  }
  void Unlock() ABSL_UNLOCK_FUNCTION() { locked_.store(false, std::memory_order_release); }

 private:
  static constexpr int kSpinsBeforeYield = 256;
  static void Pause() {
#if defined(__x86_64__)
    _mm_pause();
#endif
  }
  std::atomic<bool> locked_{false};
};

class ABSL_SCOPED_LOCKABLE SpinLockHolder {
 public:
  explicit SpinLockHolder(SpinLock* lock) ABSL_EXCLUSIVE_LOCK_FUNCTION(lock) : lock_(lock) { lock_->Lock(); }
  ~SpinLockHolder() ABSL_UNLOCK_FUNCTION() { lock_->Unlock(); }
  SpinLockHolder(const SpinLockHolder&) = delete;
  SpinLockHolder& operator=(const SpinLockHolder&) = delete;

 private:
  SpinLock* lock_;
};

}  // namespace base

#endif  // BAREGPU_BASE_SPIN_LOCK_H_
