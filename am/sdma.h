// The SDMA block (SDMA 6.0.0): engine 0's queue 0 ring, as sdma_v6_0_gfx_resume_instance and tinygrad's
// AM_SDMA.setup_ring program it: the engine out of halt, the ring in the boot region (MC address), the rptr
// written back next to it, a 64-bit doorbell (AMDGPU_NAVI10_DOORBELL_sDMA_ENGINE0), traps enabled. The ring
// (am::Ring) is the queue's one writer; Copy, Fence and Trap append packets encoded by am/regs/sdma_packets.h.
#ifndef BAREGPU_AM_SDMA_H_
#define BAREGPU_AM_SDMA_H_

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "am/ip_block.h"
#include "am/queue_reset.h"
#include "am/regs/sdma_packets.h"
#include "am/ring.h"
#include "pci/mmio.h"

namespace am {

class Device;

class Sdma final : public IpBlock {
 public:
  static constexpr uint64_t kRingBytes = 64 << 10;
  // amdgpu_doorbell.h: AMDGPU_NAVI10_DOORBELL_sDMA_ENGINE0 (a 64-bit doorbell index; dword index twice that).
  static constexpr uint32_t kDoorbell64 = 0x100;
  static constexpr absl::Duration kTimeout = absl::Seconds(1);
  // In the queue's pointer page: the rptr write-back at 0, the wptr shadow the engine polls here: a cache line (64
  // bytes) after the rptr, since the engine writes one and the driver the other at every submit, and on one line each
  // write took the line from the other's core.
  static constexpr uint64_t kWptrPollOffset = 64;

  explicit Sdma(Device& device) : device_(device) {}
  absl::string_view name() const override { return "sdma"; }
  absl::Status InitSw() override;
  absl::Status InitHw() override;
  absl::Status FiniHw() override;

  // GPU addresses (MC addresses of VRAM, or VAs of context 0).
  absl::Status Copy(uint64_t destination, uint64_t source, uint64_t bytes);
  absl::Status Fence(uint64_t address, uint32_t value);
  absl::Status Trap(uint32_t context);
  // The engine's trap interrupt (SDMA0_CNTL.TRAP_ENABLE, as sdma_v6_0_set_trap_irq_state sets it): while it is off, a
  // TRAP packet raises no SDMA_TRAP entry. InitHw leaves it off; am::CompletionInterrupts turns it on while a waiter
  // sleeps. Returns once the register reads back the new value.
  absl::Status SetTrapInterrupt(bool enable);
  // The queue's ring: every producer writes through it.
  Ring& ring() { return ring_; }
  const Ring& ring() const { return ring_; }
  bool idle() const { return ring_.idle(); }

  // Waits until the engine consumed everything submitted; on timeout the error names the queue, its pointers and
  // the packet it is stuck at.
  absl::Status WaitIdle(absl::Duration timeout = kTimeout);
  // Brings back a queue that hung or stopped on a fault (sdma_v6_0_soft_reset, then the ring again, empty at the
  // write pointer). Returns what was lost.
  absl::StatusOr<QueueReset> ResetQueue();

 private:
  absl::Status LoadRing();

  Device& device_;
  uint64_t ring_vram_ = 0, rptr_ = 0;  // VRAM
  Ring ring_{kSdmaRingFormat};
};

}  // namespace am

#endif  // BAREGPU_AM_SDMA_H_
