#include "nv/falcon.h"

#include <algorithm>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "base/status_macros.h"

namespace nv {
namespace {

using namespace regs::ad102;  // NOLINT: the register names are long enough

// One DMA transfer: 256 bytes (nouveau nvkm_falcon_dma_wr dmalen; tinygrad execute_dma; DMATRFCMD SIZE_256B).
constexpr uint32_t kDmaBlock = 256;
// DMATRFBASE holds the address >> 8 (nouveau ga102_flcn_dma_init), DMATRFBASE1 the bits above DMATRFBASE's 32
// (tinygrad execute_dma: hi32(src >> 8) & 0x1ff, the width of DMATRFBASE1.BASE 8:0).
constexpr uint32_t kDmaBaseShift = 8;
// nouveau gp102_flcn_reset_eng holds the engine in reset for udelay(10).
constexpr absl::Duration kEngineResetHold = absl::Microseconds(10);
// How a poll waits between reads: yield for the first kSpin (a virtual falcon answers at once), then sleep from
// kFirstSleep doubling to kMaxSleep (a real one takes milliseconds to run FWSEC).
constexpr absl::Duration kSpin = absl::Microseconds(50);
constexpr absl::Duration kFirstSleep = absl::Microseconds(5);
constexpr absl::Duration kMaxSleep = absl::Microseconds(200);

}  // namespace

absl::string_view DmaTargetName(DmaTarget target) {
  switch (target) {
    case DmaTarget::kLocalFb:
      return "FB";
    case DmaTarget::kCoherentSysmem:
      return "coherent system memory";
    case DmaTarget::kNoncoherentSysmem:
      return "non-coherent system memory";
  }
  return "an unknown target";
}

Falcon::Falcon(pci::Mmio bar0, const FalconEngine& engine, absl::Duration halt_timeout, absl::Duration step_timeout)
    : bar0_(bar0), engine_(engine), halt_timeout_(halt_timeout), step_timeout_(step_timeout) {}

template <typename Done>
bool Falcon::Poll(absl::Duration timeout, Done done) {
  const absl::Time start = absl::Now();
  const absl::Time deadline = start + timeout;
  absl::Duration sleep = kFirstSleep;
  while (true) {
    if (done()) return true;
    const absl::Time now = absl::Now();
    if (now > deadline) return done();
    if (now - start < kSpin) {
      std::this_thread::yield();
    } else {
      absl::SleepFor(std::min(sleep, deadline - now));
      sleep = std::min(sleep * 2, kMaxSleep);
    }
  }
}

std::string Falcon::Prefix(absl::string_view step) const { return absl::StrCat(engine_.name, " falcon: ", step); }

absl::Status Falcon::Reset() {
  // The engine reset register has the same layout on every falcon (dev_gsp.h, dev_sec_pri.h: RESET 0:0).
  bar0_.Write32(engine_.engine_reset, NV_PGSP_FALCON_ENGINE{}.reset(NV_PGSP_FALCON_ENGINE::RESET_TRUE).raw());
  absl::SleepFor(kEngineResetHold);
  bar0_.Write32(engine_.engine_reset, NV_PGSP_FALCON_ENGINE{}.reset(NV_PGSP_FALCON_ENGINE::RESET_FALSE).raw());
  NV_PFALCON_FALCON_HWCFG2 hwcfg2;
  if (!Poll(step_timeout_, [&] {
        hwcfg2 = Read<NV_PFALCON_FALCON_HWCFG2>();
        return hwcfg2.mem_scrubbing() == NV_PFALCON_FALCON_HWCFG2::MEM_SCRUBBING_DONE;
      })) {
    return absl::DeadlineExceededError(absl::StrFormat(
        "%s: memory scrub did not finish within %s after the engine reset: %s; the falcon may be held in reset or "
        "its memories faulty (reset the GPU)",
        Prefix("reset"), absl::FormatDuration(step_timeout_), DescribeRegister(hwcfg2)));
  }
  if (hwcfg2.riscv() == NV_PFALCON_FALCON_HWCFG2::RISCV_ENABLE) {
    auto bcr = Read<NV_PRISCV_RISCV_BCR_CTRL>();
    if (bcr.core_select() != NV_PRISCV_RISCV_BCR_CTRL::CORE_SELECT_FALCON) {
      Write(NV_PRISCV_RISCV_BCR_CTRL{}.core_select(NV_PRISCV_RISCV_BCR_CTRL::CORE_SELECT_FALCON));
      if (!Poll(step_timeout_, [&] {
            bcr = Read<NV_PRISCV_RISCV_BCR_CTRL>();
            return bcr.valid() == NV_PRISCV_RISCV_BCR_CTRL::VALID_TRUE;
          })) {
        return absl::DeadlineExceededError(
            absl::StrFormat("%s: the falcon core selection did not become valid within %s: %s", Prefix("core select"),
                            absl::FormatDuration(step_timeout_), DescribeRegister(bcr)));
      }
    }
  }
  // gm200_flcn_enable writes NV_PMC_BOOT_0 into RM (tinygrad: the chip id).
  Write(NV_PFALCON_FALCON_RM::FromRaw(bar0_.Read32(NV_PMC_BOOT_0::kOffset)));
  return absl::OkStatus();
}

void Falcon::SelectRiscv() {
  Write(NV_PRISCV_RISCV_BCR_CTRL{}
            .core_select(NV_PRISCV_RISCV_BCR_CTRL::CORE_SELECT_RISCV)
            .valid(NV_PRISCV_RISCV_BCR_CTRL::VALID_TRUE)
            .brfetch(NV_PRISCV_RISCV_BCR_CTRL::BRFETCH_TRUE));
}

void Falcon::DisableContextRequirement() {
  Write(Read<NV_PFALCON_FBIF_CTL>().allow_phys_no_ctx(NV_PFALCON_FBIF_CTL::ALLOW_PHYS_NO_CTX_ALLOW));
  Write(NV_PFALCON_FALCON_DMACTL{}.require_ctx(NV_PFALCON_FALCON_DMACTL::REQUIRE_CTX_FALSE));
}

void Falcon::SetPhysicalTarget(uint32_t ctxdma, DmaTarget target) {
  Write(Read<NV_PFALCON_FBIF_TRANSCFG>(ctxdma)
            .target(static_cast<uint32_t>(target))
            .mem_type(NV_PFALCON_FBIF_TRANSCFG::MEM_TYPE_PHYSICAL),
        ctxdma);
}

absl::Status Falcon::DmaLoad(FalconMemory memory, uint32_t memory_offset, uint64_t address, uint32_t size, bool secure,
                             uint32_t ctxdma) {
  const char* memory_name = memory == FalconMemory::kImem ? "IMEM" : "DMEM";
  if (size == 0 || size % kDmaBlock != 0 || memory_offset % kDmaBlock != 0 || address % kDmaBlock != 0) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s: %s load of 0x%x bytes at %s offset 0x%x from 0x%x: size, offset and address must be non-zero multiples "
        "of %d (the DMA moves 256-byte blocks; DMATRFBASE keeps address bits 8 and up)",
        Prefix("DMA"), memory_name, size, memory_name, memory_offset, address, kDmaBlock));
  }
  // DMATRFMOFFS.OFFS is 23:0 (dev_falcon_v4.h).
  constexpr uint64_t kMaxMemoryEnd = uint64_t{NV_PFALCON_FALCON_DMATRFMOFFS::kFields[0].mask} + 1;
  if (uint64_t{memory_offset} + size > kMaxMemoryEnd) {
    return absl::InvalidArgumentError(absl::StrFormat("%s: %s 0x%x + 0x%x bytes is beyond what DMATRFMOFFS can address",
                                                      Prefix("DMA"), memory_name, memory_offset, size));
  }
  if (ctxdma >= NV_PFALCON_FBIF_TRANSCFG::kCount) {
    return absl::InvalidArgumentError(absl::StrFormat("%s: context %d does not exist (FBIF_TRANSCFG has %d)",
                                                      Prefix("DMA"), ctxdma, NV_PFALCON_FBIF_TRANSCFG::kCount));
  }
  const uint64_t base = address >> kDmaBaseShift;
  Write(NV_PFALCON_FALCON_DMATRFBASE{}.base(static_cast<uint32_t>(base)));
  Write(NV_PFALCON_FALCON_DMATRFBASE1{}.base(static_cast<uint32_t>(base >> 32) &
                                             (NV_PFALCON_FALCON_DMATRFBASE1::kFields[0].mask)));
  const auto command = NV_PFALCON_FALCON_DMATRFCMD{}
                           .imem(memory == FalconMemory::kImem ? NV_PFALCON_FALCON_DMATRFCMD::IMEM_TRUE
                                                               : NV_PFALCON_FALCON_DMATRFCMD::IMEM_FALSE)
                           .write(NV_PFALCON_FALCON_DMATRFCMD::WRITE_FALSE)
                           .size(NV_PFALCON_FALCON_DMATRFCMD::SIZE_256B)
                           .ctxdma(ctxdma)
                           .sec(secure ? 1 : 0);
  for (uint32_t done = 0; done < size; done += kDmaBlock) {
    NV_PFALCON_FALCON_DMATRFCMD status;
    if (!Poll(halt_timeout_, [&] {
          status = Read<NV_PFALCON_FALCON_DMATRFCMD>();
          return status.full() != NV_PFALCON_FALCON_DMATRFCMD::FULL_TRUE;
        })) {
      return absl::DeadlineExceededError(absl::StrFormat(
          "%s: the DMA queue stayed full for %s before %s block 0x%x: %s", Prefix("DMA"),
          absl::FormatDuration(halt_timeout_), memory_name, memory_offset + done, DescribeRegister(status)));
    }
    Write(NV_PFALCON_FALCON_DMATRFMOFFS{}.offs(memory_offset + done));
    Write(NV_PFALCON_FALCON_DMATRFFBOFFS{}.offs(done));
    Write(command);
    if (!Poll(halt_timeout_, [&] {
          status = Read<NV_PFALCON_FALCON_DMATRFCMD>();
          return status.idle() != NV_PFALCON_FALCON_DMATRFCMD::IDLE_FALSE;
        })) {
      return absl::DeadlineExceededError(absl::StrFormat(
          "%s: the transfer of %s block 0x%x from %#x did not complete within %s: %s; the address may be out of the "
          "falcon's reach (past FB, or not mapped for the GPU) or the FBIF context not set up",
          Prefix("DMA"), memory_name, memory_offset + done, address + done, absl::FormatDuration(halt_timeout_),
          DescribeRegister(status)));
    }
  }
  return absl::OkStatus();
}

