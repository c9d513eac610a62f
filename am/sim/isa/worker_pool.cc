#include "am/sim/isa/worker_pool.h"

#include <algorithm>
#include <mutex>

namespace am::sim::isa {

WorkerPool::~WorkerPool() {
  {
    std::lock_guard lock(start_.mu());
    stop_ = true;
  }
  start_.Notify();
  for (std::thread& worker : workers_) worker.join();
}

void WorkerPool::Run(int count, absl::FunctionRef<void(int)> job) {
  count = std::clamp(count, 1, threads_);
  if (count == 1) return job(0);
  while (static_cast<int>(workers_.size()) < threads_ - 1) {
    const int index = static_cast<int>(workers_.size()) + 1;
    workers_.emplace_back([this, index] { Work(index); });
  }
  const uint64_t finished_before = finished_.load(std::memory_order_acquire);
  {
    std::lock_guard lock(start_.mu());
    job_ = &job;
    count_ = count;
    ++generation_;
  }
  start_.Notify();
  job(0);
  const uint64_t target = finished_before + static_cast<uint64_t>(count - 1);
  std::unique_lock lock(finish_.mu());
  while (true) {
    const uint64_t seen = finish_.epoch();
    if (finished_.load(std::memory_order_acquire) >= target) break;
    finish_.Wait(lock, seen, /*spin=*/true);
  }
}

void WorkerPool::Work(int index) {
  uint64_t done_generation = 0;
  std::unique_lock lock(start_.mu());
  while (true) {
    const uint64_t seen = start_.epoch();
    if (stop_) return;
    if (generation_ != done_generation) {
      done_generation = generation_;
      if (index < count_) {
        absl::FunctionRef<void(int)>& job = *job_;
        lock.unlock();
        job(index);
        finished_.fetch_add(1, std::memory_order_acq_rel);
        finish_.Notify();
        lock.lock();
      }
      continue;
    }
    start_.Wait(lock, seen, /*spin=*/true);
  }
}

}  // namespace am::sim::isa
