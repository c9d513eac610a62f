#include "am/sdma.h"

#include <atomic>
#include <bit>
#include <cstring>
#include <thread>

#include "absl/strings/str_format.h"
#include "am/device.h"
#include "am/regs/gc.h"
#include "am/regs/sdma_constants.h"
#include "am/regs/sdma_packets.h"
#include "am/soc.h"
#include "base/status_macros.h"

namespace am {
namespace {

namespace gc = regs::gc;
namespace sdma = regs::sdma;

// sdma_v6_0_soft_reset waits 100 us around each GRBM_SOFT_RESET edge for the engine to settle.
constexpr absl::Duration kSoftResetSettle = absl::Microseconds(100);

// The fixed-size packets baregpu sends, for naming the unfinished ones after a reset. Sizes are the packet
// structures' (sdma_v6_0_0_pkt_open.h, am/regs/sdma_packets.h).
struct KnownPacket {
  uint32_t op;
  const char* name;
  uint32_t dwords;
};
constexpr KnownPacket kKnownPackets[] = {
    {sdma::SDMA_OP_COPY, "COPY_LINEAR", sizeof(sdma::CopyLinear) / 4},
    {sdma::SDMA_OP_FENCE, "FENCE", sizeof(sdma::Fence) / 4},
    {sdma::SDMA_OP_TRAP, "TRAP", sizeof(sdma::Trap) / 4},
    {sdma::SDMA_OP_POLL_REGMEM, "POLL_REGMEM", sizeof(sdma::PollRegmem) / 4},
    {sdma::SDMA_OP_TIMESTAMP, "TIMESTAMP", sizeof(sdma::TimestampGet) / 4},
    {sdma::SDMA_OP_INDIRECT, "INDIRECT", sizeof(sdma::Indirect) / 4},
    {sdma::SDMA_OP_ATOMIC, "ATOMIC", sizeof(sdma::Atomic) / 4},
    {sdma::SDMA_OP_CONST_FILL, "CONST_FILL", sizeof(sdma::ConstantFill) / 4},
};

}  // namespace

absl::Status Sdma::InitSw() {
  BAREGPU_ASSIGN_OR_RETURN(ring_, device_.memory().AllocBoot(kRingBytes, kRingBytes));
  BAREGPU_ASSIGN_OR_RETURN(rptr_, device_.memory().AllocBoot(4096, 4096));
  BAREGPU_ASSIGN_OR_RETURN(doorbells_, device_.pci().MapMmio(2));
  return absl::OkStatus();
}

absl::Status Sdma::InitHw() {
  BAREGPU_ASSIGN_OR_RETURN(std::span<uint8_t> ring, device_.memory().CpuView(ring_, kRingBytes));
  std::memset(ring.data(), 0, ring.size());
  wptr_ = 0;
  return LoadRing();
}

absl::Status Sdma::LoadRing() {
  auto g = device_.Regs<regs::Ip::kGc>();
  // The ring starts empty at the driver's write pointer: 0 at boot, past the lost commands after a reset.
  BAREGPU_ASSIGN_OR_RETURN(std::span<uint8_t> rptr, device_.memory().CpuView(rptr_, 4096));
  std::memset(rptr.data(), 0, rptr.size());
  std::memcpy(rptr.data(), &wptr_, sizeof(wptr_));
  const uint64_t ring_mc = device_.McAddress(ring_), rptr_mc = device_.McAddress(rptr_);
  g.Write(gc::SDMA0_QUEUE0_RB_CNTL{}.set_raw(0));  // disabled while programming
  g.Write(gc::SDMA0_F32_CNTL{}.halt(0).th1_reset(0));
  g.Write(gc::SDMA0_CNTL::FromRaw(g.Read<gc::SDMA0_CNTL>().raw()).trap_enable(1));
  g.Write(gc::SDMA0_QUEUE0_RB_BASE{}.set_raw(static_cast<uint32_t>(ring_mc >> 8)));
  g.Write(gc::SDMA0_QUEUE0_RB_BASE_HI{}.set_raw(static_cast<uint32_t>(ring_mc >> 40)));
  g.Write(gc::SDMA0_QUEUE0_RB_RPTR{}.set_raw(static_cast<uint32_t>(wptr_)));
  g.Write(gc::SDMA0_QUEUE0_RB_RPTR_HI{}.set_raw(static_cast<uint32_t>(wptr_ >> 32)));
  g.Write(gc::SDMA0_QUEUE0_RB_WPTR{}.set_raw(static_cast<uint32_t>(wptr_)));
  g.Write(gc::SDMA0_QUEUE0_RB_WPTR_HI{}.set_raw(static_cast<uint32_t>(wptr_ >> 32)));
  g.Write(gc::SDMA0_QUEUE0_RB_RPTR_ADDR_LO{}.set_raw(static_cast<uint32_t>(rptr_mc)));
  g.Write(gc::SDMA0_QUEUE0_RB_RPTR_ADDR_HI{}.set_raw(static_cast<uint32_t>(rptr_mc >> 32)));
  g.Write(gc::SDMA0_QUEUE0_DOORBELL_OFFSET{}.offset(kDoorbell64 * 2));
  g.Write(gc::SDMA0_QUEUE0_DOORBELL{}.enable(1));
  g.Write(gc::SDMA0_QUEUE0_IB_CNTL{}.ib_enable(1));
  g.Write(gc::SDMA0_QUEUE0_RB_CNTL{}
              .rb_size(static_cast<uint32_t>(std::countr_zero(kRingBytes / 4)))
              .rptr_writeback_enable(1)
              .rb_enable(1));
  return g.status();
}

absl::Status Sdma::FiniHw() {
  auto g = device_.Regs<regs::Ip::kGc>();
  g.Modify<gc::SDMA0_QUEUE0_RB_CNTL>([](auto& r) { r.rb_enable(0); });
  g.Modify<gc::SDMA0_QUEUE0_IB_CNTL>([](auto& r) { r.ib_enable(0); });
  return g.status();
}

std::vector<std::string> Sdma::PendingPackets() {
  std::vector<std::string> packets;
  auto ring = device_.memory().CpuView(ring_, kRingBytes);
  if (!ring.ok()) return packets;
  const uint32_t* words = reinterpret_cast<const uint32_t*>(ring->data());
  uint64_t at = rptr();
  while (at < wptr_) {
    const uint32_t header = words[(at % kRingBytes) / 4];
    const uint32_t op = header & sdma::SDMA_PKT_COPY_LINEAR_HEADER_op_mask;
    const KnownPacket* known = nullptr;
    for (const KnownPacket& p : kKnownPackets) {
      if (p.op == op) known = &p;
    }
    if (known == nullptr) {
      packets.push_back(absl::StrFormat("op %#x", op));
      break;  // its length is not known here: the rest cannot be delimited
    }
    packets.push_back(known->name);
    at += known->dwords * 4;
  }
  return packets;
}

absl::Status Sdma::WaitIdle(absl::Duration timeout) {
  const absl::Time deadline = absl::Now() + timeout;
  while (!idle()) {
    if (absl::Now() >= deadline) {
      const std::vector<std::string> pending = PendingPackets();
      return absl::DeadlineExceededError(absl::StrFormat(
          "%s: SDMA0 queue 0 made no progress for %s: rptr %#x, wptr %#x (bytes), stuck at %s", device_.pci().name(),
          absl::FormatDuration(timeout), rptr(), wptr_, pending.empty() ? "nothing" : pending.front()));
    }
    std::this_thread::yield();
  }
  return absl::OkStatus();
}

absl::StatusOr<QueueReset> Sdma::ResetQueue() {
  QueueReset reset{.queue = "SDMA0 queue 0", .method = "SDMA0 soft reset and ring reload"};
  reset.rptr = rptr();
  reset.wptr = wptr_;
  reset.lost_dwords = (wptr_ - reset.rptr) / 4;
  reset.lost_packets = PendingPackets();
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

uint64_t Sdma::rptr() {
  auto view = device_.memory().CpuView(rptr_, 8);
  return view.ok() ? std::atomic_ref<uint64_t>(*reinterpret_cast<uint64_t*>(view->data())).load() : 0;
}

absl::Status Sdma::Submit(std::span<const uint32_t> dwords) {
  const uint64_t bytes = dwords.size_bytes();
  if (wptr_ - rptr() + bytes >= kRingBytes) {
    return absl::ResourceExhaustedError(absl::StrFormat("SDMA ring full: %d bytes queued, %d more asked, ring holds %d",
                                                        wptr_ - rptr(), bytes, kRingBytes - 4));
  }
  BAREGPU_ASSIGN_OR_RETURN(std::span<uint8_t> ring, device_.memory().CpuView(ring_, kRingBytes));
  uint32_t* words = reinterpret_cast<uint32_t*>(ring.data());
  for (uint32_t dword : dwords) {
    words[(wptr_ % kRingBytes) / 4] = dword;
    wptr_ += 4;
  }
  device_.soc().FlushHdp();
  doorbells_.Write64(kDoorbell64 * 8, wptr_);  // one 64-bit write, as Linux's WDOORBELL64 (writeq)
  return absl::OkStatus();
}

absl::Status Sdma::Copy(uint64_t destination, uint64_t source, uint64_t bytes) {
  while (bytes > 0) {
    const uint64_t piece = std::min(bytes, kMaxCopyBytes);
    const sdma::CopyLinear packet{sdma::Header(sdma::SDMA_OP_COPY, sdma::SDMA_SUBOP_COPY_LINEAR),
                                  static_cast<uint32_t>(piece - 1),
                                  0,
                                  static_cast<uint32_t>(source),
                                  static_cast<uint32_t>(source >> 32),
                                  static_cast<uint32_t>(destination),
                                  static_cast<uint32_t>(destination >> 32)};
    BAREGPU_RETURN_IF_ERROR(Submit(std::span(reinterpret_cast<const uint32_t*>(&packet), sizeof(packet) / 4)));
    destination += piece, source += piece, bytes -= piece;
  }
  return absl::OkStatus();
}

absl::Status Sdma::Fence(uint64_t address, uint32_t value) {
  const sdma::Fence packet{sdma::Header(sdma::SDMA_OP_FENCE), static_cast<uint32_t>(address),
                           static_cast<uint32_t>(address >> 32), value};
  return Submit(std::span(reinterpret_cast<const uint32_t*>(&packet), sizeof(packet) / 4));
}

absl::Status Sdma::Trap(uint32_t context) {
  const sdma::Trap packet{sdma::Header(sdma::SDMA_OP_TRAP), context};
  return Submit(std::span(reinterpret_cast<const uint32_t*>(&packet), sizeof(packet) / 4));
}

absl::StatusOr<Sdma::RingAccess> Sdma::ring_access() {
  BAREGPU_ASSIGN_OR_RETURN(std::span<uint8_t> ring, device_.memory().CpuView(ring_, kRingBytes));
  BAREGPU_ASSIGN_OR_RETURN(std::span<uint8_t> rptr, device_.memory().CpuView(rptr_, 8));
  return RingAccess{.ring = ring.data(),
                    .bytes = kRingBytes,
                    .rptr = reinterpret_cast<const uint64_t*>(rptr.data()),
                    .doorbells = doorbells_,
                    .doorbell_offset = kDoorbell64 * 8};
}

}  // namespace am
