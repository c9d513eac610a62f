// hcq::Device: one GPU as HCQ sees it (tinygrad's HCQCompiled): its allocator, its compute and copy queue types,
// a pool of signals, a kernel-argument area, the timeline signal (and its shadow, for rollover) and synchronize().
// Backends (hcq/amd/) implement the queues, memory and programs; this layer knows no vendor.
//
// Threads (issue 23): separate queues may be built and submitted from separate threads at once — the rings take
// concurrent submits, and NewSignal/FreeSignal, NewArgs and the allocator's alloc/free lock. A queue itself is one
// thread's at a time (a library built without NDEBUG aborts on overlapping use: HwQueue::UseScope). The timeline —
// next_timeline(), synchronize(), and the allocator's copyin/copyout/transfer, which order themselves by it — is
// one thread's at a time too: its values must reach the engines in the order they were handed out, which only
// one submitting thread guarantees. Threads with queues of their own use signals of their own. Peer mapping
// (Allocator::map, ShareSignalsWith) and opening or closing devices are one thread's at a time. The C API
// (hcq/hcq.h) serialises every call per device except signal reads and waits.
//
//   auto dev = hcq::Device::Open("sim:navi31");
//   auto q = (*dev)->NewComputeQueue();
//   q->wait(dev->timeline_signal(), dev->timeline_value() - 1).exec(prog, args, {4, 1, 1}, {64, 1, 1})
//       .signal(dev->timeline_signal(), dev->next_timeline()).submit(*dev);
#ifndef BAREGPU_HCQ_DEVICE_H_
#define BAREGPU_HCQ_DEVICE_H_

#include <atomic>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "hcq/allocator.h"
#include "hcq/args_state.h"
#include "hcq/buffer.h"
#include "hcq/hw_queue.h"
#include "hcq/kernarg_area.h"
#include "hcq/profiler.h"
#include "hcq/retired_memory.h"
#include "hcq/signal.h"

namespace hcq {

class Program;

struct DeviceOptions {
  uint64_t kernarg_bytes = uint64_t{16} << 20;  // tinygrad's HCQ default kernel-argument area
  uint64_t signal_pool_bytes = 4096;            // tinygrad's default signal pool (256 signals of 16 bytes)
  uint32_t staging_buffers = 32;                // copy-in/out staging ring: 32 x 2 MiB (tinygrad's defaults)
  uint64_t staging_bytes = uint64_t{2} << 20;
  // Past this timeline value synchronize() swaps in the shadow timeline signal (tinygrad wraps past 2^31, well
  // below the 32-bit compare of the engines' waits). Tests lower it.
  uint64_t timeline_wrap = uint64_t{1} << 31;
  // Largest copy per packet; 0 = the engine's own limit.
  uint64_t max_copy_packet_bytes = 0;
  bool profile = false;  // bracket every exec and copy with timestamps (Profiler)
  // The signal pool in VRAM instead of host memory, at the cost of host accesses through BAR0. Other devices can
  // map the pool either way (ShareSignalsWith); in VRAM their writes stay on the PCIe fabric between the GPUs.
  bool signals_in_vram = false;
  // Serve a debug endpoint, through which `baregpu regs/pt/ih/mem` inspect the device while this process holds it
  // (serve/debug_endpoint.h: a Unix socket only this user can reach). nullopt: BAREGPU_DEBUG_ENDPOINT=1/0 decides,
  // else the device (on for virtual devices, off for real ones). An endpoint asked for here or by the variable that
  // cannot start fails the open; one that is only the device's default is skipped (debug_endpoint_path() is empty).
  std::optional<bool> debug_endpoint;
};

// What a device is (hcq.h's hcq_device_properties, without the name: Device::name()). IP versions are packed as
// amdgpu's IP_VERSION(major, minor, revision) = (major << 16) | (minor << 8) | revision, 0 for a block the device
// lacks.
struct DeviceProperties {
  std::string arch;             // the compiler's target name: "gfx1100"
  uint32_t gfx_target_version;  // KFD's major * 10000 + minor * 100 + stepping: 110000
  uint32_t shader_engines;
  uint32_t shader_arrays_per_engine;
  uint32_t compute_units;  // active ones, all engines
  uint32_t simds_per_cu;
  uint32_t wave_size;
  uint32_t max_waves_per_simd;
  uint32_t lds_bytes;  // LDS one workgroup may use
  uint64_t vram_bytes;
  uint64_t visible_vram_bytes;  // the part the CPU reaches (BAR0)
  uint32_t gc_version, sdma_version, mmhub_version, mp0_version, mp1_version, nbio_version, ih_version, hdp_version;
  uint64_t timestamp_hz;  // the clock timestamp commands write (Signal::kTicksPerMicrosecond per microsecond)
};

class Device {
 public:
  // "sim:navi31[:INSTANCE]" or a PCI address ("0000:03:00.0"): boots the GPU (a partial boot when the device was
  // left booted by baregpu) and sets up HCQ on it.
  static absl::StatusOr<std::unique_ptr<Device>> Open(absl::string_view name, const DeviceOptions& options = {});
  virtual ~Device();
  Device(const Device&) = delete;
  Device& operator=(const Device&) = delete;

