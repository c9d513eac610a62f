// The threads a dispatch's workgroups run on besides the dispatching thread: started at the first dispatch that
// needs them and kept for the executor's life, as the hardware's compute units are. Starting a thread per dispatch
// cost tens of microseconds, more than a small kernel's whole run on the interpreter. An idle worker polls for
// EngineWakeup::kSpinBeforeSleep and then sleeps, so a device with nothing to run costs no CPU.
#ifndef BAREGPU_AM_SIM_ISA_WORKER_POOL_H_
#define BAREGPU_AM_SIM_ISA_WORKER_POOL_H_

#include <cstdint>
#include <thread>
#include <vector>

#include "absl/functional/function_ref.h"
#include "am/sim/engine_wakeup.h"

namespace am::sim::isa {

class WorkerPool {
 public:
  // At most `threads` run one job: the caller and `threads - 1` workers.
  explicit WorkerPool(int threads) : threads_(threads < 1 ? 1 : threads) {}
  ~WorkerPool();
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;

  int threads() const { return threads_; }

  // Runs job(0) on the calling thread and job(1) .. job(count - 1) on workers; returns when all have returned.
  // `count` is clamped to [1, threads()]. One Run at a time (the executor dispatches one kernel at a time).
  void Run(int count, absl::FunctionRef<void(int)> job);

 private:
  void Work(int index);

  const int threads_;
  std::vector<std::thread> workers_;  // index i runs job(i + 1)

  // Caller -> workers: a new job (generation_, count_, job_), or stop_. Guarded by start_.mu().
  EngineWakeup start_;
  uint64_t generation_ = 0;
  int count_ = 0;
  absl::FunctionRef<void(int)>* job_ = nullptr;
  bool stop_ = false;

  // Workers -> caller: jobs finished since the pool started.
  EngineWakeup finish_;
  std::atomic<uint64_t> finished_{0};
};

}  // namespace am::sim::isa

#endif  // BAREGPU_AM_SIM_ISA_WORKER_POOL_H_
