// The interrupts that tell the host its queues completed work, for waiters that sleep instead of polling: the MEC
// pipe's end-of-pipe interrupt (a RELEASE_MEM with INT_SEL) and the SDMA trap (a TRAP packet), both written into the
// IH ring, which raises the device's MSI (pci::Device::EnableInterrupts: VFIO's eventfd, or the virtual device's).
//
// Like amdgpu_irq_get/put, the sources are on only while they have holders. Queues ask for an interrupt with every
// signal (as amdgpu's fences do), so with nobody holding them the engines skip the interrupt and polling waiters
// cost them nothing; a waiter about to sleep holds them, so the signal it waits for wakes it.
#ifndef BAREGPU_AM_COMPLETION_INTERRUPTS_H_
#define BAREGPU_AM_COMPLETION_INTERRUPTS_H_

#include <optional>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "base/fd.h"
#include "base/mutex.h"

namespace am {

class Device;

class CompletionInterrupts {
 public:
  explicit CompletionInterrupts(Device& device) : device_(device) {}
  // Disables the MSI this object enabled.
  ~CompletionInterrupts();
  CompletionInterrupts(const CompletionInterrupts&) = delete;
  CompletionInterrupts& operator=(const CompletionInterrupts&) = delete;

  // The eventfd the device's interrupt adds to (vector 0), MSI enabled on the first call; the first answer is kept,
  // so a device that cannot interrupt (the sysfs backend) says so once, with the backend's reason. The number is a
  // duplicate this object owns until it goes, so it stays valid (and never names another file) when the device
  // drops its interrupts (a function reset) and AfterBoot() enables new ones. Waiters never read it (each has its
  // own edge-triggered epoll on it; a read by one would take the wake-up of another), except Hold() when nobody
  // else holds it.
  absl::StatusOr<int> EventFd();
  // After a boot: a boot may have reset the function, which drops its interrupts, and its blocks' init_hw turned the
  // sources off. Enables the interrupt again (a new eventfd; waits that slept on the old one meet their sleep's
  // limit) when it was enabled, and turns the sources on again when they have holders.
  absl::Status AfterBoot();

  // One more holder: the first turns the sources on (Gfx::SetEndOfPipeInterrupt, Sdma::SetTrapInterrupt), after
  // clearing the eventfd's count, which no other waiter then relies on. On return every signal the engines write
  // from now on interrupts: the enables were read back, and a full fence orders them before the caller's next read
  // of its signal (the engines fence between a signal's write and their look at the enable, the INT_SEL's "after
  // write confirm"), so a signal is either seen by that read or interrupts.
  absl::Status Hold();
  // The last holder turns the sources off again. A failure to turn them off is logged: it costs interrupts, not
  // correctness.
  void Release();
  int holders() const;

 private:
  absl::Status SetSources(bool enable) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // pci::Device::EnableInterrupts, keeping a duplicate of vector 0's eventfd (the previous one retired, still open).
  absl::Status Enable() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  Device& device_;
  mutable base::Mutex mu_;
  int holders_ ABSL_GUARDED_BY(mu_) = 0;
  std::optional<absl::Status> enabled_ ABSL_GUARDED_BY(mu_);  // nullopt until the first EventFd()
  base::ScopedFd fd_ ABSL_GUARDED_BY(mu_);
  // Eventfds of interrupts enabled before a reset: a waiter may still have one in its epoll, or hcq::Device its
  // number for host wake-ups, so they stay open (one per boot after the first use) until this object goes.
  std::vector<base::ScopedFd> retired_ ABSL_GUARDED_BY(mu_);
};

}  // namespace am

#endif  // BAREGPU_AM_COMPLETION_INTERRUPTS_H_
