#include "am/ih.h"

#include <atomic>
#include <bit>
#include <cstring>
#include <span>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "am/device.h"
#include "am/gmc.h"
#include "am/regs/gfx_srcid_constants.h"
#include "am/regs/ih_constants.h"
#include "am/regs/nbif_srcid_constants.h"
#include "am/regs/osssys.h"
#include "am/regs/sq_interrupt.h"
#include "am/regs/vmc_srcid_constants.h"
#include "base/status_macros.h"

namespace am {
namespace {

namespace osssys = regs::osssys;
namespace sq = regs::sq_interrupt;

constexpr uint32_t kMcSpaceGpuVirtual = 4;  // ih_v6_0_rb_cntl: "use_bus_addr ? 2 : 4"
constexpr uint32_t kEntryBytes = 32;
constexpr int kBaseShift = 8;

// The *_irqsrcs headers' sources, named by their constants (the prefix up to "__SRCID__" dropped).
struct SourceName {
  uint32_t id;
  const char* name;
};
#define BAREGPU_IH_SOURCE(prefix, name) \
  { regs::ih::prefix##__SRCID__##name, #name }
// include/ivsrcid/gfx/irqsrcs_gfx_11_0_0.h: the GFX and GRBM_CP clients' sources (CP, SDMA, SQ, UTCL2).
constexpr SourceName kGfxSources[] = {
    BAREGPU_IH_SOURCE(GFX_11_0_0, UTCL2_FAULT),
    BAREGPU_IH_SOURCE(GFX_11_0_0, UTCL2_DATA_POISONING),
    BAREGPU_IH_SOURCE(GFX_11_0_0, MEM_ACCES_MON),
    BAREGPU_IH_SOURCE(GFX_11_0_0, SDMA_ATOMIC_RTN_DONE),
    BAREGPU_IH_SOURCE(GFX_11_0_0, SDMA_TRAP),
    BAREGPU_IH_SOURCE(GFX_11_0_0, SDMA_SRBMWRITE),
    BAREGPU_IH_SOURCE(GFX_11_0_0, SDMA_CTXEMPTY),
    BAREGPU_IH_SOURCE(GFX_11_0_0, SDMA_PREEMPT),
    BAREGPU_IH_SOURCE(GFX_11_0_0, SDMA_IB_PREEMPT),
    BAREGPU_IH_SOURCE(GFX_11_0_0, SDMA_DOORBELL_INVALID),
    BAREGPU_IH_SOURCE(GFX_11_0_0, SDMA_QUEUE_HANG),
    BAREGPU_IH_SOURCE(GFX_11_0_0, SDMA_ATOMIC_TIMEOUT),
    BAREGPU_IH_SOURCE(GFX_11_0_0, SDMA_POLL_TIMEOUT),
    BAREGPU_IH_SOURCE(GFX_11_0_0, SDMA_PAGE_TIMEOUT),
    BAREGPU_IH_SOURCE(GFX_11_0_0, SDMA_PAGE_NULL),
    BAREGPU_IH_SOURCE(GFX_11_0_0, SDMA_PAGE_FAULT),
    BAREGPU_IH_SOURCE(GFX_11_0_0, SDMA_VM_HOLE),
    BAREGPU_IH_SOURCE(GFX_11_0_0, SDMA_ECC),
    BAREGPU_IH_SOURCE(GFX_11_0_0, SDMA_FROZEN),
    BAREGPU_IH_SOURCE(GFX_11_0_0, SDMA_SRAM_ECC),
    BAREGPU_IH_SOURCE(GFX_11_0_0, SDMA_SEM_INCOMPLETE_TIMEOUT),
    BAREGPU_IH_SOURCE(GFX_11_0_0, SDMA_SEM_WAIT_FAIL_TIMEOUT),
    BAREGPU_IH_SOURCE(GFX_11_0_0, RLC_GC_FED_INTERRUPT),
    BAREGPU_IH_SOURCE(GFX_11_0_0, CP_GENERIC_INT),
    BAREGPU_IH_SOURCE(GFX_11_0_0, CP_PM4_PKT_RSVD_BIT_ERROR),
    BAREGPU_IH_SOURCE(GFX_11_0_0, CP_EOP_INTERRUPT),
    BAREGPU_IH_SOURCE(GFX_11_0_0, CP_BAD_OPCODE_ERROR),
    BAREGPU_IH_SOURCE(GFX_11_0_0, CP_PRIV_REG_FAULT),
    BAREGPU_IH_SOURCE(GFX_11_0_0, CP_PRIV_INSTR_FAULT),
    BAREGPU_IH_SOURCE(GFX_11_0_0, CP_WAIT_MEM_SEM_FAULT),
    BAREGPU_IH_SOURCE(GFX_11_0_0, CP_CTX_EMPTY_INTERRUPT),
    BAREGPU_IH_SOURCE(GFX_11_0_0, CP_CTX_BUSY_INTERRUPT),
    BAREGPU_IH_SOURCE(GFX_11_0_0, CP_ME_WAIT_REG_MEM_POLL_TIMEOUT),
    BAREGPU_IH_SOURCE(GFX_11_0_0, CP_SIG_INCOMPLETE),
    BAREGPU_IH_SOURCE(GFX_11_0_0, CP_PREEMPT_ACK),
    BAREGPU_IH_SOURCE(GFX_11_0_0, CP_GPF),
    BAREGPU_IH_SOURCE(GFX_11_0_0, CP_GDS_ALLOC_ERROR),
    BAREGPU_IH_SOURCE(GFX_11_0_0, CP_ECC_ERROR),
    BAREGPU_IH_SOURCE(GFX_11_0_0, CP_COMPUTE_QUERY_STATUS),
    BAREGPU_IH_SOURCE(GFX_11_0_0, CP_VM_DOORBELL),
    BAREGPU_IH_SOURCE(GFX_11_0_0, CP_FUE_ERROR),
    BAREGPU_IH_SOURCE(GFX_11_0_0, RLC_STRM_PERF_MONITOR_INTERRUPT),
    BAREGPU_IH_SOURCE(GFX_11_0_0, GRBM_RD_TIMEOUT_ERROR),
    BAREGPU_IH_SOURCE(GFX_11_0_0, GRBM_REG_GUI_IDLE),
    BAREGPU_IH_SOURCE(GFX_11_0_0, SQ_INTERRUPT_ID),
};
// include/ivsrcid/vmc/irqsrcs_vmc_1_0.h: the VMC client's.
constexpr SourceName kVmcSources[] = {
    BAREGPU_IH_SOURCE(VMC_1_0, VM_FAULT),
    BAREGPU_IH_SOURCE(VMC_1_0, VM_CONTEXT0_ALL),
    BAREGPU_IH_SOURCE(VMC_1_0, VM_CONTEXT1_ALL),
};
// include/ivsrcid/nbio/irqsrcs_nbif_7_4.h: the BIF client's.
constexpr SourceName kBifSources[] = {
    BAREGPU_IH_SOURCE(NBIF_7_4, CHIP_ERR_INT_EVENT),       BAREGPU_IH_SOURCE(NBIF_7_4, DOORBELL_INTERRUPT),
    BAREGPU_IH_SOURCE(NBIF_7_4, RAS_CONTROLLER_INTERRUPT), BAREGPU_IH_SOURCE(NBIF_7_4, ERREVENT_ATHUB_INTERRUPT),
    BAREGPU_IH_SOURCE(NBIF_7_4, PF_VF_MSGBUF_VALID),       BAREGPU_IH_SOURCE(NBIF_7_4, PF_VF_MSGBUF_ACK),
    BAREGPU_IH_SOURCE(NBIF_7_4, VF_PF_MSGBUF_VALID),       BAREGPU_IH_SOURCE(NBIF_7_4, VF_PF_MSGBUF_ACK),
    BAREGPU_IH_SOURCE(NBIF_7_4, CHIP_DPA_INT_EVENT),       BAREGPU_IH_SOURCE(NBIF_7_4, CHIP_SLOT_POWER_CHG_INT_EVENT),
    BAREGPU_IH_SOURCE(NBIF_7_4, ATOMIC_UR_OPCODE),         BAREGPU_IH_SOURCE(NBIF_7_4, ATOMIC_REQESTEREN_LOW),
};
#undef BAREGPU_IH_SOURCE

std::span<const SourceName> SourcesOf(uint32_t client) {
  switch (client) {
    case regs::ih::SOC21_IH_CLIENTID_GFX:
    case regs::ih::SOC21_IH_CLIENTID_GRBM_CP:
      return kGfxSources;
    case regs::ih::SOC21_IH_CLIENTID_VMC:
      return kVmcSources;
    case regs::ih::SOC21_IH_CLIENTID_BIF:
      return kBifSources;
    default:
      return {};
  }
}

bool IsSqInterrupt(const IhEvent& e) {
  return e.client_id == regs::ih::SOC21_IH_CLIENTID_GRBM_CP &&
         e.source_id == regs::ih::GFX_11_0_0__SRCID__SQ_INTERRUPT_ID;
}

// An SQ interrupt word as kfd_int_process_v11.c prints it: its encoding, an error's type, the wave that raised it.
std::string DescribeSqWord(const IhEvent& e) {
  const uint32_t ctx0 = e.src_data[0], ctx1 = e.src_data[1];
  const uint32_t encoding = sq::Field(ctx1, sq::kEncodingMask, sq::kEncodingShift);
  const std::string wave =
      absl::StrFormat("wave %d simd %d wgp %d sh %d%s", sq::Field(ctx0, sq::kWaveIdMask, sq::kWaveIdShift),
                      sq::Field(ctx1, sq::kSimdIdMask, sq::kSimdIdShift),
                      sq::Field(ctx1, sq::kWgpIdMask, sq::kWgpIdShift), sq::Field(ctx0, sq::kShIdMask, sq::kShIdShift),
                      sq::Field(ctx0, sq::kPrivMask, sq::kPrivShift) != 0 ? " privileged" : "");
  switch (encoding) {
    case sq::kEncodingError: {
      static constexpr const char* kErrors[] = {"EDC_FUE", "ILLEGAL_INST", "MEMVIOL", "EDC_FED"};
      static_assert(std::size(kErrors) == sq::kErrorEdcFed + 1);
      const uint32_t type = sq::Field(ctx0, sq::kErrorTypeMask, sq::kErrorTypeShift);
      return absl::StrFormat("error %s in %s",
                             type < std::size(kErrors) ? kErrors[type] : absl::StrFormat("type %d", type), wave);
    }
    case sq::kEncodingInstruction:
      return absl::StrFormat("s_sendmsg from %s", wave);
    case sq::kEncodingAuto:
      return absl::StrFormat("auto word %#x", ctx0);
    default:
      return absl::StrFormat("encoding %d word %#x %#x", encoding, ctx0, ctx1);
  }
}

// Which queue a CP or SDMA entry came from, as gfx_v11_0_eop_irq and sdma_v6_0_process_trap_irq split ring_id.
constexpr uint32_t kCpRingMeMask = 0x0c, kCpRingPipeMask = 0x03, kCpRingQueueMask = 0x70;
constexpr int kCpRingMeShift = 2, kCpRingQueueShift = 4;
constexpr uint32_t kSdmaRingInstanceMask = 0xf0, kSdmaRingQueueMask = 0x0f;
constexpr int kSdmaRingInstanceShift = 4;

std::string DescribeRing(const IhEvent& e) {
  if (e.client_id == regs::ih::SOC21_IH_CLIENTID_GRBM_CP && !IsSqInterrupt(e)) {
    return absl::StrFormat(" (me %d pipe %d queue %d)", (e.ring_id & kCpRingMeMask) >> kCpRingMeShift,
                           e.ring_id & kCpRingPipeMask, (e.ring_id & kCpRingQueueMask) >> kCpRingQueueShift);
  }
  if (e.client_id == regs::ih::SOC21_IH_CLIENTID_GFX &&
      absl::StartsWith(IhSourceName(e.client_id, e.source_id), "SDMA_")) {
    return absl::StrFormat(" (sdma %d queue %d)", (e.ring_id & kSdmaRingInstanceMask) >> kSdmaRingInstanceShift,
                           e.ring_id & kSdmaRingQueueMask);
  }
  return "";
}

// The entry's fields, without its names and description (no allocation).
IhEvent DecodeIhFields(const std::array<uint32_t, 8>& dw) {
  IhEvent e;
  e.client_id = dw[0] & 0xff;
  e.source_id = (dw[0] >> 8) & 0xff;
  e.ring_id = (dw[0] >> 16) & 0xff;
  e.vmid = (dw[0] >> 24) & 0xf;
  e.vmid_from_mmhub = (dw[0] >> 31) != 0;
  e.timestamp = dw[1] | (uint64_t{dw[2] & 0xffff} << 32);
  e.pasid = dw[3] & 0xffff;
  e.src_data = {dw[4], dw[5], dw[6], dw[7]};
  return e;
}

}  // namespace

std::string IhSourceName(uint32_t client, uint32_t source) {
  for (const SourceName& s : SourcesOf(client)) {
    if (s.id == source) return s.name;
  }
  return absl::StrFormat("source 0x%02x", source);
}

std::string IhClientName(uint32_t client) {
  switch (client) {
    case regs::ih::SOC21_IH_CLIENTID_GFX:
      return "GFX";
    case regs::ih::SOC21_IH_CLIENTID_VMC:
      return "VMC";
    case regs::ih::SOC21_IH_CLIENTID_GRBM_CP:
      return "GRBM_CP";
    case regs::ih::SOC21_IH_CLIENTID_RLC:
      return "RLC";
    case regs::ih::SOC21_IH_CLIENTID_BIF:
      return "BIF";
    case regs::ih::SOC21_IH_CLIENTID_MP0:
      return "MP0";
    case regs::ih::SOC21_IH_CLIENTID_MP1:
      return "MP1";
    case regs::ih::SOC21_IH_CLIENTID_THM:
      return "THM";
    default:
      return absl::StrFormat("client %#x", client);
  }
}

absl::Status Ih::InitSw() {
  BAREGPU_ASSIGN_OR_RETURN(ring_, device_.memory().AllocBoot(kRingBytes, kRingBytes));
  BAREGPU_ASSIGN_OR_RETURN(wptr_, device_.memory().AllocBoot(4096));
  return absl::OkStatus();
}

absl::Status Ih::InitHw() {
  auto oss = device_.Regs<regs::Ip::kOsssys>();
  // Only the entries between rptr and wptr mean anything, and both start at 0: the ring's old contents stay.
  BAREGPU_ASSIGN_OR_RETURN(std::span<uint8_t> wptr, device_.memory().CpuView(wptr_, 4));
  std::memset(wptr.data(), 0, 4);
  wptr_cpu_ = reinterpret_cast<const uint32_t*>(wptr.data());
  const uint64_t ring_mc = device_.McAddress(ring_);
  const uint64_t wptr_mc = device_.McAddress(wptr_);
  oss.Write(osssys::IH_RB_CNTL{}.set_raw(0));
  oss.Write(osssys::IH_RB_BASE{}.set_raw(static_cast<uint32_t>(ring_mc >> kBaseShift)));
  oss.Write(osssys::IH_RB_BASE_HI{}.set_raw(static_cast<uint32_t>(ring_mc >> 40) & 0xff));
  oss.Write(osssys::IH_RB_WPTR_ADDR_LO{}.set_raw(static_cast<uint32_t>(wptr_mc)));
  oss.Write(osssys::IH_RB_WPTR_ADDR_HI{}.set_raw(static_cast<uint32_t>(wptr_mc >> 32) & 0xffff));
  oss.Write(osssys::IH_RB_WPTR{}.set_raw(0));
  oss.Write(osssys::IH_RB_RPTR{}.set_raw(0));
  oss.Write(osssys::IH_DOORBELL_RPTR{}.enable(0));
  oss.Write(osssys::IH_RB_CNTL{}
                .rb_enable(1)
                .rb_size(std::countr_zero(kRingBytes / 4))
                .wptr_writeback_enable(1)
                .wptr_overflow_enable(1)
                .enable_intr(1)
                .mc_snoop(1)
                .mc_space(kMcSpaceGpuVirtual));
  // ih_v6_0_irq_init: the VMC client (18, SOC21_IH_CLIENTID_VMC: MMHUB faults) is a storm client, flood control is on,
  // and MSIs of storm clients are spaced by its delay. RPTR_REARM stays 0, although baregpu's sleeping waits take the
  // MSI (am/completion_interrupts.h): amdgpu sets it with MSI enabled (ih_v6_0_enable_ring), where its handler drains
  // the ring and writes IH_RB_RPTR on every MSI, and the name says that write re-arms the interrupt; baregpu's waits
  // drain only faults, so with it set they could miss every MSI after the first. No public source says more of its
  // semantics (docs/fidelity.md).
  constexpr uint32_t kMsiStormDelay = 3;  // ih_v6_0_irq_init
  oss.Modify<osssys::IH_STORM_CLIENT_LIST_CNTL>([](auto& r) { r.client18_is_storm_client(1); });
  oss.Modify<osssys::IH_INT_FLOOD_CNTL>([](auto& r) { r.flood_cntl_enable(1); });
  oss.Modify<osssys::IH_MSI_STORM_CTRL>([&](auto& r) { r.delay(kMsiStormDelay); });
  rptr_.store(0, std::memory_order_relaxed);
  return oss.status();
}

absl::Status Ih::FiniHw() {
  auto oss = device_.Regs<regs::Ip::kOsssys>();
  oss.Modify<osssys::IH_RB_CNTL>([](auto& r) { r.rb_enable(0).enable_intr(0); });
  return oss.status();
}

bool Ih::Pending() const {
  if (wptr_cpu_ == nullptr) return false;
  // The IH writes the whole IH_RB_WPTR value back, overflow bit included (ih_v6_0_get_wptr reads it so).
  const osssys::IH_RB_WPTR wptr =
      osssys::IH_RB_WPTR::FromRaw(std::atomic_ref<const uint32_t>(*wptr_cpu_).load(std::memory_order_acquire));
  return (uint64_t{wptr.offset()} << 2) % kRingBytes != rptr_.load(std::memory_order_relaxed) ||
         wptr.rb_overflow() != 0;
}

std::vector<IhEvent> Ih::Drain() { return Drain(/*faults_only=*/false); }
std::vector<IhEvent> Ih::DrainFaults() { return Drain(/*faults_only=*/true); }

std::vector<IhEvent> Ih::Drain(bool faults_only) {
  std::vector<IhEvent> events;
  if (!Pending()) return events;
  auto ring = device_.memory().CpuView(ring_, kRingBytes);
  if (!ring.ok()) return events;
  const osssys::IH_RB_WPTR wptr =
      osssys::IH_RB_WPTR::FromRaw(std::atomic_ref<const uint32_t>(*wptr_cpu_).load(std::memory_order_acquire));
  const uint64_t end = (uint64_t{wptr.offset()} << 2) % kRingBytes;
  uint64_t rptr = rptr_.load(std::memory_order_relaxed);
  while (rptr != end) {
    std::array<uint32_t, 8> dwords;
    std::memcpy(dwords.data(), ring->data() + rptr, kEntryBytes);
    if (!faults_only || IsFault(DecodeIhFields(dwords))) events.push_back(Decode(dwords));
    rptr = (rptr + kEntryBytes) % kRingBytes;
  }
  rptr_.store(rptr, std::memory_order_relaxed);
  auto oss = device_.Regs<regs::Ip::kOsssys>();
  oss.Write(osssys::IH_RB_RPTR{}.set_raw(static_cast<uint32_t>(rptr)));
  const bool overflowed = oss.Read<osssys::IH_RB_WPTR>().rb_overflow() != 0;
  overflowed_.store(overflowed, std::memory_order_relaxed);
  if (overflowed) {  // ih_v6_0_get_wptr: clear the overflow so that the IH writes again
    oss.Modify<osssys::IH_RB_CNTL>([](auto& r) { r.wptr_overflow_clear(1); });
    oss.Modify<osssys::IH_RB_CNTL>([](auto& r) { r.wptr_overflow_clear(0); });
  }
  return events;
}

IhEvent DecodeIhEntry(const std::array<uint32_t, 8>& dw) {
  IhEvent e = DecodeIhFields(dw);
  e.source_name = IhSourceName(e.client_id, e.source_id);
  const std::string source = absl::StrCat(IhClientName(e.client_id), " ", e.source_name);
  if (IsPageFault(e)) {
    e.description = absl::StrFormat("%s: %spage fault at %#x (vmid %d, %s)", source, FaultIsRetry(e) ? "retry " : "",
                                    FaultAddress(e), e.vmid, FaultIsWrite(e) ? "write" : "read");
  } else if (IsSqInterrupt(e)) {
    e.description = absl::StrFormat("%s: %s (vmid %d)", source, DescribeSqWord(e), e.vmid);
  } else {
    e.description = absl::StrFormat("%s%s vmid %d data 0x%08x 0x%08x 0x%08x 0x%08x", source, DescribeRing(e), e.vmid,
                                    e.src_data[0], e.src_data[1], e.src_data[2], e.src_data[3]);
  }
  return e;
}

bool IsFault(const IhEvent& e) {
  if (IsPageFault(e)) return true;
  if (IsSqInterrupt(e)) {
    return sq::Field(e.src_data[1], sq::kEncodingMask, sq::kEncodingShift) == sq::kEncodingError;
  }
  if (e.client_id == regs::ih::SOC21_IH_CLIENTID_GRBM_CP) {
    switch (e.source_id) {
      case regs::ih::GFX_11_0_0__SRCID__CP_BAD_OPCODE_ERROR:
      case regs::ih::GFX_11_0_0__SRCID__CP_PRIV_REG_FAULT:
      case regs::ih::GFX_11_0_0__SRCID__CP_PRIV_INSTR_FAULT:
      case regs::ih::GFX_11_0_0__SRCID__CP_PM4_PKT_RSVD_BIT_ERROR:
      case regs::ih::GFX_11_0_0__SRCID__CP_GPF:
      case regs::ih::GFX_11_0_0__SRCID__CP_ECC_ERROR:
      case regs::ih::GFX_11_0_0__SRCID__CP_FUE_ERROR:
        return true;
      default:
        return false;
    }
  }
  return e.client_id == regs::ih::SOC21_IH_CLIENTID_GFX &&
         e.source_id == regs::ih::GFX_11_0_0__SRCID__RLC_GC_FED_INTERRUPT;
}

// gmc_v11_0_process_interrupt: address bits 43:12 in src_data[0], 47:44 in src_data[1] bits 3:0; bit 5 write,
// bit 7 a retry fault.
uint64_t FaultAddress(const IhEvent& e) {
  return (uint64_t{e.src_data[0]} << 12) | (uint64_t{e.src_data[1] & 0xf} << 44);
}
bool FaultIsWrite(const IhEvent& e) { return (e.src_data[1] & 0x20) != 0; }
bool FaultIsRetry(const IhEvent& e) { return (e.src_data[1] & 0x80) != 0; }

bool IsPageFault(const IhEvent& e) {
  return (e.client_id == regs::ih::SOC21_IH_CLIENTID_GFX && e.source_id == regs::ih::UTCL2_1_0__SRCID__FAULT) ||
         (e.client_id == regs::ih::SOC21_IH_CLIENTID_VMC && e.source_id == regs::ih::VMC_1_0__SRCID__VM_FAULT);
}

IhEvent Ih::Decode(const std::array<uint32_t, 8>& dwords) {
  IhEvent e = DecodeIhEntry(dwords);
  if (IsPageFault(e)) {
    auto fault = device_.gmc().TakeFault(e.client_id == regs::ih::SOC21_IH_CLIENTID_VMC ? Hub::kMm : Hub::kGc);
    e.description = fault.ok() ? absl::StrFormat("%s %s: page fault %s", IhClientName(e.client_id), e.source_name,
                                                 fault->description)
                               : absl::StrFormat("%s (status already cleared)", e.description);
  }
  return e;
}

}  // namespace am
