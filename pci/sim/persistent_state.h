// The state a virtual device keeps between processes, as a real GPU keeps VRAM and registers between driver
// sessions: sparse files (one per region: VRAM, registers, ...) mapped shared, plus a small header file
// (`<prefix>.state`: magic, layout version, region sizes, open/clean-close word, power-transition word, holder pid,
// a checksum per region), under a per-user state directory. Every file is flock()ed while a process holds the
// device (as VFIO's exclusive open holds a real one): deleting any of them cannot let a second process reset the
// device under its holder, because the second finds either a lock held or files of its own (a fresh device).
//
// Directory: $BAREGPU_SIM_DIR, else $XDG_RUNTIME_DIR/baregpu-sim, else /dev/shm/baregpu-sim-EUID. It and every file
// in it must be the effective user's, not writable by group or others, and no symbolic link; files are opened
// relative to the verified directory, never following links (NOTES.md, "Persistent state: hostile directories,
// kills, corruption (issue 23)").
#ifndef BAREGPU_PCI_SIM_PERSISTENT_STATE_H_
#define BAREGPU_PCI_SIM_PERSISTENT_STATE_H_

#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "base/fd.h"

namespace pci::sim {

// The directory the state lives in (not checked; PersistentState checks it before use).
std::string StateDirectory();

// "sim:navi31" -> "navi31", "sim:navi31:0" -> "navi31-0": the name the device's files start with. Refuses
// (InvalidArgument) anything but sim:KIND[:INSTANCE] with letters, digits, '_' and '-', so no name reaches outside
// the state directory.
absl::StatusOr<std::string> StateFileBase(absl::string_view device);

// What the state directory says of one device, for listings (`baregpu list`): read without opening the device, so
// it never disturbs a holder.
struct StateSummary {
  std::string file_base;      // "navi31-0": the device's files are file_base + ".state", ".vram", ...
  bool valid_header = false;  // a layout baregpu knows; the rest is meaningless when false
  bool open = false;          // the header says held: by holder_pid, or its holder died without closing it
  bool in_power_transition = false;
  uint32_t holder_pid = 0;    // the last process that opened it
  bool holder_alive = false;  // open, and that process still exists: it holds the device now
};
// Every device whose header is in the state directory (an empty list when there is no directory). Fails only when
// the directory exists but fails the checks PersistentState::Open makes.
absl::StatusOr<std::vector<StateSummary>> ListStates();

struct StateRegion {
  static constexpr uint64_t kToEnd = std::numeric_limits<uint64_t>::max();
  std::string name;  // file suffix: "vram", "regs"
  uint64_t size;     // bytes, a multiple of the page size
  // The bytes the region's checksum covers, [checksum_from, checksum_from + checksum_bytes): all of it by default;
  // VRAM's is only the part the firmware owns (hashing gigabytes at every close would cost seconds).
  uint64_t checksum_from = 0;
  uint64_t checksum_bytes = kToEnd;
};

class PersistentState {
 public:
  // Opens the state of `device` ("sim:navi31:0"), creating missing regions zero-filled. Fails with Unavailable,
  // naming the holder's pid, while another open holds the device; with PermissionDenied when the directory or a
  // file is another user's, writable by others or a symbolic link. A state that is damaged (a header that is not
  // ours, regions of the wrong size, a checksum that fails after a clean close) is discarded: the open is cold
  // and discarded() says which file and why.
  static absl::StatusOr<std::unique_ptr<PersistentState>> Open(absl::string_view device,
                                                               const std::vector<StateRegion>& regions);
  // Powers the device off and on: its state is discarded. Fails while a process holds the device. Removes the
  // device's directory entries whatever they are (a link is removed, never followed).
  static absl::Status PowerCycle(absl::string_view device);
  // The process holding `device` now: its pid as the holder wrote it into the header (0 when unreadable), or
  // nullopt when no process holds it (or it was never powered). Takes the header's lock shared for an instant to
  // ask; an open racing with that instant fails as if the device were held.
  static absl::StatusOr<std::optional<uint32_t>> Holder(absl::string_view device);

  // Closes cleanly: the checksums are written, so the next open can tell corruption from the device's own state.
  ~PersistentState();
  PersistentState(const PersistentState&) = delete;
  PersistentState& operator=(const PersistentState&) = delete;

  std::span<uint8_t> region(size_t index) const { return regions_[index].data; }
  // The region's file (mapped shared, so another process that maps it sees the same bytes live).
  int region_fd(size_t index) const { return regions_[index].fd.get(); }
  // Returns a region to all zeros and frees its pages (a reset of what it holds).
  absl::Status Clear(size_t index);
  // True when this open created the state: the device was never powered before (or was power-cycled, or its state
  // was discarded). A cold open starts inside a power transition (below).
  bool cold() const { return cold_; }
  // Why an earlier state was discarded ("" when it was not): the file and the check it failed.
  const std::string& discarded() const { return discarded_; }
  const std::string& path_prefix() const { return prefix_; }

  // A power transition (power-on, a mode1 reset) rewrites the registers in several steps; a process killed in the
  // middle would leave a device no driver can talk to (RCC_CONFIG_MEMSIZE 0). The device marks the transition in
  // the header, and the next open sees interrupted_transition() and completes it, as the hardware would have.
  void BeginPowerTransition();
  void EndPowerTransition();
  bool interrupted_transition() const { return interrupted_transition_; }

  struct Header;  // the header file's layout (persistent_state.cc)

 private:
  struct Region {
    std::string name;
    base::ScopedFd fd;
    std::span<uint8_t> data;
    uint64_t checksum_from;
    uint64_t checksum_bytes;
  };
  PersistentState() = default;
  Header& header() const;
  absl::StatusOr<uint64_t> Checksum(const Region& region) const;

  std::string device_;
  std::string prefix_;
  base::ScopedFd directory_;
  base::ScopedFd header_fd_;
  void* header_map_ = nullptr;
  std::vector<Region> regions_;
  bool cold_ = false;
  bool interrupted_transition_ = false;
  std::string discarded_;
};

}  // namespace pci::sim

#endif  // BAREGPU_PCI_SIM_PERSISTENT_STATE_H_
