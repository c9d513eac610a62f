#include "am/gmc.h"

#include <array>
#include <optional>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "am/device.h"
#include "am/page_table.h"
#include "am/regs/database.h"
#include "am/regs/gc.h"
#include "am/regs/mtype_constants.h"
#include "am/regs/vm.h"
#include "am/soc.h"
#include "base/mutex.h"
#include "base/status_macros.h"

namespace am {
namespace {

namespace gc = regs::gc;

// Units of the aperture registers, as gfxhub_v3_0 / mmhub_v3_0 write them.
constexpr int kFbShift = 24;
constexpr int kApertureShift = 18;
constexpr int kPageShift = 12;
constexpr int kHighShift = 44;
// *hub_v3_0_init_tlb_regs: SYSTEM_ACCESS_MODE 3 (context 0 is physical inside the system aperture, translated
// outside it).
constexpr uint32_t kSystemAccessMode = 3;
// *hub_v3_0_init_cache_regs without translate_further (gmc_v11_0 never sets it): BANK_SELECT 9,
// L2_CACHE_BIGK_FRAGMENT_SIZE 6.
constexpr uint32_t kL2BankSelect = 9;
constexpr uint32_t kL2BigKFragmentSize = 6;
// CNTL3-5 start from the register's reset value. GC's are def's (kDefault); the MMHUB has no default header, so
// mmhub_v3_0.c defines its own: regMMVM_L2_CNTL3_DEFAULT, regMMVM_L2_CNTL4_DEFAULT, regMMVM_L2_CNTL5_DEFAULT.
constexpr uint32_t kMmL2Cntl3Default = 0x80100007;
constexpr uint32_t kMmL2Cntl4Default = 0x000000c1;
constexpr uint32_t kMmL2Cntl5Default = 0x00003fe0;
// gmc_v11_0_sw_init: amdgpu_vm_adjust_size(adev, 256 * 1024, 9, 3, 48): four levels (num_level 3 =
// PAGE_TABLE_DEPTH), 9-bit page-table blocks (PAGE_TABLE_BLOCK_SIZE = block_size - 9 = 0), 256 TiB (48 bits) of VA.
constexpr uint32_t kBlockSizeBits = 9;
constexpr uint32_t kPageTableBlockSize = kBlockSizeBits - 9;
// The last page of the 48-bit space: the contexts' END (max_pfn - 1) and the disabled identity aperture's LOW
// (*hub_v3_0_disable_identity_aperture's 0xFFFFFFFF / 0xF: above every address, so the aperture is empty).
constexpr uint64_t kLastPage = (PageTable::kAddressSpace >> kPageShift) - 1;
// *hub_v3_0_program_invalidation: every engine's range, LO32 0xffffffff and HI32 0x1f (the whole space).
constexpr uint32_t kInvalidateRangeLo = 0xffffffff;
constexpr uint32_t kInvalidateRangeHi = 0x1f;
// amdgpu's noretry module parameter defaults to -1, and setup_vmid_config writes !amdgpu_noretry: no retry faults.
constexpr uint32_t kRetryPermissionOrInvalidPageFault = 0;

const char* HubName(Hub hub) { return hub == Hub::kGc ? "gfxhub" : "mmhub"; }

// PERMISSION_FAULTS' bits, in the order of VM_CONTEXTn_CNTL's *_PROTECTION_FAULT_ENABLE_* fields.
std::string PermissionNames(uint32_t bits) {
  static constexpr const char* kNames[] = {"valid", "read", "write", "execute"};
  std::string names;
  for (size_t i = 0; i < std::size(kNames); ++i) {
    if (bits & (1u << i)) absl::StrAppend(&names, names.empty() ? "" : ", ", kNames[i]);
  }
  return names;
}

// The GC hub's UTCL2 clients by CID (gfxhub_v3_0.c gfxhub_client_ids, printed by its print_l2_protection_fault_status):
// which engine made the access that faulted.
std::string ClientName(Hub hub, uint32_t cid) {
  static constexpr const char* kGfxhubClients[] = {
      "CB/DB",      "Reserved",   "GE1", "GE2",      "CPF",   "CPC",   "CPG", "RLC",   "TCP",
      "SQC (inst)", "SQC (data)", "SQG", "Reserved", "SDMA0", "SDMA1", "GCR", "SDMA2", "SDMA3"};
  if (hub != Hub::kGc || cid >= std::size(kGfxhubClients)) return "";
  return absl::StrCat(" (", kGfxhubClients[cid], ")");
}

}  // namespace

std::string DescribeFaultStatus(Hub hub, uint64_t address, uint32_t raw) {
  const gc::GCVM_L2_PROTECTION_FAULT_STATUS status = gc::GCVM_L2_PROTECTION_FAULT_STATUS::FromRaw(raw);
  std::string permissions = PermissionNames(status.permission_faults());
  return absl::StrFormat(
      "%s fault at %#x: STATUS %#010x: VMID %d, CID %#x%s, RW %s, MORE_FAULTS %d, WALKER_ERROR %d, "
      "PERMISSION_FAULTS %#x%s, MAPPING_ERROR %d",
      HubName(hub), address, raw, status.vmid(), status.cid(), ClientName(hub, status.cid()),
      status.rw() ? "write" : "read", status.more_faults(), status.walker_error(), status.permission_faults(),
      permissions.empty() ? "" : " (" + permissions + ")", status.mapping_error());
}

Gmc::Gmc(Device& device) : device_(device) {}

absl::StatusOr<Gmc::HubRegisters> Gmc::ResolveHubRegisters(const regs::IpBases& bases, Hub hub) {
  // The two hubs have the same registers with GC/MM prefixes (and the same field layouts, so the GC structs encode
  // both).
  const regs::Ip ip = hub == Hub::kGc ? regs::Ip::kGc : regs::Ip::kMmhub;
  const std::string mc = hub == Hub::kGc ? "GCMC_VM_" : "MMMC_VM_";
  const std::string vm = hub == Hub::kGc ? "GCVM_" : "MMVM_";
  absl::Status missing;
  auto address = [&](const std::string& name) -> uint64_t {
    absl::StatusOr<uint64_t> resolved = regs::ResolveAddress(bases, name, ip);
    if (!resolved.ok() && missing.ok()) missing = resolved.status();
    return resolved.value_or(UINT64_MAX);
  };
  HubRegisters r;
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
  r.l2_cntl2 = address(vm + "L2_CNTL2");
  r.l2_cntl3 = address(vm + "L2_CNTL3");
  r.l2_cntl4 = address(vm + "L2_CNTL4");
  r.l2_cntl5 = address(vm + "L2_CNTL5");
  r.identity_low_lo = address(vm + "L2_CONTEXT1_IDENTITY_APERTURE_LOW_ADDR_LO32");
  r.identity_low_hi = address(vm + "L2_CONTEXT1_IDENTITY_APERTURE_LOW_ADDR_HI32");
  r.identity_high_lo = address(vm + "L2_CONTEXT1_IDENTITY_APERTURE_HIGH_ADDR_LO32");
  r.identity_high_hi = address(vm + "L2_CONTEXT1_IDENTITY_APERTURE_HIGH_ADDR_HI32");
  r.identity_offset_lo = address(vm + "L2_CONTEXT_IDENTITY_PHYSICAL_OFFSET_LO32");
  r.identity_offset_hi = address(vm + "L2_CONTEXT_IDENTITY_PHYSICAL_OFFSET_HI32");
  for (int i = 0; i < kContexts; ++i) {
    const std::string context = absl::StrFormat("%sCONTEXT%d_", vm, i);
    r.cntl[i] = address(context + "CNTL");
    r.start_lo[i] = address(context + "PAGE_TABLE_START_ADDR_LO32");
    r.start_hi[i] = address(context + "PAGE_TABLE_START_ADDR_HI32");
    r.end_lo[i] = address(context + "PAGE_TABLE_END_ADDR_LO32");
    r.end_hi[i] = address(context + "PAGE_TABLE_END_ADDR_HI32");
  }
  r.base_lo0 = address(vm + "CONTEXT0_PAGE_TABLE_BASE_ADDR_LO32");
  r.base_hi0 = address(vm + "CONTEXT0_PAGE_TABLE_BASE_ADDR_HI32");
  for (int e = 0; e < kInvalidateEngines; ++e) {
    r.range_lo[e] = address(absl::StrFormat("%sINVALIDATE_ENG%d_ADDR_RANGE_LO32", vm, e));
    r.range_hi[e] = address(absl::StrFormat("%sINVALIDATE_ENG%d_ADDR_RANGE_HI32", vm, e));
  }
  r.sem17 = address(vm + "INVALIDATE_ENG17_SEM");
  r.req17 = address(vm + "INVALIDATE_ENG17_REQ");
  r.ack17 = address(vm + "INVALIDATE_ENG17_ACK");
  r.fault.status = address(vm + "L2_PROTECTION_FAULT_STATUS");
  r.fault.address_lo = address(vm + "L2_PROTECTION_FAULT_ADDR_LO32");
  r.fault.address_hi = address(vm + "L2_PROTECTION_FAULT_ADDR_HI32");
  r.fault.cntl = address(vm + "L2_PROTECTION_FAULT_CNTL");
  r.fault_cntl2 = address(vm + "L2_PROTECTION_FAULT_CNTL2");
  r.fault_default_lo = address(vm + "L2_PROTECTION_FAULT_DEFAULT_ADDR_LO32");
  r.fault_default_hi = address(vm + "L2_PROTECTION_FAULT_DEFAULT_ADDR_HI32");
  r.bank_select_reserved_cid2 = address(vm + "L2_BANK_SELECT_RESERVED_CID2");
  BAREGPU_RETURN_IF_ERROR(missing);
  return r;
}

absl::StatusOr<Gmc::HubRegisters> Gmc::HubRegistersFor(const regs::IpBases& bases, Hub hub) {
  // A hub's addresses are a function of its registers' names, fixed above, and its IP's segment bases, which are the
  // same for every device of a kind: they are resolved by name once per process and per bases, and copied at later
  // opens (building and looking up the ~150 names per hub was 30% of a partial boot's CPU, issue 24).
  struct Resolved {
    std::vector<std::optional<uint64_t>> segments;
    HubRegisters registers;
  };
  static base::Mutex mu;
  static auto* resolved = new std::array<std::optional<Resolved>, 2>();
  const regs::Ip ip = hub == Hub::kGc ? regs::Ip::kGc : regs::Ip::kMmhub;
  std::vector<std::optional<uint64_t>> segments = bases.Segments(ip, /*instance=*/0);
  std::optional<Resolved>& slot = (*resolved)[hub == Hub::kGc ? 0 : 1];
  {
    base::MutexLock lock(&mu);
    if (slot && slot->segments == segments) return slot->registers;
  }
  BAREGPU_ASSIGN_OR_RETURN(HubRegisters registers, ResolveHubRegisters(bases, hub));
  base::MutexLock lock(&mu);
  slot = Resolved{std::move(segments), registers};
  return registers;
}

absl::Status Gmc::InitSw() {
  BAREGPU_ASSIGN_OR_RETURN(gc_, HubRegistersFor(device_.bases(), Hub::kGc));
  BAREGPU_ASSIGN_OR_RETURN(mm_, HubRegistersFor(device_.bases(), Hub::kMm));
  BAREGPU_ASSIGN_OR_RETURN(scratch_page_, device_.memory().AllocBoot(PageTable::kPageSize));
  // amdgpu_gart_dummy_page_init: a page of system memory, mapped for the device, for faulting accesses.
  BAREGPU_ASSIGN_OR_RETURN(dummy_page_, device_.pci().AllocDma(PageTable::kPageSize));
  device_.memory().set_tlb_flush([this] { return FlushTlb(); });
  return absl::OkStatus();
}

absl::Status Gmc::InitHw() {
  gc_hub_enabled_.store(false, std::memory_order_release);  // until Gfx::InitHw finds GC powered
  BAREGPU_RETURN_IF_ERROR(InitHub(Hub::kMm));
  device_.soc().FlushHdp();
  EnableFaults(Hub::kMm);
  return FlushHub(Hub::kMm, 0);
}

absl::Status Gmc::EnableGcHub() {
  BAREGPU_RETURN_IF_ERROR(InitHub(Hub::kGc));
  gc_hub_enabled_.store(true, std::memory_order_release);
  device_.soc().FlushHdp();
  EnableFaults(Hub::kGc);
  return FlushHub(Hub::kGc, 0);
}

absl::Status Gmc::InitHub(Hub hub) {
  RegisterIo& io = device_.io();
  const HubRegisters& r = regs(hub);
  auto modify = [&io](uint64_t address, auto reg, auto&& change) {
    auto value = decltype(reg)::FromRaw(io.ReadDword(address));
    change(value);
    io.WriteDword(address, value.raw());
  };
  const uint64_t fb_start = uint64_t{io.ReadDword(r.fb_base) & 0xffffff} << kFbShift;
  const uint64_t fb_end = (uint64_t{io.ReadDword(r.fb_top) & 0xffffff} << kFbShift) | ((1u << kFbShift) - 1);
  if (fb_start != device_.fb_start()) {
    return absl::FailedPreconditionError(
        absl::StrFormat("%s FB location %#x differs from the MMHUB's %#x: the VBIOS left the hubs inconsistent",
                        HubName(hub), fb_start, device_.fb_start()));
  }

  // *hub_v3_0_init_gart_aperture_regs: context 0 on the root page table, over the whole 48-bit space.
  const uint64_t root = device_.memory().page_table().root() | regs::vm::AMDGPU_PTE_VALID;
  io.WriteDword(r.base_lo0, static_cast<uint32_t>(root));
  io.WriteDword(r.base_hi0, static_cast<uint32_t>(root >> 32));
  io.WriteDword(r.start_lo[0], 0);
  io.WriteDword(r.start_hi[0], 0);
  io.WriteDword(r.end_lo[0], static_cast<uint32_t>(kLastPage));
  io.WriteDword(r.end_hi[0], static_cast<uint32_t>(kLastPage >> 32));

  // *hub_v3_0_init_system_aperture_regs. No AGP aperture: BOT above TOP disables it (amdgpu_gmc_set_agp_default
  // leaves agp_start 0xffffffffffff, agp_end 0, so BOT = agp_start >> 24 = 0xffffff). The system aperture covers
  // the FB; unmapped accesses in it go to the scratch page (its physical address, amdgpu_gmc_vram_mc2pa), faults
  // to the dummy page.
  io.WriteDword(r.agp_base, 0);
  io.WriteDword(r.agp_bot, 0xffffff);
  io.WriteDword(r.agp_top, 0);
  io.WriteDword(r.aperture_low, static_cast<uint32_t>(fb_start >> kApertureShift));
  io.WriteDword(r.aperture_high, static_cast<uint32_t>(fb_end >> kApertureShift));
  const uint64_t scratch = device_.VramPhysicalAddress(scratch_page_);
  io.WriteDword(r.default_lsb, static_cast<uint32_t>(scratch >> kPageShift));
  io.WriteDword(r.default_msb, static_cast<uint32_t>(scratch >> kHighShift));
  io.WriteDword(r.fault_default_lo, static_cast<uint32_t>(dummy_page() >> kPageShift));
  io.WriteDword(r.fault_default_hi, static_cast<uint32_t>(dummy_page() >> kHighShift));
  modify(r.fault_cntl2, gc::GCVM_L2_PROTECTION_FAULT_CNTL2{},
         [](auto& v) { v.active_page_migration_pte_read_retry(1); });

  // *hub_v3_0_init_tlb_regs.
  modify(r.l1_tlb_cntl, gc::GCMC_VM_MX_L1_TLB_CNTL{}, [](auto& v) {
    v.enable_l1_tlb(1)
        .system_access_mode(kSystemAccessMode)
        .enable_advanced_driver_model(1)
        .system_aperture_unmapped_access(0)
        .eco_bits(0)
        .mtype(regs::vm::MTYPE_UC);
  });

  // *hub_v3_0_init_cache_regs.
  modify(r.l2_cntl, gc::GCVM_L2_CNTL{}, [](auto& v) {
    v.enable_l2_cache(1)
        .enable_l2_fragment_processing(0)
        .enable_default_page_out_to_system_memory(1)
        .l2_pde0_cache_tag_generation_mode(0)
        .pde_fault_classification(0)
        .context1_identity_access_mode(1)
        .identity_mode_fragment_size(0);
  });
  modify(r.l2_cntl2, gc::GCVM_L2_CNTL2{}, [](auto& v) { v.invalidate_all_l1_tlbs(1).invalidate_l2_cache(1); });
  const bool gc_hub = hub == Hub::kGc;
  io.WriteDword(r.l2_cntl3, gc::GCVM_L2_CNTL3::FromRaw(gc_hub ? gc::GCVM_L2_CNTL3::kDefault : kMmL2Cntl3Default)
                                .bank_select(kL2BankSelect)
                                .l2_cache_bigk_fragment_size(kL2BigKFragmentSize)
                                .raw());
  io.WriteDword(r.l2_cntl4, gc::GCVM_L2_CNTL4::FromRaw(gc_hub ? gc::GCVM_L2_CNTL4::kDefault : kMmL2Cntl4Default)
                                .vmc_tap_pde_request_physical(0)
                                .vmc_tap_pte_request_physical(0)
                                .raw());
  io.WriteDword(r.l2_cntl5, gc::GCVM_L2_CNTL5::FromRaw(gc_hub ? gc::GCVM_L2_CNTL5::kDefault : kMmL2Cntl5Default)
                                .l2_cache_smallk_fragment_size(0)
                                .raw());

  // *hub_v3_0_enable_system_domain, with AM's context 0: the 4-level root table instead of amdgpu's flat GART
  // (depth 0). The fault defaults are set as setup_vmid_config sets them for 1-15 (GC's context 0 powers on with
  // them set, `def` 0x01fffe00; the MMHUB's reset value is not public).
  auto with_fault_defaults = [](gc::GCVM_CONTEXT0_CNTL& v) {
    v.range_protection_fault_enable_default(1)
        .dummy_page_protection_fault_enable_default(1)
        .pde0_protection_fault_enable_default(1)
        .valid_protection_fault_enable_default(1)
        .read_protection_fault_enable_default(1)
        .write_protection_fault_enable_default(1)
        .execute_protection_fault_enable_default(1);
  };
  modify(r.cntl[0], gc::GCVM_CONTEXT0_CNTL{}, [&](auto& v) {
    v.enable_context(1)
        .page_table_depth(PageTable::kDepth)
        .page_table_block_size(kPageTableBlockSize)
        .retry_permission_or_invalid_page_fault(0);
    with_fault_defaults(v);
  });

  // *hub_v3_0_disable_identity_aperture: LOW above HIGH, so no address is in it.
  io.WriteDword(r.identity_low_lo, static_cast<uint32_t>(kLastPage));
  io.WriteDword(r.identity_low_hi, static_cast<uint32_t>(kLastPage >> 32));
  io.WriteDword(r.identity_high_lo, 0);
  io.WriteDword(r.identity_high_hi, 0);
  io.WriteDword(r.identity_offset_lo, 0);
  io.WriteDword(r.identity_offset_hi, 0);

  // *hub_v3_0_setup_vmid_config: contexts 1-15 enabled over the whole space, each faulting kind redirected to the
  // dummy page, no retry; their page-table bases are set when a VM is bound to the VMID.
  for (int vmid = 1; vmid < kContexts; ++vmid) {
    modify(r.cntl[vmid], gc::GCVM_CONTEXT0_CNTL{}, [&](auto& v) {
      v.enable_context(1)
          .page_table_depth(PageTable::kDepth)
          .page_table_block_size(kPageTableBlockSize)
          .retry_permission_or_invalid_page_fault(kRetryPermissionOrInvalidPageFault);
      with_fault_defaults(v);
    });
    io.WriteDword(r.start_lo[vmid], 0);
    io.WriteDword(r.start_hi[vmid], 0);
    io.WriteDword(r.end_lo[vmid], static_cast<uint32_t>(kLastPage));
    io.WriteDword(r.end_hi[vmid], static_cast<uint32_t>(kLastPage >> 32));
  }

  // *hub_v3_0_program_invalidation: every engine covers the whole address range.
  for (int e = 0; e < kInvalidateEngines; ++e) {
    io.WriteDword(r.range_lo[e], kInvalidateRangeLo);
    io.WriteDword(r.range_hi[e], kInvalidateRangeHi);
  }
  return absl::OkStatus();
}

void Gmc::EnableFaults(Hub hub) {
  RegisterIo& io = device_.io();
  const HubRegisters& r = regs(hub);
  const uint32_t redirect = device_.vm_fault_stop() ? 0 : 1;
  if (hub == Hub::kGc) {
    // gfxhub_v3_0_set_fault_enable_default: "NO halt CP when page fault".
    auto gc = device_.Regs<regs::Ip::kGc>();
    gc.Modify<gc::CP_DEBUG>([](auto& v) { v.cpg_utcl1_error_halt_disable(1); });
  }
  auto cntl = gc::GCVM_L2_PROTECTION_FAULT_CNTL::FromRaw(io.ReadDword(r.fault.cntl))
                  .range_protection_fault_enable_default(redirect)
                  .pde0_protection_fault_enable_default(redirect)
                  .pde1_protection_fault_enable_default(redirect)
                  .pde2_protection_fault_enable_default(redirect)
                  .translate_further_protection_fault_enable_default(redirect)
                  .nack_protection_fault_enable_default(redirect)
                  .dummy_page_protection_fault_enable_default(redirect)
                  .valid_protection_fault_enable_default(redirect)
                  .read_protection_fault_enable_default(redirect)
                  .write_protection_fault_enable_default(redirect)
                  .execute_protection_fault_enable_default(redirect);
  if (!redirect) cntl.crash_on_no_retry_fault(1).crash_on_retry_fault(1);
  io.WriteDword(r.fault.cntl, cntl.raw());
  // amdgpu_gmc_set_vm_fault_masks (gmc_v11_0_vm_fault_interrupt_state): every context's fault interrupts, the
  // hub's vm_cntx_cntl_vm_fault set.
  for (int vmid = 0; vmid < kContexts; ++vmid) {
    io.WriteDword(r.cntl[vmid], gc::GCVM_CONTEXT0_CNTL::FromRaw(io.ReadDword(r.cntl[vmid]))
                                    .range_protection_fault_enable_interrupt(1)
                                    .dummy_page_protection_fault_enable_interrupt(1)
                                    .pde0_protection_fault_enable_interrupt(1)
                                    .valid_protection_fault_enable_interrupt(1)
                                    .read_protection_fault_enable_interrupt(1)
                                    .write_protection_fault_enable_interrupt(1)
                                    .execute_protection_fault_enable_interrupt(1)
                                    .raw());
  }
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
  // The waits' descriptions are literals: a flush runs at every page-table change, and built strings cost an
  // allocation each time although only a timeout prints them.
  if (semaphore) BAREGPU_RETURN_IF_ERROR(io.WaitFor(r.sem17, 1, 1, kFlushTimeout, "mmhub invalidation semaphore"));
  io.WriteDword(r.req17, gc::GCVM_INVALIDATE_ENG17_REQ{}
                             .per_vmid_invalidate_req(1u << vmid)
                             .invalidate_l2_ptes(1)
                             .invalidate_l2_pde0(1)
                             .invalidate_l2_pde1(1)
                             .invalidate_l2_pde2(1)
                             .invalidate_l1_ptes(1)
                             .raw());
  absl::Status acked = io.WaitFor(r.ack17, 1u << vmid, 1u << vmid, kFlushTimeout,
                                  hub == Hub::kGc ? "gfxhub TLB invalidation ack" : "mmhub TLB invalidation ack");
  if (semaphore) io.WriteDword(r.sem17, 0);
  if (hub == Hub::kMm) {
    // gmc_v11_0_flush_gpu_tlb: "additional private vm invalidation to MMHUB" through
    // MMVM_L2_BANK_SELECT_RESERVED_CID2.RESERVED_CACHE_PRIVATE_INVALIDATION, read back to make sure it is done.
    io.WriteDword(r.bank_select_reserved_cid2,
                  gc::GCVM_L2_BANK_SELECT_RESERVED_CID2::FromRaw(io.ReadDword(r.bank_select_reserved_cid2))
                      .reserved_cache_private_invalidation(1)
                      .raw());
    (void)io.ReadDword(r.bank_select_reserved_cid2);
  }
  return acked;
}

absl::StatusOr<VmFault> Gmc::TakeFault(Hub hub) { return am::TakeFault(device_.io(), regs(hub).fault, hub); }

absl::StatusOr<FaultLatch> ResolveFaultLatch(const regs::IpBases& bases, Hub hub) {
  const regs::Ip ip = hub == Hub::kGc ? regs::Ip::kGc : regs::Ip::kMmhub;
  const std::string vm = hub == Hub::kGc ? "GCVM_L2_PROTECTION_FAULT_" : "MMVM_L2_PROTECTION_FAULT_";
  FaultLatch latch;
  BAREGPU_ASSIGN_OR_RETURN(latch.status, regs::ResolveAddress(bases, vm + "STATUS", ip));
  BAREGPU_ASSIGN_OR_RETURN(latch.address_lo, regs::ResolveAddress(bases, vm + "ADDR_LO32", ip));
  BAREGPU_ASSIGN_OR_RETURN(latch.address_hi, regs::ResolveAddress(bases, vm + "ADDR_HI32", ip));
  BAREGPU_ASSIGN_OR_RETURN(latch.cntl, regs::ResolveAddress(bases, vm + "CNTL", ip));
  return latch;
}

absl::StatusOr<VmFault> TakeFault(RegisterIo& io, const FaultLatch& latch, Hub hub) {
  VmFault fault{hub, 0, io.ReadDword(latch.status), ""};
  if (fault.status == 0) return absl::NotFoundError(absl::StrFormat("%s: no fault latched", HubName(hub)));
  fault.address = (uint64_t{io.ReadDword(latch.address_lo)} << kPageShift) |
                  (uint64_t{io.ReadDword(latch.address_hi)} << kHighShift);
  fault.description = DescribeFaultStatus(hub, fault.address, fault.status);
  io.WriteDword(
      latch.cntl,
      gc::GCVM_L2_PROTECTION_FAULT_CNTL::FromRaw(io.ReadDword(latch.cntl)).clear_protection_fault_status_addr(1).raw());
  return fault;
}

}  // namespace am
