// A mutex that ThreadSanitizer can see. Debian's Abseil is not built with TSan, so the synchronisation inside
// absl::Mutex is invisible to it and every access absl::Mutex protects is reported as a race. This wraps
// std::shared_mutex (pthread rwlocks, which TSan intercepts) and keeps Abseil's thread-safety annotations, so
// ABSL_GUARDED_BY and friends work as with absl::Mutex. Use it instead of absl::Mutex everywhere.
#ifndef BAREGPU_BASE_MUTEX_H_
#define BAREGPU_BASE_MUTEX_H_

#include <shared_mutex>

#include "absl/base/thread_annotations.h"

namespace base {

class ABSL_LOCKABLE Mutex {
 public:
  void Lock() ABSL_EXCLUSIVE_LOCK_FUNCTION() { mu_.lock(); }
  void Unlock() ABSL_UNLOCK_FUNCTION() { mu_.unlock(); }
  void ReaderLock() ABSL_SHARED_LOCK_FUNCTION() { mu_.lock_shared(); }
  void ReaderUnlock() ABSL_UNLOCK_FUNCTION() { mu_.unlock_shared(); }

 private:
  std::shared_mutex mu_;
};

class ABSL_SCOPED_LOCKABLE MutexLock {
 public:
  explicit MutexLock(Mutex* mu) ABSL_EXCLUSIVE_LOCK_FUNCTION(mu) : mu_(mu) { mu_->Lock(); }
  ~MutexLock() ABSL_UNLOCK_FUNCTION() { mu_->Unlock(); }
  MutexLock(const MutexLock&) = delete;
  MutexLock& operator=(const MutexLock&) = delete;

 private:
  Mutex* mu_;
};

class ABSL_SCOPED_LOCKABLE ReaderMutexLock {
 public:
  explicit ReaderMutexLock(Mutex* mu) ABSL_SHARED_LOCK_FUNCTION(mu) : mu_(mu) { mu_->ReaderLock(); }
  ~ReaderMutexLock() ABSL_UNLOCK_FUNCTION() { mu_->ReaderUnlock(); }
  ReaderMutexLock(const ReaderMutexLock&) = delete;
  ReaderMutexLock& operator=(const ReaderMutexLock&) = delete;

 private:
  Mutex* mu_;
};

}  // namespace base

#endif  // BAREGPU_BASE_MUTEX_H_
