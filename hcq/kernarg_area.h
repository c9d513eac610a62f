// hcq::KernargArea: the device's kernel-argument memory, handed out in order as a ring and never overwritten
// while a launch may still read it. Every piece is tagged with the timeline value current when it was handed out
// (the value the submission that uses it signals, in HCQ's pattern `exec(...).signal(timeline, next_timeline())`);
// it is free again once the timeline signal has reached that value. When the ring has no room:
//   - if the oldest live piece's value has been handed out (its work is submitted or about to be), wait for the
//     timeline to reach it (bounded by the wait timeout), as tinygrad's HCQ waits for its timeline;
//   - otherwise its launch is still being built (six execs of 4 MiB of arguments, then one submit): grow by another
//     area of the same size (at most kMaxAreas), so nothing pending is overwritten;
//   - otherwise fail, naming the pieces in use and how to fix it.
// The fast path (room in the current area) allocates nothing and makes no system call.
#ifndef BAREGPU_HCQ_KERNARG_AREA_H_
#define BAREGPU_HCQ_KERNARG_AREA_H_

#include <cstdint>
#include <functional>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "hcq/buffer.h"

namespace hcq {

class KernargArea {
 public:
  static constexpr int kMaxAreas = 8;
  // Pieces are 256-byte aligned (more than the 16 bytes the ABI wants; launches on separate cache lines).
  static constexpr uint64_t kAlignment = 256;

  struct Piece {
    uint8_t* cpu;
    uint64_t va;
  };
  // How the area gets memory and learns the timeline's progress (hcq::Device provides them).
  struct Hooks {
    std::function<absl::StatusOr<Buffer>(uint64_t bytes)> alloc;
    std::function<void(const Buffer&)> free;
    std::function<uint64_t()> timeline_reached;  // the timeline signal's value
    std::function<uint64_t()> timeline_next;     // the next value to be handed out
    // Waits until the timeline signal reaches `value` (bounded); an error on timeout.
    std::function<absl::Status(uint64_t value)> wait;
  };

  KernargArea() = default;
  ~KernargArea();
  absl::Status Init(uint64_t area_bytes, Hooks hooks);
  void Shutdown();

  // `bytes` (already aligned) of argument memory.
  absl::StatusOr<Piece> Alloc(uint64_t bytes, absl::string_view device_name);
  // The timeline restarted from 1 (rollover): everything handed out before has completed.
  void ForgetTimeline();
  uint64_t area_bytes() const { return area_bytes_; }
  int areas() const { return static_cast<int>(areas_.size()); }

 private:
  struct Live {
    uint64_t offset, bytes, release;  // release: the timeline value that frees it
  };
  // One area: a ring of live pieces, oldest first, in a circular buffer sized once (no allocation per piece).
  struct Area {
    Buffer memory;
    uint64_t head = 0;       // next free byte
    std::vector<Live> live;  // circular, capacity area_bytes / kAlignment
    size_t first = 0, count = 0;
    const Live& oldest() const { return live[first]; }
  };
  void Reclaim(Area& area, uint64_t reached);
  static bool Fits(const Area& area, uint64_t bytes, uint64_t size, uint64_t* at);
  Piece Take(Area& area, uint64_t at, uint64_t bytes, uint64_t release);

  uint64_t area_bytes_ = 0;
  Hooks hooks_;
  std::vector<Area> areas_;
  size_t current_ = 0;
};

}  // namespace hcq

#endif  // BAREGPU_HCQ_KERNARG_AREA_H_
