#include "am/gfx.h"

#include <atomic>
#include <bit>
#include <cstring>
#include <thread>

#include "absl/strings/str_format.h"
#include "am/device.h"
#include "am/regs/gc.h"
#include "am/regs/mqd.h"
#include "am/regs/pm4.h"
#include "am/soc.h"
#include "base/status_macros.h"

namespace am {
namespace {

namespace gc = regs::gc;
namespace pm4 = regs::pm4;

// gfx_v11_0_compute_mqd_init: the MQD header and the "all CUs" static thread masks.
constexpr uint32_t kMqdHeader = 0xC0310800;
constexpr uint32_t kAllCus = 0xffffffff;
// The HQD registers from CP_MQD_BASE_ADDR to CP_HQD_PQ_WPTR_HI are the MQD's dwords from cp_mqd_base_addr_lo on,
// in the same order (tinygrad's AM loads them that way).
constexpr uint32_t kHqdFirstMqdDword = offsetof(regs::V11ComputeMqd, cp_mqd_base_addr_lo) / 4;
constexpr uint32_t kHqdCount = gc::CP_HQD_PQ_WPTR_HI::kOffset - gc::CP_MQD_BASE_ADDR::kOffset + 1;
static_assert(offsetof(regs::V11ComputeMqd, cp_hqd_pq_wptr_hi) / 4 == kHqdFirstMqdDword + kHqdCount - 1);

// amdgpu_doorbell.h: AMDGPU_NAVI10_DOORBELL_KIQ and _USERQUEUE_END, the MEC's doorbell range (64-bit indexes).
constexpr uint32_t kKiqDoorbell64 = 0x000;
constexpr uint32_t kUserQueueEndDoorbell64 = 0x08A;

constexpr uint32_t Log2(uint64_t value) { return static_cast<uint32_t>(std::countr_zero(value)); }

}  // namespace

absl::Status Gfx::InitSw() {
  MemoryManager& memory = device_.memory();
  BAREGPU_ASSIGN_OR_RETURN(ring_, memory.AllocBoot(kRingBytes, kRingBytes));
  BAREGPU_ASSIGN_OR_RETURN(eop_, memory.AllocBoot(kEopBytes, 4096));
  BAREGPU_ASSIGN_OR_RETURN(mqd_, memory.AllocBoot(sizeof(regs::V11ComputeMqd), 4096));
  BAREGPU_ASSIGN_OR_RETURN(pointers_, memory.AllocBoot(4096, 4096));
  BAREGPU_ASSIGN_OR_RETURN(doorbells_, device_.pci().MapMmio(2));
  return absl::OkStatus();
}

uint64_t Gfx::ring_mc() const { return device_.McAddress(ring_); }

void Gfx::Select(uint32_t me, uint32_t pipe, uint32_t queue) {
  device_.Regs<regs::Ip::kGc>().Write(gc::GRBM_GFX_CNTL{}.meid(me).pipeid(pipe).queueid(queue));
}

absl::Status Gfx::InitHw() {
  auto g = device_.Regs<regs::Ip::kGc>();
  BAREGPU_RETURN_IF_ERROR(device_.io().WaitFor(
      *g.AddressOf<gc::RLC_RLCS_BOOTLOAD_STATUS>(), gc::RLC_RLCS_BOOTLOAD_STATUS{}.bootload_complete(1).raw(),
      gc::RLC_RLCS_BOOTLOAD_STATUS{}.bootload_complete(1).raw(), kTimeout, "the RLC autoload to complete"));
  // gfx_v11_0_cp_compute_enable: doorbells routed to the MEC, pipe 0 active, out of halt.
  g.Write(gc::CP_MEC_DOORBELL_RANGE_LOWER{}.doorbell_range_lower(kKiqDoorbell64 * 2));
  g.Write(gc::CP_MEC_DOORBELL_RANGE_UPPER{}.doorbell_range_upper(kUserQueueEndDoorbell64 * 2));
  g.Write(gc::CP_ME1_PIPE0_INT_CNTL{}.time_stamp_int_enable(1).opcode_error_int_enable(1).gpf_int_enable(1));
  g.Write(gc::CP_MEC_RS64_CNTL{}.mec_pipe0_active(1).mec_halt(0));

  BAREGPU_ASSIGN_OR_RETURN(std::span<uint8_t> ring, device_.memory().CpuView(ring_, kRingBytes));
  std::memset(ring.data(), 0, ring.size());
  wptr_ = 0;
  BAREGPU_RETURN_IF_ERROR(g.status());
  return LoadQueue();
}

absl::Status Gfx::LoadQueue() {
  auto g = device_.Regs<regs::Ip::kGc>();
  // The queue starts empty at the driver's write pointer: 0 at boot, past the lost commands after a reset.
  const uint32_t start = static_cast<uint32_t>(wptr_ % (kRingBytes / 4));
  BAREGPU_ASSIGN_OR_RETURN(std::span<uint8_t> pointers, device_.memory().CpuView(pointers_, 4096));
  std::memset(pointers.data(), 0, pointers.size());
  std::memcpy(pointers.data(), &start, sizeof(start));
  std::memcpy(pointers.data() + 8, &wptr_, sizeof(wptr_));

  regs::V11ComputeMqd mqd{};
  mqd.header = kMqdHeader;
  mqd.compute_pipelinestat_enable = 1;
  mqd.compute_static_thread_mgmt_se0 = mqd.compute_static_thread_mgmt_se1 = kAllCus;
  mqd.compute_static_thread_mgmt_se2 = mqd.compute_static_thread_mgmt_se3 = kAllCus;
  const uint64_t eop = device_.McAddress(eop_), mqd_mc = device_.McAddress(mqd_), ring_mc = device_.McAddress(ring_);
  const uint64_t rptr = device_.McAddress(pointers_), wptr = device_.McAddress(pointers_ + 8);
  mqd.cp_hqd_eop_base_addr_lo = static_cast<uint32_t>(eop >> 8);
  mqd.cp_hqd_eop_base_addr_hi = static_cast<uint32_t>(eop >> 40);
  mqd.cp_hqd_eop_control = gc::CP_HQD_EOP_CONTROL{}.eop_size(Log2(kEopBytes / 4) - 1).raw();
  mqd.cp_mqd_base_addr_lo = static_cast<uint32_t>(mqd_mc);
  mqd.cp_mqd_base_addr_hi = static_cast<uint32_t>(mqd_mc >> 32);
  mqd.cp_hqd_pq_base_lo = static_cast<uint32_t>(ring_mc >> 8);
  mqd.cp_hqd_pq_base_hi = static_cast<uint32_t>(ring_mc >> 40);
  mqd.cp_hqd_pq_control = gc::CP_HQD_PQ_CONTROL{}
                              .queue_size(Log2(kRingBytes / 4) - 1)
                              .rptr_block_size(Log2(4096 / 4) - 1)
                              .unord_dispatch(1)
                              .priv_state(1)
                              .kmd_queue(1)
                              .raw();
  mqd.cp_hqd_pq_rptr_report_addr_lo = static_cast<uint32_t>(rptr);
  mqd.cp_hqd_pq_rptr_report_addr_hi = static_cast<uint32_t>(rptr >> 32);
  mqd.cp_hqd_pq_wptr_poll_addr_lo = static_cast<uint32_t>(wptr);
  mqd.cp_hqd_pq_wptr_poll_addr_hi = static_cast<uint32_t>(wptr >> 32);
  mqd.cp_hqd_pq_doorbell_control =
      gc::CP_HQD_PQ_DOORBELL_CONTROL{}.doorbell_offset(kDoorbell64 * 2).doorbell_en(1).raw();
  mqd.cp_hqd_pq_rptr = start;
  mqd.cp_hqd_pq_wptr_lo = static_cast<uint32_t>(wptr_);
  mqd.cp_hqd_pq_wptr_hi = static_cast<uint32_t>(wptr_ >> 32);
  mqd.cp_hqd_vmid = 0;
  mqd.cp_hqd_active = 0;  // activated last, after every other register
  BAREGPU_ASSIGN_OR_RETURN(std::span<uint8_t> mqd_view, device_.memory().CpuView(mqd_, sizeof(mqd)));
  std::memcpy(mqd_view.data(), &mqd, sizeof(mqd));
  device_.soc().FlushHdp();

  const uint32_t* dwords = reinterpret_cast<const uint32_t*>(&mqd);
  const uint64_t first = *g.AddressOf<gc::CP_MQD_BASE_ADDR>();
  Select(1, 0, 0);
  for (uint32_t i = 0; i < kHqdCount; ++i) device_.io().WriteDword(first + i, dwords[kHqdFirstMqdDword + i]);
  g.Write(gc::CP_HQD_ACTIVE{}.active(1));
  Select(0, 0, 0);
  return g.status();
}

absl::Status Gfx::FiniHw() { return Dequeue(); }

absl::Status Gfx::Dequeue() {
  auto g = device_.Regs<regs::Ip::kGc>();
  Select(1, 0, 0);
  // gfx_v11_0_kiq_fini_register / tinygrad: dequeue, then wait for the HQD to go inactive.
  g.Write(gc::CP_HQD_DEQUEUE_REQUEST{}.dequeue_req(1));
  absl::Status idle = device_.io().WaitFor(*g.AddressOf<gc::CP_HQD_ACTIVE>(), gc::CP_HQD_ACTIVE{}.active(1).raw(), 0,
                                           kTimeout, "the compute queue to dequeue");
  Select(0, 0, 0);
  return idle;
}

std::vector<std::string> Gfx::PendingPackets() {
  std::vector<std::string> packets;
  auto ring = device_.memory().CpuView(ring_, kRingBytes);
  if (!ring.ok()) return packets;
  const uint32_t* words = reinterpret_cast<const uint32_t*>(ring->data());
  const uint64_t ring_dwords = kRingBytes / 4;
  uint64_t at = rptr();
  uint64_t pending = (wptr_ - at) % ring_dwords;
  while (pending > 0) {
    const uint32_t header = words[at % ring_dwords];
    if (pm4::PacketType(header) != pm4::PACKET_TYPE3) {
      packets.push_back(absl::StrFormat("a type-%d header %#010x", pm4::PacketType(header), header));
      break;  // without a type-3 length the rest cannot be delimited
    }
    const char* name = pm4::Packet3Name(pm4::Packet3Opcode(header));
    packets.push_back(name != nullptr ? name : absl::StrFormat("opcode %#x", pm4::Packet3Opcode(header)));
    const uint64_t size = std::min<uint64_t>(pm4::PacketCount(header) + 2, pending);
    at += size, pending -= size;
  }
  return packets;
}

absl::Status Gfx::WaitIdle(absl::Duration timeout) {
  const absl::Time deadline = absl::Now() + timeout;
  while (!idle()) {
    if (absl::Now() >= deadline) {
      const std::vector<std::string> pending = PendingPackets();
      return absl::DeadlineExceededError(absl::StrFormat(
          "%s: the compute queue (MEC1 pipe 0 queue 0) made no progress for %s: rptr %#x, wptr %#x, stuck at %s",
          device_.pci().name(), absl::FormatDuration(timeout), rptr(), wptr_ % (kRingBytes / 4),
          pending.empty() ? "nothing" : pending.front()));
    }
    std::this_thread::yield();
  }
  return absl::OkStatus();
}

absl::StatusOr<QueueReset> Gfx::ResetQueue() {
  QueueReset reset{.queue = "compute queue (MEC1 pipe 0 queue 0)", .method = "HQD dequeue and reload"};
  const uint64_t ring_dwords = kRingBytes / 4;
  reset.rptr = rptr();
  reset.wptr = wptr_ % ring_dwords;
  reset.lost_dwords = (wptr_ - reset.rptr) % ring_dwords;
  reset.lost_packets = PendingPackets();
  // A hung queue still answers a dequeue at its next packet boundary (the CP preempts it); one that does not
  // needs the whole chip reset, which is the caller's decision (Device::Boot with full_reset).
  if (absl::Status dequeued = Dequeue(); !dequeued.ok()) {
    return absl::InternalError(
        absl::StrFormat("%s: the compute queue cannot be reset: %s; only a full reset "
                        "(baregpu boot --reset) recovers the MEC now",
                        device_.pci().name(), dequeued.message()));
  }
  BAREGPU_RETURN_IF_ERROR(LoadQueue());
  return reset;
}

uint32_t Gfx::rptr() {
  auto view = device_.memory().CpuView(pointers_, 4);
  return view.ok() ? std::atomic_ref<uint32_t>(*reinterpret_cast<uint32_t*>(view->data())).load() : 0;
}

bool Gfx::idle() { return rptr() == wptr_ % (kRingBytes / 4); }

absl::Status Gfx::Submit(std::span<const uint32_t> packets) {
  const uint64_t ring_dwords = kRingBytes / 4;
  const uint64_t used = (wptr_ - rptr() + ring_dwords) % ring_dwords;
  if (used + packets.size() >= ring_dwords) {
    return absl::ResourceExhaustedError(absl::StrFormat(
        "compute ring full: %d dwords queued, %d more asked, ring holds %d", used, packets.size(), ring_dwords - 1));
  }
  BAREGPU_ASSIGN_OR_RETURN(std::span<uint8_t> ring, device_.memory().CpuView(ring_, kRingBytes));
  BAREGPU_ASSIGN_OR_RETURN(std::span<uint8_t> pointers, device_.memory().CpuView(pointers_, 16));
  uint32_t* words = reinterpret_cast<uint32_t*>(ring.data());
  for (uint32_t dword : packets) words[wptr_++ % ring_dwords] = dword;
  std::atomic_ref<uint64_t>(*reinterpret_cast<uint64_t*>(pointers.data() + 8)).store(wptr_, std::memory_order_release);
  device_.soc().FlushHdp();
  doorbells_.Write64(kDoorbell64 * 8, wptr_);  // one 64-bit write, as Linux's WDOORBELL64 (writeq)
  return absl::OkStatus();
}

absl::StatusOr<Gfx::RingAccess> Gfx::ring_access() {
  BAREGPU_ASSIGN_OR_RETURN(std::span<uint8_t> ring, device_.memory().CpuView(ring_, kRingBytes));
  BAREGPU_ASSIGN_OR_RETURN(std::span<uint8_t> pointers, device_.memory().CpuView(pointers_, 16));
  return RingAccess{.ring = reinterpret_cast<uint32_t*>(ring.data()),
                    .dwords = kRingBytes / 4,
                    .rptr = reinterpret_cast<const uint32_t*>(pointers.data()),
                    .wptr_poll = reinterpret_cast<uint64_t*>(pointers.data() + 8),
                    .doorbells = doorbells_,
                    .doorbell_offset = kDoorbell64 * 8};
}

}  // namespace am
