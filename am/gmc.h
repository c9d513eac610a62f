// The memory controller set-up, AM style: both hubs (MMHUB and GCHUB) translate VM context 0 through the memory
// manager's one root page table (4 levels over the whole 48-bit space), with the system aperture covering the FB
// so that MC addresses reach VRAM physically. Sequence after gfxhub_v3_0.c / mmhub_v3_0.c (*_gart_enable): system
// aperture, L1 TLB, L2, context 0, invalidation engine ranges, protection-fault defaults. TLB flushes go through
// invalidation engine 17 (semaphore on MMHUB, request, ack), as gmc_v11_0_flush_gpu_tlb does.
#ifndef BAREGPU_AM_GMC_H_
#define BAREGPU_AM_GMC_H_

#include <array>
#include <atomic>
#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "am/ip_block.h"

namespace am {

class Device;

enum class Hub { kGc, kMm };

// A latched protection fault: the hub's L2_PROTECTION_FAULT_STATUS / _ADDR, decoded.
struct VmFault {
  Hub hub;
  uint64_t address;
  uint32_t status;
  std::string description;  // "vmid 1, cid 0x42, write, PERMISSION_FAULTS=0x1 ..."
};

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

  // VRAM the hubs send unmapped system-aperture accesses to (a page of the boot region).
  uint64_t scratch_page() const { return scratch_page_; }

 private:
  struct HubRegisters {
    uint64_t fb_base, fb_top, agp_base, agp_bot, agp_top, aperture_low, aperture_high, default_lsb, default_msb;
    uint64_t l1_tlb_cntl, l2_cntl;
    uint64_t cntl0, base_lo0, base_hi0, start_lo0, start_hi0, end_lo0, end_hi0;
    uint64_t sem17, req17, ack17, range_lo17, range_hi17;
    uint64_t fault_status, fault_addr_lo, fault_addr_hi, fault_cntl;
  };
  absl::Status InitHub(Hub hub);
  HubRegisters& regs(Hub hub) { return hub == Hub::kGc ? gc_ : mm_; }

  Device& device_;
  HubRegisters gc_{}, mm_{};
  uint64_t scratch_page_ = 0;
  std::atomic<bool> gc_hub_enabled_{false};
};

}  // namespace am

#endif  // BAREGPU_AM_GMC_H_
