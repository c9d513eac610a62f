// baregpu ih DEVICE: drains the device's interrupt ring 0 (entries between the IH's read and write pointers) and
// decodes each entry. The ring is found from the IH's own registers; the read pointer moves past what was shown.
#include <array>
#include <cstring>
#include <ostream>

#include "absl/strings/str_format.h"
#include "am/discovery.h"
#include "am/gmc.h"
#include "am/ih.h"
#include "am/register_io.h"
#include "am/regs/ih_constants.h"
#include "am/regs/mmhub.h"
#include "am/regs/osssys.h"
#include "am/regs/register_space.h"
#include "base/status_macros.h"
#include "tools/cli/command.h"
#include "tools/cli/device_access.h"
#include "tools/cli/json.h"

namespace cli {
namespace {

namespace osssys = am::regs::osssys;

constexpr uint32_t kMcSpaceGpuVirtual = 4;  // ih_v6_0_rb_cntl: the ring is at a GPU (MC) address
constexpr uint32_t kEntryBytes = 32;

absl::Status RunIh(Invocation& inv) {
  if (inv.positional().size() != 1) return inv.UsageError("usage: baregpu ih DEVICE [--json]");
  BAREGPU_ASSIGN_OR_RETURN(std::unique_ptr<pci::Device> device, OpenForInspection(inv, inv.positional()[0]));
  // Attached, the ring and the fault latches are the holder's to drain: only look (its read pointer stays).
  const bool peek = AttachedHolder(*device).has_value();
  BAREGPU_ASSIGN_OR_RETURN(am::DeviceDiscovery found, am::ReadDiscovery(*device));
  const am::regs::IpBases bases = found.discovery.Bases();
  BAREGPU_ASSIGN_OR_RETURN(pci::Mmio bar5, device->MapMmio(5));
  am::RegisterIo io(bar5, bases);
  BAREGPU_ASSIGN_OR_RETURN(std::span<uint8_t> vram, device->MapMemory(0));
  BAREGPU_ASSIGN_OR_RETURN(auto oss, (am::regs::IpRegisters<am::regs::Ip::kOsssys, am::RegisterIo>::Create(io, bases)));
  BAREGPU_ASSIGN_OR_RETURN(auto mmhub,
                           (am::regs::IpRegisters<am::regs::Ip::kMmhub, am::RegisterIo>::Create(io, bases)));
  BAREGPU_ASSIGN_OR_RETURN(const am::FaultLatch gc_latch, am::ResolveFaultLatch(bases, am::Hub::kGc));
  BAREGPU_ASSIGN_OR_RETURN(const am::FaultLatch mm_latch, am::ResolveFaultLatch(bases, am::Hub::kMm));
  // A page fault's details are in its hub's fault latch, taken (and cleared) as the driver takes it.
  auto hub_status = [&](const am::IhEvent& e) -> std::string {
    if (peek) return "";
    const bool mm = e.client_id == am::regs::ih::SOC21_IH_CLIENTID_VMC;
    absl::StatusOr<am::VmFault> fault = am::TakeFault(io, mm ? mm_latch : gc_latch, mm ? am::Hub::kMm : am::Hub::kGc);
    return fault.ok() ? fault->description : "";
  };

  const osssys::IH_RB_CNTL cntl = oss.Read<osssys::IH_RB_CNTL>();
  if (!cntl.rb_enable()) return absl::FailedPreconditionError("IH ring 0 is not enabled (boot the device first)");
  if (cntl.mc_space() != kMcSpaceGpuVirtual) {
    return absl::UnimplementedError(
        "IH ring 0 is at a bus address (IH_RB_CNTL.MC_SPACE != 4); only rings in VRAM "
        "can be read here");
  }
  const uint64_t size = uint64_t{4} << cntl.rb_size();
  const uint64_t mc =
      ((uint64_t{oss.Read<osssys::IH_RB_BASE_HI>().raw() & 0xff} << 32) | oss.Read<osssys::IH_RB_BASE>().raw()) << 8;
  const uint64_t fb_start = uint64_t{mmhub.Read<am::regs::mmhub::MMMC_VM_FB_LOCATION_BASE>().fb_base()} << 24;
  const uint64_t offset = mc - fb_start;
  if (mc < fb_start || offset + size > vram.size()) {
    return absl::OutOfRangeError(absl::StrFormat("IH ring at MC %#x is not in the VRAM BAR0 shows", mc));
  }
  const osssys::IH_RB_WPTR wptr = oss.Read<osssys::IH_RB_WPTR>();
  const uint64_t end = (uint64_t{wptr.offset()} << 2) % size;
  uint64_t rptr = oss.Read<osssys::IH_RB_RPTR>().raw() % size;
  Json events = Json::array();
  int count = 0;
  for (; rptr != end; rptr = (rptr + kEntryBytes) % size, ++count) {
    std::array<uint32_t, 8> dwords;
    std::memcpy(dwords.data(), vram.data() + offset + rptr, kEntryBytes);
    am::IhEvent e = am::DecodeIhEntry(dwords);
    std::string status;
    if (am::IsPageFault(e)) {
      status = hub_status(e);
      if (!status.empty()) e.description += "; " + status;
    }
    if (inv.json()) {
      events.push_back({{"client", am::IhClientName(e.client_id)},
                        {"source_id", e.source_id},
                        {"source", e.source_name},
                        {"is_fault", am::IsFault(e)},
                        {"ring_id", e.ring_id},
                        {"vmid", e.vmid},
                        {"timestamp", e.timestamp},
                        {"description", e.description}});
      if (am::IsPageFault(e)) {
        events.back()["fault"] = {{"address", am::FaultAddress(e)},
                                  {"write", am::FaultIsWrite(e)},
                                  {"retry", am::FaultIsRetry(e)},
                                  {"status", status}};
      }
    } else {
      inv.out() << absl::StrFormat("%12d  %s\n", e.timestamp, e.description);
    }
  }
  BAREGPU_RETURN_IF_ERROR(TakeAccessError(*device));
  if (!peek) oss.Write(osssys::IH_RB_RPTR{}.set_raw(static_cast<uint32_t>(rptr)));
  if (inv.json()) {
    PrintJson(
        inv.out(),
        Json{{"device", device->name()}, {"overflow", wptr.rb_overflow() != 0}, {"peek", peek}, {"events", events}});
  } else {
    inv.out() << absl::StrFormat(
        "%d entries%s%s\n", count, wptr.rb_overflow() ? " (the ring overflowed: entries lost)" : "",
        peek ? " (peeked: the holder's read pointer and fault latches are left as they are)" : "");
  }
  return absl::OkStatus();
}

BAREGPU_REGISTER_COMMAND(kIhRegistered, Command{"ih",
                                                "drain and decode a device's interrupt ring",
                                                "baregpu ih DEVICE [--json]",
                                                "Reads the entries between IH ring 0's read and write pointers, "
                                                "prints each (timestamp in 100 MHz ticks, client, source, ring, "
                                                "vmid, data; page faults with their address and their hub's decoded "
                                                "L2_PROTECTION_FAULT_STATUS, which it clears) and moves the read "
                                                "pointer past them. A device another process holds is read through "
                                                "its debug endpoint and only peeked at: its read pointer and fault "
                                                "latches stay as they are.",
                                                {{"json", false, "print the entries as JSON"}},
                                                RunIh});

}  // namespace
}  // namespace cli
