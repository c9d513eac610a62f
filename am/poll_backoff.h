// How the driver waits between two looks at the device (a register, a fence in memory, a ring's pointers). The first
// kSpin it only yields: the virtual GPU's engines answer most waits within microseconds, and a real part's within the
// udelay(1) polls amdgpu uses. After that it sleeps, from kFirstSleep doubling to kMaxSleep, as amdgpu's longer waits
// sleep between polls (psp_cmd_submit_buf: usleep_range(10, 100)): a wait for an engine thread that has no core yet
// (the virtual MEC's, on a busy machine), for firmware that takes milliseconds (the PSP's), or for a long kernel then
// no longer burns a core, which on a two-core machine is the core the virtual GPU's own threads run on (issue 24: the
// partial boot's CPU went mostly into yields while the virtual MEC's thread waited for the other core). A wait ends
// at most kMaxSleep after its condition holds.
//
//   PollBackoff backoff(absl::Now() + timeout);
//   while (!Done()) {
//     if (!backoff.Wait()) return TimedOut();
//   }
#ifndef BAREGPU_AM_POLL_BACKOFF_H_
#define BAREGPU_AM_POLL_BACKOFF_H_

#include <algorithm>
#include <thread>

#include "absl/time/clock.h"
#include "absl/time/time.h"

namespace am {

class PollBackoff {
 public:
  explicit PollBackoff(absl::Time deadline) : start_(absl::Now()), deadline_(deadline) {}
  // Waits before the next look; false once the deadline has passed (then the caller looks no more).
  bool Wait() {
    const absl::Time now = absl::Now();
    if (now > deadline_) return false;
    if (now - start_ < kSpin) {
      std::this_thread::yield();
      return true;
    }
    absl::SleepFor(std::min(sleep_, deadline_ - now));
    sleep_ = std::min(sleep_ * 2, kMaxSleep);
    return true;
  }

 private:
  static constexpr absl::Duration kSpin = absl::Microseconds(50);
  static constexpr absl::Duration kFirstSleep = absl::Microseconds(5);
  static constexpr absl::Duration kMaxSleep = absl::Microseconds(200);
  absl::Time start_;
  absl::Time deadline_;
  absl::Duration sleep_ = kFirstSleep;
};

}  // namespace am

#endif  // BAREGPU_AM_POLL_BACKOFF_H_
