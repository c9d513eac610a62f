// FWSEC from the VBIOS, run on the GSP falcon: FWSEC-FRTS brings WPR2 up around the FRTS region before GSP-RM boots
// (nouveau subdev/gsp/fwsec.c nvkm_gsp_fwsec_frts; tinygrad ip.py prep_ucode + NV_FLCN.init_hw; NVIDIA
// kernel_gsp_frts_tu102.c kgspExecuteFwsecFrts_TU102), FWSEC-SB runs at unload (nvkm_gsp_fwsec_sb).
//
// The steps: read the ROM through BAR0's PROM window (or take its bytes), parse it (firmware/nv/vbios.h), take
// FWSEC_PROD's v3 descriptor, copy its IMEM and DMEM, patch the DMEMMAPPER's init_cmd and the command buffer
// (READ_VBIOS and, for FRTS, the region), patch the signature the GPU's fuse selects (ga102_gsp_fwsec_signature) at the
// PKC offset, place the image where the caller says, load it onto the GSP falcon and run it, then check what FWSEC
// reports: the error code in NV_PBUS_SW_SCRATCH and, for FRTS, that WPR2 came up at the FRTS offset.
#ifndef BAREGPU_NV_FWSEC_H_
#define BAREGPU_NV_FWSEC_H_

#include <cstdint>
#include <functional>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "firmware/nv/vbios.h"
#include "nv/falcon.h"
#include "pci/mmio.h"

namespace nv {

// Where FRTS goes in FB (computed with the WPR2 layout elsewhere; nouveau r535_gsp_oneinit: gsp->fb.wpr2.frts).
struct FrtsRegion {
  uint64_t offset = 0;  // 4 KiB aligned
  uint64_t size = 0;    // 4 KiB multiple; FWSEC takes 1 MiB
};

// The patched FWSEC image, laid out as nouveau's nvkm_gsp_fwsec_v3 builds it: IMEM (IMEMLoadSize bytes) then DMEM
// (DMEMLoadSize rounded up to 256 bytes).
struct FwsecImage {
  std::string bytes;
  uint32_t imem_size = 0;
  uint32_t imem_phys_base = 0;
  uint32_t imem_virt_base = 0;  // the boot vector
  uint32_t dmem_offset = 0;     // DMEM's offset in `bytes`
  uint32_t dmem_size = 0;
  uint32_t dmem_phys_base = 0;
  uint32_t pkc_offset = 0;  // the signature's DMEM offset (BROM_PARAADDR(0))
  uint32_t engine_id_mask = 0;
  uint32_t ucode_id = 0;
  uint32_t init_cmd = 0;
  uint32_t signature_index = 0;  // which of the descriptor's signatures was patched in
};

// Reads the VBIOS through BAR0's PROM window (nv/regs/known_registers.h PROM_DATA: 0x300000, 32-bit words, 1 MiB,
// as nouveau nvbios_prom_read and tinygrad prep_ucode read it).
std::string ReadVbiosFromProm(pci::Mmio bar0);

// Reads the fuse FWSEC's signature is chosen by (ga102_gsp_fwsec_signature: FUSE_UCODE_VERSION_ENGINE_ID_BIT10 +
// (ucode_id - 1) * 4, for engine id mask bit 0x400); InvalidArgument for other engines or ucode id 0.
absl::StatusOr<uint32_t> ReadFwsecFuse(pci::Mmio bar0, uint32_t engine_id_mask, uint32_t ucode_id);

// Builds the FWSEC image from a parsed VBIOS and its bytes: init_cmd (firmware::nv::kDmemMapperCmdFrts or _Sb), the
// FRTS region (FRTS only) and the fuse register value. Errors name the structure and offset that does not fit.
absl::StatusOr<FwsecImage> BuildFwsecImage(const firmware::nv::Vbios& vbios, absl::string_view rom, uint32_t init_cmd,
                                           const FrtsRegion& frts, uint32_t fuse_register);

// Where the image goes before the falcon's DMA reads it: the address (FB offset or bus address, per `target`) and how
// the caller writes bytes there (through a BAR, or into a DMA buffer it mapped).
struct FwsecPlacement {
  uint64_t address = 0;  // 256-byte aligned
  DmaTarget target = DmaTarget::kLocalFb;
  std::function<absl::Status(uint64_t address, absl::string_view bytes)> write;
};

// What FWSEC-FRTS left in WPR2 (NV_PFB_PRI_MMU_WPR2_ADDR_LO/HI, raw).
struct Wpr2Registers {
  uint32_t lo = 0;
  uint32_t hi = 0;
};

// Places `image` (built for FRTS), resets the GSP falcon, runs it and checks FWSEC's FRTS error code and that WPR2 is
// up at `frts.offset` (NVIDIA's kgspExecuteFwsecFrts_TU102 checks: error code 0, WPR2_HI.VAL != 0, WPR2_LO.VAL ==
// offset >> 12).
absl::StatusOr<Wpr2Registers> RunFwsecFrts(pci::Mmio bar0, Falcon& gsp, const FwsecImage& image,
                                           const FwsecPlacement& placement, const FrtsRegion& frts);

// Places `image` (built for SB), resets the GSP falcon, runs it and checks the SB error code.
absl::Status RunFwsecSb(pci::Mmio bar0, Falcon& gsp, const FwsecImage& image, const FwsecPlacement& placement);

// The whole of FWSEC-SB from the GPU's own ROM (nvkm_gsp_fwsec_sb, at unload): as FwsecFrts, with the SB command.
absl::Status FwsecSb(pci::Mmio bar0, Falcon& gsp, const FwsecPlacement& placement);

// The whole of FWSEC-FRTS from the GPU's own ROM: ReadVbiosFromProm, ParseVbios, ReadFwsecFuse, BuildFwsecImage,
// RunFwsecFrts.
absl::StatusOr<Wpr2Registers> FwsecFrts(pci::Mmio bar0, Falcon& gsp, const FrtsRegion& frts,
                                        const FwsecPlacement& placement);

}  // namespace nv

#endif  // BAREGPU_NV_FWSEC_H_
