// hcq::InterruptSleep: how a wait that outlasted its spin sleeps until the device says a signal changed, instead of
// sleeping blind. It holds the device's completion interrupts (Device::HoldCompletionInterrupts: the engines
// interrupt when they write a signal) and blocks on the eventfd the interrupt adds to, through an epoll of its own
// that reports each addition (edge-triggered): several waits may sleep on one eventfd at once, and none reads it,
// so none takes another's wake-up. The kernel driver's waits work the same way: a fence's interrupt wakes whoever
// sleeps on it. A peer the device shared its signals with (Device::ShareSignalsWith) may write them too, and its
// queues interrupt that peer: the sleep holds and listens to the peers' interrupts as well (hcq/signal_writers.h).
//
//   InterruptSleep sleep(device);
//   if (sleep.Begin().ok()) {
//     while (signal.value() < target) sleep.Sleep(limit);
//   }
#ifndef BAREGPU_HCQ_INTERRUPT_SLEEP_H_
#define BAREGPU_HCQ_INTERRUPT_SLEEP_H_

#include <array>
#include <cstddef>
#include <span>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "base/fd.h"
#include "hcq/signal_writers.h"

namespace hcq {

class Device;

class InterruptSleep {
 public:
  // The longest one sleep lasts: a signal written without an interrupt this wait listens to (the host storing to
  // its memory directly instead of through Signal::set_value, a peer beyond SignalWriters::kMaxHeld, an interrupt
  // enabled again on a new eventfd after a reset) is still noticed this late at the latest, at a wake-up a
  // millisecond for a wait that sleeps long.
  static constexpr absl::Duration kMaxInterruptSleep = absl::Milliseconds(1);

  explicit InterruptSleep(Device& device) : device_(device) {}
  ~InterruptSleep();
  InterruptSleep(const InterruptSleep&) = delete;
  InterruptSleep& operator=(const InterruptSleep&) = delete;

  // Holds the interrupts (the device's and its signal writers') and registers with their eventfds. An error when
  // the device has no interrupt (then the wait sleeps blind, counted in WaitStats::blind_waits) or a system call
  // failed; a peer without an interrupt is left out. After an OK return, a signal written after the caller's next
  // read of it wakes the next Sleep().
  absl::Status Begin();
  // Sleeps until an eventfd is added to or `limit` (at most kMaxInterruptSleep) passed. Lets go of a peer that is
  // closing first (SignalWriters::Forget waits for that).
  void Sleep(absl::Duration limit);

 private:
  // A peer whose queues may write the device's signals, held: its interrupts on, its eventfd in the epoll.
  struct Peer {
    Device* device = nullptr;
    int fd = -1;
  };
  // Sets up peers_[0, peer_count_) from the writers SignalWriters held, dropping those without an interrupt.
  void ListenToPeers(std::span<Device*> writers);
  // Lets go of peers_[i] (the last takes its place).
  void DropPeer(size_t i);
  void DropClosingPeers();

  Device& device_;
  base::ScopedFd epoll_;
  bool holding_ = false;
  bool counted_ = false;
  std::array<Peer, SignalWriters::kMaxHeld> peers_;
  size_t peer_count_ = 0;
};

}  // namespace hcq

#endif  // BAREGPU_HCQ_INTERRUPT_SLEEP_H_
