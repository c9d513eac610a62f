// One active MEC hardware queue descriptor (HQD) of the virtual Navi31: the thread that fetches PM4 packets from its
// ring and runs them through a Pm4Engine. Everything it knows about the queue is in the HQD's registers, as on the
// hardware: ring base (CP_HQD_PQ_BASE/_HI, in 256-byte units), size (CP_HQD_PQ_CONTROL.QUEUE_SIZE: 2^(n+1)
// dwords), read pointer (CP_HQD_PQ_RPTR, dwords, wrapped), 64-bit write pointer (CP_HQD_PQ_WPTR_LO/HI, dwords, not
// wrapped), doorbell (CP_HQD_PQ_DOORBELL_CONTROL), write-pointer poll address, read-pointer report address, VMID.
// So a queue left active by one process restarts in the next from the same registers.
//
// It learns of new work from its doorbell (the 64-bit value written there is the new write pointer), from a
// write of CP_HQD_PQ_WPTR_LO/HI, or, while CP_PQ_WPTR_POLL_CNTL.EN is set, by polling the write-pointer address.
// A queue that runs out of work polls briefly, then sleeps (am/sim/engine_wakeup.h); one that has run no packet
// since it started sleeps at once.
#ifndef BAREGPU_AM_SIM_COMPUTE_QUEUE_H_
#define BAREGPU_AM_SIM_COMPUTE_QUEUE_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>

#include "am/regs/gc.h"
#include "am/regs/mqd.h"
#include "am/sim/cached_memory.h"
#include "am/sim/engine_wakeup.h"
#include "am/sim/model_context.h"
#include "am/sim/pm4_engine.h"
#include "base/pooled_thread.h"

namespace am::sim {

// The registers of one HQD that the MEC loads from an MQD: CP_MQD_BASE_ADDR (0x1fa9) to CP_HQD_PQ_WPTR_HI (0x1fe0)
// in gc_11_0_0_offset.h, the v11_compute_mqd dwords 128..183 (cp_mqd_base_addr_lo .. cp_hqd_pq_wptr_hi), which are
// also the range tinygrad's AM driver writes register by register. Kept in the GFX model's persistent state; index
// i is the register at CP_MQD_BASE_ADDR + i. (The context-save and AQL dispatch-id registers after it, 0x1fe1 to
// 0x1fe8, are not banked: PM4 queues do not use them.)
class HqdRegisters {
 public:
  static constexpr uint32_t kFirst = regs::gc::CP_MQD_BASE_ADDR::kOffset;
  static constexpr uint32_t kCount = regs::gc::CP_HQD_PQ_WPTR_HI::kOffset - kFirst + 1;
  static constexpr uint32_t kMqdFirstDword = 128;

  explicit HqdRegisters(uint32_t* dwords) : dwords_(dwords) {}

  uint32_t Read(uint32_t index) const {
    return std::atomic_ref<uint32_t>(dwords_[index]).load(std::memory_order_acquire);
  }
  void Write(uint32_t index, uint32_t value) {
    std::atomic_ref<uint32_t>(dwords_[index]).store(value, std::memory_order_release);
  }
  template <typename R>
  R Get() const {
    static_assert(R::kOffset >= kFirst && R::kOffset < kFirst + kCount && R::kSegment == 0);
    return R::FromRaw(Read(R::kOffset - kFirst));
  }
  template <typename R>
  void Set(R value) {
    static_assert(R::kOffset >= kFirst && R::kOffset < kFirst + kCount && R::kSegment == 0);
    Write(R::kOffset - kFirst, value.raw());
  }

 private:
  uint32_t* dwords_;
};

class ComputeQueue {
 public:
  struct Hooks {
    // Whether the MEC runs this queue's pipe now (firmware unhalted, pipe active and out of reset).
    std::function<bool()> mec_running;
    // Whether a doorbell write to this dword index reaches the MEC (CP_MEC_DOORBELL_RANGE_LOWER/UPPER).
    std::function<bool(uint64_t dword_index)> doorbell_routed;
    // Packets only the KIQ executes (SET_RESOURCES, MAP_QUEUES, UNMAP_QUEUES, ...); null for other queues.
    std::function<Pm4Engine::Status(std::span<const uint32_t> packet, Pm4Engine& engine)> kiq;
    // SH_MEM_CONFIG/SH_MEM_BASES of a VMID, read at each dispatch; null: their power-on values.
    Pm4Engine::ShMemSource sh_mem;
  };

