#include "am/sim/nbio_model.h"

#include "am/regs/nbio.h"

namespace am::sim {
NbioModel::NbioModel(RegisterFile& registers, const regs::IpBases& bases)
    : registers_(registers),
      flush_req_(RegisterAddress<regs::nbio::BIF_BX_PF0_GPU_HDP_FLUSH_REQ>(bases)),
      flush_done_(RegisterAddress<regs::nbio::BIF_BX_PF0_GPU_HDP_FLUSH_DONE>(bases)),
      remap_mem_flush_(RegisterAddress<regs::nbio::BIF_BX0_REMAP_HDP_MEM_FLUSH_CNTL>(bases)),
      remap_reg_flush_(RegisterAddress<regs::nbio::BIF_BX0_REMAP_HDP_REG_FLUSH_CNTL>(bases)),
      doorbell_aper_en_(RegisterAddress<regs::nbio::RCC_DEV0_EPF0_RCC_DOORBELL_APER_EN>(bases)) {
  registers_.OnWrite(flush_req_, "hdp", [this](uint32_t clients) {
    handshake_flushes_.fetch_add(1, std::memory_order_acq_rel);
    registers_.Poke(flush_done_, clients);
  });
}

bool NbioModel::OnRegisterBarWrite(uint64_t byte_offset) {
  // An unprogrammed remap register (0) would alias MM_INDEX: only a programmed one defines the flush page.
  for (uint64_t remap : {remap_mem_flush_, remap_reg_flush_}) {
    const uint32_t target = registers_.Peek(remap);
    if (target != 0 && byte_offset == target) {
      page_flushes_.fetch_add(1, std::memory_order_acq_rel);
      return true;
    }
  }
  return false;
}

bool NbioModel::doorbell_aperture_enabled() const {
  return regs::nbio::RCC_DEV0_EPF0_RCC_DOORBELL_APER_EN::FromRaw(registers_.Peek(doorbell_aper_en_))
             .bif_doorbell_aper_en() != 0;
}

}  // namespace am::sim
