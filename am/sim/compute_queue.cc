#include "am/sim/compute_queue.h"

#include <algorithm>
#include <vector>

#include "absl/strings/str_format.h"
#include "am/regs/gfx_srcid_constants.h"

namespace am::sim {
namespace {

namespace gc = regs::gc;

// CP_HQD_PQ_RPTR and the report are 32-bit dword offsets into the ring, so the largest ring whose offsets they
// can hold is 2^31 dwords: QUEUE_SIZE 30.
constexpr uint32_t kMaxQueueSize = 30;
// How often a queue with CP_PQ_WPTR_POLL_CNTL.EN re-reads its write-pointer address while idle.
constexpr std::chrono::milliseconds kWptrPollPeriod{1};

}  // namespace

ComputeQueue::ComputeQueue(const ModelContext& context, ShaderExecutor* executor, HqdId id, HqdRegisters hqd,
                           Hooks hooks)
    : context_(context),
      executor_(executor),
      id_(id),
      hqd_(hqd),
      hooks_(std::move(hooks)),
      poll_cntl_address_(RegisterAddress<gc::CP_PQ_WPTR_POLL_CNTL>(context.bases)) {
  const auto doorbell = hqd_.Get<gc::CP_HQD_PQ_DOORBELL_CONTROL>();
  if (doorbell.doorbell_en()) {
    // The doorbell write carries its value to the CP: the listener (on the writer's thread, where the slot was just
    // written) hands it over beside the flag, so the queue's thread reads one line for both.
    doorbell_token_ = context_.doorbells.Subscribe(
        doorbell.doorbell_offset(), /*is_64bit=*/true,
        [signals = signals_, doorbells = &context_.doorbells, offset = uint64_t{doorbell.doorbell_offset()}] {
          signals->doorbell_value.store(doorbells->Read64(offset), std::memory_order_relaxed);
          signals->doorbell_rung.store(true, std::memory_order_release);
          signals->wakeup.Notify();
        });
  }
  thread_ = base::PooledThread([this] { Run(); });
}

ComputeQueue::~ComputeQueue() {
  // The model goes away with its process: a dispatch still running cannot go on without it (issue 23: a spinning
  // kernel held the process's exit for minutes). Its queue stays active at the dispatch packet for the next process.
  reset_waves_.store(true, std::memory_order_relaxed);
  ChangeAndWake([this] {
    if (stop_ == Stop::kNone) stop_ = Stop::kShutdown;
  });
  thread_.join();
  if (doorbell_token_ != 0) context_.doorbells.Unsubscribe(doorbell_token_);
}

void ComputeQueue::RequestDequeue(regs::DequeueRequest request) {
  if (request == regs::DequeueRequest::kResetWaves) reset_waves_.store(true, std::memory_order_relaxed);
  ChangeAndWake([this] {
    if (stop_ == Stop::kNone) stop_ = Stop::kDequeue;
  });
}

void ComputeQueue::Wake(bool wptr_register_written) {
  ChangeAndWake([this, wptr_register_written] {
    if (wptr_register_written) wptr_written_ = true;
  });
}

void ComputeQueue::InjectHang() {
  ChangeAndWake([this] { hung_ = true; });
}

bool ComputeQueue::Backoff(std::chrono::microseconds delay) {
  std::unique_lock lock(mu_);
  const uint64_t seen = wakeup_.epoch();
  if (stop_ != Stop::kNone) return false;
  if (delay.count() > 0) wakeup_.Wait(lock, seen, /*spin=*/false, delay);
  return stop_ == Stop::kNone;
}

bool ComputeQueue::polling() const {
  const auto poll = gc::CP_PQ_WPTR_POLL_CNTL::FromRaw(context_.registers.Peek(poll_cntl_address_));
  return poll.en() &&
         (hqd_.Get<gc::CP_HQD_PQ_WPTR_POLL_ADDR>().raw() | hqd_.Get<gc::CP_HQD_PQ_WPTR_POLL_ADDR_HI>().raw());
}

bool ComputeQueue::UpdateWptr(Pm4Engine& engine) {
  const auto doorbell = hqd_.Get<gc::CP_HQD_PQ_DOORBELL_CONTROL>();
  uint64_t wptr = wptr_;
  if (signals_->doorbell_rung.load(std::memory_order_relaxed) &&
      signals_->doorbell_rung.exchange(false, std::memory_order_acq_rel)) {
    if (doorbell_token_ != 0 && hooks_.doorbell_routed(doorbell.doorbell_offset())) {
      wptr = signals_->doorbell_value.load(std::memory_order_relaxed);
    }
  }
  if (wptr_written_) {
    wptr_written_ = false;
    wptr = hqd_.Get<gc::CP_HQD_PQ_WPTR_LO>().raw() | (uint64_t{hqd_.Get<gc::CP_HQD_PQ_WPTR_HI>().raw()} << 32);
  }
  if (polling()) {
    const uint64_t address = (hqd_.Get<gc::CP_HQD_PQ_WPTR_POLL_ADDR>().raw() & ~7u) |
                             (uint64_t{hqd_.Get<gc::CP_HQD_PQ_WPTR_POLL_ADDR_HI>().raw()} << 32);
    absl::StatusOr<uint64_t*> polled = MapQword(memory_, engine.client(), address, Access::kRead);
    if (!polled.ok()) {
      engine.Fault(regs::ih::GFX_11_0_0__SRCID__CP_GPF,
                   absl::StrFormat("write-pointer poll: %s", polled.status().message()));
      return false;
    }
    wptr = std::atomic_ref<uint64_t>(**polled).load(std::memory_order_acquire);
  }
  if (wptr != wptr_) {
    wptr_ = wptr;
    hqd_.Set(gc::CP_HQD_PQ_WPTR_LO::FromRaw(static_cast<uint32_t>(wptr)));
    hqd_.Set(gc::CP_HQD_PQ_WPTR_HI::FromRaw(static_cast<uint32_t>(wptr >> 32)));
  }
  return true;
}

bool ComputeQueue::ReadRing(uint32_t offset, std::span<uint32_t> out, Pm4Engine& engine) {
  const MemoryClient& client = engine.client();
  while (!out.empty()) {
    const uint32_t piece = std::min<uint64_t>(out.size(), ring_dwords_ - offset);
    const uint64_t address = ring_base_ + uint64_t{offset} * 4;
    absl::Status read =
        ReadMemory(memory_, client, address, std::span<uint8_t>(reinterpret_cast<uint8_t*>(out.data()), piece * 4));
    if (!read.ok()) {
      engine.Fault(regs::ih::GFX_11_0_0__SRCID__CP_GPF,
                   absl::StrFormat("reading the ring at %#x (dword %d): %s", address, offset, read.message()));
      return false;
    }
    out = out.subspan(piece);
    offset = (offset + piece) & (ring_dwords_ - 1);
  }
  return true;
}

void ComputeQueue::PublishRptr(Pm4Engine& engine) {
  hqd_.Set(gc::CP_HQD_PQ_RPTR::FromRaw(rptr_));
  const auto control = hqd_.Get<gc::CP_HQD_PQ_CONTROL>();
  const uint64_t report = (hqd_.Get<gc::CP_HQD_PQ_RPTR_REPORT_ADDR>().raw() & ~3u) |
                          (uint64_t{hqd_.Get<gc::CP_HQD_PQ_RPTR_REPORT_ADDR_HI>().raw()} << 32);
  if (control.no_update_rptr() || report == 0) return;
  const MemoryClient& client = engine.client();
  absl::StatusOr<uint32_t*> dword = MapDword(memory_, client, report, Access::kWrite);
  if (!dword.ok()) {
    engine.Fault(regs::ih::GFX_11_0_0__SRCID__CP_GPF, absl::StrFormat("rptr report: %s", dword.status().message()));
    faulted_ = true;
    return;
  }
  std::atomic_ref<uint32_t>(**dword).store(rptr_, std::memory_order_release);
}

void ComputeQueue::Run() {
  Pm4Engine engine(context_, executor_, id_, hqd_.Get<gc::CP_HQD_VMID>().vmid(),
                   [this](std::chrono::microseconds delay) { return Backoff(delay); });
  if (hooks_.sh_mem) engine.set_sh_mem_source(hooks_.sh_mem);
  engine.set_reset_waves(&reset_waves_);
  if (hooks_.kiq) {
    engine.set_kiq_handler([this, &engine](std::span<const uint32_t> packet) { return hooks_.kiq(packet, engine); });
  }
  const auto control = hqd_.Get<gc::CP_HQD_PQ_CONTROL>();
  ring_base_ = (hqd_.Get<gc::CP_HQD_PQ_BASE>().raw() | (uint64_t{hqd_.Get<gc::CP_HQD_PQ_BASE_HI>().raw()} << 32)) << 8;
  std::unique_lock lock(mu_);
  if (control.queue_size() > kMaxQueueSize) {
    engine.Fault(regs::ih::GFX_11_0_0__SRCID__CP_PM4_PKT_RSVD_BIT_ERROR,
                 absl::StrFormat("CP_HQD_PQ_CONTROL.QUEUE_SIZE %d asks for a ring of 2^%d dwords; at most %d (2^%d "
                                 "dwords) fits the 32-bit read pointer",
                                 control.queue_size(), control.queue_size() + 1, kMaxQueueSize, kMaxQueueSize + 1));
    faulted_ = true;
  } else {
    ring_dwords_ = 1u << (control.queue_size() + 1);
  }
  rptr_ = hqd_.Get<gc::CP_HQD_PQ_RPTR>().raw() & (ring_dwords_ - 1);
  wptr_ = hqd_.Get<gc::CP_HQD_PQ_WPTR_LO>().raw() | (uint64_t{hqd_.Get<gc::CP_HQD_PQ_WPTR_HI>().raw()} << 32);
  std::vector<uint32_t> packet;
  uint32_t incomplete_packet = 0;  // dwords the packet at rptr needs, once the ring holds only part of it
  // Polling before sleeping pays off for a queue the driver is feeding (EngineWakeup); one that has run nothing
  // since it started sleeps at once: a boot activates the queue long before its first packet (issue 24: a partial
  // boot's fresh queue polled for its whole kSpinBeforeSleep on the other core).
  bool ran_packets = false;
  // Between packets the queue holds no host pointer into DMA memory (an IB is copied before it runs; the waves of a
  // dispatch end inside it), so memory the driver frees may go back to the host (pci/sim/dma_space.h).
  pci::sim::DmaSpace::Accessor dma_access(context_.dma);
  while (true) {
    dma_access.Quiescent();
    const uint64_t seen = wakeup_.epoch();  // before the inputs are read: a change after it ends the wait below
    if (stop_ != Stop::kNone) break;
    if (hung_ || faulted_ || !hooks_.mec_running()) {
      wakeup_.Wait(lock, seen, /*spin=*/false, &dma_access);
      continue;
    }
    // The CP reads ahead: the ring at the read pointer and the buffer the last packet there ran are what a new
    // submission most likely brings, so their lines are fetched while the write pointer is (no translation, no
    // fault: only views this queue's cache holds).
    if (const uint8_t* next = memory_.Lookup(engine.client(), ring_base_ + uint64_t{rptr_} * 4, Access::kRead)) {
      __builtin_prefetch(next);
    }
    engine.PrefetchLastIndirectBuffer();
    if (!UpdateWptr(engine)) {
      faulted_ = true;
      continue;
    }
    const uint32_t pending = (static_cast<uint32_t>(wptr_) - rptr_) & (ring_dwords_ - 1);
    if (pending_skip_ > 0 && pending > 0) {
      const uint32_t skip = std::min(pending_skip_, pending);
      rptr_ = (rptr_ + skip) & (ring_dwords_ - 1);
      pending_skip_ -= skip;
      PublishRptr(engine);
      continue;
    }
    if (pending == 0 || pending_skip_ > 0 || incomplete_packet > pending) {
      if (polling()) {
        wakeup_.Wait(lock, seen, /*spin=*/ran_packets, kWptrPollPeriod, &dma_access);
      } else {
        wakeup_.Wait(lock, seen, /*spin=*/ran_packets, &dma_access);
      }
      continue;
    }
    lock.unlock();
    uint32_t header = 0;
    bool ok = ReadRing(rptr_, std::span<uint32_t>(&header, 1), engine);
    absl::StatusOr<uint32_t> size = ok ? Pm4PacketDwords(header) : absl::StatusOr<uint32_t>(0u);
    if (ok && !size.ok()) {
      engine.Fault(regs::ih::GFX_11_0_0__SRCID__CP_BAD_OPCODE_ERROR,
                   absl::StrFormat("ring dword %d: %s", rptr_, size.status().message()));
      ok = false;
    } else if (ok && *size > ring_dwords_) {
      engine.Fault(regs::ih::GFX_11_0_0__SRCID__CP_BAD_OPCODE_ERROR,
                   absl::StrFormat("ring dword %d: packet %#010x of %d dwords is larger than the ring (%d dwords)",
                                   rptr_, header, *size, ring_dwords_));
      ok = false;
    }
    if (ok && *size > pending) {
      // The driver has not written the rest of the packet yet (or not moved wptr past it): wait for it.
      lock.lock();
      incomplete_packet = *size;
      continue;
    }
    Pm4Engine::Result result;
    if (ok) {
      incomplete_packet = 0;
      packet.resize(*size);
      ok = ReadRing(rptr_, packet, engine);
      if (ok) result = engine.ExecuteRingPacket(packet);
    }
    lock.lock();
    if (!ok || result.status == Pm4Engine::Status::kFault) {
      faulted_ = true;
      continue;
    }
    ran_packets = true;
    if (result.status == Pm4Engine::Status::kStopped) continue;
    rptr_ = (rptr_ + *size) & (ring_dwords_ - 1);
    pending_skip_ = result.skip_dwords;
    PublishRptr(engine);
  }
  if (stop_ == Stop::kDequeue) {
    // The queue is off the MEC: what gfx_v11_0 and tinygrad poll CP_HQD_ACTIVE for.
    hqd_.Set(gc::CP_HQD_ACTIVE::FromRaw(0));
  }
  finished_.store(true, std::memory_order_release);
}

}  // namespace am::sim
