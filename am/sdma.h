// The SDMA block (SDMA 6.0.0): engine 0's queue 0 ring, as sdma_v6_0_gfx_resume_instance and tinygrad's
// AM_SDMA.setup_ring program it: the engine out of halt, the ring in the boot region (MC address), the rptr
// written back next to it, a 64-bit doorbell (AMDGPU_NAVI10_DOORBELL_sDMA_ENGINE0), traps enabled. Copy and Fence
// append the SDMA 6.0 packets (sdma_v6_0_0_pkt_open.h) and ring the doorbell.
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
#include "pci/mmio.h"

namespace am {

class Device;

class Sdma final : public IpBlock {
 public:
  static constexpr uint64_t kRingBytes = 64 << 10;
  // amdgpu_doorbell.h: AMDGPU_NAVI10_DOORBELL_sDMA_ENGINE0 (a 64-bit doorbell index; dword index twice that).
  static constexpr uint32_t kDoorbell64 = 0x100;
  // SDMA_PKT_COPY_LINEAR's count field holds bytes - 1 in 30 bits (sdma_v6_0_0_pkt_open.h): a copy is split at this.
  static constexpr uint64_t kMaxCopyBytes = uint64_t{1} << 30;

  explicit Sdma(Device& device) : device_(device) {}
  absl::string_view name() const override { return "sdma"; }
  absl::Status InitSw() override;
  absl::Status InitHw() override;
  absl::Status FiniHw() override;

  // GPU addresses (MC addresses of VRAM, or VAs of context 0).
  absl::Status Copy(uint64_t destination, uint64_t source, uint64_t bytes);
  absl::Status Fence(uint64_t address, uint32_t value);
  absl::Status Trap(uint32_t context);
  // The engine's rptr (bytes) from the write-back; idle when it reached everything submitted.
  uint64_t rptr();
  bool idle() { return rptr() == wptr_; }

  // Waits until the engine consumed everything submitted; on timeout the error names the queue, its pointers and
  // the packet it is stuck at.
  absl::Status WaitIdle(absl::Duration timeout = absl::Seconds(1));
  // Brings back a queue that hung or stopped on a fault (sdma_v6_0_soft_reset, then the ring again, empty at the
  // write pointer). Returns what was lost.
  absl::StatusOr<QueueReset> ResetQueue();

  // For hcq/amd, which writes packets into the ring itself through pointers resolved once (no CpuView lookup per
  // submit). It takes wptr() before writing and hands the new value back with set_wptr().
  struct RingAccess {
    uint8_t* ring = nullptr;  // the ring's CPU view (BAR0)
    uint64_t bytes = 0;
    const uint64_t* rptr = nullptr;  // the engine's rptr write-back: bytes, never wrapped
    pci::Mmio doorbells;             // BAR2
    uint64_t doorbell_offset = 0;    // byte offset of the queue's 64-bit doorbell in BAR2
  };
  absl::StatusOr<RingAccess> ring_access();
  uint64_t wptr() const { return wptr_; }
  void set_wptr(uint64_t wptr) { wptr_ = wptr; }

 private:
  absl::Status Submit(std::span<const uint32_t> dwords);
  absl::Status LoadRing();
  std::vector<std::string> PendingPackets();

  Device& device_;
  uint64_t ring_ = 0, rptr_ = 0;  // VRAM
  uint64_t wptr_ = 0;             // bytes submitted (only grows)
  pci::Mmio doorbells_;
};

}  // namespace am

#endif  // BAREGPU_AM_SDMA_H_