  // Starts the queue's thread. The HQD must outlive the queue.
  ComputeQueue(const ModelContext& context, ShaderExecutor* executor, HqdId id, HqdRegisters hqd, Hooks hooks);
  // Stops at a packet boundary and joins; the HQD is left as it is (still active for the next process).
  ~ComputeQueue();

  // CP_HQD_DEQUEUE_REQUEST: stop at the next packet boundary (an unfinished wait is abandoned and runs again when
  // the queue is mapped again), then CP_HQD_ACTIVE reads 0. Returns at once. Draining lets a running dispatch
  // finish first (a kernel that never ends keeps the queue active); resetting the waves ends it where it is.
  void RequestDequeue(regs::DequeueRequest request);
  // Something the queue may be waiting for changed (a register it polls, the MEC's halt state, the wptr registers).
  void Wake(bool wptr_register_written = false);
  // Fault injection: the queue stops consuming its ring (its rptr freezes) but still answers a dequeue.
  void InjectHang();
  // The thread has exited (after a dequeue or a fault it reported).
  bool finished() const { return finished_.load(std::memory_order_acquire); }
  const HqdId& id() const { return id_; }
  // How the queue's thread waited for work (for tests).
  EngineWakeup::Waits waits() const { return wakeup_.waits(); }

 private:
  enum class Stop { kNone, kDequeue, kShutdown };

  void Run();
  // Under mu_: takes the newest write pointer from the doorbell, the wptr registers or the poll address.
  bool UpdateWptr(Pm4Engine& engine);
  bool Backoff(std::chrono::microseconds delay);
  bool ReadRing(uint32_t offset, std::span<uint32_t> out, Pm4Engine& engine);
  void PublishRptr(Pm4Engine& engine);
  bool polling() const;

  const ModelContext& context_;
  ShaderExecutor* executor_;
  const HqdId id_;
  HqdRegisters hqd_;
  Hooks hooks_;
  uint64_t poll_cntl_address_;

  // What the queue's thread sleeps on and what a doorbell write hands it, on one cache line: the flag, the value
  // written and (at the start of EngineWakeup) the wake-up epoch, so that a woken queue takes one cache miss for all
  // three. Shared with the doorbell listener, which the router may still call briefly after the queue unsubscribed.
  struct Signals {
    alignas(64) std::atomic<bool> doorbell_rung{false};
    std::atomic<uint64_t> doorbell_value{0};
    EngineWakeup wakeup;
  };
  // Sets the state `change` updates (under mu_), then wakes the queue's thread.
  template <typename F>
  void ChangeAndWake(F change) {
    {
      std::lock_guard lock(mu_);
      change();
    }
    wakeup_.Notify();
  }

  std::shared_ptr<Signals> signals_ = std::make_shared<Signals>();
  EngineWakeup& wakeup_ = signals_->wakeup;
  std::mutex& mu_ = wakeup_.mu();
  Stop stop_ = Stop::kNone;    // guarded by mu_
  bool wptr_written_ = false;  // guarded by mu_
  bool hung_ = false;          // guarded by mu_
  bool faulted_ = false;       // guarded by mu_
  // Set by a RESET_WAVES dequeue and by shutdown (the model going away with its process): the running dispatch's
  // waves end where they are. Read by the dispatch's worker threads, hence atomic.
  std::atomic<bool> reset_waves_{false};
  uint64_t wptr_ = 0;  // guarded by mu_

  // Ring geometry and position, owned by the queue's thread.
  uint64_t ring_base_ = 0;
  uint32_t ring_dwords_ = 0;
  uint32_t rptr_ = 0;
  uint32_t pending_skip_ = 0;
  // The queue's own translations (its UTCL1): ring pages, the write-pointer poll, the read-pointer report.
  CachedMemory memory_{context_.memory};

  int doorbell_token_ = 0;
  std::atomic<bool> finished_{false};
  base::PooledThread thread_;
};

}  // namespace am::sim

#endif  // BAREGPU_AM_SIM_COMPUTE_QUEUE_H_
