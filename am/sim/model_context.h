// What every IP model of the virtual Navi31 is built with: the register file it hooks, the bases it resolves
// registers with, and the device services engines share (memory through the GMC, the interrupt ring, doorbells,
// the clock, the firmware the PSP loaded, the device error log, persistent model state).
#ifndef BAREGPU_AM_SIM_MODEL_CONTEXT_H_
#define BAREGPU_AM_SIM_MODEL_CONTEXT_H_

#include "am/regs/ip_bases.h"
#include "am/sim/device_errors.h"
#include "am/sim/doorbell_router.h"
#include "am/sim/gpu_clock.h"
#include "am/sim/gpu_memory.h"
#include "am/sim/interrupt_sink.h"
#include "am/sim/loaded_firmware.h"
#include "am/sim/model_state.h"
#include "am/sim/register_file.h"

namespace am::sim {

struct ModelContext {
  RegisterFile& registers;
  const regs::IpBases& bases;
  GpuMemory& memory;
  InterruptSink& interrupts;
  DoorbellRouter& doorbells;
  const GpuClock& clock;
  LoadedFirmware& firmware;
  DeviceErrorLog& errors;
  ModelState& state;
};

}  // namespace am::sim

#endif  // BAREGPU_AM_SIM_MODEL_CONTEXT_H_