void Falcon::SetBromParameters(uint32_t pkc_offset, uint32_t engine_id_mask, uint32_t ucode_id) {
  Write(NV_PFALCON2_FALCON_BROM_PARAADDR::FromRaw(pkc_offset), 0);
  Write(NV_PFALCON2_FALCON_BROM_ENGIDMASK::FromRaw(engine_id_mask));
  Write(NV_PFALCON2_FALCON_BROM_CURR_UCODE_ID{}.val(ucode_id & NV_PFALCON2_FALCON_BROM_CURR_UCODE_ID::kFields[0].mask));
  Write(NV_PFALCON2_FALCON_MOD_SEL{}.algo(NV_PFALCON2_FALCON_MOD_SEL::ALGO_RSA3K));
}

void Falcon::SetBootVector(uint32_t boot_vector) { Write(NV_PFALCON_FALCON_BOOTVEC::FromRaw(boot_vector)); }

void Falcon::WriteMailboxes(const FalconMailboxes& mailboxes) {
  Write(NV_PFALCON_FALCON_MAILBOX0::FromRaw(mailboxes.mailbox0));
  Write(NV_PFALCON_FALCON_MAILBOX1::FromRaw(mailboxes.mailbox1));
}

FalconMailboxes Falcon::ReadMailboxes() {
  return FalconMailboxes{.mailbox0 = Read<NV_PFALCON_FALCON_MAILBOX0>().raw(),
                         .mailbox1 = Read<NV_PFALCON_FALCON_MAILBOX1>().raw()};
}