  const std::string& name() const { return name_; }
  const DeviceOptions& options() const { return options_; }
  Allocator& allocator() { return allocator_; }
  Profiler& profiler() { return profiler_; }
  // Memory the engines may still read after its owner let go of it (bound queues' commands), freed behind markers.
  RetiredMemory& retired_memory() { return retired_; }

  // What the backend learned of the device when it opened it.
  virtual DeviceProperties properties() const = 0;

  virtual std::unique_ptr<ComputeQueue> NewComputeQueue() = 0;
  virtual std::unique_ptr<CopyQueue> NewCopyQueue() = 0;
  // Loads kernel `kernel` of a code object (ELF: linked, or LLVM's relocatable object) into device memory.
  virtual absl::StatusOr<std::unique_ptr<Program>> LoadProgram(std::span<const uint8_t> code_object,
                                                               absl::string_view kernel) = 0;

  // Signals from the pool (host memory every queue reaches), initialised to `value`.
  absl::StatusOr<Signal> NewSignal(uint64_t value = 0);
  void FreeSignal(const Signal& signal);
  // Kernel-argument memory for one launch: `size` bytes, `buffers` pointers first. It stays the launch's until the
  // timeline reaches the value current now (hcq/kernarg_area.h): memory of launches not yet submitted or still
  // running is never handed out again.
  absl::StatusOr<ArgsState> NewArgs(uint64_t size, uint32_t buffers);
  const KernargArea& kernarg_area() const { return kernargs_; }

  // Maps this device's signal pool into `peer`, so its queues can wait on and signal this device's signals. Waits
  // on them that sleep listen to `peer`'s interrupts too from then on (hcq/signal_writers.h).
  absl::Status ShareSignalsWith(Device& peer);
  // Whether `peer`'s queues reach this device's signals (this device itself, or a peer it shared them with).
  bool SignalsReachableFrom(const Device& peer) const;

  const Signal& timeline_signal() const { return timeline_signal_; }
  const Signal& shadow_timeline_signal() const { return shadow_timeline_signal_; }
  // The next value to signal; waiting for timeline_value() - 1 waits for everything submitted so far.
  uint64_t timeline_value() const { return timeline_value_.load(std::memory_order_relaxed); }
  uint64_t next_timeline() { return timeline_value_.fetch_add(1, std::memory_order_relaxed); }
  // Waits for all submitted work (and for the engines to leave the bound queues' memory retired so far, which it
  // frees), then rolls the timeline over to the shadow signal when it grew past the wrap. A wait that times out
  // recovers the device (RecoverQueues) and says what it did.
  absl::Status synchronize();

