// The driver's falcon operations over BAR0, as nouveau's nvkm/falcon (gm200.c, ga102.c, gp102.c, v1.c, base.c) and
// tinygrad's NV_FLCN (runtime/support/nv/ip.py: reset, disable_ctx_req, execute_dma, start_cpu, execute_hs) do them
// on GA10x/AD10x: engine reset and the memory scrub, the falcon/RISC-V core selection, physical DMA of IMEM/DMEM in
// 256-byte steps, the BROM parameters of a heavy-secure ucode, the boot vector, the mailboxes, start and the wait for
// the halt. Every wait is bounded; a timeout names the falcon, the step and the register it waited on, decoded.
#ifndef BAREGPU_NV_FALCON_H_
#define BAREGPU_NV_FALCON_H_

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_format.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "nv/regs/ad102.h"
#include "pci/mmio.h"

namespace nv {

// Which falcon: its name for messages, its bases (nv/regs) and its engine reset register.
struct FalconEngine {
  const char* name;
  regs::EngineBases bases;
  uint32_t engine_reset;  // BAR0 address of NV_PGSP_FALCON_ENGINE / NV_PSEC_FALCON_ENGINE
};
inline constexpr FalconEngine kAd102GspFalcon{"GSP", regs::ad102::kGsp, regs::ad102::NV_PGSP_FALCON_ENGINE::kOffset};
inline constexpr FalconEngine kAd102Sec2Falcon{"SEC2", regs::ad102::kSec2, regs::ad102::NV_PSEC_FALCON_ENGINE::kOffset};

enum class FalconMemory { kImem, kDmem };

// NV_PFALCON_FBIF_TRANSCFG.TARGET: 0 local FB (tinygrad ip.py execute_hs; nouveau pmu/gm200.c DMAIDX_PHYS_VID = 4,
// i.e. physical | 0), 1 coherent system memory (dev_fbif_v4.h TARGET_COHERENT_SYSMEM; what nouveau's
// ga102_flcn_fw_load selects for its firmware in system memory), 2 non-coherent system memory (pmu/gm200.c
// DMAIDX_PHYS_SYS_NCOH = 6).
enum class DmaTarget : uint32_t { kLocalFb = 0, kCoherentSysmem = 1, kNoncoherentSysmem = 2 };
absl::string_view DmaTargetName(DmaTarget target);

struct FalconMailboxes {
  uint32_t mailbox0 = 0;
  uint32_t mailbox1 = 0;
};

// A heavy-secure ucode as it lies in memory and what its BROM needs (nouveau struct nvkm_falcon_fw's imem_*, dmem_*,
// dmem_sign, engine_id, ucode_id, boot_addr; tinygrad execute_hs's arguments).
struct HsUcodeLoad {
  uint64_t image_address = 0;  // where the image lies (FB offset or bus address, per `target`)
  DmaTarget target = DmaTarget::kLocalFb;
  uint32_t imem_image_offset = 0;  // IMEM's bytes in the image
  uint32_t imem_base = 0;          // IMEM destination (IMEMPhysBase)
  uint32_t imem_size = 0;          // multiple of 256
  uint32_t dmem_image_offset = 0;
  uint32_t dmem_base = 0;
  uint32_t dmem_size = 0;  // multiple of 256
  uint32_t boot_vector = 0;
  uint32_t pkc_offset = 0;  // BROM_PARAADDR(0): the signature's DMEM offset
  uint32_t engine_id_mask = 0;
  uint32_t ucode_id = 0;
  FalconMailboxes mailboxes;  // written before the start (nouveau gm200_flcn_fw_boot)
};

class Falcon {
 public:
  // nouveau waits up to 2 s for a DMA block (nvkm_falcon_dma_wr) and for the halt (gm200_flcn_fw_boot), 20 ms for the
  // scrub (ga102_flcn_reset_wait_mem_scrubbing), 10 ms for the core selection (ga102_flcn_select).
  static constexpr absl::Duration kDefaultHaltTimeout = absl::Seconds(2);
  static constexpr absl::Duration kDefaultStepTimeout = absl::Milliseconds(20);

  Falcon(pci::Mmio bar0, const FalconEngine& engine, absl::Duration halt_timeout = kDefaultHaltTimeout,
         absl::Duration step_timeout = kDefaultStepTimeout);

  absl::string_view name() const { return engine_.name; }
  const FalconEngine& engine() const { return engine_; }

