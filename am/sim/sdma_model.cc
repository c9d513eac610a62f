#include "am/sim/sdma_model.h"

#include <atomic>
#include <chrono>
#include <mutex>
#include <optional>

#include "absl/strings/str_format.h"
#include "am/regs/gc.h"
#include "am/regs/gfx_srcid_constants.h"
#include "am/regs/psp_constants.h"
#include "am/sim/engine_wakeup.h"
#include "am/sim/sdma_packet_executor.h"
#include "base/pooled_thread.h"
#include "base/status_macros.h"

namespace am::sim {
namespace {

namespace gc = regs::gc;

// sdma_v6_0.c (sdma_v6_0_get_reg_offset): SDMA1's registers are SDMA0's plus SDMA1_REG_OFFSET, except those in
// SDMA0_HYP_DEC_REG_START..END (segment 1), which lie SDMA1_HYP_DEC_REG_OFFSET apart.
constexpr uint32_t kSdma1RegOffset = 0x600;
constexpr uint32_t kHypDecStart = 0x5880;
constexpr uint32_t kHypDecEnd = 0x589a;
constexpr uint32_t kHypDecStride = 0x20;
static_assert(gc::SDMA1_QUEUE0_RB_CNTL::kOffset == gc::SDMA0_QUEUE0_RB_CNTL::kOffset + kSdma1RegOffset);
static_assert(gc::SDMA1_QUEUE0_DOORBELL_OFFSET::kOffset == gc::SDMA0_QUEUE0_DOORBELL_OFFSET::kOffset + kSdma1RegOffset);
static_assert(gc::SDMA1_CNTL::kOffset == gc::SDMA0_CNTL::kOffset + kSdma1RegOffset);
static_assert(gc::SDMA1_STATUS_REG::kOffset == gc::SDMA0_STATUS_REG::kOffset + kSdma1RegOffset);
static_assert(gc::SDMA1_F32_CNTL::kOffset == gc::SDMA0_F32_CNTL::kOffset + kHypDecStride);

template <typename R>
uint64_t InstanceAddress(const regs::IpBases& bases, int instance) {
  constexpr bool kHypDec = R::kSegment == 1 && R::kOffset >= kHypDecStart && R::kOffset <= kHypDecEnd;
  const uint64_t address = RegisterAddress<R>(bases);
  if (address == UINT64_MAX) return address;
  return address + static_cast<uint64_t>(instance) * (kHypDec ? kHypDecStride : kSdma1RegOffset);
}

// UTCL2 client id of SDMA0 on GC 11's GCHUB (gfxhub_v3_0.c gfxhub_client_ids: "SDMA0" at 13, "SDMA1" at 14).
constexpr uint32_t kSdma0FaultCid = 13;
constexpr const char* kNames[SdmaModel::kInstances] = {"sdma0", "sdma1"};

// Every thread that runs SDMA packets. A packet may write registers (POLL_REGMEM's HDP flush request), and a
// write to an engine's own control registers from there must not try to join the thread that is writing.
thread_local bool on_engine_thread = false;

}  // namespace

// The model's persistent block (ModelState::sdma). All zeros is power-on: no queue stopped, no timestamp offset.
struct SdmaState {
  struct Engine {
    uint32_t stopped_on_error;  // cleared when the driver disables the ring
    uint32_t reserved;
    uint64_t timestamp_offset;
  };
  Engine engine[SdmaModel::kInstances];
};

class SdmaEngine : public EngineControl {
 public:
  SdmaEngine(const ModelContext& context, int instance, SdmaState::Engine& state);
  ~SdmaEngine() override;

  void InjectHang(bool hang);
  EngineWakeup::Waits waits() const { return wake_->wakeup.waits(); }
  // GRBM_SOFT_RESET.SOFT_RESET_SDMAn: the engine's internal state (a hang included) is lost and its thread stops;
  // the ring registers keep their values until the driver programs them again (sdma_v6_0_soft_reset, then start).
  void SoftReset();
  bool Sleep(std::chrono::nanoseconds duration) override;
  bool Checkpoint() override;

