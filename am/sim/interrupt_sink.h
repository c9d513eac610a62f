// Where device models post interrupts: the IH model writes them into the interrupt ring in the SoC15 entry format
// (8 dwords; layout as decoded by Linux's amdgpu_irq_dispatch / navi10_ih_decode_iv) and signals MSI.
#ifndef BAREGPU_AM_SIM_INTERRUPT_SINK_H_
#define BAREGPU_AM_SIM_INTERRUPT_SINK_H_

#include <array>
#include <cstdint>

namespace am::sim {

// One interrupt source's view of an IH entry. Ids: client from soc15_ih_clientid.h (am/regs/ih_constants.h),
// source from the IP's *_irqsrcs header (am/regs/gfx_srcid_constants.h for GC). The IH adds the timestamp.
struct InterruptEntry {
  uint32_t client_id = 0;
  uint32_t source_id = 0;
  uint32_t ring_id = 0;  // for CP/SDMA: me, pipe, queue as the *_irqsrcs header packs them
  uint32_t vmid = 0;
  bool vmid_type = false;  // true: the vmid is from the MM hub
  uint32_t pasid = 0;
  uint32_t node_id = 0;
  std::array<uint32_t, 4> src_data{};
};

class InterruptSink {
 public:
  virtual ~InterruptSink() = default;
  virtual void Post(const InterruptEntry& entry) = 0;
};

}  // namespace am::sim

#endif  // BAREGPU_AM_SIM_INTERRUPT_SINK_H_
