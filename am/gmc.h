// The memory controller set-up, AM style: both hubs (MMHUB and GCHUB) translate VM context 0 through the memory
// manager's one root page table (4 levels over the whole 48-bit space), with the system aperture covering the FB
// so that MC addresses reach VRAM physically. Sequence after gfxhub_v3_0.c / mmhub_v3_0.c (*_gart_enable): context
// 0's range, system aperture and dummy page, L1 TLB, L2 (CNTL-CNTL5), context 0, identity aperture off, contexts
// 1-15, every invalidation engine's range; then the fault defaults (*_set_fault_enable_default) and the fault
// interrupt masks (amdgpu_gmc_set_vm_fault_masks). TLB flushes go through invalidation engine 17 (semaphore on
// MMHUB, request, ack, then the MMHUB's private CID2 invalidation), as gmc_v11_0_flush_gpu_tlb does.
#ifndef BAREGPU_AM_GMC_H_
#define BAREGPU_AM_GMC_H_

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <span>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "am/ip_block.h"
#include "am/register_io.h"
#include "am/regs/register_space.h"
#include "pci/dma_buffer.h"

namespace am {

class Device;

enum class Hub { kGc, kMm };

// A latched protection fault: the hub's L2_PROTECTION_FAULT_STATUS / _ADDR, decoded.
struct VmFault {
  Hub hub;
  uint64_t address;
  uint32_t status;
  std::string description;  // DescribeFaultStatus's text
};

// L2_PROTECTION_FAULT_STATUS decoded field by field, as *hub_v3_0_print_l2_protection_fault_status prints it
// ("gfxhub fault at 0x...: STATUS 0x00301031: VMID 3, CID 0x8, RW read, MORE_FAULTS 1, WALKER_ERROR 0,
// PERMISSION_FAULTS 0x3 (valid, read), MAPPING_ERROR 0"). Shared by the driver's IH decoding and the CLI.
std::string DescribeFaultStatus(Hub hub, uint64_t address, uint32_t status);

// A hub's fault latch: the addresses of its L2_PROTECTION_FAULT_STATUS, _ADDR_LO32, _ADDR_HI32 and _CNTL.
struct FaultLatch {
  uint64_t status, address_lo, address_hi, cntl;
};
absl::StatusOr<FaultLatch> ResolveFaultLatch(const regs::IpBases& bases, Hub hub);
// Reads, decodes and clears the latched fault (gmc_v11_0_process_interrupt: WREG32_P(vm_l2_pro_fault_cntl, 1, ~1),
// so the next fault latches); NotFound when nothing is latched. Through any register path: the driver's Gmc and
// `baregpu ih`, which reads a running device without owning it.
absl::StatusOr<VmFault> TakeFault(RegisterIo& io, const FaultLatch& latch, Hub hub);

class Gmc final : public IpBlock {
 public:
  static constexpr absl::Duration kFlushTimeout = absl::Milliseconds(100);
  // gmc_v11_0_sw_init: the GPU addresses 44 bits of system memory (the DMA mask a driver sets before mapping).
  static constexpr unsigned kDmaMaskBits = 44;

  explicit Gmc(Device& device);
  absl::string_view name() const override { return "gmc"; }
  absl::Status InitSw() override;
  // The MMHUB only (gmc_v11_0_gart_enable): the GC hub is part of GC, which the RLC autoload powers later.
  absl::Status InitHw() override;
  // The GC hub, once GC is powered (gfx_v11_0_gfxhub_enable, called by Gfx::InitHw after the autoload): its
  // apertures, TLB and context 0, then its first flush.
  absl::Status EnableGcHub();

  // Invalidates context 0's translations on both hubs (after page-table changes); the GC hub only once enabled,
  // as gmc_v11_0_flush_gpu_tlb skips it while GC is off.
  absl::Status FlushTlb();
  absl::Status FlushHub(Hub hub, uint32_t vmid);
  // Reads, decodes and clears the hub's latched fault (gmc_v11_0_process_interrupt); nullopt-like NotFound when
  // nothing is latched.
  absl::StatusOr<VmFault> TakeFault(Hub hub);

  // VRAM the hubs send unmapped system-aperture accesses to (a page of the boot region; amdgpu's mem_scratch).
  uint64_t scratch_page() const { return scratch_page_; }
  // The system-memory page faulting accesses are redirected to (amdgpu's dummy_page_addr): its bus address.
  uint64_t dummy_page() const { return dummy_page_->device_address(); }
  std::span<uint8_t> dummy_page_memory() const { return {dummy_page_->cpu(), dummy_page_->size()}; }

 private:
  static constexpr int kContexts = 16;
  static constexpr int kInvalidateEngines = 18;
  struct HubRegisters {
    uint64_t fb_base, fb_top, agp_base, agp_bot, agp_top, aperture_low, aperture_high, default_lsb, default_msb;
    uint64_t l1_tlb_cntl, l2_cntl, l2_cntl2, l2_cntl3, l2_cntl4, l2_cntl5;
    uint64_t identity_low_lo, identity_low_hi, identity_high_lo, identity_high_hi, identity_offset_lo,
        identity_offset_hi;
    std::array<uint64_t, kContexts> cntl, start_lo, start_hi, end_lo, end_hi;
    uint64_t base_lo0, base_hi0;
    std::array<uint64_t, kInvalidateEngines> range_lo, range_hi;
    uint64_t sem17, req17, ack17;
    FaultLatch fault;
    uint64_t fault_cntl2, fault_default_lo, fault_default_hi;
    uint64_t bank_select_reserved_cid2;
  };
  // Every hub register by name, through the register database.
  static absl::StatusOr<HubRegisters> ResolveHubRegisters(const regs::IpBases& bases, Hub hub);
  // ResolveHubRegisters, kept for the process per hub and IP segment bases.
  static absl::StatusOr<HubRegisters> HubRegistersFor(const regs::IpBases& bases, Hub hub);
  absl::Status InitHub(Hub hub);
  // *hub_v3_0_set_fault_enable_default(!vm_fault_stop), then amdgpu_gmc_set_vm_fault_masks(hub, true).
  void EnableFaults(Hub hub);
  HubRegisters& regs(Hub hub) { return hub == Hub::kGc ? gc_ : mm_; }

  Device& device_;
  HubRegisters gc_{}, mm_{};
  uint64_t scratch_page_ = 0;
  std::unique_ptr<pci::DmaBuffer> dummy_page_;
  std::atomic<bool> gc_hub_enabled_{false};
};

}  // namespace am

#endif  // BAREGPU_AM_GMC_H_
