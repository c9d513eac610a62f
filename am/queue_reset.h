// What resetting a stuck queue cost: the commands between the engine's read pointer and the driver's write
// pointer, which the engine never finished and never will. The queue restarts empty at the write pointer, so
// whoever holds the write pointer (HCQ, a later Submit) carries on without rewinding; fences and signals in the
// lost commands are never written, which is why the report names them.
#ifndef BAREGPU_AM_QUEUE_RESET_H_
#define BAREGPU_AM_QUEUE_RESET_H_

#include <cstdint>
#include <string>
#include <vector>

namespace am {

struct QueueReset {
  std::string queue;   // "compute queue (MEC1 pipe 0 queue 0)", "SDMA0 queue 0"
  std::string method;  // how it was brought back: "HQD dequeue and reload", "SDMA0 soft reset"
  uint64_t rptr = 0;   // where the engine stood (dwords for the MEC, bytes for SDMA, as the engine counts)
  uint64_t wptr = 0;   // what had been submitted
  uint64_t lost_dwords = 0;
  std::vector<std::string> lost_packets;  // the unfinished packets, decoded, oldest first

  // One line: "SDMA0 queue 0: SDMA0 soft reset; lost 12 dwords (COPY_LINEAR, FENCE) from rptr 0x40 to 0x70".
  std::string ToString() const;
};

}  // namespace am

#endif  // BAREGPU_AM_QUEUE_RESET_H_
