#include "base/pooled_thread.h"

#include <pthread.h>

#include <condition_variable>
#include <exception>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

namespace base {

struct PooledThread::Worker {
  std::mutex mu;
  std::condition_variable cv;
  std::function<void()> body;  // the body to run next; guarded by mu
  bool finished = false;       // the body handed over last has returned; guarded by mu
  bool exit = false;           // leave instead of waiting for a body; guarded by mu
  std::thread thread;
};

namespace {

struct Cache {
  std::mutex mu;
  std::vector<PooledThread::Worker*> parked;  // guarded by mu
  const Cache* before_fork = nullptr;         // a fork child's: the parent's cache, kept reachable (leak checkers)
};

Cache* cache = nullptr;

// Never destroyed: parked threads wait on their own state until the process exits, and no destructor may run
// under them. A fork's child starts with the forking thread only: the parked threads it inherited the records of do
// not exist there, so it starts an empty cache (the old records are left, reachable from it, as the threads are).
Cache& TheCache() {
  static const bool registered = [] {
    cache = new Cache;
    pthread_atfork(nullptr, nullptr, [] {
      Cache* child = new Cache;
      child->before_fork = cache;
      cache = child;
    });
    return true;
  }();
  (void)registered;
  return *cache;
}

void Loop(PooledThread::Worker* worker) {
  std::unique_lock lock(worker->mu);
  while (true) {
    worker->cv.wait(lock, [worker] { return worker->body != nullptr || worker->exit; });
    if (worker->exit) return;
    std::function<void()> body = std::move(worker->body);
    worker->body = nullptr;
    lock.unlock();
    body();
    body = nullptr;  // its captures go before join() returns, as a std::thread's would
    lock.lock();
    worker->finished = true;
    worker->cv.notify_all();
  }
}

}  // namespace

PooledThread::PooledThread(std::function<void()> body) {
  if (!body) body = [] {};  // a parked thread waits for a body it can call
  Cache& cache = TheCache();
  {
    std::lock_guard lock(cache.mu);
    if (!cache.parked.empty()) {
      worker_ = cache.parked.back();
      cache.parked.pop_back();
    }
  }
  if (worker_ == nullptr) {
    worker_ = new Worker;
    worker_->thread = std::thread(Loop, worker_);
  }
  {
    std::lock_guard lock(worker_->mu);
    worker_->finished = false;
    worker_->body = std::move(body);
  }
  worker_->cv.notify_all();
}

PooledThread::PooledThread(PooledThread&& other) noexcept : worker_(std::exchange(other.worker_, nullptr)) {}

PooledThread& PooledThread::operator=(PooledThread&& other) noexcept {
  if (joinable()) std::terminate();
  worker_ = std::exchange(other.worker_, nullptr);
  return *this;
}

PooledThread::~PooledThread() {
  if (joinable()) std::terminate();
}

void PooledThread::join() {
  Worker* worker = std::exchange(worker_, nullptr);
  if (worker == nullptr) std::terminate();  // as std::thread::join on a handle without a thread (which throws)
  {
    std::unique_lock lock(worker->mu);
    worker->cv.wait(lock, [worker] { return worker->finished; });
  }
  Cache& cache = TheCache();
  {
    std::lock_guard lock(cache.mu);
    if (static_cast<int>(cache.parked.size()) < kMaxParked) {
      cache.parked.push_back(worker);
      return;
    }
  }
  {
    std::lock_guard lock(worker->mu);
    worker->exit = true;
  }
  worker->cv.notify_all();
  worker->thread.join();
  delete worker;
}

int PooledThread::parked() {
  Cache& cache = TheCache();
  std::lock_guard lock(cache.mu);
  return static_cast<int>(cache.parked.size());
}

}  // namespace base
