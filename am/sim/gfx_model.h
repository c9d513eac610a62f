// GC 11.0.0 (GFX/compute) behaviour of the virtual Navi31 that a compute driver depends on, from Linux's
// gfx_v11_0.c and soc21.c and tinygrad's AM driver:
// - GRBM_GFX_CNTL selects the (me, pipe, queue) whose CP_HQD_* / CP_MQD_* registers reads and writes reach
//   (soc21_grbm_select); each of MEC1's 4 pipes x 4 queues (gfx_v11_0_sw_init for GC 11.0.0) has its own bank,
//   kept in the persistent GFX state. GRBM_GFX_INDEX selects a shader engine / array within the gc_info's 6 x 2.
// - RLC: RLC_RLCS_BOOTLOAD_STATUS.BOOTLOAD_COMPLETE once the PSP's RLC autoload ran; RLC_SAFE_MODE requests
//   (CMD=1) are acknowledged by clearing CMD, which gfx_v11_0_set_safe_mode waits for — only by a running RLC.
// - CP_STAT reads CP_BUSY until the RLC autoload has brought the CP firmware up and the CP has settled (see
//   gfx_model.cc); CP programming written while it is busy is lost.
// - MEC: each pipe fetches from CP_MEC_RS64_PRGRM_CNTR_START/_HI (banked per pipe), latched by a MEC_PIPEn_RESET
//   pulse; a pipe whose start address is not the loaded RS64 MEC firmware's, or that was not reset after it was
//   set, does not advance. CP_MEC_RS64_CNTL (RS64 firmware) halts, resets and activates pipes; writing
//   CP_HQD_ACTIVE=1 starts a ComputeQueue on the selected HQD when the RS64 MEC firmware is loaded and the RLC
//   autoload ran; CP_HQD_DEQUEUE_REQUEST stops it at a packet boundary, after which CP_HQD_ACTIVE reads 0. An HQD
//   whose queue runs is not rewritten: CP_HQD_ACTIVE=0 or a new CP_HQD_PQ_BASE under it is refused (device error)
//   and the queue does not start again until the driver dequeues it. The queue named in RLC_CP_SCHEDULERS is the KIQ:
//   its MAP_QUEUES loads an HQD from a v11_compute_mqd in memory and activates it, UNMAP_QUEUES dequeues one.
// - CP_MES_MTIME_LO/HI read the 100 MHz GPU clock.
#ifndef BAREGPU_AM_SIM_GFX_MODEL_H_
#define BAREGPU_AM_SIM_GFX_MODEL_H_

#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "am/sim/compute_queue.h"
#include "am/sim/engine_wakeup.h"
#include "am/sim/model_context.h"
#include "am/sim/shader_executor.h"

namespace am::sim {

class GfxModel {
 public:
  // MEC1's queues on GC 11.0.0 (gfx_v11_0_sw_init: num_mec 1, num_pipe_per_mec 4, num_queue_per_pipe 4).
  static constexpr uint32_t kMec = 1;
  static constexpr uint32_t kPipes = 4;
  static constexpr uint32_t kQueuesPerPipe = 4;

  // `executor` runs DISPATCH_DIRECT's kernels; null until there is one (a dispatch is then a device error).
  // Queues the persistent state says are active start again at once.
  GfxModel(const ModelContext& context, ShaderExecutor* executor);
  ~GfxModel();
  GfxModel(const GfxModel&) = delete;
  GfxModel& operator=(const GfxModel&) = delete;

  // A mode1 reset or power cycle: every queue stops and the banked registers return to their power-on values.
  void Reset();
  // The banked registers (HQDs, SH_MEM_*, the MEC program counters) take their power-on values
  // (am/regs/power_on_values.h) and the CP its not-yet-started state; the device calls it after a mode1 reset
  // cleared the model state. A fresh state block gets it at construction.
  void PowerOn();

  // Fault injection: MEC1's queue (pipe, queue) stops consuming its ring — its rptr freezes, nothing it holds
  // runs — but still answers a dequeue. False when that queue is not running.
  bool InjectQueueHang(uint32_t pipe, uint32_t queue);

