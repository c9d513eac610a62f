// FWSEC on the virtual AD102: the HS ucode model (nv/sim/hs_ucode_model.h) behind the GSP falcon that recognises the
// virtual VBIOS's FWSEC (firmware/nv/virtual_vbios.h) and does what FWSEC-FRTS and FWSEC-SB do for a driver.
//
// The BROM's part, in order (each refusal halts with a FLCN_STATUS in MAILBOX0, codes chosen: hs_ucode_model.h):
//   MOD_SEL.ALGO RSA3K and CURR_UCODE_ID the descriptor's (kVirtualFwsecUcodeId), else kFlcnErrHsChkInvalidInput;
//   ENGIDMASK the falcon's engine bit (0x400 on the GSP), else kFlcnErrHsChkEngidMismatch; IMEM loaded secure, else
//   kFlcnErrHsChkInvalidInput; the fuse (FUSE_UCODE_VERSION_ENGINE_ID_BIT10 + (ucode_id - 1) * 4, read over the priv
//   bus) selecting a version the ucode has a signature for, else kFlcnErrHsChkUcodeRevoked; the signature at
//   BROM_PARAADDR(0) the one for that version, else kFlcnErrBromSignatureFailed; then firmware::nv::CheckVirtualFwsec
//   (identity, hash, signature, an init_cmd the ucode accepts), else kFlcnErrHsChkInvalidInput.
// The ucode's part: the DMEMMAPPER's init_cmd selects the command.
//   FRTS (0x15): the command buffer must hold FWSECLIC_READ_VBIOS_DESC {version 1, size 24, flags 2} and
//     FWSECLIC_FRTS_REGION_DESC {version 1, size 20, offset in 4 KiB units, size 0x100 (1 MiB in 4 KiB units), media
//     type FB (2)} (nouveau fwsec.c nvkm_gsp_fwsec_patch; tinygrad prep_ucode; NVIDIA kernel_gsp_frts_tu102.c),
//     the region inside FB and WPR2 not yet up. Then WPR2 is programmed to the region (NV_PFB_PRI_MMU_WPR2_ADDR_LO =
//     start >> 12 and _HI = end >> 12 in their VAL fields; see fwsec_model.cc on HI) and the FRTS error code field
//     of NV_PBUS_SW_SCRATCH(0xe) (bits 31:16) reads 0; on a bad command that field holds a FrtsError and WPR2 is
//     left alone.
//   SB (0x19): the READ_VBIOS part is checked the same way; the SB error field of NV_PBUS_SW_SCRATCH(0x15) (bits
//     15:0, what nouveau nvkm_gsp_fwsec_sb reads) is written. No source says what else FWSEC-SB changes on the chip,
//     so the model changes nothing else (in particular WPR2 stays: nouveau runs SB before booter-unload tears it
//     down, r535.c r535_gsp_fini).
// A completed command halts with MAILBOX0 = FLCN_OK, what nouveau's nvkm_gsp_fwsec expects (mbox0_ok 0).
#ifndef BAREGPU_NV_SIM_FWSEC_MODEL_H_
#define BAREGPU_NV_SIM_FWSEC_MODEL_H_

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "nv/sim/hs_ucode_model.h"

namespace nv::sim {

// FRTS/SB error codes the model writes into the scratch registers' error fields. NVIDIA's kernel_gsp_frts_tu102.c
// names only NV_VBIOS_FWSECLIC_FRTS_ERR_CODE_NONE (0); the others are chosen.
enum class FwsecError : uint16_t {
  kNone = 0,
  kReadVbiosDesc = 1,   // READ_VBIOS descriptor version, size or flags wrong
  kFrtsRegionDesc = 2,  // FRTS region descriptor version or size wrong
  kFrtsMediaType = 3,   // media type other than FB
  kFrtsRegionSize = 4,  // region size other than 1 MiB
  kFrtsOutsideFb = 5,   // region (partly) past the end of FB, or at offset 0
  kWpr2AlreadyUp = 6,   // WPR2 is already programmed (FWSEC-FRTS runs once per boot)
};

class FwsecModel : public HsUcodeModel {
 public:
  // `fb_size`: the bytes of FB the chip has (the FRTS region must lie inside).
  explicit FwsecModel(uint64_t fb_size) : fb_size_(fb_size) {}

  absl::string_view name() const override { return "FWSEC"; }
  absl::Status Recognise(const HsUcodeContext& context) const override;
  HsUcodeOutcome Run(HsUcodeContext& context) override;

 private:
  HsUcodeOutcome Frts(HsUcodeContext& context, const std::string& command);
  HsUcodeOutcome Sb(HsUcodeContext& context, const std::string& command);

  uint64_t fb_size_;
};

}  // namespace nv::sim

#endif  // BAREGPU_NV_SIM_FWSEC_MODEL_H_
