// NBIO 4.3.0 / HDP 6.0.0 behaviour of the virtual Navi31 that the driver depends on:
// - HDP flush handshake: a write of client bits to BIF_BX_PF0_GPU_HDP_FLUSH_REQ sets them in ..._FLUSH_DONE once
//   the flush is done (at once here: host writes through BAR0 reach VRAM directly, there is no cache to drain);
// - the remapped HDP flush page: the driver points BIF_BX0_REMAP_HDP_MEM/REG_FLUSH_CNTL at a BAR5 offset and then
//   flushes with a plain write there (Linux nbio_v4_3_remap_hdp_registers, amdgpu_device_flush_hdp);
// - the doorbell aperture: BAR2 writes reach nothing until RCC_DOORBELL_APER_EN is set
//   (nbio_v4_3_enable_doorbell_aperture).
#ifndef BAREGPU_AM_SIM_NBIO_MODEL_H_
#define BAREGPU_AM_SIM_NBIO_MODEL_H_

#include <atomic>
#include <cstdint>

#include "am/regs/ip_bases.h"
#include "am/sim/register_file.h"

namespace am::sim {

class NbioModel {
 public:
  NbioModel(RegisterFile& registers, const regs::IpBases& bases);

  // Every BAR5 write passes here first; true when it was a flush through the remapped HDP page.
  bool OnRegisterBarWrite(uint64_t byte_offset);
  bool doorbell_aperture_enabled() const;

  // Flushes through the handshake register (engines, the driver's rings) and through the remapped page (host).
  uint64_t hdp_flushes() const {
    return handshake_flushes_.load(std::memory_order_acquire) + page_flushes_.load(std::memory_order_acquire);
  }

 private:
  RegisterFile& registers_;
  uint64_t flush_req_ = 0, flush_done_ = 0, remap_mem_flush_ = 0, remap_reg_flush_ = 0, doorbell_aper_en_ = 0;
  // Apart, so that a host flushing while an engine flushes does not bounce one cache line between them.
  alignas(64) std::atomic<uint64_t> handshake_flushes_{0};
  alignas(64) std::atomic<uint64_t> page_flushes_{0};
};

}  // namespace am::sim

#endif  // BAREGPU_AM_SIM_NBIO_MODEL_H_
