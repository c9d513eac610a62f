// The memory controller of the virtual Navi31: both hubs (GCHUB for GFX, compute and SDMA; MMHUB for the PSP and
// the IH), each with the system aperture (FB and AGP ranges, default page), sixteen VM contexts walked in the gfx11
// page-table format, a TLB, the invalidation engines, and the L2 protection-fault registers.
//
// Sources: gfxhub_v3_0.c / mmhub_v3_0.c / gmc_v11_0.c (what the driver programs and how it invalidates),
// amdgpu_vm.h and amdgpu_vm_pt.c (PTE/PDE bits, the level layout: 9 bits per directory level, the page table
// 9 + PAGE_TABLE_BLOCK_SIZE bits, PDE-as-PTE huge pages, fragments), the register headers for fields.
//
// Behaviour worth knowing:
// - The TLB caches translations (a whole fragment at once, as the PTE's fragment field promises the hardware) and
//   is never refreshed on its own: a page-table change is invisible until the driver invalidates the VM context
//   through an invalidation engine (VM_INVALIDATE_ENGn_SEM / _REQ / _ACK). The ack bit for a vmid is set only
//   after that vmid's translations are gone.
// - A hub translates only once the driver set it up as *hub_v3_0_init_tlb_regs does: MX_L1_TLB_CNTL.ENABLE_L1_TLB
//   and SYSTEM_ACCESS_MODE 3 for every access, ENABLE_ADVANCED_DRIVER_MODEL as well for contexts 1-15. Otherwise
//   the access fails with a device error naming the field (nothing is latched: no walk happened).
// - A failed translation latches L2_PROTECTION_FAULT_STATUS / _ADDR in the hardware's encoding (docs/fidelity.md:
//   an invalid entry sets PERMISSION_FAULTS valid + the access's bit, a denied permission the access's bit, an
//   address outside the context WALKER_ERROR 1 + MAPPING_ERROR 1 as well), MORE_FAULTS for later ones (locked
//   until L2_PROTECTION_FAULT_CNTL.CLEAR_PROTECTION_FAULT_STATUS_ADDR unless ALLOW_SUBSEQUENT_..._UPDATES), and
//   posts the fault interrupt the context enables (client GFX with UTCL2 FAULT for GCHUB, VMC with VM_FAULT for
//   MMHUB; src_data as gmc_v11_0_process_interrupt decodes it: address, write bit, retry bit).
// - What happens to the access follows VM_CONTEXTn_CNTL: a retryable fault (RETRY_PERMISSION_OR_INVALID_PAGE_FAULT
//   for invalid pages and permissions, RETRY_OTHER_FAULT for the rest) is answered with a retry the model's
//   engines cannot replay (the access fails, the IH entry carries the retry bit); otherwise, when the fault kind's
//   *_PROTECTION_FAULT_ENABLE_DEFAULT is set both in the context and in L2_PROTECTION_FAULT_CNTL, the access goes
//   to the dummy page (L2_PROTECTION_FAULT_DEFAULT_ADDR; system memory when L2_CNTL.ENABLE_DEFAULT_PAGE_OUT_TO_
//   SYSTEM_MEMORY) and the engine runs on; else the access fails and the engine that made it stops.
// - Memory is VRAM (host memory of the device's persistent state) or system memory, reached only through the DMA
//   buffers the driver allocated (the IOMMU's guarantee): a PTE with the SYSTEM bit naming any other bus address
//   faults in DmaSpace and touches nothing.
// - At power-on the FB location registers of both hubs hold where VRAM sits in the GPU's address space (the VBIOS
//   programs them; the driver reads them in get_fb_location).
#ifndef BAREGPU_AM_SIM_GMC_MODEL_H_
#define BAREGPU_AM_SIM_GMC_MODEL_H_

#include <array>
#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <span>
#include <string>

#include "absl/base/thread_annotations.h"
#include "am/regs/ip_bases.h"
#include "am/sim/device_errors.h"
#include "am/sim/gpu_memory.h"
#include "am/sim/interrupt_sink.h"
#include "am/sim/register_file.h"
#include "base/mutex.h"
#include "pci/sim/dma_space.h"

namespace am::sim {

class GmcModel final : public GpuMemory {
 public:
  static constexpr int kContexts = 16;
  static constexpr int kInvalidateEngines = 18;
  // Where VRAM starts in the GPU's address space at power-on: a discrete Navi3x reports FB_LOCATION_BASE 0x8000
  // (16 MiB units), i.e. VRAM at 0x80_0000_0000, in amdgpu's boot log ("VRAM: ... 0x0000008000000000 - ...").
  static constexpr uint64_t kFbStart = uint64_t{0x8000} << 24;

  GmcModel(RegisterFile& registers, const regs::IpBases& bases, std::span<uint8_t> vram, pci::sim::DmaSpace& dma,
           InterruptSink& interrupts, DeviceErrorLog& errors);

  absl::StatusOr<std::span<uint8_t>> Map(const MemoryClient& client, uint64_t address, uint64_t length,
                                         Access access) override;
  absl::StatusOr<std::span<uint8_t>> MapAhead(const MemoryClient& client, uint64_t address, uint64_t length,
                                              Access access) override;
  uint64_t redirected_accesses() const override { return redirected_accesses_.load(std::memory_order_acquire); }
  uint64_t translation_generation() const override {
    // Two counts that only grow: their sum changes whenever either does (and never reaches kNoTranslationGeneration).
    return translation_generation_.load(std::memory_order_acquire) + dma_.generation();
  }