 private:
  struct Registers {
    Registers(const regs::IpBases& bases, int i)
        : rb_cntl(InstanceAddress<gc::SDMA0_QUEUE0_RB_CNTL>(bases, i)),
          rb_base(InstanceAddress<gc::SDMA0_QUEUE0_RB_BASE>(bases, i)),
          rb_base_hi(InstanceAddress<gc::SDMA0_QUEUE0_RB_BASE_HI>(bases, i)),
          rb_rptr(InstanceAddress<gc::SDMA0_QUEUE0_RB_RPTR>(bases, i)),
          rb_rptr_hi(InstanceAddress<gc::SDMA0_QUEUE0_RB_RPTR_HI>(bases, i)),
          rb_wptr(InstanceAddress<gc::SDMA0_QUEUE0_RB_WPTR>(bases, i)),
          rb_wptr_hi(InstanceAddress<gc::SDMA0_QUEUE0_RB_WPTR_HI>(bases, i)),
          rptr_addr_lo(InstanceAddress<gc::SDMA0_QUEUE0_RB_RPTR_ADDR_LO>(bases, i)),
          rptr_addr_hi(InstanceAddress<gc::SDMA0_QUEUE0_RB_RPTR_ADDR_HI>(bases, i)),
          doorbell(InstanceAddress<gc::SDMA0_QUEUE0_DOORBELL>(bases, i)),
          doorbell_offset(InstanceAddress<gc::SDMA0_QUEUE0_DOORBELL_OFFSET>(bases, i)),
          ib_cntl(InstanceAddress<gc::SDMA0_QUEUE0_IB_CNTL>(bases, i)),
          cntl(InstanceAddress<gc::SDMA0_CNTL>(bases, i)),
          f32_cntl(InstanceAddress<gc::SDMA0_F32_CNTL>(bases, i)),
          status(InstanceAddress<gc::SDMA0_STATUS_REG>(bases, i)),
          minor_ptr_update(InstanceAddress<gc::SDMA0_QUEUE0_MINOR_PTR_UPDATE>(bases, i)) {}
    uint64_t rb_cntl, rb_base, rb_base_hi, rb_rptr, rb_rptr_hi, rb_wptr, rb_wptr_hi, rptr_addr_lo, rptr_addr_hi,
        doorbell, doorbell_offset, ib_cntl, cntl, f32_cntl, status, minor_ptr_update;
  };

  // What the thread shares with doorbell listeners, which may fire after Unsubscribe (the router calls a copy).
  struct Wake {
    EngineWakeup wakeup;
    std::atomic<uint64_t> wptr{0};
    bool stop = false;  // guarded by wakeup.mu()
    bool hang = false;  // guarded by wakeup.mu()
    void Notify() { wakeup.Notify(); }
    // Sets what `change` updates (under the mutex), then wakes the engine.
    template <typename F>
    void ChangeAndNotify(F change) {
      {
        std::lock_guard lock(wakeup.mu());
        change();
      }
      wakeup.Notify();
    }
    // Holding `lock`: returns when `done()` holds, or false at `deadline` (when given).
    // `asleep`: EngineWakeup::Wait's, for a wait between packets.
    template <typename F>
    bool WaitUntil(std::unique_lock<std::mutex>& lock, F done, bool spin,
                   std::optional<std::chrono::steady_clock::time_point> deadline = std::nullopt,
                   pci::sim::DmaSpace::Accessor* asleep = nullptr) {
      while (true) {
        const uint64_t seen = wakeup.epoch();
        if (done()) return true;
        if (!deadline) {
          wakeup.Wait(lock, seen, spin, asleep);
          continue;
        }
        const auto now = std::chrono::steady_clock::now();
        if (now >= *deadline) return false;
        wakeup.Wait(lock, seen, spin, *deadline - now, asleep);
      }
    }
  };

  // The queue as its registers describe it when it starts.
  struct Ring {
    CommandStream stream;
    uint64_t rptr = 0;
    bool rptr_writeback = false;
    uint64_t rptr_address = 0;
  };

