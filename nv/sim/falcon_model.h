// One falcon of the virtual AD102 (GSP or SEC2) as the driver and the other units see it: its whole register range
// as a Bar0Block, attached by the BAR0 model at the engine's base (NV_PGSP 0x110000, NV_PSEC 0x840000; the block
// spans kFalconWindowSize bytes from there and holds the falcon, FBIF, falcon2/BROM and RISC-V registers and the
// engine reset register NV_P{GSP,SEC}_FALCON_ENGINE, which lies inside the range at offset 0x3c0).
//
// Modelled (register facts from nv/regs/ad102.h, i.e. dev_falcon_v4.h, dev_fbif_v4.h, dev_falcon_second_pri.h,
// dev_riscv_pri.h, dev_gsp.h, dev_sec_pri.h; behaviour from nouveau nvkm/falcon and tinygrad's NV_FLCN):
//   - engine reset (NV_P*_FALCON_ENGINE.RESET): asserting it stops the core and clears the memories; deasserting it
//     starts the memory scrub, which HWCFG2.MEM_SCRUBBING (and DMACTL's scrubbing bits) report until
//     kScrubStatusReads status reads later (no timers: the model is deterministic);
//   - HWCFG's memory sizes; the IMEM/DMEM PIO ports with auto-increment; the DMA engine (DMATRF*, FBIF TRANSCFG and
//     CTL, DMACTL) through DeviceMemory; BOOTVEC, MAILBOX0/1, OS, RM; the BROM registers; CPUCTL and CPUCTL_ALIAS;
//     RISC-V BCR_CTRL and CPUCTL.ACTIVE_STAT (falcons with a RISC-V core).
//   - starting the core in falcon mode hands the image to the HS ucode models (nv/sim/hs_ucode_model.h); an image
//     none recognises is refused (halted, MAILBOX0 = kFlcnErrHsChkInvalidInput). Starting it in RISC-V mode is a
//     seam: recorded, and passed to the RISC-V handler when one is set.
// Any other offset inside the range is plain storage (reads back what was written, 0 at first).
//
// Thread safety: register accesses and the inspection methods may come from any thread; an HS ucode runs outside
// the falcon's lock, so it may reach this falcon through the priv bus.
#ifndef BAREGPU_NV_SIM_FALCON_MODEL_H_
#define BAREGPU_NV_SIM_FALCON_MODEL_H_

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/strings/string_view.h"
#include "base/mutex.h"
#include "nv/regs/ad102.h"
#include "nv/sim/bar0_block.h"
#include "nv/sim/hs_ucode_model.h"

namespace nv::sim {

// The size of one falcon engine's register range: dev_gsp.h NV_PGSP 0x113fff:0x110000 and dev_sec_pri.h NV_PSEC
// 0x843fff:0x840000 (16 KiB each).
inline constexpr uint32_t kFalconWindowSize = 0x4000;

// Which falcon a FalconModel is.
struct FalconIdentity {
  const char* name;         // "GSP", "SEC2"
  regs::EngineBases bases;  // nv/regs/ad102.h kGsp / kSec2
  uint32_t engine_reset;    // BAR0 address of NV_PGSP_FALCON_ENGINE / NV_PSEC_FALCON_ENGINE
  uint32_t engine_id_bit;   // the BROM engine id bit HS ucode for this falcon carries
  bool riscv;               // HWCFG2.RISCV: the falcon has a RISC-V core
  uint32_t imem_size;       // bytes, a multiple of 256
  uint32_t dmem_size;
};

// The AD102's GSP and SEC2 (see falcon_model.cc for where each value comes from, or that it is chosen).
FalconIdentity Ad102GspFalcon();
FalconIdentity Ad102Sec2Falcon();

class FalconModel : public Bar0Block {
 public:
  // HWCFG2.MEM_SCRUBBING reads 1 for this many reads of HWCFG2 or DMACTL after reset is released, then 0.
  static constexpr int kScrubStatusReads = 2;

  // `priv` and `memory` must outlive the model. The falcon starts out of reset, scrubbed, halted bit clear.
  FalconModel(FalconIdentity identity, PrivBus& priv, DeviceMemory& memory);

  // Bar0Block: offsets relative to identity.bases.falcon, inside kFalconWindowSize.
  uint32_t Read32(uint32_t offset) override;
  void Write32(uint32_t offset, uint32_t value) override;
  // A reset of the chip (the device's function reset): the engine as after its own reset, scrubbed.
  void Reset() override;

  // The ucode this falcon can run in falcon (HS) mode, asked in order.
  void AddHsUcodeModel(std::unique_ptr<HsUcodeModel> model);

  // Starting the RISC-V core (CPUCTL.STARTCPU with BCR_CTRL.CORE_SELECT = RISCV) calls this, when set; its result
  // becomes NV_PRISCV_RISCV_CPUCTL.ACTIVE_STAT. Without a handler the start is recorded and the core stays inactive.
  // The handler runs outside the falcon's lock.
  void SetRiscvStartHandler(std::function<bool()> handler);
  // For the later GSP model: the RISC-V core's ACTIVE_STAT.
  void SetRiscvActive(bool active);

  // Fault injection: the core, once started, never halts (CPUCTL.HALTED stays 0), as a hung ucode would.
  void InjectNeverHalt(bool never_halt);
  // Fault injection: the memory scrub after a reset never finishes (HWCFG2.MEM_SCRUBBING stays 1).
  void InjectStuckScrub(bool stuck);