  // What the VBIOS leaves in the registers at power-on (the FB location of both hubs).
  void PowerOnDefaults();
  // A reset of the chip: the TLBs and semaphores are gone.
  void Reset();
  // The GC hub (GCVM_*, GCMC_* registers) is part of GC: while `gc_powered` says GC is off (before the RLC autoload
  // powers it), writes to it are lost (the first is logged), invalidations included, so they are never
  // acknowledged. What the VBIOS left there (the FB location) stays. amdgpu programs and flushes the GC hub only
  // once GC is on (gfx_v11_0_hw_init after the autoload; gmc_v11_0_flush_gpu_tlb skips it while !gfx.is_poweron).
  void GateGcHubWrites(std::function<bool()> gc_powered);

  // Fault injection: invalidation requests on `hub` are never acknowledged (the flush happens, the ack never).
  void InjectLostInvalidateAck(Hub hub, bool enabled);
  // A page fault as if an engine of `client` had touched `address` (write access): latches and interrupts.
  void InjectPageFault(const MemoryClient& client, uint64_t address);

  // For tests and tools.
  uint64_t page_walks() const { return page_walks_.load(std::memory_order_acquire); }
  uint64_t faults() const { return faults_.load(std::memory_order_acquire); }
  size_t tlb_entries(Hub hub) const;

 private:
  // kPde: an invalid directory entry; kWalker: a table the walker cannot read, or an entry it cannot use;
  // kInvalid: an invalid PTE; kRead / kWrite / kExecute: a valid PTE without the access's permission.
  enum class FaultKind { kRange, kPde, kWalker, kInvalid, kRead, kWrite, kExecute };
  struct HubRegisters {
    uint64_t fb_base, fb_top, fb_offset, agp_base, agp_bot, agp_top, aperture_low, aperture_high, default_lsb,
        default_msb;
    uint64_t l1_tlb_cntl, l2_cntl, fault_default_lo, fault_default_hi;
    std::array<uint64_t, kContexts> cntl, base_lo, base_hi, start_lo, start_hi, end_lo, end_hi;
    std::array<uint64_t, kInvalidateEngines> sem, req, ack;
    uint64_t fault_status, fault_addr_lo, fault_addr_hi, fault_cntl;
  };
  // One cached translation: [va, va + size) maps to [physical, physical + size).
  struct TlbEntry {
    uint64_t size;
    uint64_t physical;
    uint64_t flags;  // the PTE's permission and SYSTEM bits
  };
  struct Translation {
    uint64_t physical;
    uint64_t contiguous;  // bytes from the address to the end of its page or fragment
    bool system;
  };
  struct Fault {
    FaultKind kind;
    std::string why;
    int level = 0;  // for kPde / kWalker: the directory level (PDB0 = 0) whose entry or table failed
  };
  struct HubState {
    HubRegisters regs;
    mutable base::Mutex mu;
    std::array<std::map<uint64_t, TlbEntry>, kContexts> tlb ABSL_GUARDED_BY(mu);
    std::array<std::atomic<bool>, kInvalidateEngines> sem_held{};
    std::atomic<bool> lose_ack{false};
  };

  HubRegisters ResolveRegisters(Hub hub) const;
  void AttachHooks(Hub hub);
  HubState& state(Hub hub) { return hub == Hub::kGc ? gc_ : mm_; }

  absl::StatusOr<Translation> Translate(const MemoryClient& client, uint64_t address, Access access);
  // Map and MapAhead: `ahead` lets the view run on to the end of the page where the translation holds.
  absl::StatusOr<std::span<uint8_t>> MapRange(const MemoryClient& client, uint64_t address, uint64_t length,
                                              Access access, bool ahead);
  // A register write that changes what translations give (apertures, TLB control): views kept by engines go.
  void BumpTranslationGeneration() { translation_generation_.fetch_add(1, std::memory_order_acq_rel); }
  // The page-table walk of one context; nullopt-like failure returns the fault.
  absl::StatusOr<TlbEntry> Walk(HubState& hub, uint32_t vmid, uint64_t address, Fault& fault);
  absl::StatusOr<uint64_t> ReadEntry(uint64_t table, bool system, uint64_t index);
  std::span<uint8_t> HostView(bool system, uint64_t physical, uint64_t length, bool write);
  // The device error for a system-memory access made while bus mastering is off; nullopt while it is on.
  std::optional<std::string> BusMasterDisabled(bool write, uint64_t bus_address) const;
  // Why the hub translates nothing for `client` (its MX_L1_TLB_CNTL); nullopt when it translates.
  std::optional<std::string> HubRefuses(const MemoryClient& client) const;
  // Latches and reports the fault and decides the access's fate from VM_CONTEXTn_CNTL: the dummy page's
  // translation when the fault is redirected, else the error the engine stops on.
  absl::StatusOr<Translation> RaiseFault(const MemoryClient& client, uint64_t address, Access access,
                                         const Fault& fault);
  uint64_t Reg64(uint64_t lo, uint64_t hi) const;

  RegisterFile& registers_;
  const regs::IpBases& bases_;
  std::span<uint8_t> vram_;
  pci::sim::DmaSpace& dma_;
  InterruptSink& interrupts_;
  DeviceErrorLog& errors_;
  std::atomic<bool> reported_unpowered_write_{false};
  HubState gc_, mm_;
  std::atomic<uint64_t> page_walks_{0};
  std::atomic<uint64_t> faults_{0};
  std::atomic<uint64_t> redirected_accesses_{0};
  std::atomic<uint64_t> translation_generation_{0};
};

}  // namespace am::sim

#endif  // BAREGPU_AM_SIM_GMC_MODEL_H_
