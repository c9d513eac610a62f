// The GFX block (GC 11.0.0): waits for the RLC autoload the PSP started, brings the MEC out of halt, and binds one
// compute queue directly to MEC1 pipe 0 queue 0 through an MQD (v11_compute_mqd, filled as
// gfx_v11_0_compute_mqd_init does) with its EOP buffer, the HQD registers loaded from the MQD as tinygrad's AM
// does. The queue's ring, MQD, EOP buffer and pointers live in the boot region and are addressed by MC address
// (context 0's system aperture). Submit writes PM4 into the ring and rings the queue's 64-bit doorbell.
#ifndef BAREGPU_AM_GFX_H_
#define BAREGPU_AM_GFX_H_

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "am/ip_block.h"
#include "am/queue_reset.h"
#include "pci/mmio.h"

namespace am {

class Device;

class Gfx final : public IpBlock {
 public:
  static constexpr absl::Duration kTimeout = absl::Seconds(1);
  static constexpr uint64_t kRingBytes = 64 << 10;
  // gfx_v11_0.c: GFX11_MEC_HPD_SIZE, the per-queue end-of-pipe buffer.
  static constexpr uint64_t kEopBytes = 2048;
  // amdgpu_doorbell.h: AMDGPU_NAVI10_DOORBELL_MEC_RING0 (a 64-bit doorbell index; dword index twice that).
  static constexpr uint32_t kDoorbell64 = 0x003;

  explicit Gfx(Device& device) : device_(device) {}
  absl::string_view name() const override { return "gfx"; }
  absl::Status InitSw() override;
  absl::Status InitHw() override;
  absl::Status FiniHw() override;

  // Appends `packets` to the compute ring and rings the doorbell. The ring must have room (the read pointer is
  // checked; a full ring is an error, never an overwrite).
  absl::Status Submit(std::span<const uint32_t> packets);
  // The MEC's read pointer (dwords, wrapped) and whether it consumed everything submitted.
  uint32_t rptr();
  bool idle();
  uint64_t ring_mc() const;

  // Waits until the MEC consumed everything submitted; on timeout the error names the queue, its pointers and the
  // packet it is stuck at.
  absl::Status WaitIdle(absl::Duration timeout = kTimeout);
  // Brings back a queue that hung or stopped on a fault: dequeues it from the HQD and loads it again, empty, at
  // the write pointer. Returns what was lost; an error when the MEC does not even answer the dequeue.
  absl::StatusOr<QueueReset> ResetQueue();

  // For hcq/amd, which writes packets into the ring itself through pointers resolved once (no CpuView lookup per
  // submit). It takes wptr() before writing and hands the new value back with set_wptr(), so Submit, WaitIdle and
  // ResetQueue keep seeing every packet.
  struct RingAccess {
    uint32_t* ring = nullptr;  // the ring's CPU view (BAR0)
    uint64_t dwords = 0;
    const uint32_t* rptr = nullptr;  // the MEC's rptr report: dwords, wrapped to the ring
    uint64_t* wptr_poll = nullptr;   // the wptr poll location (dwords, not wrapped)
    pci::Mmio doorbells;             // BAR2
    uint64_t doorbell_offset = 0;    // byte offset of the queue's 64-bit doorbell in BAR2
  };
  absl::StatusOr<RingAccess> ring_access();
  uint64_t wptr() const { return wptr_; }
  void set_wptr(uint64_t wptr) { wptr_ = wptr; }

 private:
  void Select(uint32_t me, uint32_t pipe, uint32_t queue);
  absl::Status LoadQueue();
  absl::Status Dequeue();
  std::vector<std::string> PendingPackets();

  Device& device_;
  uint64_t ring_ = 0, eop_ = 0, mqd_ = 0, pointers_ = 0;  // VRAM; rptr report at pointers_, wptr poll at +8
  uint64_t wptr_ = 0;                                     // dwords submitted
  pci::Mmio doorbells_;
};

}  // namespace am

#endif  // BAREGPU_AM_GFX_H_
