#include "hcq/device.h"

#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <map>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "base/bits.h"
#include "base/mutex.h"
#include "base/status_macros.h"
#include "hcq/signal_writers.h"

namespace hcq {
namespace {

struct Registry {
  base::Mutex mu;
  std::map<std::string, DeviceFactory> factories ABSL_GUARDED_BY(mu);
};
Registry& Backends() {
  static auto* registry = new Registry;
  return *registry;
}

}  // namespace

bool RegisterBackend(absl::string_view backend, DeviceFactory factory) {
  Registry& registry = Backends();
  base::MutexLock lock(&registry.mu);
  registry.factories[std::string(backend)] = std::move(factory);
  return true;
}

absl::StatusOr<std::unique_ptr<Device>> Device::Open(absl::string_view name, const DeviceOptions& options) {
  DeviceFactory factory;
  {
    Registry& registry = Backends();
    base::MutexLock lock(&registry.mu);
    // One backend so far; a second (hcq/nv) would pick by vendor id.
    if (registry.factories.empty()) return absl::UnavailableError("hcq: no backend is linked in");
    factory = registry.factories.begin()->second;
  }
  return factory(name, options);
}

Device::~Device() = default;

absl::Status Device::InitCommon() {
  if (options_.signal_pool_bytes < 2 * Signal::kBytes) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s: signal pool of %d bytes holds fewer than the two timeline signals (%d bytes each)", name_,
                        options_.signal_pool_bytes, Signal::kBytes));
  }
  BAREGPU_ASSIGN_OR_RETURN(
      signal_pool_, allocator_.alloc(options_.signal_pool_bytes,
                                     {.kind = options_.signals_in_vram ? MemoryKind::kVram : MemoryKind::kHost}));
  if (signal_pool_.cpu() == nullptr) {
    return absl::FailedPreconditionError(absl::StrFormat(
        "%s: the signal pool at %#x is not CPU-visible (a small BAR?); use host signals", name_, signal_pool_.va()));
  }
  std::memset(signal_pool_.cpu(), 0, signal_pool_.size());
  for (uint32_t slot = static_cast<uint32_t>(signal_pool_.size() / Signal::kBytes); slot-- > 0;) {
    free_signals_.push_back(slot);
  }
  BAREGPU_RETURN_IF_ERROR(
      kernargs_.Init(options_.kernarg_bytes,
                     {.alloc = [this](uint64_t bytes) { return allocator_.alloc(bytes, {.kind = MemoryKind::kHost}); },
                      .free = [this](const Buffer& buffer) { (void)allocator_.free(buffer); },
                      .timeline_reached = [this] { return timeline_signal_.value(); },
                      .timeline_next = [this] { return timeline_value(); },
                      .wait = [this](uint64_t value) { return timeline_signal_.wait(value); }}));
  BAREGPU_ASSIGN_OR_RETURN(timeline_signal_, NewSignal(0));
  BAREGPU_ASSIGN_OR_RETURN(shadow_timeline_signal_, NewSignal(0));
  timeline_value_ = 1;
  return allocator_.Init(options_.staging_buffers, options_.staging_bytes);
}

absl::Status Device::ShareSignalsWith(Device& peer) {
  BAREGPU_RETURN_IF_ERROR(peer.allocator().map(signal_pool_));
  SignalWriters::Add(*this, peer);
  return absl::OkStatus();
}

void Device::FiniCommon() {
  // Before the backend's interrupts go: waits on other devices' signals that listen to this one let go of it.
  SignalWriters::Forget(*this);
  profiler_.Collect();
  retired_.Shutdown();  // the engines have stopped (the backend's destructor stopped them first)
  allocator_.Shutdown();
  kernargs_.Shutdown();
  if (signal_pool_.valid()) (void)allocator_.free(signal_pool_);
  signal_pool_ = Buffer();
}

absl::StatusOr<Signal> Device::NewSignal(uint64_t value) {
  std::unique_lock lock(resources_mu_);
  if (free_signals_.empty()) {
    // Says what each API's user can do: the pool's size is a C++ DeviceOptions field, which hcq_device_open (and
    // so Python's baregpu.Device) leaves at its default; freeing signals works everywhere.
    return absl::ResourceExhaustedError(absl::StrFormat(
        "%s: all %d signals of the pool are in use; free the signals no longer needed (C: hcq_signal_free, Python: "
        "Signal.close(), C++: Device::FreeSignal), or, from C++, open the device with a larger "
        "DeviceOptions::signal_pool_bytes (now %d bytes, %d per signal; the C API and Python always use the default)",
        name_, signal_pool_.size() / Signal::kBytes, signal_pool_.size(), Signal::kBytes));
  }
  const uint32_t slot = free_signals_.back();
  free_signals_.pop_back();
  lock.unlock();
  Signal signal(this, signal_pool_.va() + slot * Signal::kBytes, signal_pool_.cpu() + slot * Signal::kBytes,
                options_.signals_in_vram);
  signal.set_value(value);
  // The value's upper half stays 0 (values are 32 bits: hcq/signal.h); the timestamp starts at 0.
  std::atomic_ref<uint32_t>(reinterpret_cast<uint32_t*>(signal_pool_.cpu() + slot * Signal::kBytes)[1]).store(0);
  std::atomic_ref<uint64_t>(reinterpret_cast<uint64_t*>(signal_pool_.cpu() + slot * Signal::kBytes)[1]).store(0);
  return signal;
}

bool Device::SignalsReachableFrom(const Device& peer) const {
  if (&peer == this) return true;
  if (!signal_pool_.valid()) return false;
  const std::vector<Device*>& mapped = signal_pool_.mapped();
  return std::find(mapped.begin(), mapped.end(), &peer) != mapped.end();
}

