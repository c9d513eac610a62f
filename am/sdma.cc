#include "am/sdma.h"

#include <algorithm>
#include <atomic>
#include <bit>
#include <cstring>

#include "absl/strings/str_format.h"
#include "am/device.h"
#include "am/poll_backoff.h"
#include "am/regs/gc.h"
#include "am/regs/sdma_constants.h"
#include "am/regs/sdma_packets.h"
#include "am/regs/sdma_policy_constants.h"
#include "am/soc.h"
#include "base/status_macros.h"

namespace am {
namespace {

namespace gc = regs::gc;
namespace sdma = regs::sdma;

// sdma_v6_0_soft_reset waits 100 us around each GRBM_SOFT_RESET edge for the engine to settle.
constexpr absl::Duration kSoftResetSettle = absl::Microseconds(100);

// amdgpu.h: AMDGPU_MAX_USEC_TIMEOUT, the default adev->usec_timeout (100 ms); sdma_v6_0_gfx_resume_instance sets
// the hang watchdog to max(usec_timeout / 100000, 1) units of 100 ms.
constexpr uint32_t kUsecTimeout = 100000;
constexpr uint32_t kWatchdogUnitUsec = 100000;
constexpr uint32_t kQueueHangCount = std::max(kUsecTimeout / kWatchdogUnitUsec, 1u);
// sdma_v6_0_gfx_resume_instance: SDMA0_UTCL1_CNTL RESP_MODE and REDO_DELAY ("RESP_MODE to non-copy addresses").
constexpr uint32_t kUtcl1RespMode = 3;
constexpr uint32_t kUtcl1RedoDelay = 9;

}  // namespace

absl::Status Sdma::InitSw() {
  MemoryManager& memory = device_.memory();
  BAREGPU_ASSIGN_OR_RETURN(ring_vram_, memory.AllocBoot(kRingBytes, kRingBytes));
  BAREGPU_ASSIGN_OR_RETURN(rptr_, memory.AllocBoot(4096, 4096));
  BAREGPU_ASSIGN_OR_RETURN(std::span<uint8_t> ring, memory.CpuView(ring_vram_, kRingBytes));
  BAREGPU_ASSIGN_OR_RETURN(std::span<uint8_t> rptr, memory.CpuView(rptr_, kWptrPollOffset + 8));
  BAREGPU_ASSIGN_OR_RETURN(pci::Mmio doorbells, device_.pci().MapMmio(2));
  BAREGPU_ASSIGN_OR_RETURN(pci::Mmio registers, device_.pci().MapMmio(5));
  ring_.Attach({.ring = ring,
                .rptr = rptr.data(),
                .wptr_poll = reinterpret_cast<uint64_t*>(rptr.data() + kWptrPollOffset),
                .doorbells = doorbells,
                .doorbell_offset = kDoorbell64 * 8,
                .registers = registers,
                .hdp_flush_offset = Soc::kRemapMemFlush},
               0);
  return absl::OkStatus();
}

absl::Status Sdma::InitHw() {
  ring_.Clear();
  return LoadRing();
}

absl::Status Sdma::LoadRing() {
  auto g = device_.Regs<regs::Ip::kGc>();
  // The ring starts empty at the driver's write pointer: 0 at boot, past the lost commands after a reset.
  const uint64_t wptr = ring_.wptr();
  BAREGPU_ASSIGN_OR_RETURN(std::span<uint8_t> rptr, device_.memory().CpuView(rptr_, 4096));
  std::memset(rptr.data(), 0, rptr.size());
  std::memcpy(rptr.data(), &wptr, sizeof(wptr));
  std::memcpy(rptr.data() + kWptrPollOffset, &wptr, sizeof(wptr));
  const uint64_t ring_mc = device_.McAddress(ring_vram_), rptr_mc = device_.McAddress(rptr_);
  const uint64_t wptr_poll_mc = rptr_mc + kWptrPollOffset;
  // sdma_v6_0_gfx_resume_instance, in its order; every control register is read-modified-written, so the fields
  // Linux leaves alone keep their power-on values (F32_CNTL's TH0/TH1_ENABLE and priorities, UTCL1 credits).
  g.Modify<gc::SDMA0_QUEUE0_RB_CNTL>([](auto& r) { r.rb_enable(0); });  // disabled while programming
  g.Write(gc::SDMA0_SEM_WAIT_FAIL_TIMER_CNTL{}.set_raw(0));
  auto rb_cntl = g.Read<gc::SDMA0_QUEUE0_RB_CNTL>()
                     .rb_size(static_cast<uint32_t>(std::countr_zero(kRingBytes / 4)))
                     .rb_priv(1)
                     .rb_enable(0);
  g.Write(rb_cntl);
  // Moving a pointer back (a restart at 0, or a partial boot) is only taken with MINOR_PTR_UPDATE set.
  g.Write(gc::SDMA0_QUEUE0_MINOR_PTR_UPDATE{}.enable(1));
  g.Write(gc::SDMA0_QUEUE0_RB_RPTR{}.set_raw(static_cast<uint32_t>(wptr)));
  g.Write(gc::SDMA0_QUEUE0_RB_RPTR_HI{}.set_raw(static_cast<uint32_t>(wptr >> 32)));
  g.Write(gc::SDMA0_QUEUE0_RB_WPTR{}.set_raw(static_cast<uint32_t>(wptr)));
  g.Write(gc::SDMA0_QUEUE0_RB_WPTR_HI{}.set_raw(static_cast<uint32_t>(wptr >> 32)));
  // The wptr shadow the F32 polls (F32_WPTR_POLL_ENABLE, on at power-on and kept on by Linux); am::Ring stores
  // every new wptr there before the doorbell.
  g.Write(gc::SDMA0_QUEUE0_RB_WPTR_POLL_ADDR_LO{}.set_raw(static_cast<uint32_t>(wptr_poll_mc)));
  g.Write(gc::SDMA0_QUEUE0_RB_WPTR_POLL_ADDR_HI{}.set_raw(static_cast<uint32_t>(wptr_poll_mc >> 32)));
  g.Write(gc::SDMA0_QUEUE0_RB_RPTR_ADDR_HI{}.set_raw(static_cast<uint32_t>(rptr_mc >> 32)));
  g.Write(gc::SDMA0_QUEUE0_RB_RPTR_ADDR_LO{}.set_raw(static_cast<uint32_t>(rptr_mc)));
  rb_cntl.rptr_writeback_enable(1).wptr_poll_enable(0).f32_wptr_poll_enable(1);
  g.Write(gc::SDMA0_QUEUE0_RB_BASE{}.set_raw(static_cast<uint32_t>(ring_mc >> 8)));
  g.Write(gc::SDMA0_QUEUE0_RB_BASE_HI{}.set_raw(static_cast<uint32_t>(ring_mc >> 40)));
  g.Modify<gc::SDMA0_QUEUE0_DOORBELL>([](auto& r) { r.enable(1); });
  g.Modify<gc::SDMA0_QUEUE0_DOORBELL_OFFSET>([](auto& r) { r.offset(kDoorbell64 * 2); });
  g.Write(gc::SDMA0_QUEUE0_MINOR_PTR_UPDATE{}.enable(0));
  g.Modify<gc::SDMA0_WATCHDOG_CNTL>([](auto& r) { r.queue_hang_count(kQueueHangCount); });
  g.Modify<gc::SDMA0_UTCL1_CNTL>([](auto& r) { r.resp_mode(kUtcl1RespMode).redo_delay(kUtcl1RedoDelay); });
  g.Modify<gc::SDMA0_UTCL1_PAGE>([](auto& r) {
    r.rd_l2_policy(sdma::CACHE_READ_POLICY_L2__DEFAULT)
        .wr_l2_policy(sdma::CACHE_WRITE_POLICY_L2__DEFAULT)
        .llc_noalloc(1);
  });
  g.Modify<gc::SDMA0_F32_CNTL>([](auto& r) { r.halt(0).th1_reset(0); });
  g.Modify<gc::SDMA0_CNTL>([](auto& r) { r.trap_enable(0); });  // SetTrapInterrupt while someone sleeps on it
  g.Write(rb_cntl.rb_enable(1));
  g.Modify<gc::SDMA0_QUEUE0_IB_CNTL>([](auto& r) { r.ib_enable(1); });
  return g.status();
}

absl::Status Sdma::FiniHw() {
  auto g = device_.Regs<regs::Ip::kGc>();
  g.Modify<gc::SDMA0_QUEUE0_RB_CNTL>([](auto& r) { r.rb_enable(0); });
  g.Modify<gc::SDMA0_QUEUE0_IB_CNTL>([](auto& r) { r.ib_enable(0); });
  return g.status();
}

absl::Status Sdma::WaitIdle(absl::Duration timeout) {
  PollBackoff backoff(absl::Now() + timeout);
  while (!idle()) {
    if (!backoff.Wait()) {
      const std::vector<std::string> pending = ring_.PendingPackets();
      return absl::DeadlineExceededError(absl::StrFormat(
          "%s: SDMA0 queue 0 made no progress for %s: rptr %#x, wptr %#x (bytes), stuck at %s", device_.pci().name(),
          absl::FormatDuration(timeout), ring_.rptr(), ring_.wptr(), pending.empty() ? "nothing" : pending.front()));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<QueueReset> Sdma::ResetQueue() {
  QueueReset reset{.queue = "SDMA0 queue 0", .method = "SDMA0 soft reset and ring reload"};
  reset.rptr = ring_.rptr();
  reset.wptr = ring_.wptr();
  reset.lost_dwords = ring_.pending() / 4;
  reset.lost_packets = ring_.PendingPackets();
  // sdma_v6_0_soft_reset: stop the queue, freeze and halt the engine, pulse its GRBM_SOFT_RESET bit.
  auto g = device_.Regs<regs::Ip::kGc>();
  g.Modify<gc::SDMA0_QUEUE0_RB_CNTL>([](auto& r) { r.rb_enable(0); });
  g.Modify<gc::SDMA0_QUEUE0_IB_CNTL>([](auto& r) { r.ib_enable(0); });
  g.Modify<gc::SDMA0_FREEZE>([](auto& r) { r.freeze(1); });
  g.Modify<gc::SDMA0_F32_CNTL>([](auto& r) { r.halt(1).th1_reset(1); });
  g.Write(gc::SDMA0_QUEUE0_PREEMPT{}.set_raw(0));
  absl::SleepFor(kSoftResetSettle);
  g.Write(gc::GRBM_SOFT_RESET{}.soft_reset_sdma0(1));
  (void)g.Read<gc::GRBM_SOFT_RESET>();  // posts the write before the wait, as the kernel's read-back does
  absl::SleepFor(kSoftResetSettle);
  g.Write(gc::GRBM_SOFT_RESET{}.set_raw(0));
  (void)g.Read<gc::GRBM_SOFT_RESET>();
  absl::SleepFor(kSoftResetSettle);
  g.Modify<gc::SDMA0_FREEZE>([](auto& r) { r.freeze(0); });
  BAREGPU_RETURN_IF_ERROR(g.status());
  BAREGPU_RETURN_IF_ERROR(LoadRing());
  return reset;
}

absl::Status Sdma::Copy(uint64_t destination, uint64_t source, uint64_t bytes) {
  while (bytes > 0) {
    const uint64_t piece = std::min(bytes, sdma::kMaxCopyLinearBytes);
    BAREGPU_RETURN_IF_ERROR(ring_.Write(sdma::EncodeCopyLinear(destination, source, piece), kTimeout));
    destination += piece, source += piece, bytes -= piece;
  }
  return absl::OkStatus();
}

absl::Status Sdma::Fence(uint64_t address, uint32_t value) {
  return ring_.Write(sdma::EncodeFence(address, value), kTimeout);
}

absl::Status Sdma::Trap(uint32_t context) { return ring_.Write(sdma::EncodeTrap(context), kTimeout); }

absl::Status Sdma::SetTrapInterrupt(bool enable) {
  auto g = device_.Regs<regs::Ip::kGc>();
  g.Modify<gc::SDMA0_CNTL>([&](auto& r) { r.trap_enable(enable ? 1 : 0); });
  const bool now = g.Read<gc::SDMA0_CNTL>().trap_enable() != 0;
  BAREGPU_RETURN_IF_ERROR(g.status());
  if (now != enable) {
    return absl::InternalError(
        absl::StrFormat("SDMA0_CNTL.TRAP_ENABLE reads %d after writing %d: the GC register write was lost (is GC "
                        "powered? `baregpu regs` shows the register)",
                        now, enable));
  }
  return absl::OkStatus();
}

}  // namespace am
