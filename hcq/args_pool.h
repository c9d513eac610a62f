// hcq::ArgsPool: kernel-argument memory for launches recorded into queues that live on after a submission — the C
// API's hcq_queue_exec, whose queue may be submitted once, bound and submitted many times, reset, or freed at any
// moment, and whose caller signals signals of its own rather than the device's timeline. The device's kernel-argument
// area (hcq/kernarg_area.h) frees memory by the timeline, so such launches were never reclaimed: about 256 bytes
// held per launch, without bound (issue 23, defect 6), and a bound queue's arguments were handed out again once the
// timeline passed them.
//
// The pool keeps chunks of host memory. A holder (one queue) takes arguments from its current chunk; when the
// holder's queue is submitted, the pool queues a fence behind it on the same compute ring (a RELEASE_MEM of a
// sequence number into the pool's own signal, as amdgpu_fence_emit does after every job) and tags the holder's
// chunks with it. A chunk goes back to the pool when its holder lets go (queue reset or freed) and the fence of the
// last submission that read it has landed. Steady state — record, submit, wait, reset — reuses one chunk: no
// allocation and no growth. Not thread-safe: its user (the C API) calls it under the device's lock.
#ifndef BAREGPU_HCQ_ARGS_POOL_H_
#define BAREGPU_HCQ_ARGS_POOL_H_

#include <cstdint>
#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "hcq/args_state.h"
#include "hcq/buffer.h"
#include "hcq/hw_queue.h"
#include "hcq/signal.h"

namespace hcq {

class Device;

class ArgsPool {
 public:
  // 64 KiB chunks, at most 256 of them: the 16 MiB of DeviceOptions::kernarg_bytes' default. A launch's arguments
  // larger than a chunk get a chunk of their own size (one of the 256).
  static constexpr uint64_t kChunkBytes = uint64_t{64} << 10;
  static constexpr size_t kMaxChunks = 256;

  // One queue's claim on the pool: the chunks its recorded launches use, newest last.
  struct Holder {
    std::vector<uint32_t> chunks;
  };

  explicit ArgsPool(Device& device) : device_(device) {}
  // Dropping the pool frees nothing: the device's teardown frees its memory after stopping its engines (a chunk
  // freed earlier could still be read by a running launch). Shutdown frees them while the device lives on.
  ~ArgsPool() = default;
  ArgsPool(const ArgsPool&) = delete;
  ArgsPool& operator=(const ArgsPool&) = delete;

  // Arguments for one launch of `holder`'s queue: `size` bytes, `buffers` pointers first, zeroed.
  absl::StatusOr<ArgsState> Take(Holder& holder, uint64_t size, uint32_t buffers);
  // `holder`'s queue was just submitted: fence its chunks behind the submission.
  absl::Status Submitted(Holder& holder);
  // `holder`'s queue was reset or freed: its chunks return once their last fence lands.
  void Release(Holder& holder);
  // The device's queues were reset (queue recovery): fences still in the ring were dropped with it and will never
  // land; what they guarded is no longer read (amdgpu_fence_driver_force_completion). Take and Submitted do it
  // themselves when Device::recoveries() moved, so recoveries must happen under the same lock as the pool's calls.
  void ForceCompletion();
  // Frees every chunk; only once no submission that read them can still run.
  void Shutdown();

  size_t chunks() const { return chunks_.size(); }
  // The fence sequence: submissions fenced so far, and how many of them have completed.
  uint64_t fenced() const { return sequence_; }
  uint64_t completed() const { return fence_.valid() ? fence_.value() : 0; }

 private:
  struct Chunk {
    Buffer memory;
    uint64_t used = 0;
    uint64_t retire = 0;  // the fence value after which no submission reads it
    bool held = false;
  };
  absl::StatusOr<uint32_t> FreeChunk(uint64_t bytes);
  // A recovery since the last call dropped the fences in the rings: complete them (before any new fence is issued).
  void CatchUpWithRecoveries();
  absl::Status StartFence();

  Device& device_;
  std::vector<Chunk> chunks_;
  Signal fence_;
  uint64_t sequence_ = 0;
  std::unique_ptr<ComputeQueue> fence_queue_;
  uint64_t recoveries_seen_ = 0;
};

}  // namespace hcq

#endif  // BAREGPU_HCQ_ARGS_POOL_H_
