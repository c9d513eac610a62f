#include "am/soc.h"

#include "am/device.h"
#include "am/regs/nbio.h"

namespace am {

absl::Status Soc::InitHw() {
  auto nbio = device_.Regs<regs::Ip::kNbio>();
  nbio.Write(regs::nbio::RCC_DEV0_EPF0_RCC_DOORBELL_APER_EN{}.bif_doorbell_aper_en(1));
  nbio.Write(regs::nbio::BIF_BX0_REMAP_HDP_MEM_FLUSH_CNTL{}.set_raw(kRemapMemFlush));
  nbio.Write(regs::nbio::BIF_BX0_REMAP_HDP_REG_FLUSH_CNTL{}.set_raw(kRemapRegFlush));
  return nbio.status();
}

void Soc::FlushHdp() { device_.io().WriteDword(kRemapMemFlush / 4, 0); }

}  // namespace am
