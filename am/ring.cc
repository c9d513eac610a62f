#include "am/ring.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <thread>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include "absl/strings/str_format.h"
#include "am/regs/pm4_packets.h"
#include "am/regs/sdma_packets.h"

namespace am {
namespace {

namespace pm4 = regs::pm4;
namespace sdma = regs::sdma;

void StoreFence() {
#if defined(__x86_64__)
  _mm_sfence();
#else
  std::atomic_thread_fence(std::memory_order_seq_cst);
#endif
}

// The most dwords of a packet a description looks at (an INDIRECT_BUFFER's address and size).
constexpr uint32_t kDescribedDwords = 8;
// A full ring means the engine is busy for a while, or stuck: spin this often, then sleep between checks.
constexpr int kRoomSpins = 1024;
constexpr auto kRoomSleep = std::chrono::microseconds(50);

std::string DescribePm4(std::span<const uint32_t> packet) {
  const uint32_t header = packet[0];
  if (pm4::PacketType(header) != pm4::PACKET_TYPE3) return absl::StrFormat("a type-%d packet", pm4::PacketType(header));
  const uint32_t opcode = pm4::Packet3Opcode(header);
  const char* name = pm4::Packet3Name(opcode);
  if (name == nullptr) return absl::StrFormat("opcode %#x", opcode);
  if (opcode == pm4::PACKET3_INDIRECT_BUFFER && packet.size() >= pm4::IndirectBuffer::kDwords) {
    const auto ib = packet.first<pm4::IndirectBuffer::kDwords>();
    return absl::StrFormat("%s of %d dwords at %#x", name, pm4::IndirectBuffer::Size(ib),
                           pm4::IndirectBuffer::Address(ib));
  }
  return name;
}

uint32_t Pm4Length(std::span<const uint32_t> packet) {
  // Without a type-3 header's count the rest of the ring cannot be delimited.
  if (pm4::PacketType(packet[0]) != pm4::PACKET_TYPE3) return 0;
  return pm4::PacketCount(packet[0]) + 2;
}

std::string DescribeSdma(std::span<const uint32_t> packet) {
  const char* name = sdma::PacketName(packet[0]);
  if (name == nullptr) return absl::StrFormat("op %#x", packet[0] & sdma::SDMA_PKT_COPY_LINEAR_HEADER_op_mask);
  return name;
}

uint32_t SdmaLength(std::span<const uint32_t> packet) { return sdma::PacketDwords(packet[0]); }

}  // namespace

const RingFormat kPm4RingFormat = {.queue = "compute queue (MEC1 pipe 0 queue 0)",
                                   .pointer_unit = 4,
                                   .rptr_wraps = true,
                                   .unit_name = "dwords",
                                   .describe = DescribePm4,
                                   .length = Pm4Length};
const RingFormat kSdmaRingFormat = {.queue = "copy queue (SDMA0 queue 0)",
                                    .pointer_unit = 1,
                                    .rptr_wraps = false,
                                    .unit_name = "bytes",
                                    .describe = DescribeSdma,
                                    .length = SdmaLength};

void Ring::Attach(const Layout& layout, uint64_t wptr) {
  base::SpinLockHolder lock(&mu_);
  layout_ = layout;
  wptr_.store(wptr, std::memory_order_release);
  rptr_seen_.reset();
}

void Ring::Clear() {
  base::SpinLockHolder lock(&mu_);
  std::memset(layout_.ring.data(), 0, layout_.ring.size());
  wptr_.store(0, std::memory_order_release);
  rptr_seen_.reset();
}

uint64_t Ring::rptr() const {
  if (layout_.rptr == nullptr) return 0;
  if (format_.rptr_wraps) {
    return std::atomic_ref<const uint32_t>(*static_cast<const uint32_t*>(layout_.rptr)).load(std::memory_order_acquire);
  }
  return std::atomic_ref<const uint64_t>(*static_cast<const uint64_t*>(layout_.rptr)).load(std::memory_order_acquire);
}

uint64_t Ring::pending() const { return PendingSince(rptr()); }

uint64_t Ring::PendingSince(uint64_t rptr) const {
  const uint64_t wptr = this->wptr();
  if (format_.rptr_wraps) return (wptr - rptr) & (size_units() - 1);
  return wptr - rptr;
}

void Ring::CopyIn(uint64_t at, const void* data, uint64_t bytes) {
  at &= layout_.ring.size() - 1;
  const uint64_t first = std::min<uint64_t>(bytes, layout_.ring.size() - at);
  std::memcpy(layout_.ring.data() + at, data, first);
  std::memcpy(layout_.ring.data(), static_cast<const uint8_t*>(data) + first, bytes - first);
}

absl::Status Ring::Write(std::span<const uint32_t> dwords, absl::Duration timeout, uint32_t end_alignment,
                         uint32_t pad) {
  absl::StatusOr<uint64_t> at = Append(dwords, timeout, end_alignment, pad);
  if (!at.ok()) return at.status();
  // Outside the lock: a tracer formats (and may read the memory an indirect buffer points at) while others write.
  if (tracer_) tracer_(*this, dwords, *at);
  return absl::OkStatus();
}

absl::StatusOr<uint64_t> Ring::Append(std::span<const uint32_t> dwords, absl::Duration timeout, uint32_t end_alignment,
                                      uint32_t pad) {
  base::SpinLockHolder lock(&mu_);
  if (!attached()) return absl::FailedPreconditionError(absl::StrFormat("%s: not set up (boot first)", format_.queue));
  uint64_t pads = 0;
  if (end_alignment != 0) {
    const uint64_t end = wptr_.load(std::memory_order_relaxed) * format_.pointer_unit / 4 + dwords.size();
    pads = (end_alignment - end % end_alignment) % end_alignment;
  }
  const uint64_t bytes = dwords.size_bytes() + pads * 4;
  const uint64_t units = bytes / format_.pointer_unit;
  if (bytes >= layout_.ring.size()) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s: %d bytes of packets do not fit the ring (%d bytes); submit them by reference (an indirect buffer: bind "
        "the queue)",
        format_.queue, bytes, layout_.ring.size()));
  }
  auto has_room = [&] {
    if (rptr_seen_.has_value() && PendingSince(*rptr_seen_) + units < size_units()) return true;
    rptr_seen_ = rptr();
    return PendingSince(*rptr_seen_) + units < size_units();
  };
  bool room = false;
  for (int i = 0; i < kRoomSpins && !(room = has_room()); ++i) {
  }
  if (!room) {
    const auto start = std::chrono::steady_clock::now();
    const auto limit = absl::ToChronoNanoseconds(timeout);
    while (!(room = has_room()) && std::chrono::steady_clock::now() - start < limit) {
      std::this_thread::sleep_for(kRoomSleep);
    }
  }
  if (!room) {
    return absl::DeadlineExceededError(absl::StrFormat("%s: no room for %d more %s after %s; %s", format_.queue, units,
                                                       format_.unit_name, absl::FormatDuration(timeout), Describe()));
  }
  uint64_t wptr = wptr_.load(std::memory_order_relaxed);
  uint64_t at = wptr * format_.pointer_unit;
  for (uint64_t i = 0; i < pads; ++i, at += 4) CopyIn(at, &pad, 4);
  const uint64_t packets_at = at / format_.pointer_unit;
  CopyIn(at, dwords.data(), dwords.size_bytes());
  wptr += units;
  wptr_.store(wptr, std::memory_order_release);
  if (layout_.wptr_poll != nullptr)
    std::atomic_ref<uint64_t>(*layout_.wptr_poll).store(wptr, std::memory_order_release);
  // The ring's bytes and the poll value reach memory before the HDP flush and the doorbell, as amdgpu_ring_commit's
  // mb(): on x86 stores are ordered among themselves except write-combined ones (a BAR mapped WC), which SFENCE
  // orders; elsewhere a full fence.
  StoreFence();
  layout_.registers.Write32(layout_.hdp_flush_offset, 0);
  layout_.doorbells.Write64(layout_.doorbell_offset, wptr);
  return packets_at;
}

