#include "am/ih.h"

#include <bit>
#include <cstring>

#include "absl/strings/str_format.h"
#include "am/device.h"
#include "am/gmc.h"
#include "am/regs/ih_constants.h"
#include "am/regs/osssys.h"
#include "am/regs/vmc_srcid_constants.h"
#include "base/status_macros.h"

namespace am {
namespace {

namespace osssys = regs::osssys;

constexpr uint32_t kMcSpaceGpuVirtual = 4;  // ih_v6_0_rb_cntl: "use_bus_addr ? 2 : 4"
constexpr uint32_t kEntryBytes = 32;
constexpr int kBaseShift = 8;

}  // namespace

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
  // and MSIs of storm clients are spaced by its delay. RPTR_REARM stays 0: amdgpu sets it only with MSI enabled
  // (ih_v6_0_enable_ring), and baregpu reads the ring instead of taking MSIs.
  constexpr uint32_t kMsiStormDelay = 3;  // ih_v6_0_irq_init
  oss.Modify<osssys::IH_STORM_CLIENT_LIST_CNTL>([](auto& r) { r.client18_is_storm_client(1); });
  oss.Modify<osssys::IH_INT_FLOOD_CNTL>([](auto& r) { r.flood_cntl_enable(1); });
  oss.Modify<osssys::IH_MSI_STORM_CTRL>([&](auto& r) { r.delay(kMsiStormDelay); });
  rptr_ = 0;
  return oss.status();
}

absl::Status Ih::FiniHw() {
  auto oss = device_.Regs<regs::Ip::kOsssys>();
  oss.Modify<osssys::IH_RB_CNTL>([](auto& r) { r.rb_enable(0).enable_intr(0); });
  return oss.status();
}

std::vector<IhEvent> Ih::Drain() {
  std::vector<IhEvent> events;
  auto ring = device_.memory().CpuView(ring_, kRingBytes);
  auto wptr_view = device_.memory().CpuView(wptr_, 4);
  if (!ring.ok() || !wptr_view.ok()) return events;
  const osssys::IH_RB_WPTR wptr = osssys::IH_RB_WPTR::FromRaw(
      std::atomic_ref<uint32_t>(*reinterpret_cast<uint32_t*>(wptr_view->data())).load(std::memory_order_acquire));
  const uint64_t end = (uint64_t{wptr.offset()} << 2) % kRingBytes;
  while (rptr_ != end) {
    std::array<uint32_t, 8> dwords;
    std::memcpy(dwords.data(), ring->data() + rptr_, kEntryBytes);
    events.push_back(Decode(dwords));
    rptr_ = (rptr_ + kEntryBytes) % kRingBytes;
  }
  auto oss = device_.Regs<regs::Ip::kOsssys>();
  oss.Write(osssys::IH_RB_RPTR{}.set_raw(static_cast<uint32_t>(rptr_)));
  overflowed_ = oss.Read<osssys::IH_RB_WPTR>().rb_overflow() != 0;
  if (overflowed_) {  // ih_v6_0_get_wptr: clear the overflow so that the IH writes again
    oss.Modify<osssys::IH_RB_CNTL>([](auto& r) { r.wptr_overflow_clear(1); });
    oss.Modify<osssys::IH_RB_CNTL>([](auto& r) { r.wptr_overflow_clear(0); });
  }
  return events;
}

IhEvent DecodeIhEntry(const std::array<uint32_t, 8>& dw) {
  IhEvent e;
  e.client_id = dw[0] & 0xff;
  e.source_id = (dw[0] >> 8) & 0xff;
  e.ring_id = (dw[0] >> 16) & 0xff;
  e.vmid = (dw[0] >> 24) & 0xf;
  e.vmid_from_mmhub = (dw[0] >> 31) != 0;
  e.timestamp = dw[1] | (uint64_t{dw[2] & 0xffff} << 32);
  e.pasid = dw[3] & 0xffff;
  e.src_data = {dw[4], dw[5], dw[6], dw[7]};
  if (IsPageFault(e)) {
    e.description =
        absl::StrFormat("%s %spage fault at %#x (vmid %d, %s)", IhClientName(e.client_id),
                        FaultIsRetry(e) ? "retry " : "", FaultAddress(e), e.vmid, FaultIsWrite(e) ? "write" : "read");
  } else {
    e.description =
        absl::StrFormat("%s source %#x ring %#x vmid %d data %#x %#x %#x %#x", IhClientName(e.client_id), e.source_id,
                        e.ring_id, e.vmid, e.src_data[0], e.src_data[1], e.src_data[2], e.src_data[3]);
  }
  return e;
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
    e.description = fault.ok() ? absl::StrFormat("%s page fault: %s", IhClientName(e.client_id), fault->description)
                               : absl::StrFormat("%s (status already cleared)", e.description);
  }
  return e;
}

}  // namespace am
