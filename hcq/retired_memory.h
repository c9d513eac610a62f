// hcq::RetiredMemory: memory an engine may still read after its owner let go of it. A bound queue's command buffer
// is the case: the engine reads its indirect buffer to the end after the queue's own last signal has arrived (the
// NOPs that pad an SDMA IB to 8 dwords, and on hardware whatever the engine prefetched), so freeing it when that
// signal arrives unmaps memory under the engine (the virtual Navi31's SDMA read an unmapped IB: CI, session 17).
// Retired memory is freed only once a marker queued behind it on the same engine has signalled: an engine runs its
// ring in order, so the marker says it has left the indirect buffer. amdgpu frees an IB the same way, with the fence
// emitted after it on the ring (amdgpu_ib_free: amdgpu_sa_bo_free with the job's fence).
//
// Markers cost nothing on the fast path: one is queued when memory is retired (a queue destroyed, reset or rebound),
// and what has passed is freed at the next retirement, at Device::synchronize (which waits for every marker) and
// when the device closes.
#ifndef BAREGPU_HCQ_RETIRED_MEMORY_H_
#define BAREGPU_HCQ_RETIRED_MEMORY_H_

#include <array>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <vector>

#include "absl/status/status.h"
#include "hcq/buffer.h"
#include "hcq/hw_queue.h"
#include "hcq/signal.h"

namespace hcq {

class Device;

class RetiredMemory {
 public:
  explicit RetiredMemory(Device& device) : device_(device) {}
  RetiredMemory(const RetiredMemory&) = delete;
  RetiredMemory& operator=(const RetiredMemory&) = delete;

  // Frees `buffer` once `engine` has run everything submitted to it so far. Thread-safe. When no marker can be
  // queued (no free signal, a ring that refuses the packet) the buffer is kept until the device closes, with an
  // error logged: never freed early.
  void Retire(QueueEngine engine, Buffer buffer);
  // Waits (each marker up to the device's wait timeout) until every marker queued so far has signalled, and frees
  // what they kept. An error when a marker does not come (a hung engine): what it keeps stays retired.
  absl::Status WaitAll();
  // A queue reset dropped what the engines had not run, markers included: nothing reads the retired memory any
  // more, so all of it is freed.
  void ForgetMarkers();
  // The device is closing and its engines have stopped: frees everything, the markers' signals and queues too.
  void Shutdown();
  // Buffers still waiting for their marker, or kept until close.
  size_t pending() const;

 private:
  struct Retired {
    uint32_t marker;
    Buffer buffer;
  };
  struct PerEngine {
    std::unique_ptr<HwQueue> queue;  // unbound; holds one signal command per marker
    Signal passed;                   // the last marker the engine ran
    uint32_t issued = 0;             // the last marker queued
    std::deque<Retired> waiting;     // in marker order
  };
  // Markers count up from 1 and restart from 0 when none is waiting after this many, so a 32-bit signal never wraps.
  static constexpr uint32_t kRestartAfter = uint32_t{1} << 30;

  absl::Status QueueMarker(QueueEngine engine, PerEngine& e, uint32_t marker);
  void FreePassed(PerEngine& e);

  Device& device_;
  mutable std::mutex mu_;
  std::array<PerEngine, 2> engines_;  // by QueueEngine
  std::vector<Buffer> kept_until_close_;
};

}  // namespace hcq

#endif  // BAREGPU_HCQ_RETIRED_MEMORY_H_
