// The GFX block (GC 11.0.0): waits for the RLC autoload the PSP started, brings the MEC out of halt, and binds one
// compute queue directly to MEC1 pipe 0 queue 0 through an MQD (v11_compute_mqd, filled as
// gfx_v11_0_compute_mqd_init does) with its EOP buffer, the HQD registers loaded from the MQD as tinygrad's AM
// does. The queue's ring, MQD, EOP buffer and pointers live in the boot region and are addressed by MC address
// (context 0's system aperture). The ring (am::Ring) is the queue's one writer: the driver, HCQ and the tools all
// append packets through ring().
#ifndef BAREGPU_AM_GFX_H_
#define BAREGPU_AM_GFX_H_

#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "am/ip_block.h"
#include "am/queue_reset.h"
#include "am/regs/mqd.h"
#include "am/regs/pm4_packets.h"
#include "am/ring.h"
#include "firmware/store.h"
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
  // In the queue's pointer page: the rptr report at 0, the wptr poll location here: a cache line (64 bytes) after the
  // rptr, since the engine writes one and the driver the other at every submit, and on one line each write took the
  // line from the other's core.
  static constexpr uint64_t kWptrPollOffset = 64;

  // `firmware`: where the MEC firmware file is read from (its header gives the MEC's start address).
  Gfx(Device& device, firmware::Store firmware) : device_(device), firmware_(std::move(firmware)) {}
  absl::string_view name() const override { return "gfx"; }
  absl::Status InitSw() override;
  absl::Status InitHw() override;
  absl::Status FiniHw() override;

  // The compute queue's ring: every producer writes through it.
  Ring& ring() { return ring_; }
  const Ring& ring() const { return ring_; }
  bool idle() const { return ring_.idle(); }
  uint64_t ring_mc() const;
  // gfx_v11_0_ring_emit_hdp_flush for this queue: write its bit (CP2 shifted by its pipe, 0) to
  // GPU_HDP_FLUSH_REQ and wait for it in GPU_HDP_FLUSH_DONE, so host writes through the BAR reach memory before
  // the next packet.
  std::array<uint32_t, regs::pm4::WriteWaitRegister::kDwords> HdpFlushPacket() const;
  // The queue's pipe's end-of-pipe interrupt (CP_ME1_PIPE0_INT_CNTL.TIME_STAMP_INT_ENABLE, as
  // gfx_v11_0_set_compute_eop_interrupt_state sets it): while it is off, a RELEASE_MEM that asks for an interrupt
  // writes its data and raises none. InitHw leaves it off (the pipe's error interrupts on); am::CompletionInterrupts
  // turns it on while a waiter sleeps. Returns once the register reads back the new value (a read flushes the
  // posted write), so every RELEASE_MEM the pipe starts afterwards sees it.
  absl::Status SetEndOfPipeInterrupt(bool enable);

  // Waits until the MEC consumed everything submitted; on timeout the error names the queue, its pointers and the
  // packet it is stuck at.
  absl::Status WaitIdle(absl::Duration timeout = kTimeout);
  // Brings back a queue that hung or stopped on a fault: dequeues it from the HQD and loads it again, empty, at
  // the write pointer. Returns what was lost; an error when the MEC does not even answer the dequeue.
  absl::StatusOr<QueueReset> ResetQueue();

 private:
  // GRBM_GFX_CNTL; callers hold pci().register_sequence_mutex() from the selection to the one that ends it.
  void Select(uint32_t me, uint32_t pipe, uint32_t queue);
  // gfx_v11_0_wait_for_rlc_autoload_complete: BOOTLOAD_COMPLETE and an idle CP.
  absl::Status WaitForAutoload();
  // SH_MEM_CONFIG and SH_MEM_BASES of every VMID (gfx_v11_0_constants_init, gfx_v11_0_init_compute_vmid).
  void InitShaderMemory();
  // The RS64 MEC firmware's ucode_start_addr (gfx_firmware_header_v2_0), from the MEC file the PSP loads.
  absl::StatusOr<uint64_t> MecUcodeStart() const;
  // Where the running MEC firmware starts, as the boot that loaded it programmed pipe 0 (a partial boot's source).
  uint64_t RunningMecStart();
  // gfx_v11_0_config_gfx_rs64's MEC part: every pipe's program counter, latched by a pipe reset pulse.
  absl::Status ConfigMec();
  // gfx_v11_0_cp_compute_enable(true).
  void EnableMec();
  absl::Status LoadQueue();
  // Takes the queue off the MEC (CP_HQD_DEQUEUE_REQUEST = `request`) and waits for CP_HQD_ACTIVE to clear.
  absl::Status Dequeue(regs::DequeueRequest request);

  Device& device_;
  firmware::Store firmware_;
  uint64_t ring_vram_ = 0, eop_ = 0, mqd_ = 0, pointers_ = 0;  // VRAM; rptr report at pointers_, wptr poll at +8
  Ring ring_{kPm4RingFormat};
  uint32_t hdp_flush_request_ = 0, hdp_flush_done_ = 0;  // absolute dword addresses (NBIO)
};

}  // namespace am

#endif  // BAREGPU_AM_GFX_H_
