// The compute and copy rings written directly (see amd_device.h).
#include <atomic>
#include <cstring>
#include <thread>

#include "absl/strings/str_format.h"
#include "am/regs/pm4.h"
#include "am/regs/sdma_constants.h"
#include "base/status_macros.h"
#include "hcq/amd/amd_device.h"
#include "hcq/amd/packet_names.h"

namespace hcq::amd {
namespace {

// Waits, bounded, until `has_room` holds: spins first, then sleeps (a full ring means the engine is busy for a
// while, or stuck).
template <typename HasRoom>
bool WaitForRoom(HasRoom has_room, absl::Duration timeout) {
  for (int i = 0; i < 1024; ++i) {
    if (has_room()) return true;
  }
  const auto start = std::chrono::steady_clock::now();
  const auto limit = absl::ToChronoNanoseconds(timeout);
  while (!has_room()) {
    if (std::chrono::steady_clock::now() - start >= limit) return false;
    std::this_thread::sleep_for(std::chrono::microseconds(50));
  }
  return true;
}

}  // namespace

absl::Status ComputeRing::Init(am::Gfx& gfx, pci::Mmio registers, uint64_t hdp_flush_offset) {
  gfx_ = &gfx;
  BAREGPU_ASSIGN_OR_RETURN(ring_, gfx.ring_access());
  registers_ = registers;
  hdp_flush_offset_ = hdp_flush_offset;
  return absl::OkStatus();
}

uint32_t ComputeRing::rptr() const {
  return std::atomic_ref<const uint32_t>(*ring_.rptr).load(std::memory_order_acquire);
}

absl::Status ComputeRing::Write(std::span<const uint32_t> dwords, const AmdDevice& device) {
  const uint64_t size = ring_.dwords;
  uint64_t wptr = gfx_->wptr();
  // The ring is never filled completely: a full ring would read as an empty one.
  if (dwords.size() >= size) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s: %d dwords do not fit the compute ring (%d dwords); bind the queue to submit it by reference",
        device.name(), dwords.size(), size));
  }
  auto has_room = [&] { return ((wptr - rptr()) & (size - 1)) + dwords.size() < size; };
  if (!WaitForRoom(has_room, device.ring_timeout())) {
    return absl::DeadlineExceededError(absl::StrFormat("%s: no room in the compute ring for %d dwords after %s; %s",
                                                       device.name(), dwords.size(),
                                                       absl::FormatDuration(device.ring_timeout()), Describe()));
  }
  const uint64_t at = wptr & (size - 1);
  const uint64_t first = std::min<uint64_t>(dwords.size(), size - at);
  std::memcpy(ring_.ring + at, dwords.data(), first * 4);
  std::memcpy(ring_.ring, dwords.data() + first, (dwords.size() - first) * 4);
  wptr += dwords.size();
  gfx_->set_wptr(wptr);
  std::atomic_ref<uint64_t>(*ring_.wptr_poll).store(wptr, std::memory_order_release);
  registers_.Write32(hdp_flush_offset_, 0);
  ring_.doorbells.Write64(ring_.doorbell_offset, wptr);  // one 64-bit write, as Linux's WDOORBELL64 (writeq)
  return absl::OkStatus();
}

std::string ComputeRing::Describe() const {
  const uint32_t at = rptr();
  const uint64_t wptr = gfx_->wptr();
  std::string text = absl::StrFormat("compute queue (MEC1 pipe 0 queue 0): rptr %d, wptr %d (dwords, ring of %d)", at,
                                     wptr & (ring_.dwords - 1), ring_.dwords);
  if ((wptr & (ring_.dwords - 1)) == at) return text + ", idle";
  const uint32_t* packet = ring_.ring + at;
  std::string name = Pm4PacketName(packet[0]);
  if (name == "INDIRECT_BUFFER" && at + 3 < ring_.dwords) {
    name +=
        absl::StrFormat(" of %d dwords at %#x", packet[3] & 0xfffff, packet[1] | (uint64_t{packet[2] & 0xffff} << 32));
  }
  return text + absl::StrFormat(", stopped at %s (header %#010x)", name, packet[0]);
}

absl::Status CopyRing::Init(am::Sdma& sdma, pci::Mmio registers, uint64_t hdp_flush_offset) {
  sdma_ = &sdma;
  BAREGPU_ASSIGN_OR_RETURN(ring_, sdma.ring_access());
  registers_ = registers;
  hdp_flush_offset_ = hdp_flush_offset;
  return absl::OkStatus();
}

uint64_t CopyRing::rptr() const { return std::atomic_ref<const uint64_t>(*ring_.rptr).load(std::memory_order_acquire); }

absl::Status CopyRing::Write(std::span<const uint32_t> dwords, const AmdDevice& device) {
  const uint64_t bytes = dwords.size_bytes();
  uint64_t wptr = sdma_->wptr();
  if (bytes >= ring_.bytes) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s: %d bytes of SDMA packets do not fit the copy ring (%d bytes); bind the queue to submit it by reference",
        device.name(), bytes, ring_.bytes));
  }
  auto has_room = [&] { return wptr - rptr() + bytes < ring_.bytes; };
  if (!WaitForRoom(has_room, device.ring_timeout())) {
    return absl::DeadlineExceededError(absl::StrFormat("%s: no room in the copy ring for %d bytes after %s; %s",
                                                       device.name(), bytes,
                                                       absl::FormatDuration(device.ring_timeout()), Describe()));
  }
  const uint64_t at = wptr % ring_.bytes;
  const uint64_t first = std::min<uint64_t>(bytes, ring_.bytes - at);
  std::memcpy(ring_.ring + at, dwords.data(), first);
  std::memcpy(ring_.ring, reinterpret_cast<const uint8_t*>(dwords.data()) + first, bytes - first);
  wptr += bytes;
  sdma_->set_wptr(wptr);
  // The release store orders the ring's bytes before the doorbell (SDMA has no wptr poll location to carry it).
  std::atomic_ref<uint64_t>(published_wptr_).store(wptr, std::memory_order_release);
  registers_.Write32(hdp_flush_offset_, 0);
  ring_.doorbells.Write64(ring_.doorbell_offset, wptr);  // one 64-bit write, as Linux's WDOORBELL64 (writeq)
  return absl::OkStatus();
}

std::string CopyRing::Describe() const {
  const uint64_t at = rptr(), wptr = sdma_->wptr();
  std::string text =
      absl::StrFormat("copy queue (SDMA0 queue 0): rptr %d, wptr %d (bytes, ring of %d)", at, wptr, ring_.bytes);
  if (at == wptr) return text + ", idle";
  uint32_t header;
  std::memcpy(&header, ring_.ring + at % ring_.bytes, 4);
  return text + absl::StrFormat(", stopped at %s (header %#010x)", SdmaPacketName(header), header);
}

}  // namespace hcq::amd
