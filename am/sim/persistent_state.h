// The state a virtual device keeps between processes, as a real GPU keeps VRAM and registers between driver
// sessions: sparse files (one per region: VRAM, registers) mapped shared, under a per-user state directory, with an
// exclusive lock so that one process at a time holds a device (as VFIO's exclusive open does).
//
// Directory: $BAREGPU_SIM_DIR, else $XDG_RUNTIME_DIR/baregpu-sim, else /dev/shm/baregpu-sim-UID.
#ifndef BAREGPU_AM_SIM_PERSISTENT_STATE_H_
#define BAREGPU_AM_SIM_PERSISTENT_STATE_H_

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "base/fd.h"

namespace am::sim {

std::string StateDirectory();

struct StateRegion {
  std::string name;  // file suffix: "vram", "regs"
  uint64_t size;     // bytes, a multiple of the page size
};

class PersistentState {
 public:
  // Opens the state of `device` ("sim:navi31:0"), creating missing regions zero-filled. Fails with Unavailable,
  // naming the holder's pid, while another open holds the device.
  static absl::StatusOr<std::unique_ptr<PersistentState>> Open(absl::string_view device,
                                                               const std::vector<StateRegion>& regions);
  // Powers the device off and on: its state is discarded. Fails while a process holds the device.
  static absl::Status PowerCycle(absl::string_view device);

  ~PersistentState();
  PersistentState(const PersistentState&) = delete;
  PersistentState& operator=(const PersistentState&) = delete;

  std::span<uint8_t> region(size_t index) const { return regions_[index]; }
  // Returns a region to all zeros and frees its pages (a reset of what it holds).
  absl::Status Clear(size_t index);
  // True when this open created the state: the device was never powered before (or was power-cycled).
  bool cold() const { return cold_; }
  const std::string& path_prefix() const { return prefix_; }

 private:
  PersistentState() = default;
  std::string prefix_;
  base::ScopedFd lock_;
  std::vector<std::span<uint8_t>> regions_;
  bool cold_ = false;
};

}  // namespace am::sim

#endif  // BAREGPU_AM_SIM_PERSISTENT_STATE_H_
