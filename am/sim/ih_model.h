// The interrupt handler (OSSSYS 6.0.0) of the virtual Navi31: ring 0 as ih_v6_0.c programs it. Models post
// entries (InterruptSink); the IH writes each as the 8-dword SoC15 entry amdgpu_ih_decode_iv_helper reads
// (client, source, ring, vmid, vmid type; 48-bit timestamp from the 100 MHz clock; pasid, node; four source data
// dwords) at the write pointer, advances IH_RB_WPTR, writes it back to IH_RB_WPTR_ADDR when enabled, and signals
// MSI when the ring has ENABLE_INTR. A full ring with WPTR_OVERFLOW_ENABLE sets IH_RB_WPTR.RB_OVERFLOW and drops
// entries until the driver clears it with IH_RB_CNTL.WPTR_OVERFLOW_CLEAR.
//
// The ring lives in GPU address space (IH_RB_CNTL.MC_SPACE 4, the PSP-load configuration: MMHUB, context
// MC_VMID) or at a bus address (other MC_SPACE values, the "use_bus_addr" configuration).
#ifndef BAREGPU_AM_SIM_IH_MODEL_H_
#define BAREGPU_AM_SIM_IH_MODEL_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <mutex>

#include "am/regs/ip_bases.h"
#include "am/sim/device_errors.h"
#include "am/sim/doorbell_router.h"
#include "am/sim/gpu_clock.h"
#include "am/sim/gpu_memory.h"
#include "am/sim/interrupt_sink.h"
#include "am/sim/register_file.h"

namespace am::sim {

class IhModel final : public InterruptSink {
 public:
  static constexpr uint32_t kEntryBytes = 32;

  IhModel(RegisterFile& registers, const regs::IpBases& bases, GpuMemory& memory, DoorbellRouter& doorbells,
          const GpuClock& clock, DeviceErrorLog& errors, std::function<void()> raise_msi);

  void Post(const InterruptEntry& entry) override;

  uint64_t delivered() const { return delivered_.load(std::memory_order_acquire); }
  // Entries lost: ring disabled, full, overflowed, or its memory unreachable.
  uint64_t dropped() const { return dropped_.load(std::memory_order_acquire); }

 private:
  bool Deliver(const InterruptEntry& entry);

  RegisterFile& registers_;
  GpuMemory& memory_;
  DoorbellRouter& doorbells_;
  const GpuClock& clock_;
  DeviceErrorLog& errors_;
  std::function<void()> raise_msi_;
  uint64_t rb_cntl_, rb_base_, rb_base_hi_, rb_rptr_, rb_wptr_, wptr_addr_lo_, wptr_addr_hi_, doorbell_rptr_;
  std::mutex mu_;
  std::atomic<uint64_t> delivered_{0};
  std::atomic<uint64_t> dropped_{0};
};

}  // namespace am::sim

#endif  // BAREGPU_AM_SIM_IH_MODEL_H_
