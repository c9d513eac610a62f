// BAR2, the doorbell aperture: the driver writes a queue's write pointer to its doorbell and the engine that owns
// that doorbell wakes. Engines subscribe to the dword index their queue registers name (CP_HQD_PQ_DOORBELL_CONTROL
// .DOORBELL_OFFSET, SDMA0_QUEUE0_DOORBELL_OFFSET.OFFSET); a 64-bit doorbell covers that dword and the next.
// Writes land only while the driver has enabled the aperture (NBIO's RCC_DOORBELL_APER_EN); the router keeps the
// last value written to every slot, which is what an engine reads when it wakes.
#ifndef BAREGPU_AM_SIM_DOORBELL_ROUTER_H_
#define BAREGPU_AM_SIM_DOORBELL_ROUTER_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "base/mutex.h"

namespace am::sim {

// Where NBIO delivers a doorbell: the S2A port whose entry covers it (nbio_v4_3: entries 0 and 3 lead to GC, 2 to
// SDMA, 4 and 5 to VCN). kAny is a write or a subscriber without NBIO in between (model unit tests). kNone: no
// entry takes it, so the write is lost (NBIO's answer; never a write's or a subscriber's port).
enum class DoorbellPort { kAny, kGc, kSdma, kVcn, kNone };

class DoorbellRouter {
 public:
  using Listener = std::function<void()>;

  explicit DoorbellRouter(uint64_t slots) : slots_(slots), root_(this) {}
  // The engines behind one S2A port: a view of `root` (same slots, drops and subscriptions) whose subscribers wake
  // only for writes routed to `port` (or written with kAny).
  DoorbellRouter(DoorbellRouter& root, DoorbellPort port) : root_(&root), port_(port) {}

  // A write from BAR2 (dword index) that NBIO routed to `port`. Stores the value, then wakes the listeners of that
  // slot behind that port.
  void Write(uint64_t index, uint32_t value, DoorbellPort port = DoorbellPort::kAny);
  // A 64-bit write at dword `index` (low) and `index + 1` (high): both stored, then the listeners of either slot
  // wake once. Counts as one write for InjectDrop.
  void Write64(uint64_t index, uint64_t value, DoorbellPort port = DoorbellPort::kAny);
  uint32_t Read(uint64_t index) const;
  // The 64-bit doorbell at `index` (low dword) and `index + 1` (high dword).
  uint64_t Read64(uint64_t index) const;

  // `listener` runs (on the writer's thread; it must only wake the engine) after each write to slot `index` or,
  // when `is_64bit`, `index + 1`, routed to this router's port. Returns a token for Unsubscribe. An index outside
  // the aperture never fires.
  int Subscribe(uint64_t index, bool is_64bit, Listener listener);
  void Unsubscribe(int token);

  // Fault injection: the next `count` doorbell writes are lost on the way (no store, no wake-up).
  void InjectDrop(uint64_t count) { root_->drop_.store(count, std::memory_order_release); }
  uint64_t dropped() const { return root_->dropped_.load(std::memory_order_acquire); }
  // A write NBIO refused (aperture disabled, no S2A range covering it); counted with the injected drops.
  void CountDropped() { root_->dropped_.fetch_add(1, std::memory_order_acq_rel); }

 private:
  // Consumes one injected drop; true when this write is lost.
  bool Drop();
  int SubscribeBehind(DoorbellPort port, uint64_t index, bool is_64bit, Listener listener);
  // Runs the listeners of slots `first`..`last` that sit behind `port`.
  void Fire(uint64_t first, uint64_t last, DoorbellPort port);

  struct Subscription {
    int token;
    uint64_t index;
    bool is_64bit;
    DoorbellPort port;
    const Listener* listener;
  };
  using SubscriptionList = std::vector<Subscription>;
  // Under mu_: publishes `list` as the one Fire reads.
  void Publish(SubscriptionList list) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  std::vector<std::atomic<uint32_t>> slots_;  // empty in a view: the root's are used
  DoorbellRouter* const root_;                // this, or the router a view shows
  const DoorbellPort port_ = DoorbellPort::kAny;
  // What a doorbell write reads, without a lock (a doorbell is one posted store on the hardware): an immutable list,
  // replaced whole by Subscribe and Unsubscribe. Replaced lists and unsubscribed listeners stay allocated until the
  // router goes (a few per queue activation), so a write still walking one never reads freed memory.
  std::atomic<const SubscriptionList*> active_{nullptr};
  mutable base::Mutex mu_;
  std::vector<std::unique_ptr<const SubscriptionList>> lists_ ABSL_GUARDED_BY(mu_);
  std::vector<std::unique_ptr<Listener>> listeners_ ABSL_GUARDED_BY(mu_);
  int next_token_ ABSL_GUARDED_BY(mu_) = 1;
  alignas(64) std::atomic<uint64_t> drop_{0};
  std::atomic<uint64_t> dropped_{0};
};

}  // namespace am::sim

#endif  // BAREGPU_AM_SIM_DOORBELL_ROUTER_H_
