// The seam between a virtual falcon and the heavy-secure (HS) ucode it is asked to run. A real falcon started in
// falcon mode hands the loaded image to its boot ROM (BROM), which checks the signature at the DMEM offset the driver
// wrote into NV_PFALCON2_FALCON_BROM_PARAADDR(0) against the fuses before the ucode runs (nouveau falcon/ga102.c
// ga102_flcn_fw_boot writes PARAADDR, ENGIDMASK, CURR_UCODE_ID and MOD_SEL for exactly that). The virtual falcon
// (nv/sim/falcon_model) cannot execute falcon code, so each ucode it can run is a model: FWSEC (nv/sim/fwsec_model),
// later the booter. The falcon asks each model whether the image is its own; an image no model recognises is
// refused, never "run".
#ifndef BAREGPU_NV_SIM_HS_UCODE_MODEL_H_
#define BAREGPU_NV_SIM_HS_UCODE_MODEL_H_

#include <cstdint>
#include <span>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "nv/regs/flcn_status.h"
#include "nv/sim/bar0_block.h"

namespace nv::sim {

// FLCN_STATUS values (open-gpu-kernel-modules 535.113.01 src/nvidia/arch/nvalloc/common/inc/flcnretval.h) the
// virtual falcons leave in MAILBOX0 when the BROM or an HS ucode refuses to run. Which code a real BROM reports for
// which refusal is not in any source available here: the mapping (see each use) is chosen, the values are NVIDIA's.
inline constexpr uint32_t kFlcnOk = regs::flcn::kOk;
inline constexpr uint32_t kFlcnErrHsChkInvalidInput = regs::flcn::kErrHsChkInvalidInput;
inline constexpr uint32_t kFlcnErrHsChkUcodeRevoked = regs::flcn::kErrHsChkUcodeRevoked;
inline constexpr uint32_t kFlcnErrHsChkEngidMismatch = regs::flcn::kErrHsChkEngidMismatch;
inline constexpr uint32_t kFlcnErrBromSignatureFailed = regs::flcn::kErrBromSignFail;

// What the BROM reads before it lets a ucode run (dev_falcon_second_pri.h; nouveau ga102_flcn_fw_boot).
struct BromRegisters {
  uint32_t paraaddr0 = 0;       // NV_PFALCON2_FALCON_BROM_PARAADDR(0): the signature's DMEM offset
  uint32_t engine_id_mask = 0;  // NV_PFALCON2_FALCON_BROM_ENGIDMASK
  uint32_t ucode_id = 0;        // NV_PFALCON2_FALCON_BROM_CURR_UCODE_ID.VAL
  uint32_t mod_sel_algo = 0;    // NV_PFALCON2_FALCON_MOD_SEL.ALGO
};

// Everything an HS ucode model sees when the falcon starts it. The spans are the falcon's whole memories (a model
// may write DMEM, e.g. a command's out buffer); `imem_secure` has one flag per 256-byte IMEM block, set when the
// block was loaded with DMATRFCMD.SEC or IMEMC.SECURE (HS code must come from secure blocks).
struct HsUcodeContext {
  absl::string_view falcon;        // "GSP", "SEC2": for messages
  uint32_t falcon_engine_bit = 0;  // the BROM engine id bit of this falcon (FalconIdentity::engine_id_bit)
  std::span<const uint8_t> imem;
  std::span<uint8_t> dmem;
  std::span<const bool> imem_secure;
  BromRegisters brom;
  uint32_t bootvec = 0;  // NV_PFALCON_FALCON_BOOTVEC
  uint32_t mailbox0 = 0;
  uint32_t mailbox1 = 0;
  PrivBus* priv = nullptr;         // every BAR0 register, as the ucode reaches them
  DeviceMemory* memory = nullptr;  // FB and system memory, as the falcon's DMA reaches them
};

// How the ucode ended: the falcon halts with these mailbox values. `log` says what the ucode did or why it refused,
// for the falcon model's log (the driver sees only registers).
struct HsUcodeOutcome {
  uint32_t mailbox0 = kFlcnOk;
  uint32_t mailbox1 = 0;
  std::string log;
};

class HsUcodeModel {
 public:
  virtual ~HsUcodeModel() = default;
  // For messages: "FWSEC".
  virtual absl::string_view name() const = 0;
  // OK when the loaded image is this model's ucode; otherwise why not (the falcon logs every model's reason when none
  // recognises the image).
  virtual absl::Status Recognise(const HsUcodeContext& context) const = 0;
  // Runs a recognised image: the BROM's checks, then the ucode's work through context.priv / context.memory.
  virtual HsUcodeOutcome Run(HsUcodeContext& context) = 0;
};

}  // namespace nv::sim

#endif  // BAREGPU_NV_SIM_HS_UCODE_MODEL_H_
