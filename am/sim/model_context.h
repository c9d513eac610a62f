// What every IP model of the virtual Navi31 is built with: the register file it hooks, the bases it resolves
// registers with, and the device services engines share (memory through the GMC, the interrupt ring, doorbells,
// the clock, the firmware the PSP loaded, the device error log, persistent model state), and the DMA space behind
// the GMC, with which engine threads register (pci/sim/dma_space.h: memory the driver frees outlives their accesses).
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
#include "pci/sim/dma_space.h"

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
  // Null where the memory is not a device's DMA space (model tests' plain memory).
  pci::sim::DmaSpace* dma = nullptr;
};

}  // namespace am::sim

#endif  // BAREGPU_AM_SIM_MODEL_CONTEXT_H_
