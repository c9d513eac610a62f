#include "am/gmc.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "am/device.h"
#include "am/page_table.h"
#include "am/regs/database.h"
#include "am/regs/gc.h"
#include "am/regs/vm.h"
#include "am/soc.h"
#include "base/status_macros.h"

namespace am {
namespace {

namespace gc = regs::gc;

// Units of the aperture registers, as gfxhub_v3_0 / mmhub_v3_0 write them.
constexpr int kFbShift = 24;
constexpr int kApertureShift = 18;
constexpr int kPageShift = 12;
constexpr int kHighShift = 44;
// SYSTEM_ACCESS_MODE 3 and MTYPE UC: what *_init_tlb_regs program (values from the functions' REG_SET_FIELDs).
constexpr uint32_t kSystemAccessMode = 3;

const char* HubName(Hub hub) { return hub == Hub::kGc ? "gfxhub" : "mmhub"; }

}  // namespace

Gmc::Gmc(Device& device) : device_(device) {}

absl::Status Gmc::InitSw() {
  // Both hubs' registers by name: the two hubs have the same registers with GC/MM prefixes (and the same field
  // layouts, so the GC structs encode both).
  for (Hub hub : {Hub::kGc, Hub::kMm}) {
    const regs::Ip ip = hub == Hub::kGc ? regs::Ip::kGc : regs::Ip::kMmhub;
    const std::string mc = hub == Hub::kGc ? "GCMC_VM_" : "MMMC_VM_";
    const std::string vm = hub == Hub::kGc ? "GCVM_" : "MMVM_";
    absl::Status missing;
    auto address = [&](const std::string& name) -> uint64_t {
      absl::StatusOr<uint64_t> resolved = regs::ResolveAddress(device_.bases(), name, ip);
      if (!resolved.ok() && missing.ok()) missing = resolved.status();
      return resolved.value_or(UINT64_MAX);
    };
    HubRegisters& r = regs(hub);
    r.fb_base = address(mc + "FB_LOCATION_BASE");
    r.fb_top = address(mc + "FB_LOCATION_TOP");
    r.agp_base = address(mc + "AGP_BASE");
    r.agp_bot = address(mc + "AGP_BOT");
    r.agp_top = address(mc + "AGP_TOP");
    r.aperture_low = address(mc + "SYSTEM_APERTURE_LOW_ADDR");
    r.aperture_high = address(mc + "SYSTEM_APERTURE_HIGH_ADDR");
    r.default_lsb = address(mc + "SYSTEM_APERTURE_DEFAULT_ADDR_LSB");
    r.default_msb = address(mc + "SYSTEM_APERTURE_DEFAULT_ADDR_MSB");
    r.l1_tlb_cntl = address(mc + "MX_L1_TLB_CNTL");
    r.l2_cntl = address(vm + "L2_CNTL");
    r.cntl0 = address(vm + "CONTEXT0_CNTL");
    r.base_lo0 = address(vm + "CONTEXT0_PAGE_TABLE_BASE_ADDR_LO32");
    r.base_hi0 = address(vm + "CONTEXT0_PAGE_TABLE_BASE_ADDR_HI32");
    r.start_lo0 = address(vm + "CONTEXT0_PAGE_TABLE_START_ADDR_LO32");
    r.start_hi0 = address(vm + "CONTEXT0_PAGE_TABLE_START_ADDR_HI32");
    r.end_lo0 = address(vm + "CONTEXT0_PAGE_TABLE_END_ADDR_LO32");
    r.end_hi0 = address(vm + "CONTEXT0_PAGE_TABLE_END_ADDR_HI32");
    r.sem17 = address(vm + "INVALIDATE_ENG17_SEM");
    r.req17 = address(vm + "INVALIDATE_ENG17_REQ");
    r.ack17 = address(vm + "INVALIDATE_ENG17_ACK");
    r.range_lo17 = address(vm + "INVALIDATE_ENG17_ADDR_RANGE_LO32");
    r.range_hi17 = address(vm + "INVALIDATE_ENG17_ADDR_RANGE_HI32");
    r.fault_status = address(vm + "L2_PROTECTION_FAULT_STATUS");
    r.fault_addr_lo = address(vm + "L2_PROTECTION_FAULT_ADDR_LO32");
    r.fault_addr_hi = address(vm + "L2_PROTECTION_FAULT_ADDR_HI32");
    r.fault_cntl = address(vm + "L2_PROTECTION_FAULT_CNTL");
    BAREGPU_RETURN_IF_ERROR(missing);
  }
  BAREGPU_ASSIGN_OR_RETURN(scratch_page_, device_.memory().AllocBoot(PageTable::kPageSize));
  device_.memory().set_tlb_flush([this] { return FlushTlb(); });
  return absl::OkStatus();
}

absl::Status Gmc::InitHw() {
  gc_hub_enabled_.store(false, std::memory_order_release);  // until Gfx::InitHw finds GC powered
  BAREGPU_RETURN_IF_ERROR(InitHub(Hub::kMm));
  device_.soc().FlushHdp();
  return FlushHub(Hub::kMm, 0);
}

absl::Status Gmc::EnableGcHub() {
  BAREGPU_RETURN_IF_ERROR(InitHub(Hub::kGc));
  gc_hub_enabled_.store(true, std::memory_order_release);
  device_.soc().FlushHdp();
  return FlushHub(Hub::kGc, 0);
}

absl::Status Gmc::InitHub(Hub hub) {
  RegisterIo& io = device_.io();
  const HubRegisters& r = regs(hub);
  const uint64_t fb_start = uint64_t{io.ReadDword(r.fb_base) & 0xffffff} << kFbShift;
  const uint64_t fb_end = (uint64_t{io.ReadDword(r.fb_top) & 0xffffff} << kFbShift) | ((1u << kFbShift) - 1);
  if (fb_start != device_.fb_start()) {
    return absl::FailedPreconditionError(
        absl::StrFormat("%s FB location %#x differs from the MMHUB's %#x: the VBIOS left the hubs inconsistent",
                        HubName(hub), fb_start, device_.fb_start()));
  }
  // No AGP aperture: BOT above TOP disables it (amdgpu_gmc_set_agp_default leaves agp_start 0xffffffffffff, agp_end
  // 0, so BOT = agp_start >> 24 = 0xffffff). The system aperture covers the FB; unmapped accesses go to scratch.
  io.WriteDword(r.agp_base, 0);
  io.WriteDword(r.agp_bot, 0xffffff);
  io.WriteDword(r.agp_top, 0);
  io.WriteDword(r.aperture_low, static_cast<uint32_t>(fb_start >> kApertureShift));
  io.WriteDword(r.aperture_high, static_cast<uint32_t>(fb_end >> kApertureShift));
  io.WriteDword(r.default_lsb, static_cast<uint32_t>(scratch_page_ >> kPageShift));
  io.WriteDword(r.default_msb, static_cast<uint32_t>(scratch_page_ >> kHighShift));
  io.WriteDword(r.l1_tlb_cntl, gc::GCMC_VM_MX_L1_TLB_CNTL{}
                                   .enable_l1_tlb(1)
                                   .system_access_mode(kSystemAccessMode)
                                   .enable_advanced_driver_model(1)
                                   .mtype(regs::vm::AMDGPU_MTYPE_NC)
                                   .raw());
  io.WriteDword(r.l2_cntl, gc::GCVM_L2_CNTL::FromRaw(io.ReadDword(r.l2_cntl)).enable_l2_cache(1).raw());
  // Context 0 on the root page table, over the whole 48-bit space.
  const uint64_t root = device_.memory().page_table().root() | regs::vm::AMDGPU_PTE_VALID;
  const uint64_t last_page = (PageTable::kAddressSpace - 1) >> kPageShift;
  io.WriteDword(r.base_lo0, static_cast<uint32_t>(root));
  io.WriteDword(r.base_hi0, static_cast<uint32_t>(root >> 32));
  io.WriteDword(r.start_lo0, 0);
  io.WriteDword(r.start_hi0, 0);
  io.WriteDword(r.end_lo0, static_cast<uint32_t>(last_page));
  io.WriteDword(r.end_hi0, static_cast<uint32_t>(last_page >> 32));
  // *hub_v3_0_program_invalidation: every engine covers the whole address range (LO32 all ones, HI32 0x1f).
  io.WriteDword(r.range_lo17, 0xffffffff);
  io.WriteDword(r.range_hi17, 0x1f);
  io.WriteDword(r.cntl0, gc::GCVM_CONTEXT0_CNTL{}
                             .enable_context(1)
                             .page_table_depth(PageTable::kDepth)
                             .page_table_block_size(0)
                             .range_protection_fault_enable_interrupt(1)
                             .pde0_protection_fault_enable_interrupt(1)
                             .valid_protection_fault_enable_interrupt(1)
                             .read_protection_fault_enable_interrupt(1)
                             .write_protection_fault_enable_interrupt(1)
                             .execute_protection_fault_enable_interrupt(1)
                             .raw());
  return absl::OkStatus();
}

absl::Status Gmc::FlushTlb() {
  device_.soc().FlushHdp();
  BAREGPU_RETURN_IF_ERROR(FlushHub(Hub::kMm, 0));
  if (!gc_hub_enabled_.load(std::memory_order_acquire)) return absl::OkStatus();
  return FlushHub(Hub::kGc, 0);
}

absl::Status Gmc::FlushHub(Hub hub, uint32_t vmid) {
  RegisterIo& io = device_.io();
  const HubRegisters& r = regs(hub);
  const bool semaphore = hub == Hub::kMm;  // gmc_v11_0_use_invalidate_semaphore: MMHUB only
  if (semaphore) {
    BAREGPU_RETURN_IF_ERROR(
        io.WaitFor(r.sem17, 1, 1, kFlushTimeout, absl::StrCat(HubName(hub), " invalidation semaphore")));
  }
  io.WriteDword(r.req17, gc::GCVM_INVALIDATE_ENG17_REQ{}
                             .per_vmid_invalidate_req(1u << vmid)
                             .invalidate_l2_ptes(1)
                             .invalidate_l2_pde0(1)
                             .invalidate_l2_pde1(1)
                             .invalidate_l2_pde2(1)
                             .invalidate_l1_ptes(1)
                             .raw());
  absl::Status acked =
      io.WaitFor(r.ack17, 1u << vmid, 1u << vmid, kFlushTimeout, absl::StrCat(HubName(hub), " TLB invalidation ack"));
  if (semaphore) io.WriteDword(r.sem17, 0);
  return acked;
}

absl::StatusOr<VmFault> Gmc::TakeFault(Hub hub) {
  RegisterIo& io = device_.io();
  const HubRegisters& r = regs(hub);
  VmFault fault{hub, 0, io.ReadDword(r.fault_status), ""};
  if (fault.status == 0) return absl::NotFoundError(absl::StrFormat("%s: no fault latched", HubName(hub)));
  fault.address =
      (uint64_t{io.ReadDword(r.fault_addr_lo)} << kPageShift) | (uint64_t{io.ReadDword(r.fault_addr_hi)} << kHighShift);
  const gc::GCVM_L2_PROTECTION_FAULT_STATUS status = gc::GCVM_L2_PROTECTION_FAULT_STATUS::FromRaw(fault.status);
  fault.description = absl::StrFormat(
      "%s fault at %#x: vmid %d, client %#x, %s, permission faults %#x, walker error %d, mapping error %d%s",
      HubName(hub), fault.address, status.vmid(), status.cid(), status.rw() ? "write" : "read",
      status.permission_faults(), status.walker_error(), status.mapping_error(),
      status.more_faults() ? ", more faults followed" : "");
  io.WriteDword(r.fault_cntl, gc::GCVM_L2_PROTECTION_FAULT_CNTL::FromRaw(io.ReadDword(r.fault_cntl))
                                  .clear_protection_fault_status_addr(1)
                                  .raw());
  return fault;
}

}  // namespace am
