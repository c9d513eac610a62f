#include "am/soc.h"

#include "am/device.h"
#include "am/regs/nbio.h"
#include "am/sdma.h"

namespace am {
namespace {

namespace nbio = regs::nbio;

// The S2A doorbell entries as amdgpu programs them for NBIO 4.3. nbio_v4_3_gc_doorbell_init writes 0x30000007 to
// entry 0 and 0x3000000d to entry 3: enabled, AWID 3 and 6, AWADDR_31_28 3, no range (tinygrad: AM_GFX's
// doorbell_enable(port=0, awid=0x3, awaddr_31_28_value=0x3) and (port=3, awid=0x6, ...)).
constexpr uint32_t kS2aAwaddr31To28 = 0x3;
constexpr uint32_t kGcEntry0Awid = 0x3;
constexpr uint32_t kGcEntry3Awid = 0x6;
// nbio_v4_3_sdma_doorbell_range (instance 0, from sdma_v6_0_gfx_resume_instance): AWID 0xe, the range starting at
// SDMA engine 0's doorbell (a dword index) and covering sdma_doorbell_range dwords per instance (20,
// soc21_init_doorbell_index) for Navi31's two SDMA instances.
constexpr uint32_t kSdmaEntry2Awid = 0xe;
constexpr uint32_t kSdmaDoorbellDwordsPerInstance = 20;
constexpr uint32_t kSdmaInstances = 2;

}  // namespace

absl::Status Soc::InitHw() {
  auto nbio = device_.Regs<regs::Ip::kNbio>();
  nbio.Write(regs::nbio::RCC_DEV0_EPF0_RCC_DOORBELL_APER_EN{}.bif_doorbell_aper_en(1));
  // Doorbells reach GC and SDMA only through their S2A entries (amdgpu: gfx_v11_0_hw_init calls gc_doorbell_init,
  // sdma_v6_0_gfx_resume_instance sdma_doorbell_range).
  nbio.Write(nbio::S2A_DOORBELL_ENTRY_0_CTRL{}
                 .s2a_doorbell_port0_enable(1)
                 .s2a_doorbell_port0_awid(kGcEntry0Awid)
                 .s2a_doorbell_port0_awaddr_31_28_value(kS2aAwaddr31To28));
  nbio.Write(nbio::S2A_DOORBELL_ENTRY_3_CTRL{}
                 .s2a_doorbell_port3_enable(1)
                 .s2a_doorbell_port3_awid(kGcEntry3Awid)
                 .s2a_doorbell_port3_awaddr_31_28_value(kS2aAwaddr31To28));
  nbio.Write(nbio::S2A_DOORBELL_ENTRY_2_CTRL::FromRaw(nbio.Read<nbio::S2A_DOORBELL_ENTRY_2_CTRL>().raw())
                 .s2a_doorbell_port2_enable(1)
                 .s2a_doorbell_port2_awid(kSdmaEntry2Awid)
                 .s2a_doorbell_port2_range_offset(Sdma::kDoorbell64 * 2)
                 .s2a_doorbell_port2_range_size(kSdmaDoorbellDwordsPerInstance * kSdmaInstances)
                 .s2a_doorbell_port2_awaddr_31_28_value(kS2aAwaddr31To28));
  nbio.Write(regs::nbio::BIF_BX0_REMAP_HDP_MEM_FLUSH_CNTL{}.set_raw(kRemapMemFlush));
  nbio.Write(regs::nbio::BIF_BX0_REMAP_HDP_REG_FLUSH_CNTL{}.set_raw(kRemapRegFlush));
  // The remapped page is the driver's, not a register of the database: name it for traces and wait messages.
  device_.io().NameAddress(kRemapMemFlush / 4, "REMAP_HDP_MEM_FLUSH_CNTL (HDP flush page)");
  device_.io().NameAddress(kRemapRegFlush / 4, "REMAP_HDP_REG_FLUSH_CNTL (HDP flush page)");
  return nbio.status();
}

void Soc::FlushHdp() { device_.io().WriteDword(kRemapMemFlush / 4, 0); }

}  // namespace am