  // After a wait timed out (a hung or spinning kernel, an illegal instruction, a copy that faulted): resets every
  // engine queue that still has work (amdgpu's queue reset: the waves are killed, the packets not yet run are
  // dropped and never signal), then completes the timeline, whose values the dropped work would have signalled, so
  // that later work and waits go on (amdgpu_fence_driver_force_completion). Returns what was reset, "" when no
  // queue had work. Thread-safe; the work of other threads pending on the same engines is dropped with it.
  absl::StatusOr<std::string> RecoverQueues();
  // How many recoveries reset a queue (users of their own fences compare it: hcq/args_pool.h).
  uint64_t recoveries() const { return recoveries_.load(std::memory_order_acquire); }
  // A wait that timed out or ended with a fault, turned into a recovery: RecoverQueues, and the wait's message with
  // what it reset. Other statuses (OK included) come back as they are.
  absl::Status RecoverAfter(const absl::Status& wait);

  // Faults the device reports (a GPU page fault, an illegal instruction, a packet the engine refused): every wait
  // (Signal::wait) collects them as it goes, and a fault that arrives while a wait is pending ends that wait at once
  // with absl::AbortedError naming the fault, even when its signal was reached after all (the work is suspect).
  // RecoverAfter then resets what is stuck. Waits of several threads pending at once all end with the fault: the
  // device does not know which signal the faulting work would have written.
  //
  // The wait limit, read once when the device opened (DefaultWaitTimeout: HCQDEV_WAIT_TIMEOUT_MS, else 30 s): what
  // Signal::wait(value) and a full ring's back-pressure wait at most.
  absl::Duration wait_timeout() const { return wait_timeout_; }

  // How many faults the device reported since it opened; waits compare it before and after.
  uint64_t faults() const { return faults_.load(std::memory_order_acquire); }
  // Collects what the device reported since the last call (the AMD backend drains its interrupt ring). Costs one
  // memory read when nothing is pending, makes no system call then; thread-safe (a thread that finds another
  // collecting goes on without waiting).
  void PollFaults();
  // The faults after the first `since` in words (the newest kFaultLog of them).
  std::string DescribeFaultsSince(uint64_t since);
  static constexpr size_t kFaultLog = 8;

  // Each queue's state in words (pointers, the packet it stands at); for timeout messages.
  virtual std::string DescribeQueues() = 0;
  // The backend's part of PollFaults: the faults reported since the last call, one line each. Called by one thread
  // at a time; must be cheap when there are none.
  virtual std::vector<std::string> TakeFaults() = 0;
  // False only when TakeFaults would find nothing. Any thread, no lock, no system call: PollFaults asks first, so a
  // wait that completes with nothing to report takes no lock (issue 24: a try_lock, the call and an unlock were on
  // every round trip's path from the signal to the next submit).
  virtual bool FaultsMayBePending() { return true; }
  // The backend's part of RecoverQueues: reset the queues that have work; one line per queue reset.
  virtual absl::StatusOr<std::vector<std::string>> ResetBusyQueues() = 0;
  // Makes the host's writes to device memory through the BAR visible to the engines (the HDP flush on AMD).
  // Submits do it themselves; Signal::set_value calls it for signals in device memory.
  virtual void FlushHostWrites() = 0;

