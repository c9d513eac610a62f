// GSP-RM's booters on the virtual chip's SEC2: what the heavy-secure booter_load checks before it starts GSP-RM,
// and what booter_unload undoes. A falcon cannot run falcon code here, so the booter is a model that recognises the
// real 535.113.01 ucode by its bytes and does what the ucode does, as far as a source says:
//
// The BROM's part (both booters), in order. nouveau falcon/ga102.c ga102_flcn_fw_load / ga102_flcn_fw_boot and
// subdev/gsp/ga102.c ga102_gsp_booter_ctor say what a driver loads and writes; tinygrad's NV_FLCN.execute_hs
// (runtime/support/nv/ip.py) does the same. Each refusal halts SEC2 with a FLCN_STATUS in MAILBOX0 (flcn_status.h;
// the mapping is chosen, as the FWSEC model's, since no source says what the BROM reports):
//   IMEM from 0 = the file's app[0] (else the image is not this booter: Recognise fails);
//   MOD_SEL.ALGO = RSA3K, CURR_UCODE_ID = the HS header's meta ucode_id (3), else HS_CHK_INVALID_INPUT;
//   ENGIDMASK and the running falcon's engine bit = the meta's engine_id (1: SEC2's bit; ga100_flcn_fw_signature
//   reads bank 0x824140 for it), else HS_CHK_ENGID_MISMATCH; BOOTVEC = app[0].offset (nouveau fw->boot_addr, tinygrad
//   imemVa), IMEM blocks of the code loaded secure (ga102_flcn_fw_load: sec=true), else HS_CHK_INVALID_INPUT; the fuse
//   FUSE_UCODE_VERSION_ENGINE_ID_BIT0 + (ucode_id - 1) * 4 (nv/regs/known_registers.h, read over the priv bus)
//   selecting a signature (ga100_flcn_fw_signature: fuse_ver - fls(fuse), or the last one when the fuse reads 0), else
//   HS_CHK_UCODE_REVOKED; BROM_PARAADDR(0) = patch_loc - os_data_offset (nouveau fw->dmem_sign) and DMEM = the file's
//   OS data with that signature there, else APM_BROM_SIGN_FAIL (the signature covers code and data).
//
// booter_load, then (MAILBOX0/1 = the GspFwWprMeta's system-memory address, low/high: nouveau r535_gsp_init, tinygrad
// init_hw; the meta's members: gsp_fw_wpr_meta.h, "Verified, and locked in WPR2 by Booter"):
//   the meta readable (else DMA_NACK), magic and revision GSP_FW_WPR_META_MAGIC/REVISION (else
//   INVALID_WPRMETA_MAGIC_OR_REVISION; a GspFwSRMeta, resume from suspend, is refused as not modelled);
//   fbSize the chip's; every region non-empty, inside FB (else OUT_OF_RANGE), in the header picture's order without
//   overlap, aligned (see booter_model.cc), the VGA workspace ending at fbSize, FRTS ending at gspFwWprEnd (else
//   INVALID_ARGUMENT);
//   WPR2 up, as FWSEC-FRTS left it: NV_PFB_PRI_MMU_WPR2_ADDR_LO/HI covering exactly [frtsOffset, + frtsSize) (else
//   INVALID_STATE);
//   the radix3 table at sysmemAddrOfRadix3Elf walking (3 levels of LIBOS_MEMORY_REGION_RADIX_PAGE_SIZE pages) to the
//   real .fwimage, sizeOfRadix3Elf bytes; the bootloader at sysmemAddrOfBootloader the real payload with the
//   descriptor's monitor offsets; the signature at sysmemAddrOfSignature the chip's .fwsignature_* section (else
//   AUTH_GSP_RM_HANDOFF_FAILED, or DMA_NACK where system memory does not answer).
// Then, as the header says the booter does: WPR2 covers [gspFwWprStart, gspFwWprEnd) (the region nouveau's fini
// saves on suspend, r535_gsp_fini), the ELF is at gspFwOffset and the boot binary at bootBinOffset in FB ("BL to use
// to find ELF", "BOOT BIN"), the meta is placed at gspFwWprStart ("Booter-placed metadata") with verified =
// GSP_FW_WPR_META_VERIFIED; the GSP's core is started (over the priv bus, see booter_model.cc) and SEC2 halts with
// MAILBOX0 = FLCN_OK.
//
// booter_unload (nouveau r535_gsp_booter_unload: run only while WPR2_ADDR_HI != 0, which must read 0 afterwards;
// r535_gsp_fini passes MAILBOX0/1 = 0xff outside suspend): takes WPR2 down. Suspend (a GspFwSRMeta address in the
// mailboxes) is refused as not modelled.
#ifndef BAREGPU_NV_SIM_BOOTER_MODEL_H_
#define BAREGPU_NV_SIM_BOOTER_MODEL_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "nv/sim/bar0_block.h"
#include "nv/sim/booter_firmware.h"
#include "nv/sim/hs_ucode_model.h"