  // A VMID's shader memory apertures as the driver programmed them (for the shader executor).
  uint32_t ShMemConfig(uint32_t vmid) const;
  uint32_t ShMemBases(uint32_t vmid) const;

  // Whether MEC1's queue (pipe, queue) has a running engine thread (for tests and the device's status).
  bool QueueRunning(uint32_t pipe, uint32_t queue);
  // How the running engine thread of MEC1's queue (pipe, queue) waited for work (for tests); nullopt when none runs.
  std::optional<EngineWakeup::Waits> QueueWaits(uint32_t pipe, uint32_t queue);

 private:
  static constexpr uint32_t kVmids = 16;
  struct State {
    uint32_t hqd[kPipes][kQueuesPerPipe][HqdRegisters::kCount];
    // SH_MEM_CONFIG and SH_MEM_BASES per VMID (GRBM_GFX_CNTL.VMID selects; gfx_v11_0_init_compute_vmid).
    uint32_t sh_mem_config[kVmids];
    uint32_t sh_mem_bases[kVmids];
    // CP_MEC_RS64_PRGRM_CNTR_START/_HI per MEC1 pipe (gfx_v11_0_config_gfx_rs64 writes them under
    // soc21_grbm_select(adev, 1, pipe, 0, 0)), and whether a MEC_PIPEn_RESET latched them since they were written.
    uint32_t program_start[kPipes];
    uint32_t program_start_hi[kPipes];
    uint32_t pipe_latched[kPipes];
    uint32_t cp_stat_polls;  // CP_STAT reads since the RLC autoload (the CP's start-up, see kCpStartupPolls)
    uint32_t powered_on;     // the banks hold their reset values; 0 in a fresh (all-zero) state block
  };
  static_assert(sizeof(State) <= ModelState::kBlockBytes);

  std::optional<HqdId> Selected() const;
  std::optional<uint32_t> SelectedPipe() const;
  bool CpBusy() const;
  uint32_t ReadCpStat();
  void OnProgramStartWrite(bool hi, uint32_t value);
  void OnMecCntlWrite(uint32_t value);
  // The loaded RS64 MEC firmware's start address (ucode_start_addr).
  uint64_t FirmwareStart() const;
  // Whether the pipe fetches from the loaded firmware's start address, latched by a reset (checked per packet).
  bool PipeRunsFirmware(uint32_t pipe) const;
  // Why the pipe's MEC fetches no valid instruction, for the error log; empty when it runs the loaded firmware.
  std::string PipeProgramProblem(uint32_t pipe) const;
  bool QueueLive(const HqdId& id);
  HqdRegisters Bank(const HqdId& id) { return HqdRegisters(state_.hqd[id.pipe][id.queue]); }
  void OnHqdWrite(uint32_t index, uint32_t value);
  // Starts the engine of an HQD whose registers say it is active; false (with a device error) when the MEC
  // cannot run it.
  bool Activate(const HqdId& id);
  void Deactivate(const HqdId& id);
  bool MecRunning(uint32_t pipe) const;
  bool DoorbellRouted(uint64_t dword_index) const;
  Pm4Engine::Status ExecuteKiqPacket(std::span<const uint32_t> packet, Pm4Engine& engine);
  bool IsKiq(const HqdId& id) const;
  void WakeAll();

  const ModelContext& context_;
  ShaderExecutor* executor_;
  State& state_;
  uint64_t grbm_gfx_cntl_, rlc_safe_mode_, rlc_cp_schedulers_, mec_rs64_cntl_, mec_doorbell_lower_, mec_doorbell_upper_,
      hqd_first_;

  // Guards queues_: hooks run on the driver's thread, MAP_QUEUES/UNMAP_QUEUES on the KIQ's.
  std::mutex queues_mu_;
  std::unique_ptr<ComputeQueue> queues_[kPipes][kQueuesPerPipe];
  // An HQD rewritten while its queue ran: it does not start until the driver dequeues it (guarded by queues_mu_).
  bool clobbered_[kPipes][kQueuesPerPipe] = {};
};

}  // namespace am::sim

#endif  // BAREGPU_AM_SIM_GFX_MODEL_H_