  uint64_t ReadPair(uint64_t lo, uint64_t hi) const {
    return (uint64_t{context_.registers.Peek(hi)} << 32) | context_.registers.Peek(lo);
  }
  bool FirmwareLoaded() const {
    return context_.firmware.Has(regs::psp::GFX_FW_TYPE_SDMA_UCODE_TH0) &&
           context_.firmware.Has(regs::psp::GFX_FW_TYPE_SDMA_UCODE_TH1);
  }
  bool Halted() const { return gc::SDMA0_F32_CNTL::FromRaw(context_.registers.Peek(regs_.f32_cntl)).halt() != 0; }
  // The F32 thread that runs the queues is TH1: it is the one enabled at power-on (F32_CNTL 0x08084001: TH1_ENABLE
  // set, TH0_ENABLE clear), and the one Linux takes out of reset (TH1_RESET in sdma_v6_0_gfx_resume_instance) and
  // puts into it (sdma_v6_0_soft_reset) while leaving both ENABLE bits as they are. Without it nothing runs.
  bool Th1Runs() const {
    const auto f32 = gc::SDMA0_F32_CNTL::FromRaw(context_.registers.Peek(regs_.f32_cntl));
    return f32.th1_enable() != 0 && f32.th1_reset() == 0;
  }
  bool MinorPtrUpdate() const {
    return gc::SDMA0_QUEUE0_MINOR_PTR_UPDATE::FromRaw(context_.registers.Peek(regs_.minor_ptr_update)).enable() != 0;
  }
  void OnWptrWrite(bool hi, uint32_t value);
  bool RingEnabled() const {
    return gc::SDMA0_QUEUE0_RB_CNTL::FromRaw(context_.registers.Peek(regs_.rb_cntl)).rb_enable() != 0;
  }
  bool StoppedOnError() const {
    return std::atomic_ref<uint32_t>(state_.stopped_on_error).load(std::memory_order_acquire) != 0;
  }

  void OnControlWrite();
  void Reconcile();            // control_mu_ held
  void ResubscribeDoorbell();  // control_mu_ held
  void Start();                // control_mu_ held
  void Stop();                 // control_mu_ held
  void RequestStop();
  uint32_t ReadStatus(uint32_t stored) const;

  void Run(Ring ring);
  // Until the ring holds `bytes` past `rptr`; an engine that has run packets polls first (`spin`).
  bool WaitForCommands(uint64_t rptr, uint64_t bytes, bool spin, pci::sim::DmaSpace::Accessor& dma_access);
  absl::Status PublishRptr(const Ring& ring, uint64_t rptr);
  void Fail(const Ring& ring, uint64_t rptr, const absl::Status& status);

  ModelContext context_;
  const int instance_;
  const char* const name_;
  const Registers regs_;
  SdmaState::Engine& state_;
  SdmaPacketExecutor executor_;
  const std::shared_ptr<Wake> wake_ = std::make_shared<Wake>();
  std::atomic<uint64_t> rptr_{0};     // what the engine has consumed, for SDMAn_STATUS_REG
  std::atomic<bool> running_{false};  // the thread is executing the ring
  std::atomic<bool> exited_{false};   // the thread ended by itself (an error, or a stop from a packet)

