#include "am/sdma.h"

#include <atomic>
#include <bit>
#include <cstring>

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

}  // namespace

absl::Status Sdma::InitSw() {
  ASSIGN_OR_RETURN(ring_, device_.memory().AllocBoot(kRingBytes, kRingBytes));
  ASSIGN_OR_RETURN(rptr_, device_.memory().AllocBoot(4096, 4096));
  ASSIGN_OR_RETURN(doorbells_, device_.pci().MapMmio(2));
  return absl::OkStatus();
}

absl::Status Sdma::InitHw() {
  auto g = device_.Regs<regs::Ip::kGc>();
  ASSIGN_OR_RETURN(std::span<uint8_t> ring, device_.memory().CpuView(ring_, kRingBytes));
  ASSIGN_OR_RETURN(std::span<uint8_t> rptr, device_.memory().CpuView(rptr_, 4096));
  std::memset(ring.data(), 0, ring.size());
  std::memset(rptr.data(), 0, rptr.size());
  wptr_ = 0;
  const uint64_t ring_mc = device_.McAddress(ring_), rptr_mc = device_.McAddress(rptr_);
  g.Write(gc::SDMA0_QUEUE0_RB_CNTL{}.set_raw(0));  // disabled while programming
  g.Write(gc::SDMA0_F32_CNTL{}.halt(0).th1_reset(0));
  g.Write(gc::SDMA0_CNTL::FromRaw(g.Read<gc::SDMA0_CNTL>().raw()).trap_enable(1));
  g.Write(gc::SDMA0_QUEUE0_RB_BASE{}.set_raw(static_cast<uint32_t>(ring_mc >> 8)));
  g.Write(gc::SDMA0_QUEUE0_RB_BASE_HI{}.set_raw(static_cast<uint32_t>(ring_mc >> 40)));
  g.Write(gc::SDMA0_QUEUE0_RB_RPTR{}.set_raw(0));
  g.Write(gc::SDMA0_QUEUE0_RB_RPTR_HI{}.set_raw(0));
  g.Write(gc::SDMA0_QUEUE0_RB_WPTR{}.set_raw(0));
  g.Write(gc::SDMA0_QUEUE0_RB_WPTR_HI{}.set_raw(0));
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
  ASSIGN_OR_RETURN(std::span<uint8_t> ring, device_.memory().CpuView(ring_, kRingBytes));
  uint32_t* words = reinterpret_cast<uint32_t*>(ring.data());
  for (uint32_t dword : dwords) {
    words[(wptr_ % kRingBytes) / 4] = dword;
    wptr_ += 4;
  }
  device_.soc().FlushHdp();
  doorbells_.Write32(kDoorbell64 * 8, static_cast<uint32_t>(wptr_));
  doorbells_.Write32(kDoorbell64 * 8 + 4, static_cast<uint32_t>(wptr_ >> 32));
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
    RETURN_IF_ERROR(Submit(std::span(reinterpret_cast<const uint32_t*>(&packet), sizeof(packet) / 4)));
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
  ASSIGN_OR_RETURN(std::span<uint8_t> ring, device_.memory().CpuView(ring_, kRingBytes));
  ASSIGN_OR_RETURN(std::span<uint8_t> rptr, device_.memory().CpuView(rptr_, 8));
  return RingAccess{.ring = ring.data(),
                    .bytes = kRingBytes,
                    .rptr = reinterpret_cast<const uint64_t*>(rptr.data()),
                    .doorbells = doorbells_,
                    .doorbell_offset = kDoorbell64 * 8};
}

}  // namespace am
