#include "hcq/signal.h"

#include <cstdlib>
#include <optional>
#include <thread>

#include "absl/strings/numbers.h"
#include "absl/strings/str_format.h"
#include "base/status_macros.h"
#include "hcq/device.h"
#include "hcq/interrupt_sleep.h"

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace hcq {
namespace {

constexpr absl::Duration kDefaultTimeout = absl::Seconds(30);
// About a few microseconds of polling before the first sleep: a signal the device answers quickly (the virtual
// device's engines, a short kernel) costs no system call.
constexpr int kSpinIterations = 4096;
// On a device without an interrupt, the longest sleep between two looks: it bounds how late a waiter notices the
// signal (a graph that finishes just after the waiter went to sleep waits this long more) against how often an idle
// waiter wakes. 100 us keeps the added latency below a small kernel's time on the virtual GPU at about 1% of a core
// while waiting.
constexpr auto kMaxSleep = std::chrono::microseconds(100);

inline void CpuRelax() {
#if defined(__x86_64__)
  _mm_pause();
#endif
}

}  // namespace

absl::StatusOr<absl::Duration> DefaultWaitTimeout() {
  const char* text = std::getenv("HCQDEV_WAIT_TIMEOUT_MS");
  if (text == nullptr || *text == '\0') return kDefaultTimeout;
  int64_t ms = 0;
  if (!absl::SimpleAtoi(text, &ms) || ms <= 0) {
    return absl::InvalidArgumentError(
        absl::StrFormat("HCQDEV_WAIT_TIMEOUT_MS=\"%s\" is not a positive number of milliseconds; set it to e.g. "
                        "30000 or unset it for the default of 30 s",
                        text));
  }
  return absl::Milliseconds(ms);
}

void Signal::FlushDeviceWrites() const {
  if (device_ != nullptr) device_->FlushHostWrites();
}

absl::Status Signal::wait(uint64_t value) const {
  // The device read the environment once when it opened: a wait makes no getenv call.
  if (device_ != nullptr) return wait(value, device_->wait_timeout());
  BAREGPU_ASSIGN_OR_RETURN(absl::Duration timeout, DefaultWaitTimeout());
  return wait(value, timeout);
}

absl::Status Signal::wait(uint64_t value, absl::Duration timeout) const {
  if (cpu_ == nullptr) return absl::FailedPreconditionError("wait on a signal that was never allocated");
  if (value > kMaxValue) {
    return absl::InvalidArgumentError(
        absl::StrFormat("wait for %d: signal values are 32 bits (the engines write and compare 32 bits); at most %d",
                        value, kMaxValue));
  }
  const uint64_t faults_before = device_ != nullptr ? device_->faults() : 0;
  for (int i = 0; i < kSpinIterations; ++i) {
    if (this->value() >= value) return FaultsDuring(value, faults_before);
    CpuRelax();
  }
  // Slow path: the clock and sleeps are system calls from here on, which is fine for a wait this long.
  if (std::optional<absl::Status> status = SleepOnInterrupt(value, timeout, faults_before)) return *status;
  return SleepBlind(value, timeout, faults_before);
}

std::optional<absl::Status> Signal::SleepOnInterrupt(uint64_t value, absl::Duration timeout,
                                                     uint64_t faults_before) const {
  if (device_ == nullptr) return std::nullopt;
  const absl::Time deadline = absl::Now() + timeout;
  InterruptSleep sleep(*device_);
  if (!sleep.Begin().ok()) return std::nullopt;  // no interrupt: SleepBlind
  while (this->value() < value) {
    // A fault ends the wait now: the work that faulted may never write the signal. (Faults interrupt too.)
    if (absl::Status fault = FaultsDuring(value, faults_before); !fault.ok()) return fault;
    const absl::Duration left = deadline - absl::Now();
    if (left <= absl::ZeroDuration()) return TimedOut(value, timeout);
    sleep.Sleep(left);
  }
  return FaultsDuring(value, faults_before);
}

absl::Status Signal::SleepBlind(uint64_t value, absl::Duration timeout, uint64_t faults_before) const {
  const auto start = std::chrono::steady_clock::now();
  const auto limit = absl::ToChronoNanoseconds(timeout);
  auto sleep = std::chrono::microseconds(1);
  while (this->value() < value) {
    if (absl::Status fault = FaultsDuring(value, faults_before); !fault.ok()) return fault;
    if (std::chrono::steady_clock::now() - start >= limit) return TimedOut(value, timeout);
    std::this_thread::sleep_for(sleep);
    sleep = std::min(sleep * 2, kMaxSleep);
  }
  return FaultsDuring(value, faults_before);
}

absl::Status Signal::TimedOut(uint64_t value, absl::Duration timeout) const {
  return absl::DeadlineExceededError(
      absl::StrFormat("%s: signal at %#x still %d after %s waiting for %d (HCQDEV_WAIT_TIMEOUT_MS sets the limit); %s",
                      device_ != nullptr ? device_->name() : "?", va_, this->value(), absl::FormatDuration(timeout),
                      value, device_ != nullptr ? device_->DescribeQueues() : ""));
}

void Signal::WakeSleepingWaits() const { device_->WakeSleepingWaits(); }

absl::Status Signal::FaultsDuring(uint64_t value, uint64_t faults_before) const {
  if (device_ == nullptr) return absl::OkStatus();
  device_->PollFaults();
  if (device_->faults() == faults_before) return absl::OkStatus();
  return absl::AbortedError(absl::StrFormat(
      "%s: the GPU reported a fault while a wait for signal at %#x to reach %d was pending (it is %d): %s; queues: "
      "%s",
      device_->name(), va_, value, this->value(), device_->DescribeFaultsSince(faults_before),
      device_->DescribeQueues()));
}

}  // namespace hcq
