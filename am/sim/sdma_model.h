// The two SDMA 6.0.0 engines of the virtual Navi31 (SDMA0, SDMA1), each with its queue 0 — the gfx ring that
// Linux's sdma_v6_0.c and tinygrad's AM driver (AM_SDMA.setup_ring) program:
// - queue registers SDMAn_QUEUE0_RB_BASE/_HI (address >> 8), RB_CNTL (RB_ENABLE, RB_SIZE = log2 of the ring's
//   dwords, RPTR_WRITEBACK_ENABLE, RB_VMID), RB_RPTR/_HI and RB_WPTR/_HI (byte offsets that only grow),
//   RB_RPTR_ADDR_LO/HI (64-bit rptr write-back), DOORBELL.ENABLE with DOORBELL_OFFSET.OFFSET (the dword index of
//   a 64-bit doorbell in BAR2), IB_CNTL.IB_ENABLE, SDMAn_CNTL.TRAP_ENABLE, SDMAn_F32_CNTL.HALT;
// - the engine runs only while the PSP has loaded the SDMA firmware (GFX_FW_TYPE_SDMA_UCODE_TH0 and _TH1) and
//   F32_CNTL.HALT is 0; enabling the ring otherwise starts nothing and says why in the device error log;
// - an enabled, running queue has its own thread: it sleeps until the doorbell or an RB_WPTR write moves the wptr,
//   executes packets (SdmaPacketExecutor), and after each one publishes the rptr in RB_RPTR/_HI and, when enabled,
//   at the write-back address. Disabling the ring stops and joins the thread;
// - a malformed packet or a memory fault stops the queue: an interrupt (see sdma_model.cc for the source ids),
//   a device error log entry, and the queue stays stopped until the driver disables and re-enables the ring;
// - state outlives the process: the pointers live in the queue registers, the stopped-on-error flag and the
//   TIMESTAMP_SET offset in the model's persistent block, so a new model over the same registers resumes a
//   queue that was running.
// Register addresses of SDMA1 are SDMA0's plus the instance stride, as sdma_v6_0_get_reg_offset computes them.
// Not modelled: queues 1 and 2, the wptr poll (F32_WPTR_POLL_ENABLE: the engine moves on doorbells and RB_WPTR
// writes only), preemption, MES-mapped queues.
#ifndef BAREGPU_AM_SIM_SDMA_MODEL_H_
#define BAREGPU_AM_SIM_SDMA_MODEL_H_

#include <array>
#include <memory>

#include "am/sim/engine_wakeup.h"
#include "am/sim/model_context.h"

namespace am::sim {

class SdmaEngine;

class SdmaModel {
 public:
  static constexpr int kInstances = 2;

  explicit SdmaModel(const ModelContext& context);
  ~SdmaModel();
  SdmaModel(const SdmaModel&) = delete;
  SdmaModel& operator=(const SdmaModel&) = delete;

  // Fault injection: while `hang` is true the engine stops consuming its ring (the rptr stands still, fences
  // never land), as a hung SDMA does; a driver sees it only through its own timeouts. False resumes it.
  void InjectHang(int instance, bool hang);
  // How the engine's threads waited for work, over every start of its ring (for tests).
  EngineWakeup::Waits EngineWaits(int instance) const;

 private:
  std::array<std::unique_ptr<SdmaEngine>, kInstances> engines_;
};

}  // namespace am::sim

#endif  // BAREGPU_AM_SIM_SDMA_MODEL_H_
