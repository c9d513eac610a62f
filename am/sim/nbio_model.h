// NBIO 4.3.0 / HDP 6.0.0 behaviour of the virtual Navi31 that the driver depends on:
// - HDP flush handshake: a write of client bits to BIF_BX_PF0_GPU_HDP_FLUSH_REQ sets them in ..._FLUSH_DONE once
//   the flush is done (at once here: host writes through BAR0 reach VRAM directly, there is no cache to drain);
// - the remapped HDP flush page: the driver points BIF_BX0_REMAP_HDP_MEM/REG_FLUSH_CNTL at a BAR5 offset and then
//   flushes with a plain write there (Linux nbio_v4_3_remap_hdp_registers, amdgpu_device_flush_hdp);
// - the doorbell aperture: BAR2 writes reach nothing until RCC_DOORBELL_APER_EN is set
//   (nbio_v4_3_enable_doorbell_aperture);
// - doorbell routing: a doorbell reaches an engine only through an enabled S2A_DOORBELL_ENTRY_n_CTRL (the ranges
//   nbio_v4_3_gc_doorbell_init and nbio_v4_3_sdma_doorbell_range program); anything else is lost.
#ifndef BAREGPU_AM_SIM_NBIO_MODEL_H_
#define BAREGPU_AM_SIM_NBIO_MODEL_H_

#include <array>
#include <atomic>
#include <cstdint>
#include <string>

#include "am/regs/ip_bases.h"
#include "am/sim/doorbell_router.h"
#include "am/sim/register_file.h"

namespace am::sim {

class NbioModel {
 public:
  NbioModel(RegisterFile& registers, const regs::IpBases& bases);

  // Every BAR5 write passes here first; true when it was a flush through the remapped HDP page.
  bool OnRegisterBarWrite(uint64_t byte_offset);
  bool doorbell_aperture_enabled() const;
  // The S2A port that takes the doorbell at dword `index` of BAR2, kNone when none does (the doorbell is lost):
  // SDMA when entry 2 is enabled with SDMA's AWID and its range [RANGE_OFFSET, RANGE_OFFSET + RANGE_SIZE) (dwords)
  // covers the index, VCN likewise for entries 4 and 5, else GC when both GC entries (0 and 3) are enabled with
  // GC's AWIDs. See docs/fidelity.md for why the GC entries, which amdgpu programs with RANGE_SIZE 0, take every
  // doorbell no ranged entry claims. (No optional: GCC returns one through a byte store and a wider reload, a failed
  // store forward on every doorbell write.)
  DoorbellPort RouteDoorbell(uint64_t index) const;
  // The S2A entries as they stand, for a lost doorbell's error message.
  std::string DescribeDoorbellRouting() const;

  // Flushes through the handshake register (engines, the driver's rings) and through the remapped page (host; a count
  // of one thread's flushes, or of several threads' flushes that did not overlap).
  uint64_t hdp_flushes() const {
    return handshake_flushes_.load(std::memory_order_acquire) + page_flushes_.load(std::memory_order_acquire);
  }

 private:
  RegisterFile& registers_;
  uint64_t flush_req_ = 0, flush_done_ = 0, remap_mem_flush_ = 0, remap_reg_flush_ = 0, doorbell_aper_en_ = 0;
  std::array<uint64_t, 6> s2a_entries_{};  // S2A_DOORBELL_ENTRY_0_CTRL .. _5_CTRL
  // Apart, so that a host flushing while an engine flushes does not bounce one cache line between them.
  alignas(64) std::atomic<uint64_t> handshake_flushes_{0};
  alignas(64) std::atomic<uint64_t> page_flushes_{0};
};

}  // namespace am::sim

#endif  // BAREGPU_AM_SIM_NBIO_MODEL_H_
