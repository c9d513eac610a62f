// hcq::InterruptSleep: how a wait that outlasted its spin sleeps until the device says a signal changed, instead of
// sleeping blind. It holds the device's completion interrupts (Device::HoldCompletionInterrupts: the engines
// interrupt when they write a signal) and blocks on the eventfd the interrupt adds to, through an epoll of its own
// that reports each addition (edge-triggered): several waits may sleep on one eventfd at once, and none reads it,
// so none takes another's wake-up. The kernel driver's waits work the same way: a fence's interrupt wakes whoever
// sleeps on it.
//
//   InterruptSleep sleep(device);
//   if (sleep.Begin().ok()) {
//     while (signal.value() < target) sleep.Sleep(limit);
//   }
#ifndef BAREGPU_HCQ_INTERRUPT_SLEEP_H_
#define BAREGPU_HCQ_INTERRUPT_SLEEP_H_

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "base/fd.h"

namespace hcq {

class Device;

class InterruptSleep {
 public:
  // The longest one sleep lasts: a signal no interrupt reports (one written by a peer device's queue, whose
  // interrupt goes to that device) is still noticed this late at the latest, at a wake-up a millisecond for a wait
  // that sleeps long.
  static constexpr absl::Duration kMaxInterruptSleep = absl::Milliseconds(1);

  explicit InterruptSleep(Device& device) : device_(device) {}
  ~InterruptSleep();
  InterruptSleep(const InterruptSleep&) = delete;
  InterruptSleep& operator=(const InterruptSleep&) = delete;

  // Holds the interrupts and registers with the eventfd. An error when the device has no interrupt (then the wait
  // sleeps blind, counted in WaitStats::blind_waits) or a system call failed. After an OK return, a signal written
  // after the caller's next read of it wakes the next Sleep().
  absl::Status Begin();
  // Sleeps until the eventfd is added to or `limit` (at most kMaxInterruptSleep) passed; true when woken by the
  // eventfd.
  bool Sleep(absl::Duration limit);

 private:
  Device& device_;
  base::ScopedFd epoll_;
  bool holding_ = false;
  bool counted_ = false;
};

}  // namespace hcq

#endif  // BAREGPU_HCQ_INTERRUPT_SLEEP_H_
