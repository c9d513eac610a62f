// The boundary between the command processor and the shader cores: DISPATCH_DIRECT hands the compute state the
// driver programmed (SET_SH_REG into COMPUTE_* registers) to an executor, which runs the kernel's waves. The ISA
// interpreter (issue 7) implements it; until then the device has none, and a dispatch is a device error rather
// than a kernel that pretends to have run.
#ifndef BAREGPU_AM_SIM_SHADER_EXECUTOR_H_
#define BAREGPU_AM_SIM_SHADER_EXECUTOR_H_

#include <array>
#include <atomic>
#include <cstdint>

#include "absl/status/status.h"
#include "am/regs/gc.h"
#include "am/sim/gpu_memory.h"

namespace am::sim {

// SH_MEM_CONFIG and SH_MEM_BASES of one VMID (the GFX model banks them per VMID, GRBM_GFX_CNTL.VMID selects):
// the FLAT apertures, the address and alignment modes and the instruction prefetch the shaders of that VMID run
// with. Their power-on values (`def`) until the driver programs them.
struct ShMemRegisters {
  uint32_t config = regs::gc::SH_MEM_CONFIG::kDefault;
  uint32_t bases = regs::gc::SH_MEM_BASES::kDefault;
};

// The COMPUTE_* shader registers (gc_11_0_0_offset.h) at the moment of the dispatch.
struct DispatchState {
  uint64_t program_address = 0;  // COMPUTE_PGM_LO/HI, in bytes (the registers hold it >> 8)
  uint32_t pgm_rsrc1 = 0, pgm_rsrc2 = 0, pgm_rsrc3 = 0;
  std::array<uint32_t, 16> user_data{};  // COMPUTE_USER_DATA_0..15
  std::array<uint32_t, 3> start{};       // COMPUTE_START_X/Y/Z
  std::array<uint32_t, 3> num_thread{};  // COMPUTE_NUM_THREAD_X/Y/Z (workgroup size)
  std::array<uint32_t, 3> dimensions{};  // DISPATCH_DIRECT dim_x/y/z (workgroups)
  uint32_t dispatch_initiator = 0;       // COMPUTE_DISPATCH_INITIATOR
  uint32_t tmpring_size = 0;             // COMPUTE_TMPRING_SIZE
  uint32_t resource_limits = 0;          // COMPUTE_RESOURCE_LIMITS
  MemoryClient memory;                   // the queue's hub and VM context
  ShMemRegisters sh_mem;                 // SH_MEM_CONFIG/SH_MEM_BASES of the queue's VMID
  // Set while the dispatch runs when its queue is dequeued with CP_HQD_DEQUEUE_REQUEST = RESET_WAVES (or the model
  // shuts down): the waves stop where they are and Dispatch returns Cancelled. Null: nothing can reset them.
  const std::atomic<bool>* reset_waves = nullptr;
  // The queue that dispatched it (its waves' SQ_WAVE_HW_ID2 ME_ID/PIPE_ID/QUEUE_ID).
  uint32_t me = 0, pipe = 0, queue = 0;
};

class ShaderExecutor {
 public:
  virtual ~ShaderExecutor() = default;
  // Runs every workgroup of the dispatch to completion. An error is a device error (the queue stops), except
  // Cancelled: the waves were reset (DispatchState::reset_waves), which is no error of the kernel's.
  virtual absl::Status Dispatch(const DispatchState& state, GpuMemory& memory) = 0;
};

}  // namespace am::sim

#endif  // BAREGPU_AM_SIM_SHADER_EXECUTOR_H_
