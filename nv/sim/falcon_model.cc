#include "nv/sim/falcon_model.h"

#include <algorithm>
#include <cstring>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "firmware/nv/virtual_vbios.h"

namespace nv::sim {
namespace {

using namespace regs::ad102;  // NOLINT: the register names are long enough

// Falcon memories are organised in 256-byte blocks: HWCFG gives the sizes in them (nouveau falcon/base.c
// nvkm_falcon_oneinit: code.limit = (HWCFG & 0x1ff) << 8), IMEMC.BLK addresses them (dev_falcon_v4.h BLK 23:8), and
// IMEM tags are per block (falcon/v1.c nvkm_falcon_v1_load_imem: "write new tag every 256B").
constexpr uint32_t kBlockSize = 256;
// HWCFG's DMEM size, in blocks, at bits 17:9: nouveau nvkm_falcon_oneinit (data.limit = (HWCFG & 0x3fe00) >> 1).
// dev_falcon_v4.h names only IMEM_SIZE (8:0).
constexpr uint32_t kHwcfgDmemSizeShift = 9;
// IMEMC/DMEMC bit 25: advance the address after each data read (nouveau falcon/gm200.c gm200_flcn_pio_dmem_rd_init
// writes BIT(25); tinygrad's FSP code calls the field aincr). dev_falcon_v4.h names only AINCW (24).
constexpr uint32_t kMemcAutoIncrementRead = 1u << 25;
// FBIF TRANSCFG.TARGET values: 0 local FB (tinygrad ip.py execute_hs: "target=0 is FB (not in published headers)";
// nouveau subdev/pmu/gm200.c gm200_pmu_flcn_bind_inst writes 4 = PHYSICAL | 0 for DMAIDX_PHYS_VID), 1 coherent system
// memory (dev_fbif_v4.h TARGET_COHERENT_SYSMEM; gm200_pmu_flcn_bind_inst 5 for DMAIDX_PHYS_SYS_COH), 2 non-coherent
// system memory (gm200_pmu_flcn_bind_inst 6 for DMAIDX_PHYS_SYS_NCOH). No source gives 3: the model faults on it.
constexpr uint32_t kTargetLocalFb = 0;
constexpr uint32_t kTargetNoncoherentSysmem = 2;
// DMATRFCMD.SIZE encodes log2(bytes) - 2 (nouveau falcon/ga102.c ga102_flcn_dma_init: (ilog2(xfer_len) - 2) << 8).
constexpr uint32_t kDmaSizeBias = 2;
// The log keeps the most recent entries only, so a driver polling a wrong register cannot grow it without bound.
constexpr size_t kLogLimit = 256;
// Memory sizes of the virtual AD102's falcons. No source available here gives AD102's GSP or SEC2 HWCFG: 64 KiB each
// is chosen, enough for the virtual FWSEC (firmware/nv/virtual_vbios.h: IMEM 0x2000, DMEM 0x1000) and for
// booter_load's code and data (its nvfw_hs_load_header_v2 app and os_data sizes are each below 64 KiB).
constexpr uint32_t kChosenMemorySize = 64 * 1024;

uint32_t Le32(const std::vector<uint8_t>& memory, uint32_t at) {
  uint32_t value;
  std::memcpy(&value, memory.data() + at, sizeof(value));
  return value;
}

void PutLe32(std::vector<uint8_t>& memory, uint32_t at, uint32_t value) {
  std::memcpy(memory.data() + at, &value, sizeof(value));
}

// The byte address a PIO control word (IMEMC/DMEMC: OFFS 7:2 in words, BLK 23:8 in blocks) points at.
uint32_t PioAddress(uint32_t control) {
  const auto c = NV_PFALCON_FALCON_IMEMC::FromRaw(control);
  return c.blk() * kBlockSize + c.offs() * 4;
}

uint32_t WithPioAddress(uint32_t control, uint32_t address) {
  constexpr uint32_t kBlkMask = 0xffff;  // BLK 23:8 is 16 bits wide (dev_falcon_v4.h)
  auto c = NV_PFALCON_FALCON_IMEMC::FromRaw(control);
  c.offs((address % kBlockSize) / 4);
  c.blk((address / kBlockSize) & kBlkMask);
  return c.raw();
}

}  // namespace

FalconIdentity Ad102GspFalcon() {
  return FalconIdentity{
      .name = "GSP",
      .bases = kGsp,
      .engine_reset = NV_PGSP_FALCON_ENGINE::kOffset,
      // FWSEC, which runs on the GSP falcon, carries engine id mask 0x400: nouveau subdev/gsp/ga102.c
      // ga102_gsp_fwsec_signature accepts only that bit (firmware::nv::kVirtualFwsecEngineIdMask).
      .engine_id_bit = firmware::nv::kVirtualFwsecEngineIdMask,
      // The GSP runs GSP-RM on its RISC-V core: nouveau ga102_gsp_reset selects it through BCR_CTRL (0x111), and
      // r535_gsp_booter_load checks ga102_flcn_riscv_active afterwards.
      .riscv = true,
      .imem_size = kChosenMemorySize,
      .dmem_size = kChosenMemorySize,
  };
}

FalconIdentity Ad102Sec2Falcon() {
  return FalconIdentity{
      .name = "SEC2",
      .bases = kSec2,
      .engine_reset = NV_PSEC_FALCON_ENGINE::kOffset,
      // The booter, which runs on SEC2, is started with BROM_ENGIDMASK 1 (tinygrad ip.py init_hw: execute_hs(sec2,
      // ..., engid=1)); nouveau ga100_flcn_fw_signature reads that engine bit's fuse bank (0x824140).
      .engine_id_bit = 0x1,
      // Chosen: nothing available here says whether AD102's SEC2 has a RISC-V core; nouveau only ever runs falcon
      // code on it (engine/sec2/ga102.c selects the falcon core, ga102_flcn_select).
      .riscv = false,
      .imem_size = kChosenMemorySize,
      .dmem_size = kChosenMemorySize,
  };
}

FalconModel::FalconModel(FalconIdentity identity, PrivBus& priv, DeviceMemory& memory)
    : identity_(identity),
      priv_(priv),
      memory_(memory),
      falcon2_(identity.bases.falcon2 - identity.bases.falcon),
      fbif_(identity.bases.fbif - identity.bases.falcon),
      engine_(identity.engine_reset - identity.bases.falcon) {
  base::MutexLock lock(&mu_);
  ResetLocked();
}

void FalconModel::AddHsUcodeModel(std::unique_ptr<HsUcodeModel> model) {
  base::MutexLock lock(&mu_);
  hs_models_.push_back(std::move(model));
}

void FalconModel::SetRiscvStartHandler(std::function<bool()> handler) {
  base::MutexLock lock(&mu_);
  riscv_start_handler_ = std::move(handler);
}

void FalconModel::SetRiscvActive(bool active) {
  base::MutexLock lock(&mu_);
  riscv_active_ = active;
}

void FalconModel::InjectNeverHalt(bool never_halt) {
  base::MutexLock lock(&mu_);
  never_halt_ = never_halt;
}

void FalconModel::InjectStuckScrub(bool stuck) {
  base::MutexLock lock(&mu_);
  stuck_scrub_ = stuck;
}

bool FalconModel::halted() const {
  base::MutexLock lock(&mu_);
  return halted_;
}

bool FalconModel::in_reset() const {
  base::MutexLock lock(&mu_);
  return in_reset_;
}

int FalconModel::riscv_starts() const {
  base::MutexLock lock(&mu_);
  return riscv_starts_;
}

int FalconModel::hs_starts() const {
  base::MutexLock lock(&mu_);
  return hs_starts_;
}

std::vector<uint8_t> FalconModel::Imem(uint32_t offset, uint32_t size) const {
  base::MutexLock lock(&mu_);
  if (offset > imem_.size() || size > imem_.size() - offset) return {};
  return std::vector<uint8_t>(imem_.begin() + offset, imem_.begin() + offset + size);
}

std::vector<uint8_t> FalconModel::Dmem(uint32_t offset, uint32_t size) const {
  base::MutexLock lock(&mu_);
  if (offset > dmem_.size() || size > dmem_.size() - offset) return {};
  return std::vector<uint8_t>(dmem_.begin() + offset, dmem_.begin() + offset + size);
}

std::vector<std::string> FalconModel::log() const {
  base::MutexLock lock(&mu_);
  return log_;
}

void FalconModel::LogLocked(std::string line) {
  if (log_.size() >= kLogLimit) log_.erase(log_.begin());
  log_.push_back(absl::StrCat(identity_.name, " falcon: ", line));
  ++logged_;
}

std::vector<std::string> FalconModel::TakeLog() {
  base::MutexLock lock(&mu_);
  const size_t fresh = static_cast<size_t>(std::min<uint64_t>(logged_ - taken_, log_.size()));
  taken_ = logged_;
  return std::vector<std::string>(log_.end() - fresh, log_.end());
}

void FalconModel::Reset() {
  base::MutexLock lock(&mu_);
  ResetLocked();
  // Out of reset the memories scrub, as after an engine reset's release.
  in_reset_ = false;
  scrub_reads_left_ = kScrubStatusReads;
}

void FalconModel::ResetLocked() {
  imem_.assign(identity_.imem_size, 0);
  dmem_.assign(identity_.dmem_size, 0);
  imem_secure_.assign(identity_.imem_size / kBlockSize, false);
  imem_tags_.assign(identity_.imem_size / kBlockSize, 0);
  imem_port_ = {};
  dmem_port_ = {};
  // Chosen where dev_falcon_v4.h gives no init value: the core is neither running nor halted, the mailboxes and the
  // BROM registers read 0, and DMACTL.REQUIRE_CTX is set, so that a driver must clear it as nouveau
  // (ga102_flcn_fw_load) and tinygrad (disable_ctx_req) do before physical DMA.
  halted_ = false;
  running_ = false;
  alias_en_ = false;
  bootvec_ = mailbox0_ = mailbox1_ = os_ = rm_ = 0;
  dmactl_require_ctx_ = 1;
  dma_base_ = dma_base1_ = dma_moffs_ = dma_fboffs_ = dma_command_ = 0;
  dma_stuck_ = false;
  std::fill(std::begin(transcfg_), std::end(transcfg_), 0);
  fbif_ctl_ = 0;
  brom_ = {};
  bcr_ctrl_ = NV_PRISCV_RISCV_BCR_CTRL::kResetValue;  // dev_riscv_pri.h: falcon core, not valid, brfetch
  riscv_active_ = false;
}

bool FalconModel::ScrubbingLocked() {
  if (scrub_reads_left_ == 0) return false;
  if (!stuck_scrub_) --scrub_reads_left_;
  return true;
}

uint32_t FalconModel::Read32(uint32_t offset) {
  base::MutexLock lock(&mu_);
  if (offset == engine_) return NV_PGSP_FALCON_ENGINE{}.reset(in_reset_ ? 1 : 0).raw();
  if (in_reset_) {
    LogLocked(absl::StrFormat("read of +0x%x while the engine is held in reset (reads 0)", offset));
    return 0;
  }
  switch (offset) {
    case NV_PFALCON_FALCON_MAILBOX0::kOffset:
      return mailbox0_;
    case NV_PFALCON_FALCON_MAILBOX1::kOffset:
      return mailbox1_;
    case NV_PFALCON_FALCON_OS::kOffset:
      return os_;
    case NV_PFALCON_FALCON_RM::kOffset:
      return rm_;
    case NV_PFALCON_FALCON_BOOTVEC::kOffset:
      return bootvec_;
    case NV_PFALCON_FALCON_HWCFG::kOffset:
      return NV_PFALCON_FALCON_HWCFG{}.imem_size(identity_.imem_size / kBlockSize).raw() |
             (identity_.dmem_size / kBlockSize) << kHwcfgDmemSizeShift;
    case NV_PFALCON_FALCON_HWCFG2::kOffset:
      return NV_PFALCON_FALCON_HWCFG2{}
          .riscv(identity_.riscv ? 1 : 0)
          .mem_scrubbing(ScrubbingLocked() ? 1 : 0)
          // Always ready: nouveau ga102_flcn_reset_prep polls it before a reset, and nothing is ever pending here.
          .reset_ready(NV_PFALCON_FALCON_HWCFG2::RESET_READY_TRUE)
          .raw();
    case NV_PFALCON_FALCON_DMACTL::kOffset: {
      const uint32_t scrubbing = ScrubbingLocked() ? 1 : 0;
      return NV_PFALCON_FALCON_DMACTL{}
          .require_ctx(dmactl_require_ctx_)
          .dmem_scrubbing(scrubbing)
          .imem_scrubbing(scrubbing)
          .raw();
    }
    case NV_PFALCON_FALCON_DMATRFBASE::kOffset:
      return dma_base_;
    case NV_PFALCON_FALCON_DMATRFBASE1::kOffset:
      return dma_base1_;
    case NV_PFALCON_FALCON_DMATRFMOFFS::kOffset:
      return dma_moffs_;
    case NV_PFALCON_FALCON_DMATRFFBOFFS::kOffset:
      return dma_fboffs_;
    case NV_PFALCON_FALCON_DMATRFCMD::kOffset:
      // Transfers complete within the write that starts them, so the queue is never full; a faulted one leaves the
      // engine busy (IDLE 0) until reset: the driver's bounded wait for IDLE is how it learns of the fault.
      return NV_PFALCON_FALCON_DMATRFCMD::FromRaw(dma_command_).full(0).idle(dma_stuck_ ? 0 : 1).raw();
    case NV_PFALCON_FALCON_IMEMC::kOffset:
      return imem_port_.control;
    case NV_PFALCON_FALCON_IMEMD::kOffset:
      return PioRead(imem_, imem_port_, "IMEM");
    case NV_PFALCON_FALCON_IMEMT::kOffset: {
      const uint32_t block = PioAddress(imem_port_.control) / kBlockSize;
      return block < imem_tags_.size() ? imem_tags_[block] : 0;
    }
    case NV_PFALCON_FALCON_DMEMC::kOffset:
      return dmem_port_.control;
    case NV_PFALCON_FALCON_DMEMD::kOffset:
      return PioRead(dmem_, dmem_port_, "DMEM");
    case NV_PFALCON_FALCON_CPUCTL::kOffset:
      return NV_PFALCON_FALCON_CPUCTL{}.halted(halted_ ? 1 : 0).alias_en(alias_en_ ? 1 : 0).raw();
    case NV_PFALCON_FALCON_CPUCTL_ALIAS::kOffset:
      return 0;  // write-only (dev_falcon_v4.h "-W-4R")
    default:
      break;
  }
  if (offset >= fbif_ && offset < fbif_ + NV_PFALCON_FBIF_TRANSCFG::address(NV_PFALCON_FBIF_TRANSCFG::kCount - 1) + 4 &&
      (offset - fbif_) % NV_PFALCON_FBIF_TRANSCFG::kStride == 0) {
    return transcfg_[(offset - fbif_) / NV_PFALCON_FBIF_TRANSCFG::kStride];
  }
  if (offset == fbif_ + NV_PFALCON_FBIF_CTL::kOffset) return fbif_ctl_;
  if (offset == falcon2_ + NV_PFALCON2_FALCON_MOD_SEL::kOffset) return brom_.mod_sel_algo;
  if (offset == falcon2_ + NV_PFALCON2_FALCON_BROM_CURR_UCODE_ID::kOffset) return brom_.ucode_id;
  if (offset == falcon2_ + NV_PFALCON2_FALCON_BROM_ENGIDMASK::kOffset) return brom_.engine_id_mask;
  if (offset == falcon2_ + NV_PFALCON2_FALCON_BROM_PARAADDR::address(0)) return brom_.paraaddr0;
  if (identity_.riscv && offset == falcon2_ + NV_PRISCV_RISCV_CPUCTL::kOffset) {
    return NV_PRISCV_RISCV_CPUCTL{}.active_stat(riscv_active_ ? 1 : 0).raw();
  }
  if (identity_.riscv && offset == falcon2_ + NV_PRISCV_RISCV_BCR_CTRL::kOffset) return bcr_ctrl_;
  const auto it = storage_.find(offset);
  return it == storage_.end() ? 0 : it->second;
}

void FalconModel::Write32(uint32_t offset, uint32_t value) {
  bool start = false;
  {
    base::MutexLock lock(&mu_);
    if (offset == engine_) {
      const bool assert_reset = NV_PGSP_FALCON_ENGINE::FromRaw(value).reset() == NV_PGSP_FALCON_ENGINE::RESET_TRUE;
      if (assert_reset && !in_reset_) {
        in_reset_ = true;
        scrub_reads_left_ = 0;
        ResetLocked();
      } else if (!assert_reset && in_reset_) {
        // Released: the memories are scrubbed (already zero) while HWCFG2.MEM_SCRUBBING reports it.
        in_reset_ = false;
        scrub_reads_left_ = kScrubStatusReads;
      }
      return;
    }
    if (in_reset_) {
      LogLocked(absl::StrFormat("write of 0x%x to +0x%x while the engine is held in reset (ignored)", value, offset));
      return;
    }
    switch (offset) {
      case NV_PFALCON_FALCON_MAILBOX0::kOffset:
        mailbox0_ = value;
        return;
      case NV_PFALCON_FALCON_MAILBOX1::kOffset:
        mailbox1_ = value;
        return;
      case NV_PFALCON_FALCON_OS::kOffset:
        os_ = value;
        return;
      case NV_PFALCON_FALCON_RM::kOffset:
        rm_ = value;
        return;
      case NV_PFALCON_FALCON_BOOTVEC::kOffset:
        bootvec_ = value;
        return;
      case NV_PFALCON_FALCON_HWCFG::kOffset:
      case NV_PFALCON_FALCON_HWCFG2::kOffset:
        return;  // read-only (dev_falcon_v4.h "R--4R")
      case NV_PFALCON_FALCON_DMACTL::kOffset:
        dmactl_require_ctx_ = NV_PFALCON_FALCON_DMACTL::FromRaw(value).require_ctx();
        return;
      case NV_PFALCON_FALCON_DMATRFBASE::kOffset:
        dma_base_ = value;
        return;
      case NV_PFALCON_FALCON_DMATRFBASE1::kOffset:
        dma_base1_ = NV_PFALCON_FALCON_DMATRFBASE1{}.base(NV_PFALCON_FALCON_DMATRFBASE1::FromRaw(value).base()).raw();
        return;
      case NV_PFALCON_FALCON_DMATRFMOFFS::kOffset:
        dma_moffs_ = NV_PFALCON_FALCON_DMATRFMOFFS{}.offs(NV_PFALCON_FALCON_DMATRFMOFFS::FromRaw(value).offs()).raw();
        return;
      case NV_PFALCON_FALCON_DMATRFFBOFFS::kOffset:
        dma_fboffs_ = value;
        return;
      case NV_PFALCON_FALCON_DMATRFCMD::kOffset:
        DmaCommandLocked(value);
        return;
      case NV_PFALCON_FALCON_IMEMC::kOffset:
        imem_port_.control = value;
        return;
      case NV_PFALCON_FALCON_IMEMD::kOffset:
        PioWrite(imem_, imem_port_, value, "IMEM");
        return;
      case NV_PFALCON_FALCON_IMEMT::kOffset: {
        const uint32_t block = PioAddress(imem_port_.control) / kBlockSize;
        if (block < imem_tags_.size()) imem_tags_[block] = NV_PFALCON_FALCON_IMEMT::FromRaw(value).tag();
        return;
      }
      case NV_PFALCON_FALCON_DMEMC::kOffset:
        dmem_port_.control = value;
        return;
      case NV_PFALCON_FALCON_DMEMD::kOffset:
        PioWrite(dmem_, dmem_port_, value, "DMEM");
        return;
      case NV_PFALCON_FALCON_CPUCTL::kOffset: {
        const auto cpuctl = NV_PFALCON_FALCON_CPUCTL::FromRaw(value);
        const bool was_alias = alias_en_;
        alias_en_ = cpuctl.alias_en() == NV_PFALCON_FALCON_CPUCTL::ALIAS_EN_TRUE;
        if (cpuctl.startcpu() == NV_PFALCON_FALCON_CPUCTL::STARTCPU_TRUE) {
          // nouveau (falcon/v1.c nvkm_falcon_v1_start, r535.c's sequencer) and tinygrad (start_cpu) start through
          // CPUCTL_ALIAS whenever ALIAS_EN is set: the model takes that as CPUCTL.STARTCPU being ignored then.
          if (was_alias) {
            LogLocked("CPUCTL.STARTCPU written while CPUCTL.ALIAS_EN is set (ignored): start through CPUCTL_ALIAS");
          } else {
            start = true;
          }
        }
        break;
      }
      case NV_PFALCON_FALCON_CPUCTL_ALIAS::kOffset:
        if (NV_PFALCON_FALCON_CPUCTL_ALIAS::FromRaw(value).startcpu() ==
            NV_PFALCON_FALCON_CPUCTL_ALIAS::STARTCPU_TRUE) {
          if (!alias_en_) {
            LogLocked("CPUCTL_ALIAS.STARTCPU written while CPUCTL.ALIAS_EN is clear (ignored): start through CPUCTL");
          } else {
            start = true;
          }
        }
        break;
      default:
        if (offset >= fbif_ &&
            offset < fbif_ + NV_PFALCON_FBIF_TRANSCFG::address(NV_PFALCON_FBIF_TRANSCFG::kCount - 1) + 4 &&
            (offset - fbif_) % NV_PFALCON_FBIF_TRANSCFG::kStride == 0) {
          const auto t = NV_PFALCON_FBIF_TRANSCFG::FromRaw(value);
          transcfg_[(offset - fbif_) / NV_PFALCON_FBIF_TRANSCFG::kStride] =
              NV_PFALCON_FBIF_TRANSCFG{}.target(t.target()).mem_type(t.mem_type()).raw();
        } else if (offset == fbif_ + NV_PFALCON_FBIF_CTL::kOffset) {
          fbif_ctl_ = value;
        } else if (offset == falcon2_ + NV_PFALCON2_FALCON_MOD_SEL::kOffset) {
          brom_.mod_sel_algo = NV_PFALCON2_FALCON_MOD_SEL::FromRaw(value).algo();
        } else if (offset == falcon2_ + NV_PFALCON2_FALCON_BROM_CURR_UCODE_ID::kOffset) {
          brom_.ucode_id = NV_PFALCON2_FALCON_BROM_CURR_UCODE_ID::FromRaw(value).val();
        } else if (offset == falcon2_ + NV_PFALCON2_FALCON_BROM_ENGIDMASK::kOffset) {
          brom_.engine_id_mask = value;
        } else if (offset == falcon2_ + NV_PFALCON2_FALCON_BROM_PARAADDR::address(0)) {
          brom_.paraaddr0 = value;
        } else if (identity_.riscv && offset == falcon2_ + NV_PRISCV_RISCV_CPUCTL::kOffset) {
          // ACTIVE_STAT is read-only; the rest of the register is not modelled.
        } else if (identity_.riscv && offset == falcon2_ + NV_PRISCV_RISCV_BCR_CTRL::kOffset) {
          // The core selection takes effect at once: VALID reads 1 from now on (nouveau ga102_flcn_select and
          // tinygrad's reset wait for it after selecting the falcon core).
          const auto w = NV_PRISCV_RISCV_BCR_CTRL::FromRaw(value);
          bcr_ctrl_ = NV_PRISCV_RISCV_BCR_CTRL{}
                          .core_select(w.core_select())
                          .brfetch(w.brfetch())
                          .valid(NV_PRISCV_RISCV_BCR_CTRL::VALID_TRUE)
                          .raw();
        } else {
          storage_[offset] = value;
        }
        return;
    }
  }
  if (start) StartCpu();
}

uint32_t FalconModel::PioRead(std::vector<uint8_t>& memory, PioPort& port, absl::string_view what) {
  const uint32_t address = PioAddress(port.control);
  if (address + 4 > memory.size()) {
    LogLocked(absl::StrFormat("%s PIO read at 0x%x, past the end (0x%x bytes): reads 0", what, address, memory.size()));
    return 0;
  }
  const uint32_t value = Le32(memory, address);
  if ((port.control & kMemcAutoIncrementRead) != 0) port.control = WithPioAddress(port.control, address + 4);
  return value;
}

void FalconModel::PioWrite(std::vector<uint8_t>& memory, PioPort& port, uint32_t value, absl::string_view what) {
  const uint32_t address = PioAddress(port.control);
  if (address + 4 > memory.size()) {
    LogLocked(
        absl::StrFormat("%s PIO write at 0x%x, past the end (0x%x bytes): ignored", what, address, memory.size()));
    return;
  }
  PutLe32(memory, address, value);
  if (&memory == &imem_) {
    imem_secure_[address / kBlockSize] = NV_PFALCON_FALCON_IMEMC::FromRaw(port.control).secure() != 0;
  }
  if (NV_PFALCON_FALCON_IMEMC::FromRaw(port.control).aincw() == NV_PFALCON_FALCON_IMEMC::AINCW_TRUE) {
    port.control = WithPioAddress(port.control, address + 4);
  }
}

void FalconModel::DmaFaultLocked(const std::string& why) {
  dma_stuck_ = true;
  LogLocked(absl::StrCat("DMA fault (the engine stays busy until reset): ", why));
}

void FalconModel::DmaCommandLocked(uint32_t value) {
  const auto cmd = NV_PFALCON_FALCON_DMATRFCMD::FromRaw(value);
  dma_command_ = NV_PFALCON_FALCON_DMATRFCMD{}
                     .sec(cmd.sec())
                     .imem(cmd.imem())
                     .write(cmd.write())
                     .size(cmd.size())
                     .ctxdma(cmd.ctxdma())
                     .set_dmtag(cmd.set_dmtag())
                     .raw();
  const bool to_imem = cmd.imem() == NV_PFALCON_FALCON_DMATRFCMD::IMEM_TRUE;
  const char* memory_name = to_imem ? "IMEM" : "DMEM";
  if (dma_stuck_) return DmaFaultLocked("a new DMATRFCMD while a faulted transfer is outstanding");
  if (scrub_reads_left_ > 0) return DmaFaultLocked("DMATRFCMD while the memories are still being scrubbed");
  if (dmactl_require_ctx_ != NV_PFALCON_FALCON_DMACTL::REQUIRE_CTX_FALSE) {
    return DmaFaultLocked(
        "DMACTL.REQUIRE_CTX is set and no context is bound: clear it for physical DMA (nouveau ga102_flcn_fw_load)");
  }
  if (NV_PFALCON_FBIF_CTL::FromRaw(fbif_ctl_).allow_phys_no_ctx() != NV_PFALCON_FBIF_CTL::ALLOW_PHYS_NO_CTX_ALLOW) {
    return DmaFaultLocked("FBIF_CTL.ALLOW_PHYS_NO_CTX is clear: physical DMA without a context is not allowed");
  }
  if (cmd.size() > NV_PFALCON_FALCON_DMATRFCMD::SIZE_256B) {
    return DmaFaultLocked(absl::StrFormat("DMATRFCMD.SIZE %d: the largest transfer is SIZE_256B (6)", cmd.size()));
  }
  const uint32_t bytes = 1u << (cmd.size() + kDmaSizeBias);
  const auto transcfg = NV_PFALCON_FBIF_TRANSCFG::FromRaw(transcfg_[cmd.ctxdma()]);
  if (transcfg.mem_type() != NV_PFALCON_FBIF_TRANSCFG::MEM_TYPE_PHYSICAL) {
    return DmaFaultLocked(absl::StrFormat(
        "FBIF_TRANSCFG(%d).MEM_TYPE is virtual: the virtual falcon has no instance block, set MEM_TYPE_PHYSICAL",
        cmd.ctxdma()));
  }
  const uint32_t target = transcfg.target();
  if (target > kTargetNoncoherentSysmem) {
    return DmaFaultLocked(absl::StrFormat("FBIF_TRANSCFG(%d).TARGET %d is no memory target", cmd.ctxdma(), target));
  }
  const uint64_t address = ((uint64_t{dma_base1_} << 32 | dma_base_) << 8) + dma_fboffs_;
  std::vector<uint8_t>& memory = to_imem ? imem_ : dmem_;
  // Alignment to the transfer size (chosen: no source says what the engine does with unaligned offsets; nouveau and
  // tinygrad only ever issue 256-byte transfers at 256-byte offsets).
  if (dma_moffs_ % bytes != 0 || dma_moffs_ > memory.size() || bytes > memory.size() - dma_moffs_) {
    return DmaFaultLocked(absl::StrFormat("%s offset 0x%x (+0x%x bytes) is unaligned or past the end (0x%x bytes)",
                                          memory_name, dma_moffs_, bytes, memory.size()));
  }
  if (address % bytes != 0) {
    return DmaFaultLocked(
        absl::StrFormat("external address 0x%x is not aligned to the 0x%x-byte transfer", address, bytes));
  }
  const char* where = target == kTargetLocalFb ? "FB" : "system memory";
  std::span<uint8_t> window(memory.data() + dma_moffs_, bytes);
  bool reached;
  if (cmd.write() == NV_PFALCON_FALCON_DMATRFCMD::WRITE_TRUE) {
    reached = target == kTargetLocalFb ? memory_.WriteFb(address, window) : memory_.WriteSystem(address, window);
  } else {
    reached = target == kTargetLocalFb ? memory_.ReadFb(address, window) : memory_.ReadSystem(address, window);
  }
  if (!reached) {
    return DmaFaultLocked(
        absl::StrFormat("%s 0x%x (+0x%x bytes) is out of the falcon's reach (%s)", where, address, bytes,
                        target == kTargetLocalFb ? "past the end of FB" : "not a mapped bus address"));
  }
  if (to_imem && cmd.write() != NV_PFALCON_FALCON_DMATRFCMD::WRITE_TRUE) {
    for (uint32_t block = dma_moffs_ / kBlockSize; block * kBlockSize < dma_moffs_ + bytes; ++block) {
      imem_secure_[block] = cmd.sec() != 0;
    }
  }
}

void FalconModel::StartCpu() {
  bool riscv_mode = false;
  std::function<bool()> handler;
  {
    base::MutexLock lock(&mu_);
    if (scrub_reads_left_ > 0) {
      LogLocked("core started while the memories are still being scrubbed (ignored)");
      return;
    }
    if (running_) {
      LogLocked("core started while it is running (ignored)");
      return;
    }
    halted_ = false;
    running_ = true;
    riscv_mode = identity_.riscv && NV_PRISCV_RISCV_BCR_CTRL::FromRaw(bcr_ctrl_).core_select() ==
                                        NV_PRISCV_RISCV_BCR_CTRL::CORE_SELECT_RISCV;
    if (riscv_mode) {
      ++riscv_starts_;
      handler = riscv_start_handler_;
      if (!handler) LogLocked("RISC-V core started with no RISC-V model behind it: it stays inactive");
    }
  }
  if (!riscv_mode) return RunHsUcode();
  const bool active = handler ? handler() : false;
  base::MutexLock lock(&mu_);
  riscv_active_ = active;
}

void FalconModel::RunHsUcode() {
  std::vector<uint8_t> imem, dmem;
  std::vector<bool> secure_bits;
  std::vector<HsUcodeModel*> models;
  HsUcodeContext context;
  {
    base::MutexLock lock(&mu_);
    ++hs_starts_;
    imem = imem_;
    dmem = dmem_;
    secure_bits = imem_secure_;
    for (const auto& m : hs_models_) models.push_back(m.get());
    context.brom = brom_;
    context.bootvec = bootvec_;
    context.mailbox0 = mailbox0_;
    context.mailbox1 = mailbox1_;
  }
  // std::vector<bool> has no contiguous storage: the context gets a plain array.
  std::unique_ptr<bool[]> secure(new bool[secure_bits.size()]);
  std::copy(secure_bits.begin(), secure_bits.end(), secure.get());
  context.falcon = identity_.name;
  context.falcon_engine_bit = identity_.engine_id_bit;
  context.imem = imem;
  context.dmem = dmem;
  context.imem_secure = std::span<const bool>(secure.get(), secure_bits.size());
  context.priv = &priv_;
  context.memory = &memory_;

  HsUcodeOutcome outcome;
  bool recognised = false;
  std::string reasons;
  for (HsUcodeModel* model : models) {
    const absl::Status status = model->Recognise(context);
    if (status.ok()) {
      outcome = model->Run(context);
      outcome.log = absl::StrCat(model->name(), ": ", outcome.log);
      recognised = true;
      break;
    }
    absl::StrAppend(&reasons, reasons.empty() ? "" : "; ", model->name(), ": ", status.message());
  }
  if (!recognised) {
    // Chosen code (hs_ucode_model.h): the BROM refuses an image it cannot verify; the virtual falcon never runs
    // code it has no model of.
    outcome.mailbox0 = kFlcnErrHsChkInvalidInput;
    outcome.mailbox1 = 0;
    outcome.log = absl::StrCat("BROM refused the image (MAILBOX0 = 0x", absl::Hex(outcome.mailbox0),
                               "): no ucode model recognises it", reasons.empty() ? "" : " (", reasons,
                               reasons.empty() ? "" : ")");
  }

  base::MutexLock lock(&mu_);
  if (in_reset_ || !running_) return;  // reset while the ucode ran: its results are gone with the core
  dmem_ = std::move(dmem);
  mailbox0_ = outcome.mailbox0;
  mailbox1_ = outcome.mailbox1;
  LogLocked(outcome.log);
  if (never_halt_) {
    LogLocked("fault injection: the core never halts");
    return;
  }
  halted_ = true;
  running_ = false;
}

}  // namespace nv::sim