  // gp102_flcn_reset_eng + ga102_flcn_reset_wait_mem_scrubbing + ga102_flcn_select + gm200_flcn_enable's RM write:
  // pulse the engine reset, wait for HWCFG2.MEM_SCRUBBING to clear, select the falcon core when the falcon has a
  // RISC-V core (and wait for BCR_CTRL.VALID), write NV_PMC_BOOT_0 into RM.
  absl::Status Reset();
  // ga102_gsp_reset: after a reset, hand the core to RISC-V (BCR_CTRL CORE_SELECT_RISCV, VALID, BRFETCH).
  void SelectRiscv();
  // ga102_flcn_fw_load / tinygrad disable_ctx_req: FBIF_CTL.ALLOW_PHYS_NO_CTX, DMACTL.REQUIRE_CTX cleared.
  void DisableContextRequirement();
  // FBIF_TRANSCFG(ctxdma): `target`, physical addressing.
  void SetPhysicalTarget(uint32_t ctxdma, DmaTarget target);
  // Loads `size` bytes (a multiple of 256) at `address` (256-byte aligned) into IMEM or DMEM at `memory_offset`, in
  // 256-byte DMA transfers through context `ctxdma` (nvkm_falcon_dma_wr with ga102_flcn_dma). IMEM transfers with
  // `secure` mark the blocks secure (DMATRFCMD.SEC), as HS code needs.
  absl::Status DmaLoad(FalconMemory memory, uint32_t memory_offset, uint64_t address, uint32_t size, bool secure,
                       uint32_t ctxdma = 0);
  // ga102_flcn_fw_boot's BROM set-up: PARAADDR(0), ENGIDMASK, CURR_UCODE_ID, MOD_SEL RSA3K.
  void SetBromParameters(uint32_t pkc_offset, uint32_t engine_id_mask, uint32_t ucode_id);
  void SetBootVector(uint32_t boot_vector);
  void WriteMailboxes(const FalconMailboxes& mailboxes);
  FalconMailboxes ReadMailboxes();
  // Starts the core: through CPUCTL_ALIAS when CPUCTL.ALIAS_EN is set, else CPUCTL (nvkm_falcon_v1_start).
  void Start();
  // Waits for CPUCTL.HALTED; DeadlineExceeded names `what`, CPUCTL and the mailboxes.
  absl::Status WaitForHalt(absl::string_view what);
  // The RISC-V core's NV_PRISCV_RISCV_CPUCTL.ACTIVE_STAT (ga102_flcn_riscv_active).
  bool RiscvActive();

  // The whole heavy-secure run (tinygrad execute_hs; nouveau ga102_flcn_fw_load + ga102_flcn_fw_boot), after
  // Reset(): context requirement off, TRANSCFG(0) to the image's target, IMEM (secure) and DMEM by DMA, BROM
  // parameters, mailboxes, boot vector, start, wait for the halt. Returns the mailboxes the ucode left.
  absl::StatusOr<FalconMailboxes> ExecuteHs(const HsUcodeLoad& load, absl::string_view what);

 private:
  template <typename R>
  uint32_t Address(uint32_t index = 0) const {
    return engine_.bases.AddressOf<R>(index);
  }
  template <typename R>
  R Read(uint32_t index = 0) {
    return R::FromRaw(bar0_.Read32(Address<R>(index)));
  }
  template <typename R>
  void Write(const R& value, uint32_t index = 0) {
    bar0_.Write32(Address<R>(index), value.raw());
  }
  // Polls until `done` holds, at most `timeout`.
  template <typename Done>
  bool Poll(absl::Duration timeout, Done done);
  std::string Prefix(absl::string_view step) const;

  pci::Mmio bar0_;
  FalconEngine engine_;
  absl::Duration halt_timeout_;
  absl::Duration step_timeout_;
};

// "NAME = 0x%08x (FIELD=value ...)" for a typed register value: what error messages show.
template <typename R>
std::string DescribeRegister(const R& value) {
  std::string text = absl::StrFormat("%s = 0x%08x", R::kName, value.raw());
  if (R::kFields.empty()) return text;
  text += " (";
  bool first = true;
  for (const auto& field : value.Decode()) {
    absl::StrAppendFormat(&text, "%s%s=%#x", first ? "" : " ", field.name, field.value);
    first = false;
  }
  return text + ")";
}

}  // namespace nv

#endif  // BAREGPU_NV_FALCON_H_