uint32_t Ring::DwordAt(uint64_t byte_offset) const {
  uint32_t dword;
  std::memcpy(&dword, layout_.ring.data() + (byte_offset & (layout_.ring.size() - 1)), sizeof(dword));
  return dword;
}

std::vector<uint32_t> Ring::PacketAt(uint64_t unit, uint64_t available_units) const {
  const uint64_t available = std::min<uint64_t>(available_units * format_.pointer_unit / 4, kDescribedDwords);
  std::vector<uint32_t> packet(std::max<uint64_t>(available, 1));
  for (uint64_t i = 0; i < packet.size(); ++i) packet[i] = DwordAt(unit * format_.pointer_unit + i * 4);
  return packet;
}

std::vector<std::string> Ring::PendingPackets() const {
  std::vector<std::string> packets;
  if (!attached()) return packets;
  uint64_t remaining = pending();
  uint64_t at = wptr() - remaining;
  while (remaining > 0) {
    const std::vector<uint32_t> packet = PacketAt(at, remaining);
    packets.push_back(format_.describe(packet));
    const uint64_t units = uint64_t{format_.length(packet)} * 4 / format_.pointer_unit;
    if (units == 0) break;  // the rest cannot be delimited
    at += std::min(units, remaining);
    remaining -= std::min(units, remaining);
  }
  return packets;
}

std::string Ring::Describe() const {
  if (!attached()) return absl::StrFormat("%s: not set up", format_.queue);
  const uint64_t wptr = this->wptr(), remaining = pending();
  const uint64_t shown_wptr = format_.rptr_wraps ? wptr & (size_units() - 1) : wptr;
  std::string text = absl::StrFormat("%s: rptr %d, wptr %d (%s, ring of %d)", format_.queue, rptr(), shown_wptr,
                                     format_.unit_name, size_units());
  if (remaining == 0) return text + ", idle";
  const std::vector<uint32_t> packet = PacketAt(wptr - remaining, remaining);
  return text + absl::StrFormat(", stopped at %s (header %#010x)", format_.describe(packet), packet[0]);
}

}  // namespace am