namespace nv::sim {

// What the virtual AD102's booter fuse reads: FUSE_UCODE_VERSION_ENGINE_ID_BIT0 element ucode_id - 1, i.e.
// 0x824140 + (3 - 1) * 4 = 0x824148 for both booters (engine_id 1, ucode_id 3 in their HS headers' meta). A real
// board's value is in no source; 1 is chosen, the fuse version the 535.113.01 booters are signed for (meta[0] = 1),
// so ga100_flcn_fw_signature selects signature 1 - fls(1) = 0. (A fuse reading 0 would select the last, index 1.)
// The model reads the fuse over the priv bus; nv/sim/ad102.cc serves this value (its own kBooterFuseValue, chosen the
// same way), and one of the two constants should replace the other.
inline constexpr uint32_t kAd102BooterFuseValue = 1;

// What the GSP's RISC-V core starts with after booter_load: the addresses the booter has made true.
struct GspRiscvStart {
  uint64_t libos_args = 0;    // NV_PGSP_FALCON_MAILBOX1:MAILBOX0, where the driver put LibOS's init arguments
  uint64_t wpr_meta = 0;      // FB: the verified GspFwWprMeta (gspFwWprStart)
  uint64_t boot_bin = 0;      // FB: the bootloader image (bootBinOffset)
  uint64_t monitor_code = 0;  // FB: bootBinOffset + bootloaderCodeOffset
  uint64_t monitor_data = 0;  // FB: bootBinOffset + bootloaderDataOffset
  uint64_t manifest = 0;      // FB: bootBinOffset + bootloaderManifestOffset
  uint64_t gsp_fw = 0;        // FB: the GSP-RM ELF image (gspFwOffset)
  uint64_t wpr2_start = 0;    // WPR2 as the booter left it: [start, end)
  uint64_t wpr2_end = 0;
};

// How the booter ended: SEC2 halts with these mailbox values (the driver reads them; nouveau wants MAILBOX0 =
// FLCN_OK). `log` says what was done or which check refused and why, for the falcon model's log.
struct BooterOutcome {
  bool ok = false;
  uint32_t mailbox0 = 0;
  uint32_t mailbox1 = 0;
  std::string log;
  std::optional<GspRiscvStart> riscv;  // booter_load's success only
};

// The SEC2 falcon asks it through the HS ucode seam (nv/sim/hs_ucode_model.h): what the booter sees is the seam's
// HsUcodeContext (IMEM, DMEM, their secure flags, the BROM registers, BOOTVEC, the mailboxes, the priv bus, DMA).
class BooterLoadModel : public HsUcodeModel {
 public:
  // `chip`: "ad102" (or "ga102"); `fb_size`: the chip's FB bytes (the meta's fbSize must say so); `roots`: where the
  // real files are looked for (firmware::DefaultSearchRoots() is the driver's search).
  static absl::StatusOr<std::unique_ptr<BooterLoadModel>> Create(absl::string_view chip, uint64_t fb_size,
                                                                 const std::vector<std::string>& roots);

  absl::string_view name() const override { return "booter_load"; }
  // OK when IMEM holds this booter's code (the image is this model's); NotFound saying where it differs otherwise.
  absl::Status Recognise(const HsUcodeContext& context) const override;
  // The seam's entry: Execute, with a refusal of the inputs themselves reported as HS_CHK_INVALID_INPUT.
  HsUcodeOutcome Run(HsUcodeContext& context) override;

  // Runs a recognised image. InvalidArgument when the context lacks the priv bus or memory, NotFound when the image
  // is not booter_load; every refusal of the BROM or the booter is an outcome. On success the GSP's core has been
  // started (booter_model.cc says how).
  absl::StatusOr<BooterOutcome> Execute(const HsUcodeContext& context) const;
  const BooterFirmware& firmware() const { return *firmware_; }

 private:
  BooterLoadModel(std::shared_ptr<const BooterFirmware> firmware, uint64_t fb_size)
      : firmware_(std::move(firmware)), fb_size_(fb_size) {}

  std::shared_ptr<const BooterFirmware> firmware_;
  uint64_t fb_size_;
};

class BooterUnloadModel : public HsUcodeModel {
 public:
  static absl::StatusOr<std::unique_ptr<BooterUnloadModel>> Create(absl::string_view chip,
                                                                   const std::vector<std::string>& roots);

  absl::string_view name() const override { return "booter_unload"; }
  absl::Status Recognise(const HsUcodeContext& context) const override;
  HsUcodeOutcome Run(HsUcodeContext& context) override;
  absl::StatusOr<BooterOutcome> Execute(const HsUcodeContext& context) const;

 private:
  explicit BooterUnloadModel(std::shared_ptr<const BooterFirmware> firmware) : firmware_(std::move(firmware)) {}

  std::shared_ptr<const BooterFirmware> firmware_;
};

}  // namespace nv::sim

#endif  // BAREGPU_NV_SIM_BOOTER_MODEL_H_
