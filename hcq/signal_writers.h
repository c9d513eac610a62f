// hcq::SignalWriters: which devices' queues may write which devices' signals, for waits that sleep on interrupts.
// A device's signals are written by its own queues and by those of every peer it shared them with
// (Device::ShareSignalsWith), and a queue interrupts its own device, not the signal's. So a wait that sleeps until a
// signal changes listens to the interrupts of all of them, as the kernel's wait on a fence is woken by the interrupt
// of the device whose ring signals it (hcq/interrupt_sleep.h).
//
// Process-wide, behind one mutex: sharing signals, a wait going to sleep and a device closing come here, the waits
// that end in their spin never do. A device that shared nothing costs a sleeping wait one atomic load.
//
//   SignalWriters::Add(owner, peer);              // in owner.ShareSignalsWith(peer)
//   size_t n = SignalWriters::Hold(owner, held);  // a wait on an owner's signal goes to sleep
//   ... listen to held[0..n) ..., then SignalWriters::Release(*held[i]) for each
//   SignalWriters::Forget(peer);                  // peer closes: waits until nobody holds it
#ifndef BAREGPU_HCQ_SIGNAL_WRITERS_H_
#define BAREGPU_HCQ_SIGNAL_WRITERS_H_

#include <cstddef>
#include <span>

namespace hcq {

class Device;

class SignalWriters {
 public:
  // How many peers one sleeping wait listens to at most; the writers beyond them are noticed at the sleep's limit.
  static constexpr size_t kMaxHeld = 8;

  // `writer`'s queues may write `owner`'s signals from now on (a no-op when already known, or for the owner itself).
  static void Add(Device& owner, Device& writer);
  // The peers whose queues may write `owner`'s signals, at most out.size() of them, none closing: each stays open
  // until its Release. Allocates nothing.
  static size_t Hold(const Device& owner, std::span<Device*> out);
  static void Release(Device& writer);
  // Whether `writer` is closing: a wait holding it lets go of it at once (Forget waits for that).
  static bool Closing(const Device& writer);
  // While `device` closes, before its interrupts go: it owns and writes no signals here any more. Returns when no
  // wait holds it, waking its holders through its eventfd (Device::CompletionEventFd) until they let go.
  static void Forget(Device& device);
};

}  // namespace hcq

#endif  // BAREGPU_HCQ_SIGNAL_WRITERS_H_