  std::mutex control_mu_;      // serializes the hooks that start and stop the thread, and the destructor
  base::PooledThread thread_;  // guarded by control_mu_
  bool ring_enabled_ = false;  // guarded by control_mu_: RB_ENABLE as last seen
  int doorbell_token_ = 0;     // guarded by control_mu_
};

SdmaEngine::SdmaEngine(const ModelContext& context, int instance, SdmaState::Engine& state)
    : context_(context),
      instance_(instance),
      name_(kNames[instance]),
      regs_(context.bases, instance),
      state_(state),
      executor_(context, SdmaEngineInfo{instance, kNames[instance], regs_.cntl, regs_.ib_cntl, &state.timestamp_offset},
                *this) {
  RegisterFile& registers = context_.registers;
  for (uint64_t address : {regs_.rb_cntl, regs_.f32_cntl}) {
    registers.OnWrite(address, name_, [this](uint32_t) { OnControlWrite(); });
  }
  for (uint64_t address : {regs_.doorbell, regs_.doorbell_offset}) {
    registers.OnWrite(address, name_, [this](uint32_t) {
      if (on_engine_thread) return;
      std::lock_guard lock(control_mu_);
      ResubscribeDoorbell();
    });
  }
  // sdma_v6_0_ring_set_wptr without a doorbell: the wptr through RB_WPTR/_HI (bytes).
  for (bool hi : {false, true}) {
    registers.OnWrite(hi ? regs_.rb_wptr_hi : regs_.rb_wptr, name_,
                      [this, hi](uint32_t value) { OnWptrWrite(hi, value); });
  }
  registers.OnRead(regs_.status, name_, [this](uint32_t stored) { return ReadStatus(stored); });

  // A queue a previous process left enabled resumes from its registers.
  rptr_.store(ReadPair(regs_.rb_rptr, regs_.rb_rptr_hi));
  wake_->wptr.store(ReadPair(regs_.rb_wptr, regs_.rb_wptr_hi));
  std::lock_guard lock(control_mu_);
  ResubscribeDoorbell();
  Reconcile();
}

SdmaEngine::~SdmaEngine() {
  std::lock_guard lock(control_mu_);
  if (doorbell_token_ != 0) context_.doorbells.Unsubscribe(doorbell_token_);
  doorbell_token_ = 0;
  if (thread_.joinable()) Stop();
}

void SdmaEngine::InjectHang(bool hang) {
  wake_->ChangeAndNotify([&] { wake_->hang = hang; });
}

void SdmaEngine::SoftReset() {
  wake_->ChangeAndNotify([&] { wake_->hang = false; });
  std::lock_guard lock(control_mu_);
  if (thread_.joinable()) Stop();
  std::atomic_ref<uint32_t>(state_.stopped_on_error).store(0);
  // Idle out of reset: the engine runs again when the driver's next RB_CNTL/F32_CNTL write finds it enabled.
}

bool SdmaEngine::Sleep(std::chrono::nanoseconds duration) {
  std::unique_lock lock(wake_->wakeup.mu());
  const auto deadline = std::chrono::steady_clock::now() + duration;
  return !wake_->WaitUntil(
      lock, [&] { return wake_->stop; }, /*spin=*/false, deadline);
}

bool SdmaEngine::Checkpoint() {
  std::unique_lock lock(wake_->wakeup.mu());
  wake_->WaitUntil(
      lock, [&] { return wake_->stop || !wake_->hang; }, /*spin=*/false);
  return !wake_->stop;
}

void SdmaEngine::OnControlWrite() {
  if (on_engine_thread) {
    // A packet wrote this (or another) engine's RB_CNTL or F32_CNTL: only a stop can take effect from there.
    if (!RingEnabled() || Halted() || !Th1Runs()) RequestStop();
    return;
  }
  std::lock_guard lock(control_mu_);
  Reconcile();
}

void SdmaEngine::OnWptrWrite(bool hi, uint32_t value) {
  const uint64_t before = wake_->wptr.load(std::memory_order_acquire);
  const uint64_t after = ReadPair(regs_.rb_wptr, regs_.rb_wptr_hi);
  if (after < before && !MinorPtrUpdate()) {
    // sdma_v6_0_gfx_resume_instance: "before programing wptr to a less value, need set minor_ptr_update first"
    // (tinygrad's setup_ring brackets its pointer writes the same way). Without it the engine keeps its wptr.
    context_.registers.Poke(regs_.rb_wptr, static_cast<uint32_t>(before));
    context_.registers.Poke(regs_.rb_wptr_hi, static_cast<uint32_t>(before >> 32));
    context_.errors.Report(
        name_, absl::StrFormat("SDMA%d_QUEUE0_RB_WPTR%s=%#x would move the wptr back from %#x to %#x without "
                               "SDMA%d_QUEUE0_MINOR_PTR_UPDATE=1: ignored, the engine keeps wptr %#x",
                               instance_, hi ? "_HI" : "", value, before, after, instance_, before));
    return;
  }
  wake_->wptr.store(after, std::memory_order_release);
  wake_->Notify();
}

void SdmaEngine::Reconcile() {
  const bool enabled = RingEnabled();
  const bool rising = enabled && !ring_enabled_;
  // Disabling the ring is how the driver recovers a queue that stopped on an error (sdma_v6_0_gfx_stop).
  if (!enabled && ring_enabled_) std::atomic_ref<uint32_t>(state_.stopped_on_error).store(0);
  ring_enabled_ = enabled;

  const bool firmware = FirmwareLoaded();
  const bool halted = Halted();
  const bool th1 = Th1Runs();
  const bool stopped = StoppedOnError();
  const bool run = enabled && firmware && !halted && th1 && !stopped;
  if (thread_.joinable() && (!run || exited_.load(std::memory_order_acquire))) Stop();
  if (run && !thread_.joinable()) Start();
  if (rising && !run) {
    const std::string why = !firmware ? "the PSP has not loaded the SDMA firmware (GFX_FW_TYPE_SDMA_UCODE_TH0 and _TH1)"
                            : halted  ? absl::StrFormat("the engine is halted (SDMA%d_F32_CNTL.HALT is 1)", instance_)
                            : !th1    ? absl::StrFormat(
                                            "the F32's queue thread TH1 does not run (SDMA%d_F32_CNTL 0x%08x: "
                                               "TH1_ENABLE must stay 1 and TH1_RESET be 0; a whole-register write "
                                               "that clears TH1_ENABLE stops it)",
                                            instance_, context_.registers.Peek(regs_.f32_cntl))
                                   : "the queue stopped on an error; disable the ring (RB_ENABLE 0) to recover it";
    context_.errors.Report(
        name_,
        absl::StrFormat("SDMA%d_QUEUE0_RB_CNTL.RB_ENABLE is set but the engine does not run: %s", instance_, why));
  }
}

void SdmaEngine::ResubscribeDoorbell() {
  if (doorbell_token_ != 0) context_.doorbells.Unsubscribe(doorbell_token_);
  doorbell_token_ = 0;
  if (gc::SDMA0_QUEUE0_DOORBELL::FromRaw(context_.registers.Peek(regs_.doorbell)).enable() == 0) return;
  // OFFSET is the doorbell's dword index in BAR2 (Linux: doorbell_index << 1 of a 64-bit doorbell); the driver
  // writes the 64-bit wptr in bytes there (WDOORBELL64).
  const uint64_t index =
      gc::SDMA0_QUEUE0_DOORBELL_OFFSET::FromRaw(context_.registers.Peek(regs_.doorbell_offset)).offset();
  doorbell_token_ =
      context_.doorbells.Subscribe(index, /*is_64bit=*/true,
                                   [wake = wake_, doorbells = &context_.doorbells, registers = &context_.registers,
                                    index, lo = regs_.rb_wptr, hi = regs_.rb_wptr_hi] {
                                     const uint64_t wptr = doorbells->Read64(index);
                                     // The queue's RB_WPTR registers follow the doorbell, so a reopened device resumes
                                     // from them.
                                     registers->Poke(lo, static_cast<uint32_t>(wptr));
                                     registers->Poke(hi, static_cast<uint32_t>(wptr >> 32));
                                     wake->wptr.store(wptr, std::memory_order_release);
                                     wake->Notify();
                                   });
}

void SdmaEngine::Start() {
  const auto cntl = gc::SDMA0_QUEUE0_RB_CNTL::FromRaw(context_.registers.Peek(regs_.rb_cntl));
  Ring ring;
  ring.stream.base =
      (uint64_t{context_.registers.Peek(regs_.rb_base)} << 8) |
      (uint64_t{gc::SDMA0_QUEUE0_RB_BASE_HI::FromRaw(context_.registers.Peek(regs_.rb_base_hi)).addr()} << 40);
  ring.stream.size = uint64_t{4} << cntl.rb_size();  // RB_SIZE: log2 of the ring's dwords
  ring.stream.is_ring = true;
  ring.stream.client = MemoryClient{Hub::kGc, cntl.rb_vmid(), kSdma0FaultCid + instance_, name_};
  ring.rptr = ReadPair(regs_.rb_rptr, regs_.rb_rptr_hi);
  ring.rptr_writeback = cntl.rptr_writeback_enable() != 0;
  ring.rptr_address = (uint64_t{context_.registers.Peek(regs_.rptr_addr_hi)} << 32) |
                      (context_.registers.Peek(regs_.rptr_addr_lo) & ~uint32_t{3});
  rptr_.store(ring.rptr, std::memory_order_release);
  wake_->wptr.store(ReadPair(regs_.rb_wptr, regs_.rb_wptr_hi), std::memory_order_release);
  {
    std::lock_guard lock(wake_->wakeup.mu());
    wake_->stop = false;
  }
  exited_.store(false, std::memory_order_release);
  running_.store(true, std::memory_order_release);
  thread_ = base::PooledThread([this, ring] {
    on_engine_thread = true;
    Run(ring);
    on_engine_thread = false;  // the thread goes on to other bodies (base::PooledThread)
    running_.store(false, std::memory_order_release);
    exited_.store(true, std::memory_order_release);
  });
}

void SdmaEngine::Stop() {
  RequestStop();
  thread_.join();
  running_.store(false, std::memory_order_release);
}

void SdmaEngine::RequestStop() {
  wake_->ChangeAndNotify([&] { wake_->stop = true; });
}

uint32_t SdmaEngine::ReadStatus(uint32_t stored) const {
  const bool empty = rptr_.load(std::memory_order_acquire) == wake_->wptr.load(std::memory_order_acquire);
  const bool idle = empty || !running_.load(std::memory_order_acquire);
  return gc::SDMA0_STATUS_REG::FromRaw(stored).idle(idle ? 1 : 0).rb_empty(empty ? 1 : 0).raw();
}

bool SdmaEngine::WaitForCommands(uint64_t rptr, uint64_t bytes, bool spin, pci::sim::DmaSpace::Accessor& dma_access) {
  dma_access.Quiescent();
  std::unique_lock lock(wake_->wakeup.mu());
  wake_->WaitUntil(
      lock,
      [&] { return wake_->stop || (!wake_->hang && wake_->wptr.load(std::memory_order_acquire) - rptr >= bytes); },
      spin, std::nullopt, &dma_access);
  return !wake_->stop;
}

void SdmaEngine::Run(Ring ring) {
  uint64_t rptr = ring.rptr;
  uint64_t needed = 4;  // bytes past rptr before the next packet can be decoded
  // Polling before sleeping pays off for an engine the driver is feeding (EngineWakeup); one that has run nothing
  // since it started sleeps at once: a boot starts the engine long before its first packet (issue 24: a partial
  // boot's fresh engines polled for their whole kSpinBeforeSleep on the other core).
  bool ran_packets = false;
  // Between packets the engine holds no host pointer into DMA memory (an IB runs whole inside Execute), so memory the
  // driver frees may go back to the host (pci/sim/dma_space.h).
  pci::sim::DmaSpace::Accessor dma_access(context_.dma);
  while (WaitForCommands(rptr, needed, /*spin=*/ran_packets, dma_access)) {
    const uint64_t available = wake_->wptr.load(std::memory_order_acquire) - rptr;
    if (available > ring.stream.size) {
      return Fail(ring, rptr,
                  absl::InvalidArgumentError(absl::StrFormat(
                      "wptr %#x is %#x bytes past rptr %#x, more than the %#x-byte ring holds (or behind it)",
                      rptr + available, available, rptr, ring.stream.size)));
    }
    absl::StatusOr<uint64_t> bytes = executor_.Execute(ring.stream, rptr, available & ~uint64_t{3});
    if (!bytes.ok()) {
      if (absl::IsCancelled(bytes.status())) return;  // disabled mid-packet: it runs again when re-enabled
      return Fail(ring, rptr, bytes.status());
    }
    if (*bytes > available) {  // the driver has not written the whole packet yet
      needed = *bytes;
      continue;
    }
    needed = 4;
    rptr += *bytes;
    ran_packets = true;
    if (absl::Status status = PublishRptr(ring, rptr); !status.ok()) return Fail(ring, rptr, status);
  }
}

absl::Status SdmaEngine::PublishRptr(const Ring& ring, uint64_t rptr) {
  context_.registers.Poke(regs_.rb_rptr, static_cast<uint32_t>(rptr));
  context_.registers.Poke(regs_.rb_rptr_hi, static_cast<uint32_t>(rptr >> 32));
  rptr_.store(rptr, std::memory_order_release);
  if (!ring.rptr_writeback) return absl::OkStatus();
  // The driver reads a u64 there (sdma_v6_0_ring_get_rptr); RB_RPTR_ADDR_LO only guarantees dword alignment.
  const MemoryClient& client = ring.stream.client;
  if (ring.rptr_address % 8 == 0) {
    absl::StatusOr<uint64_t*> target = MapQword(context_.memory, client, ring.rptr_address, Access::kWrite);
    if (!target.ok()) return absl::AbortedError(target.status().message());
    std::atomic_ref<uint64_t>(**target).store(rptr, std::memory_order_release);
    return absl::OkStatus();
  }
  for (int half = 0; half < 2; ++half) {
    absl::StatusOr<uint32_t*> target = MapDword(context_.memory, client, ring.rptr_address + 4 * half, Access::kWrite);
    if (!target.ok()) return absl::AbortedError(target.status().message());
    std::atomic_ref<uint32_t>(**target).store(static_cast<uint32_t>(rptr >> (32 * half)), std::memory_order_release);
  }
  return absl::OkStatus();
}

void SdmaEngine::Fail(const Ring& ring, uint64_t rptr, const absl::Status& status) {
  const char* what = "memory fault";
  uint32_t source_id = regs::ih::GFX_11_0_0__SRCID__SDMA_PAGE_FAULT;
  if (absl::IsInvalidArgument(status)) {
    // GFX 11 has no SDMA illegal-instruction source (irqsrcs_gfx_11_0_0.h; Linux's sdma_v6_0 illegal_inst_irq is
    // never attached to an id). A queue that refuses a packet makes no further progress, which is what
    // SDMA_QUEUE_HANG ("Queue hang or Command timeout") reports.
    what = "malformed packet";
    source_id = regs::ih::GFX_11_0_0__SRCID__SDMA_QUEUE_HANG;
  } else if (absl::IsUnimplemented(status)) {
    what = "packet not modelled";  // a real packet: the hardware would run it, so no interrupt pretends otherwise
    source_id = 0;
  }
  // Otherwise a memory fault: the GMC has posted its UTCL2 fault, and the engine reports its own
  // (SDMA_PAGE_FAULT, "Page Fault Error from UTCL2 when nack=3").
  std::atomic_ref<uint32_t>(state_.stopped_on_error).store(1, std::memory_order_release);
  // The log entry is there before the interrupt that makes a driver look for it.
  context_.errors.Report(name_, absl::StrFormat("queue 0 stopped at rptr %#x (ring offset %#x): %s: %s", rptr,
                                                rptr & (ring.stream.size - 1), what, status.message()));
  if (source_id != 0) executor_.PostInterrupt(source_id);
}

SdmaModel::SdmaModel(const ModelContext& context) {
  auto& state = StateBlock<SdmaState>(context.state.sdma);
  for (int i = 0; i < kInstances; ++i) engines_[i] = std::make_unique<SdmaEngine>(context, i, state.engine[i]);
  // GRBM_SOFT_RESET resets an engine on the rising edge of its bit (the driver pulses it: set, read back, clear).
  const uint64_t soft_reset = RegisterAddress<gc::GRBM_SOFT_RESET>(context.bases);
  context.registers.OnWrite(soft_reset, "sdma", [this, last = uint32_t{0}](uint32_t value) mutable {
    const auto now = gc::GRBM_SOFT_RESET::FromRaw(value), before = gc::GRBM_SOFT_RESET::FromRaw(last);
    last = value;
    if (now.soft_reset_sdma0() && !before.soft_reset_sdma0()) engines_[0]->SoftReset();
    if (now.soft_reset_sdma1() && !before.soft_reset_sdma1()) engines_[1]->SoftReset();
  });
}

SdmaModel::~SdmaModel() = default;

void SdmaModel::InjectHang(int instance, bool hang) {
  if (instance >= 0 && instance < kInstances) engines_[instance]->InjectHang(hang);
}

EngineWakeup::Waits SdmaModel::EngineWaits(int instance) const {
  if (instance < 0 || instance >= kInstances) return {};
  return engines_[instance]->waits();
}

}  // namespace am::sim