void Falcon::Start() {
  if (Read<NV_PFALCON_FALCON_CPUCTL>().alias_en() == NV_PFALCON_FALCON_CPUCTL::ALIAS_EN_TRUE) {
    Write(NV_PFALCON_FALCON_CPUCTL_ALIAS{}.startcpu(NV_PFALCON_FALCON_CPUCTL_ALIAS::STARTCPU_TRUE));
  } else {
    Write(NV_PFALCON_FALCON_CPUCTL{}.startcpu(NV_PFALCON_FALCON_CPUCTL::STARTCPU_TRUE));
  }
}

absl::Status Falcon::WaitForHalt(absl::string_view what) {
  NV_PFALCON_FALCON_CPUCTL cpuctl;
  if (Poll(halt_timeout_, [&] {
        cpuctl = Read<NV_PFALCON_FALCON_CPUCTL>();
        return cpuctl.halted() == NV_PFALCON_FALCON_CPUCTL::HALTED_TRUE;
      })) {
    return absl::OkStatus();
  }
  const FalconMailboxes mailboxes = ReadMailboxes();
  return absl::DeadlineExceededError(absl::StrFormat(
      "%s: %s did not halt within %s: %s, MAILBOX0 = 0x%08x, MAILBOX1 = 0x%08x; the ucode hung or never started "
      "(reset the falcon before trying again)",
      Prefix("run"), what, absl::FormatDuration(halt_timeout_), DescribeRegister(cpuctl), mailboxes.mailbox0,
      mailboxes.mailbox1));
}

bool Falcon::RiscvActive() {
  return Read<NV_PRISCV_RISCV_CPUCTL>().active_stat() == NV_PRISCV_RISCV_CPUCTL::ACTIVE_STAT_ACTIVE;
}

absl::StatusOr<FalconMailboxes> Falcon::ExecuteHs(const HsUcodeLoad& load, absl::string_view what) {
  DisableContextRequirement();
  SetPhysicalTarget(/*ctxdma=*/0, load.target);
  BAREGPU_RETURN_IF_ERROR(DmaLoad(FalconMemory::kImem, load.imem_base, load.image_address + load.imem_image_offset,
                                  load.imem_size, /*secure=*/true));
  BAREGPU_RETURN_IF_ERROR(DmaLoad(FalconMemory::kDmem, load.dmem_base, load.image_address + load.dmem_image_offset,
                                  load.dmem_size, /*secure=*/false));
  SetBromParameters(load.pkc_offset, load.engine_id_mask, load.ucode_id);
  WriteMailboxes(load.mailboxes);
  SetBootVector(load.boot_vector);
  Start();
  BAREGPU_RETURN_IF_ERROR(WaitForHalt(what));
  return ReadMailboxes();
}

}  // namespace nv