  // Inspection (tests, the debugger).
  const FalconIdentity& identity() const { return identity_; }
  bool halted() const;
  bool in_reset() const;
  int riscv_starts() const;
  int hs_starts() const;
  std::vector<uint8_t> Imem(uint32_t offset, uint32_t size) const;
  std::vector<uint8_t> Dmem(uint32_t offset, uint32_t size) const;
  // Faults, violations and ucode runs, in order ("GSP falcon: DMA fault: ...").
  std::vector<std::string> log() const;
  // The lines logged since the last TakeLog (at most the log's limit): what the device reports as diagnostics.
  std::vector<std::string> TakeLog();

 private:
  struct PioPort {
    uint32_t control = 0;  // IMEMC/DMEMC as last written, with the address advancing
  };

  void ResetLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  bool ScrubbingLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void LogLocked(std::string line) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  uint32_t PioRead(std::vector<uint8_t>& memory, PioPort& port, absl::string_view what)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void PioWrite(std::vector<uint8_t>& memory, PioPort& port, uint32_t value, absl::string_view what)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void DmaCommandLocked(uint32_t command) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void DmaFaultLocked(const std::string& why) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Called without the lock: starts the core the way BCR_CTRL selects.
  void StartCpu();
  void RunHsUcode();

  const FalconIdentity identity_;
  PrivBus& priv_;
  DeviceMemory& memory_;
  // Offsets of the falcon2/RISC-V and FBIF units relative to the falcon base.
  const uint32_t falcon2_;
  const uint32_t fbif_;
  const uint32_t engine_;

  mutable base::Mutex mu_;
  std::vector<std::unique_ptr<HsUcodeModel>> hs_models_ ABSL_GUARDED_BY(mu_);
  std::function<bool()> riscv_start_handler_ ABSL_GUARDED_BY(mu_);
  bool never_halt_ ABSL_GUARDED_BY(mu_) = false;
  bool stuck_scrub_ ABSL_GUARDED_BY(mu_) = false;

  bool in_reset_ ABSL_GUARDED_BY(mu_) = false;
  int scrub_reads_left_ ABSL_GUARDED_BY(mu_) = 0;
  std::vector<uint8_t> imem_ ABSL_GUARDED_BY(mu_);
  std::vector<uint8_t> dmem_ ABSL_GUARDED_BY(mu_);
  std::vector<bool> imem_secure_ ABSL_GUARDED_BY(mu_);  // per 256-byte block
  std::vector<uint16_t> imem_tags_ ABSL_GUARDED_BY(mu_);
  PioPort imem_port_ ABSL_GUARDED_BY(mu_);
  PioPort dmem_port_ ABSL_GUARDED_BY(mu_);

  bool halted_ ABSL_GUARDED_BY(mu_) = false;
  bool running_ ABSL_GUARDED_BY(mu_) = false;
  bool alias_en_ ABSL_GUARDED_BY(mu_) = false;
  uint32_t bootvec_ ABSL_GUARDED_BY(mu_) = 0;
  uint32_t mailbox0_ ABSL_GUARDED_BY(mu_) = 0;
  uint32_t mailbox1_ ABSL_GUARDED_BY(mu_) = 0;
  uint32_t os_ ABSL_GUARDED_BY(mu_) = 0;
  uint32_t rm_ ABSL_GUARDED_BY(mu_) = 0;
  uint32_t dmactl_require_ctx_ ABSL_GUARDED_BY(mu_) = 0;
  uint32_t dma_base_ ABSL_GUARDED_BY(mu_) = 0;
  uint32_t dma_base1_ ABSL_GUARDED_BY(mu_) = 0;
  uint32_t dma_moffs_ ABSL_GUARDED_BY(mu_) = 0;
  uint32_t dma_fboffs_ ABSL_GUARDED_BY(mu_) = 0;
  uint32_t dma_command_ ABSL_GUARDED_BY(mu_) = 0;  // the writable fields of the last command
  bool dma_stuck_ ABSL_GUARDED_BY(mu_) = false;    // a faulted transfer: DMATRFCMD.IDLE stays 0 until reset
  uint32_t transcfg_[regs::ad102::NV_PFALCON_FBIF_TRANSCFG::kCount] ABSL_GUARDED_BY(mu_) = {};
  uint32_t fbif_ctl_ ABSL_GUARDED_BY(mu_) = 0;
  BromRegisters brom_ ABSL_GUARDED_BY(mu_);
  uint32_t bcr_ctrl_ ABSL_GUARDED_BY(mu_) = 0;
  bool riscv_active_ ABSL_GUARDED_BY(mu_) = false;
  int riscv_starts_ ABSL_GUARDED_BY(mu_) = 0;
  int hs_starts_ ABSL_GUARDED_BY(mu_) = 0;
  std::map<uint32_t, uint32_t> storage_ ABSL_GUARDED_BY(mu_);
  std::vector<std::string> log_ ABSL_GUARDED_BY(mu_);
  uint64_t logged_ ABSL_GUARDED_BY(mu_) = 0;  // lines ever logged
  uint64_t taken_ ABSL_GUARDED_BY(mu_) = 0;   // of those, handed out by TakeLog
};

}  // namespace nv::sim

#endif  // BAREGPU_NV_SIM_FALCON_MODEL_H_