  // Sleeping waits (Signal::wait once its spin is over; hcq/interrupt_sleep.h). A wait that sleeps holds the
  // device's completion interrupts, so that its queues interrupt the host when they write a signal (the AMD
  // backend: every signal asks for the end-of-pipe interrupt or an SDMA trap, which the engines raise only while
  // held), and blocks on the eventfd the interrupt adds to. A host write to a signal (Signal::set_value) wakes
  // those waits through the same eventfd. A device without an interrupt (the sysfs backend, a backend that does
  // not implement these) has its waits sleep in growing steps instead.
  //
  // The eventfd, the interrupt enabled on first use; an error says why there is none.
  virtual absl::StatusOr<int> CompletionEventFd() {
    return absl::UnimplementedError(absl::StrCat(name_, ": the backend has no completion interrupt"));
  }
  // One more holder; on return every signal a queue writes from now on either interrupts or is visible to the
  // caller's next read of it.
  virtual absl::Status HoldCompletionInterrupts() {
    return absl::UnimplementedError(absl::StrCat(name_, ": the backend has no completion interrupt"));
  }
  virtual void ReleaseCompletionInterrupts() {}
  // Called after a host write to one of this device's signals: wakes the waits sleeping on its eventfd. One load
  // when none sleeps.
  void WakeSleepingWaits();
  // How the sleeping waits went since the device opened: sleeps, and how each ended (the eventfd, or the sleep's
  // limit: kMaxInterruptSleep in hcq/interrupt_sleep.h, or what was left of the wait's timeout), and the waits
  // that slept in blind steps because the device has no interrupt.
  struct WaitStats {
    uint64_t sleeps = 0;
    uint64_t interrupt_wakes = 0;
    uint64_t timer_wakes = 0;
    uint64_t blind_waits = 0;
  };
  WaitStats wait_stats() const;
  // Waits sleeping on the eventfd now.
  uint32_t sleeping_waits() const { return sleeping_waits_.load(std::memory_order_seq_cst); }

  // The backend's memory (the allocator builds on these).
  virtual absl::StatusOr<std::shared_ptr<Allocation>> AllocMemory(uint64_t size, const BufferSpec& spec) = 0;
  virtual absl::Status FreeMemory(Allocation& allocation) = 0;
  // Maps another device's allocation into this device's address space at the allocation's address.
  virtual absl::Status MapPeer(Allocation& allocation) = 0;

 protected:
  Device(std::string name, const DeviceOptions& options)
      : name_(std::move(name)), options_(options), allocator_(*this), profiler_(*this) {}
  // After the backend's queues and memory work: the signal pool, kernel-argument area, timelines, staging ring.
  absl::Status InitCommon();
  // Releases what InitCommon allocated (the backend's destructor calls it before tearing itself down), after the
  // waits on other devices' signals that listen to this device's interrupts let go of it (hcq/signal_writers.h).
  void FiniCommon();

  absl::Duration wait_timeout_;  // set by the backend's Init, before anything waits

 private:
  std::string name_;
  DeviceOptions options_;
  Allocator allocator_;
  Profiler profiler_;
  RetiredMemory retired_{*this};
  Buffer signal_pool_;
  std::mutex resources_mu_;             // guards the two below
  std::vector<uint32_t> free_signals_;  // slot indexes
  KernargArea kernargs_;
  Signal timeline_signal_, shadow_timeline_signal_;
  std::mutex recover_mu_;
  std::mutex faults_mu_;  // one collector at a time; guards fault_log_
  std::deque<std::string> fault_log_;
  std::atomic<uint64_t> faults_{0};
  std::atomic<uint64_t> recoveries_{0};
  // Atomic so that NewArgs on another thread reads it safely; the timeline itself is one thread's (above).
  std::atomic<uint64_t> timeline_value_{1};
  // Sleeping waits (InterruptSleep keeps these): the eventfd they block on, -1 until one asked for it; how many
  // sleep on it now; WaitStats.
  friend class InterruptSleep;
  std::atomic<int> wake_fd_{-1};
  std::atomic<uint32_t> sleeping_waits_{0};
  std::atomic<uint64_t> sleeps_{0}, interrupt_wakes_{0}, timer_wakes_{0}, blind_waits_{0};
};

// Backends register a way to open devices by name (hcq/amd registers itself for sim:navi31 and PCI addresses).
using DeviceFactory =
    std::function<absl::StatusOr<std::unique_ptr<Device>>(absl::string_view name, const DeviceOptions& options)>;
bool RegisterBackend(absl::string_view backend, DeviceFactory factory);

}  // namespace hcq

#endif  // BAREGPU_HCQ_DEVICE_H_
