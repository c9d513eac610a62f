// base::PooledThread: a thread handle like std::thread whose body runs on a thread a process-wide cache keeps. The
// device models start a thread per engine, queue and device: a partial boot of sim:navi31 starts three, a cold boot
// four. On the development VM creating and joining a thread costs 16-27 us of CPU (clone3, an 8 MiB stack mapped,
// its pages faulted in and released at exit), handing a body to a parked thread about 9 us (issue 24: thread
// starts were a fifth of a partial boot). A thread whose body returned parks for the next body; at most kMaxParked
// wait, the others exit. Thread-local variables keep their values from one body to the next on the same thread: a
// body that sets one for its own use resets it before it returns.
#ifndef BAREGPU_BASE_POOLED_THREAD_H_
#define BAREGPU_BASE_POOLED_THREAD_H_

#include <functional>

namespace base {

class PooledThread {
 public:
  // Threads kept parked at most; more bodies than this at once get threads that exit when their body returns.
  static constexpr int kMaxParked = 16;

  PooledThread() = default;
  // Runs `body` on a parked thread, or on a new one when none is parked.
  explicit PooledThread(std::function<void()> body);
  PooledThread(PooledThread&& other) noexcept;
  // As std::thread: assigning to, or destroying, a handle whose body was not joined terminates the process.
  PooledThread& operator=(PooledThread&& other) noexcept;
  ~PooledThread();

  bool joinable() const { return worker_ != nullptr; }
  // Waits until the body has returned (and its captures are destroyed); then the thread parks or exits.
  void join();

  // Threads parked now (for tests).
  static int parked();

  struct Worker;

 private:
  Worker* worker_ = nullptr;
};

}  // namespace base

#endif  // BAREGPU_BASE_POOLED_THREAD_H_
