// Programs a GCHUB VM context through BAR5 the way gfxhub_v3_0 does for VMIDs 1-15 (and context 0 for the GART),
// with every protection-fault interrupt enabled, for tests that build page tables and then access memory.
#ifndef BAREGPU_TESTS_AM_SIM_VM_CONTEXT_H_
#define BAREGPU_TESTS_AM_SIM_VM_CONTEXT_H_

#include <cstdint>

#include "am/regs/gc.h"
#include "am/regs/mmhub.h"
#include "am/regs/mtype_constants.h"
#include "am/regs/register_space.h"
#include "am/sim/navi31.h"
#include "tests/am/sim/bar5.h"

namespace am::sim::testing {

// *hub_v3_0_init_tlb_regs: the hub's L1 TLB on with SYSTEM_ACCESS_MODE 3 and the advanced driver model (contexts
// 1-15), MTYPE UC. Without it the hub translates nothing.
inline void EnableHubTlb(Bar5& bar5, Hub hub) {
  const regs::IpBases bases = Navi31Bases();
  auto tlb = [](auto& r) {
    r.enable_l1_tlb(1)
        .system_access_mode(3)
        .enable_advanced_driver_model(1)
        .system_aperture_unmapped_access(0)
        .eco_bits(0)
        .mtype(regs::vm::MTYPE_UC);
  };
  if (hub == Hub::kGc) {
    regs::IpRegisters<regs::Ip::kGc, Bar5>::Create(bar5, bases)->Modify<regs::gc::GCMC_VM_MX_L1_TLB_CNTL>(tlb);
  } else {
    regs::IpRegisters<regs::Ip::kMmhub, Bar5>::Create(bar5, bases)->Modify<regs::mmhub::MMMC_VM_MX_L1_TLB_CNTL>(tlb);
  }
}

inline void ProgramGcContext(Bar5& bar5, uint32_t vmid, uint32_t depth, uint64_t base, uint64_t start, uint64_t end) {
  namespace gc = regs::gc;
  EnableHubTlb(bar5, Hub::kGc);
  const regs::IpBases bases = Navi31Bases();
  const uint64_t cntl_stride = gc::GCVM_CONTEXT1_CNTL::kOffset - gc::GCVM_CONTEXT0_CNTL::kOffset;
  const uint64_t stride =
      gc::GCVM_CONTEXT1_PAGE_TABLE_BASE_ADDR_LO32::kOffset - gc::GCVM_CONTEXT0_PAGE_TABLE_BASE_ADDR_LO32::kOffset;
  auto write = [&](auto reg, uint64_t step, uint32_t value) {
    using R = decltype(reg);
    bar5.WriteDword(*bases.Resolve(regs::Ip::kGc, 0, R::kSegment, R::kOffset + vmid * step), value);
  };
  write(gc::GCVM_CONTEXT0_PAGE_TABLE_BASE_ADDR_LO32{}, stride, static_cast<uint32_t>(base));
  write(gc::GCVM_CONTEXT0_PAGE_TABLE_BASE_ADDR_HI32{}, stride, static_cast<uint32_t>(base >> 32));
  write(gc::GCVM_CONTEXT0_PAGE_TABLE_START_ADDR_LO32{}, stride, static_cast<uint32_t>(start >> 12));
  write(gc::GCVM_CONTEXT0_PAGE_TABLE_START_ADDR_HI32{}, stride, static_cast<uint32_t>(start >> 44));
  write(gc::GCVM_CONTEXT0_PAGE_TABLE_END_ADDR_LO32{}, stride, static_cast<uint32_t>(end >> 12));
  write(gc::GCVM_CONTEXT0_PAGE_TABLE_END_ADDR_HI32{}, stride, static_cast<uint32_t>(end >> 44));
  write(gc::GCVM_CONTEXT0_CNTL{}, cntl_stride,
        gc::GCVM_CONTEXT0_CNTL{}
            .enable_context(1)
            .page_table_depth(depth)
            .valid_protection_fault_enable_interrupt(1)
            .range_protection_fault_enable_interrupt(1)
            .write_protection_fault_enable_interrupt(1)
            .read_protection_fault_enable_interrupt(1)
            .pde0_protection_fault_enable_interrupt(1)
            .execute_protection_fault_enable_interrupt(1)
            .raw());
}

// gmc_v11_0_flush_gpu_tlb's register sequence on GCHUB engine 17 for `vmid`; false when no ack came.
inline bool InvalidateGcTlb(Bar5& bar5, uint32_t vmid) {
  auto gc = *regs::IpRegisters<regs::Ip::kGc, Bar5>::Create(bar5, Navi31Bases());
  gc.Write(regs::gc::GCVM_INVALIDATE_ENG17_REQ{}
               .per_vmid_invalidate_req(1u << vmid)
               .invalidate_l2_ptes(1)
               .invalidate_l2_pde0(1)
               .invalidate_l2_pde1(1)
               .invalidate_l2_pde2(1)
               .invalidate_l1_ptes(1));
  return (gc.Read<regs::gc::GCVM_INVALIDATE_ENG17_ACK>().per_vmid_invalidate_ack() & (1u << vmid)) != 0;
}

}  // namespace am::sim::testing

#endif  // BAREGPU_TESTS_AM_SIM_VM_CONTEXT_H_