void Device::FreeSignal(const Signal& signal) {
  if (signal.device() != this || signal.value_address() < signal_pool_.va()) return;
  std::lock_guard lock(resources_mu_);
  free_signals_.push_back(static_cast<uint32_t>((signal.value_address() - signal_pool_.va()) / Signal::kBytes));
}

absl::StatusOr<ArgsState> Device::NewArgs(uint64_t size, uint32_t buffers) {
  // The kernel reads at least the buffer pointers; 256-byte alignment is more than the 16 bytes the ABI wants and
  // keeps launches on separate cache lines.
  const uint64_t bytes = base::AlignUp(std::max<uint64_t>({size, 8 * uint64_t{buffers}, 1}), KernargArea::kAlignment);
  std::unique_lock lock(resources_mu_);
  BAREGPU_ASSIGN_OR_RETURN(KernargArea::Piece piece, kernargs_.Alloc(bytes, name_));
  lock.unlock();
  ArgsState args(piece.cpu, piece.va, bytes, buffers);
  std::memset(args.cpu(), 0, bytes);
  return args;
}

absl::StatusOr<std::string> Device::RecoverQueues() {
  std::lock_guard lock(recover_mu_);
  BAREGPU_ASSIGN_OR_RETURN(std::vector<std::string> resets, ResetBusyQueues());
  if (resets.empty()) return std::string();
  timeline_signal_.set_value(timeline_value() - 1);
  retired_.ForgetMarkers();
  recoveries_.fetch_add(1, std::memory_order_acq_rel);
  return absl::StrCat(
      "the device reset its busy queues (amdgpu's queue reset; what they had not run is dropped and "
      "never signals; later submissions run): ",
      absl::StrJoin(resets, "; "));
}

void Device::WakeSleepingWaits() {
  // Against InterruptSleep::Begin: the signal's store (seq_cst, Signal::set_value) before this load, the sleeper's
  // count before its load of the signal. Either the sleeper sees the value or this sees the sleeper.
  if (sleeping_waits_.load(std::memory_order_seq_cst) == 0) return;
  const int fd = wake_fd_.load(std::memory_order_acquire);
  if (fd < 0) return;
  const uint64_t one = 1;
  [[maybe_unused]] const ssize_t n = ::write(fd, &one, sizeof(one));  // fails only when the count is at its maximum
}

Device::WaitStats Device::wait_stats() const {
  return {sleeps_.load(std::memory_order_relaxed), interrupt_wakes_.load(std::memory_order_relaxed),
          timer_wakes_.load(std::memory_order_relaxed), blind_waits_.load(std::memory_order_relaxed)};
}

void Device::PollFaults() {
  if (!FaultsMayBePending()) return;
  std::unique_lock lock(faults_mu_, std::try_to_lock);
  if (!lock.owns_lock()) return;  // another thread is collecting: what it finds counts for everyone
  std::vector<std::string> found = TakeFaults();
  if (found.empty()) return;
  for (std::string& fault : found) {
    fault_log_.push_back(std::move(fault));
    if (fault_log_.size() > kFaultLog) fault_log_.pop_front();
  }
  faults_.fetch_add(found.size(), std::memory_order_acq_rel);
}

std::string Device::DescribeFaultsSince(uint64_t since) {
  std::lock_guard lock(faults_mu_);
  const uint64_t total = faults_.load(std::memory_order_acquire);
  const uint64_t wanted = total - std::min(since, total);
  const uint64_t shown = std::min<uint64_t>(wanted, fault_log_.size());
  std::vector<std::string> lines(fault_log_.end() - static_cast<std::ptrdiff_t>(shown), fault_log_.end());
  std::string text = absl::StrJoin(lines, "; ");
  if (wanted > shown) absl::StrAppend(&text, absl::StrFormat(" (and %d earlier)", wanted - shown));
  return text;
}

absl::Status Device::RecoverAfter(const absl::Status& wait) {
  const bool timed_out = absl::IsDeadlineExceeded(wait), faulted = absl::IsAborted(wait);
  if (!timed_out && !faulted) return wait;
  const auto same_kind = [&](std::string message) {
    return timed_out ? absl::DeadlineExceededError(message) : absl::AbortedError(message);
  };
  absl::StatusOr<std::string> recovered = RecoverQueues();
  if (!recovered.ok()) {
    return same_kind(absl::StrCat(wait.message(), "; recovering the device failed: ", recovered.status().message()));
  }
  if (recovered->empty()) {
    return faulted ? same_kind(absl::StrCat(wait.message(), "; no queue was left busy, so nothing was reset")) : wait;
  }
  return same_kind(absl::StrCat(wait.message(), "; ", *recovered));
}

absl::Status Device::synchronize() {
  BAREGPU_RETURN_IF_ERROR(RecoverAfter(timeline_signal_.wait(timeline_value() - 1)));
  BAREGPU_RETURN_IF_ERROR(RecoverAfter(retired_.WaitAll()));
  profiler_.Collect();
  if (timeline_value() > options_.timeline_wrap) {
    // Everything has completed: continue on the shadow signal from 1, so no wait compares against a value that
    // will not fit the engines' 32-bit compare. The old signal becomes the shadow (anyone still holding it sees
    // its final value).
    std::swap(timeline_signal_, shadow_timeline_signal_);
    timeline_signal_.set_value(0);
    timeline_value_ = 1;
    allocator_.ResetStagingTimeline();
    std::lock_guard lock(resources_mu_);
    kernargs_.ForgetTimeline();
  }
  return absl::OkStatus();
}

}  // namespace hcq
