#include "am/sim/gmc_model.h"

#include <algorithm>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "am/discovery.h"
#include "am/regs/database.h"
#include "am/regs/gc.h"
#include "am/regs/ih_constants.h"
#include "am/regs/vm.h"
#include "am/regs/vmc_srcid_constants.h"
#include "base/status_macros.h"

namespace am::sim {
namespace {

// Field layouts are the same in both hubs' headers (gc_11_0_0_sh_mask.h and mmhub_3_0_0_sh_mask.h); the GC
// structs decode both.
using ContextCntl = regs::gc::GCVM_CONTEXT0_CNTL;
using InvalidateReq = regs::gc::GCVM_INVALIDATE_ENG17_REQ;
using InvalidateAck = regs::gc::GCVM_INVALIDATE_ENG17_ACK;
using FaultStatus = regs::gc::GCVM_L2_PROTECTION_FAULT_STATUS;
using FaultCntl = regs::gc::GCVM_L2_PROTECTION_FAULT_CNTL;
using L1TlbCntl = regs::gc::GCMC_VM_MX_L1_TLB_CNTL;
using L2Cntl = regs::gc::GCVM_L2_CNTL;

// Register units, as gfxhub_v3_0 / mmhub_v3_0 write them.
constexpr int kFbShift = 24;        // FB_LOCATION_BASE/TOP, FB_OFFSET, AGP_BASE/BOT/TOP
constexpr int kApertureShift = 18;  // SYSTEM_APERTURE_LOW/HIGH_ADDR
constexpr int kPageShift = 12;      // context start/end, default address (LSB), fault address (LO32)
constexpr int kHighShift = 44;      // the _HI32 / _MSB halves of page numbers
constexpr uint64_t kPageSize = uint64_t{1} << kPageShift;

// amdgpu_vm.h / amdgpu_vm_pt.c: 8-byte entries; 9 address bits per directory level; a PTE holds its page address
// in bits 47:12, a PDE its table address in bits 47:6.
constexpr int kDirectoryBits = 9;
constexpr uint64_t kPteAddressMask = 0x0000'ffff'ffff'f000;
constexpr uint64_t kPdeAddressMask = 0x0000'ffff'ffff'ffc0;

// gmc_v11_0_process_interrupt: src_data[1] bits 3:0 hold address bits 47:44, bit 5 says the access was a write,
// bit 7 that the fault is a retry fault.
constexpr uint32_t kFaultSrcDataAddressHighMask = 0xf;
constexpr uint32_t kFaultSrcDataWrite = 0x20;
constexpr uint32_t kFaultSrcDataRetry = 0x80;

// L2_PROTECTION_FAULT_STATUS.PERMISSION_FAULTS: one bit per protection the access violated, in the order the
// context's *_PROTECTION_FAULT_ENABLE bits list them (valid, read, write, execute). Read from amdgpu's fault logs
// (docs/fidelity.md): a read of an unmapped page reports 0x3 (ROCm/amdgpu#172), a write 0x5
// (ROCm/legacy-rocm-build#1399); an address outside the context also WALKER_ERROR 1 and MAPPING_ERROR 1 (gfx11,
// ROCm/legacy-rocm-build#2755: GCVM_L2_PROTECTION_FAULT_STATUS 0xb32). 1 is the only WALKER_ERROR value public
// logs show; the model uses it for every walker failure.
constexpr uint32_t kPermissionValid = 1 << 0;
constexpr uint32_t kPermissionRead = 1 << 1;
constexpr uint32_t kPermissionWrite = 1 << 2;
constexpr uint32_t kPermissionExecute = 1 << 3;
constexpr uint32_t kWalkerError = 1;

// MX_L1_TLB_CNTL.SYSTEM_ACCESS_MODE as *hub_v3_0_init_tlb_regs program it: context 0's accesses inside the system
// aperture are physical, the rest go through its page table. The other modes are not modelled.
constexpr uint32_t kSystemAccessModeNotInSystemAperture = 3;

// The PERMISSION_FAULTS bit of an access's own permission.
uint32_t PermissionBit(Access access) {
  switch (access) {
    case Access::kWrite:
      return kPermissionWrite;
    case Access::kExecute:
      return kPermissionExecute;
    default:
      return kPermissionRead;
  }
}

// The PTE bit an access needs: WRITEABLE for a write, EXECUTABLE for an instruction fetch (the SQ's instruction
// cache fetches through the UTCL2 like any client), READABLE for a read.
bool Denied(uint64_t pte_flags, Access access) {
  switch (access) {
    case Access::kWrite:
      return (pte_flags & regs::vm::AMDGPU_PTE_WRITEABLE) == 0;
    case Access::kExecute:
      return (pte_flags & regs::vm::AMDGPU_PTE_EXECUTABLE) == 0;
    case Access::kRead:
      break;
  }
  return (pte_flags & regs::vm::AMDGPU_PTE_READABLE) == 0;
}

const char* PermissionName(Access access) {
  switch (access) {
    case Access::kWrite:
      return "writeable";
    case Access::kExecute:
      return "executable";
    case Access::kRead:
      break;
  }
  return "readable";
}

const char* HubName(Hub hub) { return hub == Hub::kGc ? "gfxhub" : "mmhub"; }

}  // namespace

GmcModel::GmcModel(RegisterFile& registers, const regs::IpBases& bases, std::span<uint8_t> vram,
                   pci::sim::DmaSpace& dma, InterruptSink& interrupts, DeviceErrorLog& errors)
    : registers_(registers), bases_(bases), vram_(vram), dma_(dma), interrupts_(interrupts), errors_(errors) {
  gc_.regs = ResolveRegisters(Hub::kGc);
  mm_.regs = ResolveRegisters(Hub::kMm);
  AttachHooks(Hub::kGc);
  AttachHooks(Hub::kMm);
}

GmcModel::HubRegisters GmcModel::ResolveRegisters(Hub hub) const {
  const regs::Ip ip = hub == Hub::kGc ? regs::Ip::kGc : regs::Ip::kMmhub;
  const std::string mc = hub == Hub::kGc ? "GCMC_VM_" : "MMMC_VM_";
  const std::string vm = hub == Hub::kGc ? "GCVM_" : "MMVM_";
  // A register the bases do not place resolves past the register space, where no access reaches its hook.
  auto address = [&](const std::string& name) -> uint64_t {
    return regs::ResolveAddress(bases_, name, ip).value_or(UINT64_MAX);
  };
  HubRegisters r;
  r.fb_base = address(mc + "FB_LOCATION_BASE");
  r.fb_top = address(mc + "FB_LOCATION_TOP");
  r.fb_offset = address(mc + "FB_OFFSET");
  r.agp_base = address(mc + "AGP_BASE");
  r.agp_bot = address(mc + "AGP_BOT");
  r.agp_top = address(mc + "AGP_TOP");
  r.aperture_low = address(mc + "SYSTEM_APERTURE_LOW_ADDR");
  r.aperture_high = address(mc + "SYSTEM_APERTURE_HIGH_ADDR");
  r.default_lsb = address(mc + "SYSTEM_APERTURE_DEFAULT_ADDR_LSB");
  r.default_msb = address(mc + "SYSTEM_APERTURE_DEFAULT_ADDR_MSB");
  r.l1_tlb_cntl = address(mc + "MX_L1_TLB_CNTL");
  r.l2_cntl = address(vm + "L2_CNTL");
  r.fault_default_lo = address(vm + "L2_PROTECTION_FAULT_DEFAULT_ADDR_LO32");
  r.fault_default_hi = address(vm + "L2_PROTECTION_FAULT_DEFAULT_ADDR_HI32");
  for (int i = 0; i < kContexts; ++i) {
    const std::string context = absl::StrFormat("%sCONTEXT%d_", vm, i);
    r.cntl[i] = address(context + "CNTL");
    r.base_lo[i] = address(context + "PAGE_TABLE_BASE_ADDR_LO32");
    r.base_hi[i] = address(context + "PAGE_TABLE_BASE_ADDR_HI32");
    r.start_lo[i] = address(context + "PAGE_TABLE_START_ADDR_LO32");
    r.start_hi[i] = address(context + "PAGE_TABLE_START_ADDR_HI32");
    r.end_lo[i] = address(context + "PAGE_TABLE_END_ADDR_LO32");
    r.end_hi[i] = address(context + "PAGE_TABLE_END_ADDR_HI32");
  }
  for (int e = 0; e < kInvalidateEngines; ++e) {
    const std::string engine = absl::StrFormat("%sINVALIDATE_ENG%d_", vm, e);
    r.sem[e] = address(engine + "SEM");
    r.req[e] = address(engine + "REQ");
    r.ack[e] = address(engine + "ACK");
  }
  r.fault_status = address(vm + "L2_PROTECTION_FAULT_STATUS");
  r.fault_addr_lo = address(vm + "L2_PROTECTION_FAULT_ADDR_LO32");
  r.fault_addr_hi = address(vm + "L2_PROTECTION_FAULT_ADDR_HI32");
  r.fault_cntl = address(vm + "L2_PROTECTION_FAULT_CNTL");
  return r;
}

void GmcModel::AttachHooks(Hub hub) {
  HubState& h = state(hub);
  const char* name = hub == Hub::kGc ? "gmc.gfxhub" : "gmc.mmhub";
  for (int e = 0; e < kInvalidateEngines; ++e) {
    // A read that finds the semaphore free takes it and returns 1 (gmc_v11_0_flush_gpu_tlb: "a read return value
    // of 1 means semaphore acquire"); writing 0 releases it.
    registers_.OnRead(h.regs.sem[e], name, [&h, e](uint32_t) -> uint32_t {
      bool expected = false;
      return h.sem_held[e].compare_exchange_strong(expected, true, std::memory_order_acq_rel) ? 1 : 0;
    });
    registers_.OnWrite(h.regs.sem[e], name, [&h, e](uint32_t value) {
      if ((value & 1) == 0) h.sem_held[e].store(false, std::memory_order_release);
    });
    registers_.OnWrite(h.regs.req[e], name, [this, &h, e](uint32_t value) {
      const InvalidateReq request = InvalidateReq{}.set_raw(value);
      const uint32_t vmids = request.per_vmid_invalidate_req();
      const uint64_t ack_address = h.regs.ack[e];
      registers_.Poke(ack_address, registers_.Peek(ack_address) & ~vmids);
      {
        base::MutexLock lock(&h.mu);
        for (int vmid = 0; vmid < kContexts; ++vmid) {
          if (vmids & (1u << vmid)) h.tlb[vmid].clear();
        }
      }
      BumpTranslationGeneration();
      if (request.clear_protection_fault_status_addr()) {
        registers_.Poke(h.regs.fault_status, 0);
        registers_.Poke(h.regs.fault_addr_lo, 0);
        registers_.Poke(h.regs.fault_addr_hi, 0);
      }
      // The ack comes only after the translations are gone.
      if (!h.lose_ack.load(std::memory_order_acquire)) {
        registers_.Poke(ack_address,
                        registers_.Peek(ack_address) | InvalidateAck{}.per_vmid_invalidate_ack(vmids).raw());
      }
    });
  }
  // Context 0's system aperture and the hub's TLB control are read on every translation, never cached in the TLB:
  // a write to them changes translations at once, so the views engines keep (translation_generation) go too.
  for (uint64_t reg : {h.regs.fb_base, h.regs.fb_top, h.regs.fb_offset, h.regs.agp_base, h.regs.agp_bot, h.regs.agp_top,
                       h.regs.aperture_low, h.regs.aperture_high, h.regs.l1_tlb_cntl}) {
    registers_.OnWrite(reg, name, [this](uint32_t) { BumpTranslationGeneration(); });
  }
  registers_.OnWrite(h.regs.fault_cntl, name, [this, &h](uint32_t value) {
    FaultCntl cntl = FaultCntl{}.set_raw(value);
    if (cntl.clear_protection_fault_status_addr()) {
      registers_.Poke(h.regs.fault_status, 0);
      registers_.Poke(h.regs.fault_addr_lo, 0);
      registers_.Poke(h.regs.fault_addr_hi, 0);
      // The clear is a pulse: the bit does not stay set, so the driver's next read-modify-write clears again.
      registers_.Poke(h.regs.fault_cntl, cntl.clear_protection_fault_status_addr(0).raw());
    }
  });
}

void GmcModel::PowerOnDefaults() {
  const uint64_t fb_top = kFbStart + vram_.size() - 1;
  for (Hub hub : {Hub::kGc, Hub::kMm}) {
    const HubRegisters& r = state(hub).regs;
    registers_.Poke(r.fb_base, static_cast<uint32_t>(kFbStart >> kFbShift));
    registers_.Poke(r.fb_top, static_cast<uint32_t>(fb_top >> kFbShift));
    registers_.Poke(r.fb_offset, 0);
  }
  BumpTranslationGeneration();
}

void GmcModel::GateGcHubWrites(std::function<bool()> gc_powered) {
  for (const regs::RegisterInfo& reg : regs::AllRegisters()) {
    if (reg.ip() != regs::Ip::kGc) continue;
    if (!absl::StartsWith(reg.name(), "GCVM_") && !absl::StartsWith(reg.name(), "GCMC_")) continue;
    const absl::StatusOr<uint64_t> address = bases_.Resolve(regs::Ip::kGc, 0, reg.segment(), reg.offset());
    if (!address.ok()) continue;
    const std::string name(reg.name());
    registers_.GateWrites(*address, [this, gc_powered, name](uint32_t value) {
      if (gc_powered()) {
        reported_unpowered_write_.store(false, std::memory_order_relaxed);
        return true;
      }
      if (!reported_unpowered_write_.exchange(true, std::memory_order_relaxed)) {
        errors_.Report("gmc", absl::StrFormat("gfxhub: %s = %#x written while GC is not powered (before the RLC "
                                              "autoload): lost, as is every GC hub write until then; program the GC "
                                              "hub after the autoload (gfx_v11_0_hw_init, gfx_v11_0_gfxhub_enable)",
                                              name, value));
      }
      return false;
    });
  }
}

void GmcModel::Reset() {
  for (Hub hub : {Hub::kGc, Hub::kMm}) {
    HubState& h = state(hub);
    base::MutexLock lock(&h.mu);
    for (auto& tlb : h.tlb) tlb.clear();
    for (auto& sem : h.sem_held) sem.store(false);
  }
  BumpTranslationGeneration();
}

void GmcModel::InjectLostInvalidateAck(Hub hub, bool enabled) {
  state(hub).lose_ack.store(enabled, std::memory_order_release);
}

void GmcModel::InjectPageFault(const MemoryClient& client, uint64_t address) {
  (void)RaiseFault(client, address, Access::kWrite, Fault{FaultKind::kInvalid, "injected page fault"});
}

size_t GmcModel::tlb_entries(Hub hub) const {
  const HubState& h = hub == Hub::kGc ? gc_ : mm_;
  base::ReaderMutexLock lock(&h.mu);
  size_t count = 0;
  for (const auto& tlb : h.tlb) count += tlb.size();
  return count;
}

uint64_t GmcModel::Reg64(uint64_t lo, uint64_t hi) const {
  return (uint64_t{registers_.Peek(hi)} << 32) | registers_.Peek(lo);
}

std::span<uint8_t> GmcModel::HostView(bool system, uint64_t physical, uint64_t length, bool write) {
  if (!system) {
    if (physical >= vram_.size() || length > vram_.size() - physical) return {};
    return vram_.subspan(physical, length);
  }
  uint8_t* host = dma_.Translate(physical, length);
  if (host == nullptr) {
    dma_.RecordFault(pci::sim::DmaFault{physical, length, write, !dma_.bus_master()});
    return {};
  }
  return {host, length};
}

std::optional<std::string> GmcModel::BusMasterDisabled(bool write, uint64_t bus_address) const {
  // Not an IOMMU fault: the function may not master the bus at all until the driver sets PCI_COMMAND_MASTER.
  if (dma_.bus_master()) return std::nullopt;
  return absl::StrFormat("DMA %s of system address %#x refused: bus master disabled (PCI command register)",
                         write ? "write" : "read", bus_address);
}

absl::StatusOr<uint64_t> GmcModel::ReadEntry(uint64_t table, bool system, uint64_t index) {
  const uint64_t address = table + index * sizeof(uint64_t);
  std::span<uint8_t> view = HostView(system, address, sizeof(uint64_t), false);
  if (view.empty()) {
    if (system) {
      if (auto disabled = BusMasterDisabled(false, address)) {
        return absl::FailedPreconditionError(absl::StrCat("page-table entry: ", *disabled));
      }
    }
    return absl::OutOfRangeError(absl::StrFormat("page-table entry at %s address %#x is outside %s",
                                                 system ? "system" : "VRAM", address,
                                                 system ? "the driver's DMA memory" : "VRAM"));
  }
  return std::atomic_ref<uint64_t>(*reinterpret_cast<uint64_t*>(view.data())).load(std::memory_order_acquire);
}

absl::StatusOr<GmcModel::TlbEntry> GmcModel::Walk(HubState& hub, uint32_t vmid, uint64_t address, Fault& fault) {
  const ContextCntl cntl = ContextCntl{}.set_raw(registers_.Peek(hub.regs.cntl[vmid]));
  const uint64_t start = Reg64(hub.regs.start_lo[vmid], hub.regs.start_hi[vmid]) << kPageShift;
  const uint64_t end = (Reg64(hub.regs.end_lo[vmid], hub.regs.end_hi[vmid]) << kPageShift) | (kPageSize - 1);
  if (!cntl.enable_context() || address < start || address > end) {
    fault = {FaultKind::kRange, absl::StrFormat("address outside VM context %d (%s, range %#x..%#x)", vmid,
                                                cntl.enable_context() ? "enabled" : "disabled", start, end)};
    return absl::OutOfRangeError(fault.why);
  }
  page_walks_.fetch_add(1, std::memory_order_relaxed);
  const int depth = static_cast<int>(cntl.page_table_depth());
  const int page_table_bits = kDirectoryBits + static_cast<int>(cntl.page_table_block_size());
  const uint64_t relative = address - start;
  const uint64_t base = Reg64(hub.regs.base_lo[vmid], hub.regs.base_hi[vmid]);
  uint64_t table = base & kPteAddressMask;
  bool system = (base & regs::vm::AMDGPU_PTE_SYSTEM) != 0;

  for (int level = depth - 1; level >= 0; --level) {  // level 2 = PDB2 ... 0 = PDB0
    const int shift = kPageShift + page_table_bits + kDirectoryBits * level;
    const uint64_t index = level == depth - 1 ? relative >> shift : (relative >> shift) & ((1u << kDirectoryBits) - 1);
    auto pde = ReadEntry(table, system, index);
    if (!pde.ok()) {
      fault = {FaultKind::kWalker, absl::StrFormat("PDB%d: %s", level, pde.status().message()), level};
      return absl::OutOfRangeError(fault.why);
    }
    if ((*pde & regs::vm::AMDGPU_PTE_VALID) == 0) {
      fault = {FaultKind::kPde,
               absl::StrFormat("PDB%d entry %d at %#x is not valid (%#x)", level, index, table + index * 8, *pde),
               level};
      return absl::NotFoundError(fault.why);
    }
    if (*pde & regs::vm::AMDGPU_PDE_PTE) {  // a directory entry used as a huge-page PTE
      const uint64_t size = uint64_t{1} << shift;
      // A huge page's address need not be aligned to its size: the page is the `size` bytes from that address
      // (the offset is added, not masked off). No public document says so; the evidence is tinygrad's AM driver,
      // which runs real RX 7900 XTX boards and maps every CPU-visible VRAM buffer of 2 MiB or more (palloc with
      // 4 KiB alignment) with PDB0 huge pages at 4 KiB-aligned addresses: masking would misplace every access to
      // them. amdgpu never builds one (docs/fidelity.md, A5).
      return TlbEntry{size, *pde & kPteAddressMask, *pde};
    }
    table = *pde & kPdeAddressMask;
    system = (*pde & regs::vm::AMDGPU_PTE_SYSTEM) != 0;
  }

  const uint64_t index =
      depth == 0 ? relative >> kPageShift : (relative >> kPageShift) & ((uint64_t{1} << page_table_bits) - 1);
  auto pte = ReadEntry(table, system, index);
  if (!pte.ok()) {
    fault = {FaultKind::kWalker, absl::StrFormat("PTB: %s", pte.status().message())};
    return absl::OutOfRangeError(fault.why);
  }
  if ((*pte & regs::vm::AMDGPU_PTE_VALID) == 0) {
    fault = {FaultKind::kInvalid, absl::StrFormat("PTE %d at %#x is not valid (%#x)", index, table + index * 8, *pte)};
    return absl::NotFoundError(fault.why);
  }
  // A fragment promises that 2^FRAG pages around this one are physically contiguous: the TLB holds all of it.
  const uint64_t size = kPageSize << regs::vm::PteFragmentOf(*pte);
  const uint64_t offset_in_fragment = (address & (size - 1)) & ~(kPageSize - 1);
  return TlbEntry{size, (*pte & kPteAddressMask) - offset_in_fragment, *pte};
}

absl::StatusOr<GmcModel::Translation> GmcModel::Translate(const MemoryClient& client, uint64_t address, Access access) {
  HubState& hub = state(client.hub);
  const HubRegisters& r = hub.regs;
  if (client.vmid >= kContexts) {
    return RaiseFault(client, address, access, {FaultKind::kRange, absl::StrFormat("vmid %d", client.vmid)});
  }
  if (std::optional<std::string> refused = HubRefuses(client)) {
    const std::string message =
        absl::StrFormat("%s %s of %#x (vmid %d, %s) not translated: %s", HubName(client.hub),
                        access == Access::kWrite ? "write" : "read", address, client.vmid, client.name, *refused);
    errors_.Report("gmc", message);
    return absl::FailedPreconditionError(message);
  }
  if (client.vmid == 0) {
    // The system aperture: physical FB and AGP ranges for context 0, outside its page table.
    const uint64_t aperture_low = uint64_t{registers_.Peek(r.aperture_low)} << kApertureShift;
    const uint64_t aperture_high =
        (uint64_t{registers_.Peek(r.aperture_high)} << kApertureShift) | ((uint64_t{1} << kApertureShift) - 1);
    const uint64_t fb_low = uint64_t{registers_.Peek(r.fb_base) & 0xffffff} << kFbShift;
    const uint64_t fb_high = (uint64_t{registers_.Peek(r.fb_top) & 0xffffff} << kFbShift) | 0xffffff;
    const uint64_t agp_low = uint64_t{registers_.Peek(r.agp_bot) & 0xffffff} << kFbShift;
    const uint64_t agp_high = (uint64_t{registers_.Peek(r.agp_top) & 0xffffff} << kFbShift) | 0xffffff;
    if (address >= aperture_low && address <= aperture_high) {
      if (address >= fb_low && address <= fb_high) {
        const uint64_t fb_offset = uint64_t{registers_.Peek(r.fb_offset) & 0xffffff} << kFbShift;
        return Translation{address - fb_low + fb_offset, fb_high - address + 1, false};
      }
      if (registers_.Peek(r.agp_top) >= registers_.Peek(r.agp_bot) && address >= agp_low && address <= agp_high) {
        const uint64_t agp_base = uint64_t{registers_.Peek(r.agp_base) & 0xffffff} << kFbShift;
        return Translation{address - agp_low + agp_base, agp_high - address + 1, true};
      }
    }
  }
  {
    base::ReaderMutexLock lock(&hub.mu);
    const auto& tlb = hub.tlb[client.vmid];
    auto it = tlb.upper_bound(address);
    if (it != tlb.begin()) {
      --it;
      if (address - it->first < it->second.size) {
        const uint64_t flags = it->second.flags;
        if (!Denied(flags, access)) {
          return Translation{it->second.physical + (address - it->first), it->first + it->second.size - address,
                             (flags & regs::vm::AMDGPU_PTE_SYSTEM) != 0};
        }
      }
    }
  }
  Fault fault{};
  auto entry = Walk(hub, client.vmid, address, fault);
  if (!entry.ok()) return RaiseFault(client, address, access, fault);
  if (Denied(entry->flags, access)) {
    const FaultKind kind = access == Access::kWrite     ? FaultKind::kWrite
                           : access == Access::kExecute ? FaultKind::kExecute
                                                        : FaultKind::kRead;
    return RaiseFault(client, address, access,
                      {kind, absl::StrFormat("page is not %s (PTE flags %#x)", PermissionName(access),
                                             entry->flags & ~kPteAddressMask)});
  }
  const uint64_t va = address & ~(entry->size - 1);
  {
    base::MutexLock lock(&hub.mu);
    hub.tlb[client.vmid][va] = *entry;
  }
  return Translation{entry->physical + (address - va), va + entry->size - address,
                     (entry->flags & regs::vm::AMDGPU_PTE_SYSTEM) != 0};
}

absl::StatusOr<std::span<uint8_t>> GmcModel::Map(const MemoryClient& client, uint64_t address, uint64_t length,
                                                 Access access) {
  return MapRange(client, address, length, access, /*ahead=*/false);
}

absl::StatusOr<std::span<uint8_t>> GmcModel::MapAhead(const MemoryClient& client, uint64_t address, uint64_t length,
                                                      Access access) {
  return MapRange(client, address, length, access, /*ahead=*/true);
}

absl::StatusOr<std::span<uint8_t>> GmcModel::MapRange(const MemoryClient& client, uint64_t address, uint64_t length,
                                                      Access access, bool ahead) {
  if (length == 0) return absl::InvalidArgumentError(absl::StrFormat("%s: empty access at %#x", client.name, address));
  const bool write = access == Access::kWrite;
  if (client.bus_address) {
    std::span<uint8_t> view =
        HostView(true, address, std::min<uint64_t>(length, kPageSize - address % kPageSize), write);
    if (view.empty()) {
      errors_.Report(client.name,
                     BusMasterDisabled(write, address)
                         .value_or(absl::StrFormat("DMA %s of bus address %#x outside the driver's DMA memory",
                                                   write ? "write" : "read", address)));
      return absl::PermissionDeniedError(
          absl::StrFormat("%s: bus address %#x is not DMA memory of this device", client.name, address));
    }
    return view;
  }
  BAREGPU_ASSIGN_OR_RETURN(Translation translation, Translate(client, address, access));
  uint64_t reach = translation.contiguous;  // how far from `address` this access may go in one piece
  // The top DISCOVERY_TMR_OFFSET bytes of VRAM hold the discovery binary and are a TMR the PSP protects
  // (amdgpu_ttm_reserve_tmr: "reserve TMR memory at the top of VRAM which holds IP Discovery data and is protected
  // by PSP"): a client's write there is refused; a write that runs into it stops where it begins.
  const uint64_t protected_start = vram_.size() - kDiscoveryOffsetFromTop;
  if (write && !translation.system && translation.physical < vram_.size()) {
    if (translation.physical >= protected_start) {
      const std::string why = absl::StrFormat(
          "VRAM %#x is in the discovery TMR (the top %d KiB, DISCOVERY_TMR_OFFSET), which the PSP protects",
          translation.physical, kDiscoveryOffsetFromTop >> 10);
      errors_.Report(client.name, absl::StrFormat("write %#x: %s", address, why));
      return absl::PermissionDeniedError(absl::StrFormat("%s: %s", client.name, why));
    }
    reach = std::min(reach, protected_start - translation.physical);
  }
  const uint64_t piece = std::min(length, reach);
  if (ahead) {
    // The rest of the page has the same translation; take it if one host view holds it (no fault is raised for
    // the part past `length`: if the view cannot reach it, the access gets the piece it asked for).
    const uint64_t rest = std::min(reach, kPageSize - address % kPageSize);
    if (rest > piece) {
      if (translation.system) {
        if (uint8_t* host = dma_.Translate(translation.physical, rest)) return std::span<uint8_t>(host, rest);
      } else if (translation.physical < vram_.size() && rest <= vram_.size() - translation.physical) {
        return vram_.subspan(translation.physical, rest);
      }
    }
  }
  std::span<uint8_t> view = HostView(translation.system, translation.physical, piece, write);
  if (view.empty() && translation.system && piece > kPageSize - translation.physical % kPageSize) {
    // The range may straddle two DMA buffers that happen to be adjacent in the page table: take one page.
    view = HostView(true, translation.physical, kPageSize - translation.physical % kPageSize, write);
  }
  if (view.empty()) {
    std::string why;
    if (!translation.system) {
      why = absl::StrFormat("VRAM address %#x is beyond VRAM (%#x bytes)", translation.physical, vram_.size());
    } else {
      why = BusMasterDisabled(write, translation.physical)
                .value_or(absl::StrFormat("system address %#x is not DMA memory of this device (IOMMU fault)",
                                          translation.physical));
    }
    errors_.Report(client.name, absl::StrFormat("%s %#x: %s", write ? "write" : "read", address, why));
    return absl::PermissionDeniedError(absl::StrFormat("%s: %s", client.name, why));
  }
  return view;
}

std::optional<std::string> GmcModel::HubRefuses(const MemoryClient& client) const {
  const HubRegisters& r = client.hub == Hub::kGc ? gc_.regs : mm_.regs;
  const L1TlbCntl l1 = L1TlbCntl{}.set_raw(registers_.Peek(r.l1_tlb_cntl));
  const char* reg = client.hub == Hub::kGc ? "GCMC_VM_MX_L1_TLB_CNTL" : "MMMC_VM_MX_L1_TLB_CNTL";
  if (!l1.enable_l1_tlb()) return absl::StrFormat("%s.ENABLE_L1_TLB is 0 (%#x)", reg, l1.raw());
  if (l1.system_access_mode() != kSystemAccessModeNotInSystemAperture) {
    return absl::StrFormat("%s.SYSTEM_ACCESS_MODE is %d, not %d as *hub_v3_0_init_tlb_regs program it (%#x)", reg,
                           l1.system_access_mode(), kSystemAccessModeNotInSystemAperture, l1.raw());
  }
  if (client.vmid != 0 && !l1.enable_advanced_driver_model()) {
    return absl::StrFormat("%s.ENABLE_ADVANCED_DRIVER_MODEL is 0, so VM contexts 1-15 are off (%#x)", reg, l1.raw());
  }
  return std::nullopt;
}

absl::StatusOr<GmcModel::Translation> GmcModel::RaiseFault(const MemoryClient& client, uint64_t address, Access access,
                                                           const Fault& fault) {
  faults_.fetch_add(1, std::memory_order_acq_rel);
  HubState& hub = state(client.hub);
  const HubRegisters& r = hub.regs;
  const bool write = access == Access::kWrite;
  const uint32_t vmid = std::min<uint32_t>(client.vmid, kContexts - 1);
  const ContextCntl context = ContextCntl{}.set_raw(registers_.Peek(r.cntl[vmid]));
  const FaultCntl cntl = FaultCntl{}.set_raw(registers_.Peek(r.fault_cntl));

  // The status fields, in the encoding amdgpu's fault logs show (see kPermissionValid).
  uint32_t permission = 0, walker = 0, mapping = 0;
  switch (fault.kind) {
    case FaultKind::kRange:
      walker = kWalkerError;
      mapping = 1;
      permission = kPermissionValid | PermissionBit(access);
      break;
    case FaultKind::kPde:
    case FaultKind::kInvalid:
      permission = kPermissionValid | PermissionBit(access);
      break;
    case FaultKind::kWalker:
      walker = kWalkerError;
      break;
    case FaultKind::kRead:
    case FaultKind::kWrite:
    case FaultKind::kExecute:
      permission = PermissionBit(access);
      break;
  }
  // The first fault locks STATUS / ADDR until the driver clears them (CLEAR_PROTECTION_FAULT_STATUS_ADDR), unless
  // ALLOW_SUBSEQUENT_PROTECTION_FAULT_STATUS_ADDR_UPDATES; later faults only set MORE_FAULTS.
  FaultStatus status = FaultStatus{}.set_raw(registers_.Peek(r.fault_status));
  if (status.raw() != 0 && !cntl.allow_subsequent_protection_fault_status_addr_updates()) {
    registers_.Poke(r.fault_status, status.more_faults(1).raw());
  } else {
    status = FaultStatus{}
                 .more_faults(status.raw() != 0)
                 .walker_error(walker)
                 .permission_faults(permission)
                 .mapping_error(mapping)
                 .cid(client.fault_cid)
                 .rw(write)
                 .vmid(vmid);
    registers_.Poke(r.fault_status, status.raw());
    registers_.Poke(r.fault_addr_lo, static_cast<uint32_t>(address >> kPageShift));
    registers_.Poke(r.fault_addr_hi, static_cast<uint32_t>(address >> kHighShift));
  }

  // VM_CONTEXTn_CNTL's per-kind bits (the context has PDE0 only; L2_PROTECTION_FAULT_CNTL has PDE0-2 by level).
  bool interrupt = false, context_default = false, l2_default = false, retry = false;
  switch (fault.kind) {
    case FaultKind::kRange:
      interrupt = context.range_protection_fault_enable_interrupt();
      context_default = context.range_protection_fault_enable_default();
      l2_default = cntl.range_protection_fault_enable_default();
      break;
    case FaultKind::kPde:
    case FaultKind::kWalker:
      interrupt = context.pde0_protection_fault_enable_interrupt();
      context_default = context.pde0_protection_fault_enable_default();
      l2_default = fault.level == 0   ? cntl.pde0_protection_fault_enable_default()
                   : fault.level == 1 ? cntl.pde1_protection_fault_enable_default()
                                      : cntl.pde2_protection_fault_enable_default();
      break;
    case FaultKind::kInvalid:
      interrupt = context.valid_protection_fault_enable_interrupt();
      context_default = context.valid_protection_fault_enable_default();
      l2_default = cntl.valid_protection_fault_enable_default();
      break;
    case FaultKind::kRead:
      interrupt = context.read_protection_fault_enable_interrupt();
      context_default = context.read_protection_fault_enable_default();
      l2_default = cntl.read_protection_fault_enable_default();
      break;
    case FaultKind::kWrite:
      interrupt = context.write_protection_fault_enable_interrupt();
      context_default = context.write_protection_fault_enable_default();
      l2_default = cntl.write_protection_fault_enable_default();
      break;
    case FaultKind::kExecute:
      interrupt = context.execute_protection_fault_enable_interrupt();
      context_default = context.execute_protection_fault_enable_default();
      l2_default = cntl.execute_protection_fault_enable_default();
      break;
  }
  const bool permission_or_invalid = fault.kind == FaultKind::kInvalid || fault.kind == FaultKind::kRead ||
                                     fault.kind == FaultKind::kWrite || fault.kind == FaultKind::kExecute;
  retry = client.vmid < kContexts &&
          (permission_or_invalid ? context.retry_permission_or_invalid_page_fault() : context.retry_other_fault());
  // Redirected only when both levels ask for it: amdgpu's vm_fault_stop=2 clears the L2 bits alone
  // (*hub_v3_0_set_fault_enable_default(false)) while the contexts keep theirs, and means the faults to stop.
  const bool redirect = !retry && context_default && l2_default && client.vmid < kContexts;
  const uint64_t dummy_page = (uint64_t{registers_.Peek(r.fault_default_lo)} << kPageShift) |
                              (uint64_t{registers_.Peek(r.fault_default_hi)} << kHighShift);
  const bool dummy_in_system = L2Cntl{}.set_raw(registers_.Peek(r.l2_cntl)).enable_default_page_out_to_system_memory();

  std::string outcome;
  if (retry) {
    outcome = "retry fault (VM_CONTEXT_CNTL.RETRY_*): the model's engines do not replay, the access fails";
  } else if (redirect && dummy_page == 0) {
    outcome = absl::StrFormat(
        "redirected to the dummy page, but %sVM_L2_PROTECTION_FAULT_DEFAULT_ADDR was never programmed (0): the "
        "access fails",
        client.hub == Hub::kGc ? "GC" : "MM");
  } else if (redirect) {
    outcome =
        absl::StrFormat("redirected to the dummy page at %s %#x", dummy_in_system ? "system" : "VRAM", dummy_page);
  } else {
    outcome = "not redirected (*_PROTECTION_FAULT_ENABLE_DEFAULT): the access fails";
  }
  const std::string message =
      absl::StrFormat("%s %s fault at %#x (vmid %d, %s): %s; STATUS %#x; %s", HubName(client.hub),
                      write ? "write" : (access == Access::kExecute ? "instruction fetch" : "read"), address, vmid,
                      client.name, fault.why, status.raw(), outcome);
  // Recorded before the interrupt: whoever handles the interrupt finds the fault in the error log too.
  errors_.Report("gmc", message);
  if (interrupt) {
    InterruptEntry entry;
    entry.client_id = client.hub == Hub::kGc ? regs::ih::SOC21_IH_CLIENTID_GFX : regs::ih::SOC21_IH_CLIENTID_VMC;
    entry.source_id = client.hub == Hub::kGc ? regs::ih::UTCL2_1_0__SRCID__FAULT : regs::ih::VMC_1_0__SRCID__VM_FAULT;
    entry.vmid = vmid;
    entry.vmid_type = client.hub == Hub::kMm;
    entry.src_data[0] = static_cast<uint32_t>(address >> kPageShift);
    entry.src_data[1] = static_cast<uint32_t>((address >> kHighShift) & kFaultSrcDataAddressHighMask) |
                        (write ? kFaultSrcDataWrite : 0) | (retry ? kFaultSrcDataRetry : 0);
    interrupts_.Post(entry);
  }
  if (redirect && dummy_page != 0) {
    // The dummy page stands in for the faulting page: same offset, to the end of that page.
    const uint64_t offset = address & (kPageSize - 1);
    redirected_accesses_.fetch_add(1, std::memory_order_release);
    return Translation{dummy_page + offset, kPageSize - offset, dummy_in_system};
  }
  return absl::PermissionDeniedError(message);
}

}  // namespace am::sim
