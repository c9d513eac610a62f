// The virtual Navi31's memory controller, driven as a driver drives it: registers through BAR5, page tables written
// into VRAM through BAR0, system memory from the device's DMA allocator. An engine's view is the GpuMemory
// interface the GMC gives the engine models.
#include "am/sim/gmc_model.h"

#include <poll.h>
#include <unistd.h>

#include <cstring>

#include "absl/strings/match.h"
#include "am/discovery.h"
#include "am/regs/gc.h"
#include "am/regs/ih_constants.h"
#include "am/regs/mmhub.h"
#include "am/regs/osssys.h"
#include "am/regs/register_space.h"
#include "am/regs/vm.h"
#include "am/regs/vmc_srcid_constants.h"
#include "am/sim/cached_memory.h"
#include "am/sim/navi31.h"
#include "gtest/gtest.h"
#include "pci/open.h"
#include "pci/sim/persistent_state.h"
#include "tests/am/sim/bar5.h"
#include "tests/am/sim/sim_state_dir.h"
#include "tests/am/sim/vm_context.h"

namespace am::sim {
namespace {

auto* const kStateDir = testing::RegisterSimStateDir();

using ::am::sim::testing::Bar5;
using Gc = regs::IpRegisters<regs::Ip::kGc, Bar5>;
using Mmhub = regs::IpRegisters<regs::Ip::kMmhub, Bar5>;
using Osssys = regs::IpRegisters<regs::Ip::kOsssys, Bar5>;
namespace vm = regs::vm;

constexpr uint64_t kPte = vm::AMDGPU_PTE_VALID | vm::AMDGPU_PTE_READABLE | vm::AMDGPU_PTE_WRITEABLE;
constexpr uint64_t kPde = vm::AMDGPU_PTE_VALID;
constexpr MemoryClient kSdma{Hub::kGc, 1, 0x42, "test-engine"};

class GmcModelTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // Each test starts from a powered-off device (the state would otherwise carry over from the last test).
    ASSERT_TRUE(pci::sim::PersistentState::PowerCycle("sim:navi31:gmc").ok());
    auto device = pci::Open("sim:navi31:gmc");
    ASSERT_TRUE(device.ok()) << device.status();
    device_ = std::move(*device);
    bar5_.emplace(*device_->MapMmio(5));
    // The test stands in for the PSP's RLC autoload, which powers GC: before it the GC hub takes no writes.
    static_cast<Navi31&>(*device_).firmware().SetRlcAutoloaded();
    gc_.emplace(*Gc::Create(*bar5_, Navi31Bases()));
    mmhub_.emplace(*Mmhub::Create(*bar5_, Navi31Bases()));
    osssys_.emplace(*Osssys::Create(*bar5_, Navi31Bases()));
    vram_ = *device_->MapMemory(0);
    ASSERT_TRUE(device_->SetBusMaster(true).ok());
  }
  Navi31& navi31() { return static_cast<Navi31&>(*device_); }
  GpuMemory& memory() { return navi31().gmc(); }

  void WriteQword(uint64_t vram_offset, uint64_t value) { std::memcpy(vram_.data() + vram_offset, &value, 8); }

  // A four-level page table for context `vmid` of GCHUB (depth 3, block size 0: PDB2/PDB1/PDB0/PTB, 9 bits each,
  // as amdgpu programs VMIDs 1-15), its tables at kTables in VRAM. Returns the PTB's VRAM offset for `va`.
  uint64_t BuildFourLevel(uint32_t vmid, uint64_t va) {
    const uint64_t pdb2 = kTables, pdb1 = kTables + 0x1000, pdb0 = kTables + 0x2000, ptb = kTables + 0x3000;
    WriteQword(pdb2 + ((va >> 39) & 0x1ff) * 8, pdb1 | kPde);
    WriteQword(pdb1 + ((va >> 30) & 0x1ff) * 8, pdb0 | kPde);
    WriteQword(pdb0 + ((va >> 21) & 0x1ff) * 8, ptb | kPde);
    ProgramContext(vmid, /*depth=*/3, pdb2, 0, (uint64_t{1} << 48) - 1);
    return ptb;
  }
  void ProgramContext(uint32_t vmid, uint32_t depth, uint64_t base, uint64_t start, uint64_t end) {
    testing::ProgramGcContext(*bar5_, vmid, depth, base, start, end);
  }
  // The MMHUB system aperture covering the FB, as mmhub_v3_0_init_system_aperture_regs programs it.
  void ProgramMmhubAperture() {
    testing::EnableHubTlb(*bar5_, Hub::kMm);
    const uint64_t fb_start = uint64_t{mmhub_->Read<regs::mmhub::MMMC_VM_FB_LOCATION_BASE>().fb_base()} << 24;
    const uint64_t fb_end = (uint64_t{mmhub_->Read<regs::mmhub::MMMC_VM_FB_LOCATION_TOP>().fb_top()} << 24) | 0xffffff;
    mmhub_->Write(regs::mmhub::MMMC_VM_SYSTEM_APERTURE_LOW_ADDR{}.set_raw(fb_start >> 18));
    mmhub_->Write(regs::mmhub::MMMC_VM_SYSTEM_APERTURE_HIGH_ADDR{}.set_raw(fb_end >> 18));
  }
  // IH ring 0 in VRAM at kIhRing (through the MMHUB FB aperture), write-back at kIhWptr.
  void EnableIhRing(uint32_t size_log2_dwords) {
    ProgramMmhubAperture();
    const uint64_t ring = GmcModel::kFbStart + kIhRing;
    osssys_->Write(regs::osssys::IH_RB_BASE{}.set_raw(static_cast<uint32_t>(ring >> 8)));
    osssys_->Write(regs::osssys::IH_RB_BASE_HI{}.set_raw(static_cast<uint32_t>(ring >> 40)));
    osssys_->Write(regs::osssys::IH_RB_WPTR_ADDR_LO{}.set_raw(static_cast<uint32_t>(GmcModel::kFbStart + kIhWptr)));
    osssys_->Write(regs::osssys::IH_RB_WPTR_ADDR_HI{}.set_raw((GmcModel::kFbStart + kIhWptr) >> 32));
    osssys_->Write(regs::osssys::IH_RB_CNTL{}
                       .rb_enable(1)
                       .rb_size(size_log2_dwords)
                       .wptr_writeback_enable(1)
                       .wptr_overflow_enable(1)
                       .enable_intr(1)
                       .mc_space(4));
  }
  std::array<uint32_t, 8> IhEntry(int index) {
    std::array<uint32_t, 8> entry;
    std::memcpy(entry.data(), vram_.data() + kIhRing + index * 32, 32);
    return entry;
  }

  static constexpr uint64_t kTables = 0x100000;
  static constexpr uint64_t kIhRing = 0x200000;
  static constexpr uint64_t kIhWptr = 0x210000;
  static constexpr uint64_t kData = 0x400000;

  std::unique_ptr<pci::Device> device_;
  std::optional<Bar5> bar5_;
  std::optional<Gc> gc_;
  std::optional<Mmhub> mmhub_;
  std::optional<Osssys> osssys_;
  std::span<uint8_t> vram_;
};

// B2: the GC hub belongs to GC, which the RLC autoload powers. Before it, its registers take no writes (the VBIOS's
// FB location stays) and an invalidation is never acknowledged: baregpu's gmc init_hw before issue 16 programmed
// and flushed it then.
TEST(GmcModelGcPowerTest, TheGcHubTakesNoWritesBeforeGcIsPowered) {
  ASSERT_TRUE(pci::sim::PersistentState::PowerCycle("sim:navi31:gc-off").ok());
  auto device = pci::Open("sim:navi31:gc-off");
  ASSERT_TRUE(device.ok()) << device.status();
  Navi31& navi31 = static_cast<Navi31&>(**device);
  testing::Bar5 bar5(*(*device)->MapMmio(5));
  auto gc = *regs::IpRegisters<regs::Ip::kGc, testing::Bar5>::Create(bar5, Navi31Bases());
  const uint32_t fb_base = gc.Read<regs::gc::GCMC_VM_FB_LOCATION_BASE>().raw();
  EXPECT_NE(fb_base, 0u) << "the VBIOS's FB location is there";
  gc.Write(regs::gc::GCVM_CONTEXT1_CNTL{}.enable_context(1));
  EXPECT_EQ(gc.Read<regs::gc::GCVM_CONTEXT1_CNTL>().enable_context(), 0u) << "lost";
  EXPECT_FALSE(testing::InvalidateGcTlb(bar5, 1)) << "no acknowledgement from an unpowered hub";
  bool logged = false;
  for (const DeviceError& e : navi31.errors().errors()) {
    logged |= e.model == "gmc" && absl::StrContains(e.message, "GCVM_CONTEXT1_CNTL = 0x1 written while GC is not");
  }
  EXPECT_TRUE(logged);

  navi31.firmware().SetRlcAutoloaded();  // what AUTOLOAD_RLC does
  gc.Write(regs::gc::GCVM_CONTEXT1_CNTL{}.enable_context(1));
  EXPECT_EQ(gc.Read<regs::gc::GCVM_CONTEXT1_CNTL>().enable_context(), 1u);
  EXPECT_TRUE(testing::InvalidateGcTlb(bar5, 1));
  EXPECT_EQ(gc.Read<regs::gc::GCMC_VM_FB_LOCATION_BASE>().raw(), fb_base);
}

TEST_F(GmcModelTest, FbLocationIsSetAtPowerOn) {
  const uint64_t vram = navi31().config().vram_size;
  EXPECT_EQ(uint64_t{mmhub_->Read<regs::mmhub::MMMC_VM_FB_LOCATION_BASE>().fb_base()} << 24, GmcModel::kFbStart);
  EXPECT_EQ(uint64_t{mmhub_->Read<regs::mmhub::MMMC_VM_FB_LOCATION_TOP>().fb_top()} << 24,
            (GmcModel::kFbStart + vram - 1) & ~uint64_t{0xffffff});
  EXPECT_EQ(uint64_t{gc_->Read<regs::gc::GCMC_VM_FB_LOCATION_BASE>().fb_base()} << 24, GmcModel::kFbStart);
}

TEST_F(GmcModelTest, SystemApertureReachesVramOnlyOnceProgrammed) {
  const MemoryClient psp{Hub::kMm, 0, 0, "psp"};
  std::memcpy(vram_.data() + kData, "vram", 4);
  EXPECT_FALSE(memory().Map(psp, GmcModel::kFbStart + kData, 4, Access::kRead).ok());  // aperture not yet set
  ProgramMmhubAperture();
  auto view = memory().Map(psp, GmcModel::kFbStart + kData, 4, Access::kRead);
  ASSERT_TRUE(view.ok()) << view.status();
  EXPECT_EQ(std::memcmp(view->data(), "vram", 4), 0);
  EXPECT_EQ(view->data(), vram_.data() + kData);
}

// The discovery TMR (the top 64 KiB, amdgpu_ttm_reserve_tmr) is the PSP's: reads reach it, writes are refused, and
// a write running into it stops at its start (B14).
TEST_F(GmcModelTest, TheDiscoveryTmrTakesNoWrites) {
  const MemoryClient sdma{Hub::kMm, 0, 0, "sdma0"};
  ProgramMmhubAperture();
  const uint64_t tmr = GmcModel::kFbStart + vram_.size() - kDiscoveryOffsetFromTop;
  EXPECT_TRUE(memory().Map(sdma, tmr, 4, Access::kRead).ok());
  auto refused = memory().Map(sdma, tmr + 8, 4, Access::kWrite);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("discovery TMR"), std::string::npos) << refused.status();
  auto before = memory().Map(sdma, tmr - 16, 64, Access::kWrite);
  ASSERT_TRUE(before.ok()) << before.status();
  EXPECT_EQ(before->size(), 16u);
}

TEST_F(GmcModelTest, FourLevelWalkToVramAndSystemPages) {
  const uint64_t va = 0x7f12'3456'7000;
  const uint64_t ptb = BuildFourLevel(1, va);
  WriteQword(ptb + ((va >> 12) & 0x1ff) * 8, kData | kPte);
  auto dma = device_->AllocDma(4096);
  ASSERT_TRUE(dma.ok());
  WriteQword(ptb + (((va >> 12) + 1) & 0x1ff) * 8, (*dma)->device_address(0) | kPte | vm::AMDGPU_PTE_SYSTEM);

  const char message[] = "through the page tables";
  ASSERT_TRUE(WriteMemory(memory(), kSdma, va + 0x10, std::span(reinterpret_cast<const uint8_t*>(message), 8)).ok());
  EXPECT_EQ(std::memcmp(vram_.data() + kData + 0x10, message, 8), 0);
  ASSERT_TRUE(WriteMemory(memory(), kSdma, va + 0x1000, std::span(reinterpret_cast<const uint8_t*>(message), 8)).ok());
  EXPECT_EQ(std::memcmp((*dma)->cpu(), message, 8), 0);
  EXPECT_EQ(navi31().gmc().page_walks(), 2u);
}

TEST_F(GmcModelTest, SystemPteToAnUnmappedBusAddressFaultsWithoutTouchingMemory) {
  const uint64_t va = 0x10'0000'0000;
  const uint64_t ptb = BuildFourLevel(1, va);
  // A bus address the driver never allocated: the IOMMU would refuse it.
  WriteQword(ptb + ((va >> 12) & 0x1ff) * 8, 0x7777'0000'0000 | kPte | vm::AMDGPU_PTE_SYSTEM);
  const uint64_t dma_faults = navi31().dma_space().fault_count();
  auto view = memory().Map(kSdma, va, 64, Access::kWrite);
  EXPECT_EQ(view.status().code(), absl::StatusCode::kPermissionDenied) << view.status();
  EXPECT_EQ(navi31().dma_space().fault_count(), dma_faults + 1);
  EXPECT_EQ(navi31().dma_space().last_fault()->address, 0x7777'0000'0000u);
}

TEST_F(GmcModelTest, PdeAsPteMapsA2MiBPage) {
  const uint64_t va = 0x4000'0000;  // 1 GiB
  const uint64_t pdb2 = kTables, pdb1 = kTables + 0x1000, pdb0 = kTables + 0x2000;
  WriteQword(pdb2 + ((va >> 39) & 0x1ff) * 8, pdb1 | kPde);
  WriteQword(pdb1 + ((va >> 30) & 0x1ff) * 8, pdb0 | kPde);
  WriteQword(pdb0 + ((va >> 21) & 0x1ff) * 8, 0x600000 | kPte | vm::AMDGPU_PDE_PTE);
  ProgramContext(2, 3, pdb2, 0, (uint64_t{1} << 48) - 1);
  const MemoryClient client{Hub::kGc, 2, 0, "test"};
  auto view = memory().Map(client, va + 0x12345, 0x200000, Access::kRead);
  ASSERT_TRUE(view.ok()) << view.status();
  EXPECT_EQ(view->data(), vram_.data() + 0x600000 + 0x12345);
  EXPECT_EQ(view->size(), 0x200000u - 0x12345);  // one piece up to the end of the huge page
}

// A5: a huge page whose address is not aligned to its size covers the `size` bytes from that address: the offset
// is added (tinygrad's AM driver builds these on real boards), never masked down (what the model once did).
TEST_F(GmcModelTest, UnalignedHugePageAddsTheOffsetToItsAddress) {
  const uint64_t va = 0x4000'0000;
  const uint64_t pdb2 = kTables, pdb1 = kTables + 0x1000, pdb0 = kTables + 0x2000;
  WriteQword(pdb2 + ((va >> 39) & 0x1ff) * 8, pdb1 | kPde);
  WriteQword(pdb1 + ((va >> 30) & 0x1ff) * 8, pdb0 | kPde);
  WriteQword(pdb0 + ((va >> 21) & 0x1ff) * 8, 0x601000 | kPte | vm::AMDGPU_PDE_PTE);
  ProgramContext(2, 3, pdb2, 0, (uint64_t{1} << 48) - 1);
  const MemoryClient client{Hub::kGc, 2, 0, "test"};
  auto view = memory().Map(client, va + 0x12345, 4, Access::kRead);
  ASSERT_TRUE(view.ok()) << view.status();
  EXPECT_EQ(view->data(), vram_.data() + 0x601000 + 0x12345);
  EXPECT_NE(view->data(), vram_.data() + 0x600000 + 0x12345) << "masked down";
  // The page ends `size` bytes after its (unaligned) start, not at the next 2 MiB boundary of VRAM.
  auto tail = memory().Map(client, va + 0x1ff000, 0x1000, Access::kRead);
  ASSERT_TRUE(tail.ok()) << tail.status();
  EXPECT_EQ(tail->data(), vram_.data() + 0x601000 + 0x1ff000);
}

TEST_F(GmcModelTest, FragmentTranslatesTheWholeBlockFromOnePte) {
  const uint64_t va = 0x20'0000;
  const uint64_t ptb = BuildFourLevel(1, va);
  // A 64 KiB fragment (FRAG 4): the PTE of the first page vouches for all 16; the others are left invalid, and
  // the hardware never reads them once the fragment is in its TLB.
  WriteQword(ptb + ((va >> 12) & 0x1ff) * 8, kData | kPte | vm::PteFragment(4));
  ASSERT_TRUE(memory().Map(kSdma, va, 4, Access::kRead).ok());
  auto view = memory().Map(kSdma, va + 0x5000, 4, Access::kRead);
  ASSERT_TRUE(view.ok()) << view.status();
  EXPECT_EQ(view->data(), vram_.data() + kData + 0x5000);
  EXPECT_EQ(navi31().gmc().page_walks(), 1u);
}

TEST_F(GmcModelTest, TlbIsStaleUntilInvalidatedThroughEngine17) {
  const uint64_t va = 0x30'0000;
  const uint64_t ptb = BuildFourLevel(1, va);
  const uint64_t pte_at = ptb + ((va >> 12) & 0x1ff) * 8;
  WriteQword(pte_at, kData | kPte);
  ASSERT_EQ(memory().Map(kSdma, va, 4, Access::kRead)->data(), vram_.data() + kData);
  WriteQword(pte_at, (kData + 0x1000) | kPte);  // remap without telling the hardware
  EXPECT_EQ(memory().Map(kSdma, va, 4, Access::kRead)->data(), vram_.data() + kData);

  // gmc_v11_0_flush_gpu_tlb's sequence (semaphore as on MMHUB; GC's engine 17 works the same).
  EXPECT_EQ(gc_->Read<regs::gc::GCVM_INVALIDATE_ENG17_SEM>().semaphore(), 1u);  // acquired
  EXPECT_EQ(gc_->Read<regs::gc::GCVM_INVALIDATE_ENG17_SEM>().semaphore(), 0u);  // held: a second reader waits
  gc_->Write(
      regs::gc::GCVM_INVALIDATE_ENG17_REQ{}.per_vmid_invalidate_req(1 << 1).invalidate_l2_ptes(1).invalidate_l1_ptes(
          1));
  EXPECT_EQ(gc_->Read<regs::gc::GCVM_INVALIDATE_ENG17_ACK>().per_vmid_invalidate_ack(), 1u << 1);
  gc_->Write(regs::gc::GCVM_INVALIDATE_ENG17_SEM{}.semaphore(0));
  EXPECT_EQ(gc_->Read<regs::gc::GCVM_INVALIDATE_ENG17_SEM>().semaphore(), 1u);  // free again
  gc_->Write(regs::gc::GCVM_INVALIDATE_ENG17_SEM{}.semaphore(0));

  EXPECT_EQ(memory().Map(kSdma, va, 4, Access::kRead)->data(), vram_.data() + kData + 0x1000);
}

TEST_F(GmcModelTest, InjectedLostAckNeverAcknowledges) {
  navi31().gmc().InjectLostInvalidateAck(Hub::kMm, true);
  mmhub_->Write(regs::mmhub::MMVM_INVALIDATE_ENG17_REQ{}.per_vmid_invalidate_req(1));
  EXPECT_EQ(mmhub_->Read<regs::mmhub::MMVM_INVALIDATE_ENG17_ACK>().per_vmid_invalidate_ack(), 0u);
  navi31().gmc().InjectLostInvalidateAck(Hub::kMm, false);
  mmhub_->Write(regs::mmhub::MMVM_INVALIDATE_ENG17_REQ{}.per_vmid_invalidate_req(1));
  EXPECT_EQ(mmhub_->Read<regs::mmhub::MMVM_INVALIDATE_ENG17_ACK>().per_vmid_invalidate_ack(), 1u);
}

TEST_F(GmcModelTest, InvalidPteLatchesFaultRegistersAndPostsUtcl2Interrupt) {
  EnableIhRing(10);
  const uint64_t va = 0x1234'5000;
  BuildFourLevel(1, va);  // PTE left zero: not valid
  auto view = memory().Map(kSdma, va + 8, 4, Access::kWrite);
  EXPECT_FALSE(view.ok());

  auto status = gc_->Read<regs::gc::GCVM_L2_PROTECTION_FAULT_STATUS>();
  EXPECT_EQ(status.vmid(), 1u);
  EXPECT_EQ(status.cid(), 0x42u);
  EXPECT_EQ(status.rw(), 1u);
  EXPECT_NE(status.permission_faults(), 0u);
  EXPECT_EQ(status.more_faults(), 0u);
  EXPECT_EQ(gc_->Read<regs::gc::GCVM_L2_PROTECTION_FAULT_ADDR_LO32>().raw(), va >> 12);

  ASSERT_EQ(navi31().ih().delivered(), 1u);
  const std::array<uint32_t, 8> entry = IhEntry(0);
  EXPECT_EQ(entry[0] & 0xff, regs::ih::SOC21_IH_CLIENTID_GFX);
  EXPECT_EQ((entry[0] >> 8) & 0xff, regs::ih::UTCL2_1_0__SRCID__FAULT);
  EXPECT_EQ((entry[0] >> 24) & 0xf, 1u);  // vmid
  EXPECT_EQ(entry[0] >> 31, 0u);          // GFX hub
  EXPECT_EQ(entry[4], va >> 12);
  EXPECT_EQ(entry[5] & 0x20, 0x20u);  // write

  // A second fault only adds MORE_FAULTS; the driver's clear (gmc_v11_0_process_interrupt) resets the latch.
  EXPECT_FALSE(memory().Map(kSdma, va + 0x100, 4, Access::kRead).ok());
  EXPECT_EQ(gc_->Read<regs::gc::GCVM_L2_PROTECTION_FAULT_STATUS>().more_faults(), 1u);
  EXPECT_EQ(gc_->Read<regs::gc::GCVM_L2_PROTECTION_FAULT_ADDR_LO32>().raw(), va >> 12);
  gc_->Modify<regs::gc::GCVM_L2_PROTECTION_FAULT_CNTL>([](auto& r) { r.clear_protection_fault_status_addr(1); });
  EXPECT_EQ(gc_->Read<regs::gc::GCVM_L2_PROTECTION_FAULT_STATUS>().raw(), 0u);
  EXPECT_EQ(gc_->Read<regs::gc::GCVM_L2_PROTECTION_FAULT_CNTL>().clear_protection_fault_status_addr(), 0u);
}

TEST_F(GmcModelTest, ReadOnlyPageRefusesWrites) {
  const uint64_t va = 0x50'0000;
  const uint64_t ptb = BuildFourLevel(1, va);
  WriteQword(ptb + ((va >> 12) & 0x1ff) * 8, kData | vm::AMDGPU_PTE_VALID | vm::AMDGPU_PTE_READABLE);
  EXPECT_TRUE(memory().Map(kSdma, va, 4, Access::kRead).ok());
  EXPECT_FALSE(memory().Map(kSdma, va, 4, Access::kWrite).ok());  // also from the TLB
  EXPECT_EQ(gc_->Read<regs::gc::GCVM_L2_PROTECTION_FAULT_STATUS>().rw(), 1u);
}

// B10: an instruction fetch needs the PTE's EXECUTABLE bit; READABLE alone serves data reads only. The fault is an
// execute permission fault (the context's EXECUTE_PROTECTION_FAULT_ENABLE_INTERRUPT posts it).
TEST_F(GmcModelTest, InstructionFetchNeedsTheExecutableBit) {
  EnableIhRing(10);
  const uint64_t va = 0x60'0000;
  const uint64_t ptb = BuildFourLevel(1, va);
  const uint64_t pte = ptb + ((va >> 12) & 0x1ff) * 8;
  WriteQword(pte, kData | vm::AMDGPU_PTE_VALID | vm::AMDGPU_PTE_READABLE | vm::AMDGPU_PTE_WRITEABLE);
  EXPECT_TRUE(memory().Map(kSdma, va, 4, Access::kRead).ok());
  auto fetch = memory().Map(kSdma, va, 4, Access::kExecute);  // also from the TLB the read filled
  ASSERT_FALSE(fetch.ok());
  EXPECT_TRUE(absl::StrContains(fetch.status().message(), "instruction fetch fault")) << fetch.status();
  EXPECT_TRUE(absl::StrContains(fetch.status().message(), "page is not executable")) << fetch.status();
  auto status = gc_->Read<regs::gc::GCVM_L2_PROTECTION_FAULT_STATUS>();
  EXPECT_EQ(status.rw(), 0u);
  EXPECT_EQ(status.permission_faults(), 1u << 3) << "the execute bit (valid, read, write, execute)";
  EXPECT_EQ(navi31().ih().delivered(), 1u);

  gc_->Modify<regs::gc::GCVM_L2_PROTECTION_FAULT_CNTL>([](auto& r) { r.clear_protection_fault_status_addr(1); });
  WriteQword(pte, kData | vm::AMDGPU_PTE_VALID | vm::AMDGPU_PTE_READABLE | vm::AMDGPU_PTE_EXECUTABLE);
  EXPECT_TRUE(testing::InvalidateGcTlb(*bar5_, 1));
  EXPECT_TRUE(memory().Map(kSdma, va, 4, Access::kExecute).ok());
}

TEST_F(GmcModelTest, FlatContextZeroLikeTheGart) {
  // gfxhub_v3_0_init_gart_aperture_regs: context 0, depth 0, one table of PTEs for [gart_start, gart_end].
  const uint64_t gart_start = 0x7fff'0000'0000;
  WriteQword(kTables + 3 * 8, kData | kPte);
  ProgramContext(0, 0, kTables, gart_start, gart_start + 0xfff'ffff);
  const MemoryClient client{Hub::kGc, 0, 0, "test"};
  auto view = memory().Map(client, gart_start + 0x3000 + 0x40, 4, Access::kRead);
  ASSERT_TRUE(view.ok()) << view.status();
  EXPECT_EQ(view->data(), vram_.data() + kData + 0x40);
  EXPECT_FALSE(memory().Map(client, gart_start - 0x1000, 4, Access::kRead).ok());  // below the range
}

TEST_F(GmcModelTest, InjectedPageFaultOnMmhubPostsVmcEntry) {
  EnableIhRing(10);
  ProgramContext(0, 0, kTables, 0, 0);  // GC context 0 only; the MMHUB context 0 interrupt enables are off
  navi31().gmc().InjectPageFault({Hub::kMm, 0, 7, "injected"}, 0x1000);
  EXPECT_EQ(mmhub_->Read<regs::mmhub::MMVM_L2_PROTECTION_FAULT_STATUS>().cid(), 7u);
  EXPECT_EQ(navi31().ih().delivered(), 0u);  // interrupts not enabled for that context
  mmhub_->Write(regs::mmhub::MMVM_CONTEXT0_CNTL{}.valid_protection_fault_enable_interrupt(1));
  navi31().gmc().InjectPageFault({Hub::kMm, 0, 7, "injected"}, 0x2000);
  ASSERT_EQ(navi31().ih().delivered(), 1u);
  EXPECT_EQ(IhEntry(0)[0] & 0xff, regs::ih::SOC21_IH_CLIENTID_VMC);
  EXPECT_EQ((IhEntry(0)[0] >> 8) & 0xff, regs::ih::VMC_1_0__SRCID__VM_FAULT);
  EXPECT_EQ(IhEntry(0)[0] >> 31, 1u);  // MM hub
}

// B12: a hub translates only once its L1 TLB is set up as *hub_v3_0_init_tlb_regs does. GC's power-on value
// (0x501: SYSTEM_ACCESS_MODE 0, no advanced driver model) and baregpu's old set-up of a context alone are refused,
// with the field named and nothing latched.
TEST_F(GmcModelTest, AHubWithoutItsL1TlbSetUpTranslatesNothing) {
  const uint64_t va = 0x60'0000;
  const uint64_t ptb = BuildFourLevel(1, va);
  WriteQword(ptb + ((va >> 12) & 0x1ff) * 8, kData | kPte);
  gc_->Write(regs::gc::GCMC_VM_MX_L1_TLB_CNTL::FromRaw(regs::gc::GCMC_VM_MX_L1_TLB_CNTL::kDefault));
  auto view = memory().Map(kSdma, va, 4, Access::kRead);
  ASSERT_FALSE(view.ok());
  EXPECT_NE(view.status().message().find("GCMC_VM_MX_L1_TLB_CNTL.SYSTEM_ACCESS_MODE is 0"), std::string::npos)
      << view.status();
  EXPECT_EQ(gc_->Read<regs::gc::GCVM_L2_PROTECTION_FAULT_STATUS>().raw(), 0u) << "no walk, nothing latched";

  gc_->Modify<regs::gc::GCMC_VM_MX_L1_TLB_CNTL>([](auto& r) { r.system_access_mode(3); });
  view = memory().Map(kSdma, va, 4, Access::kRead);
  ASSERT_FALSE(view.ok());
  EXPECT_NE(view.status().message().find("ENABLE_ADVANCED_DRIVER_MODEL is 0"), std::string::npos) << view.status();
  gc_->Modify<regs::gc::GCMC_VM_MX_L1_TLB_CNTL>([](auto& r) { r.enable_advanced_driver_model(1).enable_l1_tlb(0); });
  view = memory().Map(kSdma, va, 4, Access::kRead);
  ASSERT_FALSE(view.ok());
  EXPECT_NE(view.status().message().find("ENABLE_L1_TLB is 0"), std::string::npos) << view.status();

  testing::EnableHubTlb(*bar5_, Hub::kGc);
  view = memory().Map(kSdma, va, 4, Access::kRead);
  ASSERT_TRUE(view.ok()) << view.status();
  EXPECT_EQ(view->data(), vram_.data() + kData);
}

// B13: L2_PROTECTION_FAULT_STATUS in the encoding amdgpu's fault logs show (docs/fidelity.md), replacing the
// model's own codes (before: PERMISSION_FAULTS 0x4 alone for an invalid PTE written, MAPPING_ERROR alone for a
// range fault).
TEST_F(GmcModelTest, FaultStatusHasTheHardwaresFields) {
  namespace gc = regs::gc;
  const uint64_t va = 0x70'0000;
  const uint64_t ptb = BuildFourLevel(1, va);
  WriteQword(ptb + (((va >> 12) + 1) & 0x1ff) * 8, kData | vm::AMDGPU_PTE_VALID | vm::AMDGPU_PTE_READABLE);
  struct Case {
    uint64_t address;
    Access access;
    uint32_t permission, walker, mapping;
  };
  const uint64_t beyond = uint64_t{1} << 48;  // past the context's end
  for (const Case& c : {Case{va, Access::kRead, 0x3, 0, 0}, Case{va, Access::kWrite, 0x5, 0, 0},
                        Case{va + 0x1000, Access::kWrite, 0x4, 0, 0}, Case{beyond, Access::kRead, 0x3, 1, 1}}) {
    EXPECT_FALSE(memory().Map(kSdma, c.address, 4, c.access).ok());
    const auto status = gc_->Read<gc::GCVM_L2_PROTECTION_FAULT_STATUS>();
    EXPECT_EQ(status.permission_faults(), c.permission) << std::hex << c.address;
    EXPECT_EQ(status.walker_error(), c.walker) << std::hex << c.address;
    EXPECT_EQ(status.mapping_error(), c.mapping) << std::hex << c.address;
    EXPECT_EQ(status.rw(), c.access == Access::kWrite ? 1u : 0u);
    EXPECT_EQ(status.vmid(), 1u);
    EXPECT_EQ(status.cid(), 0x42u);
    gc_->Modify<gc::GCVM_L2_PROTECTION_FAULT_CNTL>([](auto& r) { r.clear_protection_fault_status_addr(1); });
  }
}

// B13: with the fault kind's *_PROTECTION_FAULT_ENABLE_DEFAULT set in the context and in L2_PROTECTION_FAULT_CNTL,
// a faulting access goes to the dummy page (VM_L2_PROTECTION_FAULT_DEFAULT_ADDR, system
// memory under L2_CNTL.ENABLE_DEFAULT_PAGE_OUT_TO_SYSTEM_MEMORY): the engine runs on, the fault is still latched and
// posted. Before, every fault failed the access.
TEST_F(GmcModelTest, ARedirectedFaultLandsInTheDummyPage) {
  namespace gc = regs::gc;
  EnableIhRing(10);
  const uint64_t va = 0x80'0000;
  BuildFourLevel(1, va);  // PTE left invalid
  // As *hub_v3_0_setup_vmid_config sets it; L2_PROTECTION_FAULT_CNTL's bit is set at power-on (`def` 0x3ffffffc).
  gc_->Modify<gc::GCVM_CONTEXT1_CNTL>([](auto& r) { r.valid_protection_fault_enable_default(1); });
  auto dummy = device_->AllocDma(4096);
  ASSERT_TRUE(dummy.ok());
  const uint64_t dummy_address = (*dummy)->device_address(0);

  // Never programmed (power-on 0): refused rather than sent to address 0.
  auto view = memory().Map(kSdma, va + 0x20, 4, Access::kWrite);
  ASSERT_FALSE(view.ok());
  EXPECT_NE(view.status().message().find("never programmed"), std::string::npos) << view.status();

  gc_->Write(gc::GCVM_L2_PROTECTION_FAULT_DEFAULT_ADDR_LO32{}.set_raw(static_cast<uint32_t>(dummy_address >> 12)));
  gc_->Write(gc::GCVM_L2_PROTECTION_FAULT_DEFAULT_ADDR_HI32{}.set_raw(static_cast<uint32_t>(dummy_address >> 44)));
  gc_->Modify<gc::GCVM_L2_CNTL>([](auto& r) { r.enable_default_page_out_to_system_memory(1); });
  view = memory().Map(kSdma, va + 0x20, 4, Access::kWrite);
  ASSERT_TRUE(view.ok()) << view.status();
  EXPECT_EQ(view->data(), (*dummy)->cpu() + 0x20);
  EXPECT_EQ(view->size(), 4u);
  EXPECT_EQ(gc_->Read<gc::GCVM_L2_PROTECTION_FAULT_STATUS>().vmid(), 1u) << "still latched";
  EXPECT_EQ(navi31().ih().delivered(), 2u) << "and posted, both times";

  // amdgpu's vm_fault_stop=2 clears the L2's bits only: the access fails again.
  gc_->Modify<gc::GCVM_L2_PROTECTION_FAULT_CNTL>([](auto& r) { r.valid_protection_fault_enable_default(0); });
  view = memory().Map(kSdma, va + 0x20, 4, Access::kWrite);
  ASSERT_FALSE(view.ok());
  EXPECT_NE(view.status().message().find("not redirected"), std::string::npos) << view.status();
}

// B13: RETRY_PERMISSION_OR_INVALID_PAGE_FAULT makes an invalid page a retry fault: never redirected, the IH entry
// carries src_data[1] bit 7 (gmc_v11_0_process_interrupt's retry_fault); the model's engines do not replay.
TEST_F(GmcModelTest, ARetryFaultIsNotRedirectedAndCarriesTheRetryBit) {
  namespace gc = regs::gc;
  EnableIhRing(10);
  const uint64_t va = 0x90'0000;
  BuildFourLevel(1, va);
  gc_->Modify<gc::GCVM_CONTEXT1_CNTL>([](auto& r) { r.retry_permission_or_invalid_page_fault(1); });
  auto view = memory().Map(kSdma, va, 4, Access::kRead);
  ASSERT_FALSE(view.ok());
  EXPECT_NE(view.status().message().find("retry fault"), std::string::npos) << view.status();
  ASSERT_EQ(navi31().ih().delivered(), 1u);
  EXPECT_EQ(IhEntry(0)[5] & 0x80, 0x80u);
  EXPECT_EQ(IhEntry(0)[5] & 0x20, 0u) << "a read";
}

// VM_L2_PROTECTION_FAULT_CNTL: the first fault's STATUS/ADDR stay locked (later faults only set MORE_FAULTS) unless
// ALLOW_SUBSEQUENT_PROTECTION_FAULT_STATUS_ADDR_UPDATES, which lets each fault overwrite them.
TEST_F(GmcModelTest, SubsequentFaultsOverwriteTheLatchOnlyWhenAllowed) {
  namespace gc = regs::gc;
  const uint64_t va = 0xa0'0000;
  BuildFourLevel(1, va);
  EXPECT_FALSE(memory().Map(kSdma, va, 4, Access::kRead).ok());
  EXPECT_FALSE(memory().Map(kSdma, va + 0x1000, 4, Access::kWrite).ok());
  EXPECT_EQ(gc_->Read<gc::GCVM_L2_PROTECTION_FAULT_ADDR_LO32>().raw(), va >> 12) << "locked on the first";
  EXPECT_EQ(gc_->Read<gc::GCVM_L2_PROTECTION_FAULT_STATUS>().rw(), 0u);
  EXPECT_EQ(gc_->Read<gc::GCVM_L2_PROTECTION_FAULT_STATUS>().more_faults(), 1u);

  gc_->Modify<gc::GCVM_L2_PROTECTION_FAULT_CNTL>(
      [](auto& r) { r.allow_subsequent_protection_fault_status_addr_updates(1); });
  EXPECT_FALSE(memory().Map(kSdma, va + 0x1000, 4, Access::kWrite).ok());
  EXPECT_EQ(gc_->Read<gc::GCVM_L2_PROTECTION_FAULT_ADDR_LO32>().raw(), (va + 0x1000) >> 12);
  EXPECT_EQ(gc_->Read<gc::GCVM_L2_PROTECTION_FAULT_STATUS>().rw(), 1u);
  EXPECT_EQ(gc_->Read<gc::GCVM_L2_PROTECTION_FAULT_STATUS>().more_faults(), 1u);
}

// An engine's CachedMemory (its UTCL1) keeps a translation exactly as long as the TLB would: a remapped PTE is not
// seen until the invalidation, which drops the kept view too; later accesses to the page need no translation.
TEST_F(GmcModelTest, AnEnginesKeptTranslationLastsUntilTheInvalidation) {
  const uint64_t va = 0x30'0000;
  const uint64_t ptb = BuildFourLevel(1, va);
  const uint64_t pte_at = ptb + ((va >> 12) & 0x1ff) * 8;
  WriteQword(pte_at, kData | kPte);
  CachedMemory cached(memory());
  ASSERT_EQ(cached.Map(kSdma, va, 4, Access::kRead)->data(), vram_.data() + kData);
  const uint64_t walks = navi31().gmc().page_walks();
  auto later = cached.Map(kSdma, va + 0x100, 0x2000, Access::kRead);
  ASSERT_TRUE(later.ok()) << later.status();
  EXPECT_EQ(later->data(), vram_.data() + kData + 0x100);
  EXPECT_EQ(later->size(), 0x1000u - 0x100) << "one piece, to the end of the page";
  EXPECT_EQ(cached.hits(), 1u);
  EXPECT_EQ(navi31().gmc().page_walks(), walks);

  WriteQword(pte_at, (kData + 0x1000) | kPte);  // remapped without telling the hardware
  EXPECT_EQ(cached.Map(kSdma, va, 4, Access::kRead)->data(), vram_.data() + kData);
  ASSERT_TRUE(testing::InvalidateGcTlb(*bar5_, 1));
  EXPECT_EQ(cached.Map(kSdma, va, 4, Access::kRead)->data(), vram_.data() + kData + 0x1000);
  EXPECT_EQ(cached.misses(), 2u);
}

// A kept read view serves no write, and an access that faulted is never kept: each faults again, as on the hardware.
TEST_F(GmcModelTest, AnEngineKeepsNoFaultAndNoPermissionItWasNotGiven) {
  const uint64_t va = 0x30'0000;
  const uint64_t ptb = BuildFourLevel(1, va);
  WriteQword(ptb + ((va >> 12) & 0x1ff) * 8, kData | vm::AMDGPU_PTE_VALID | vm::AMDGPU_PTE_READABLE);
  CachedMemory cached(memory());
  ASSERT_TRUE(cached.Map(kSdma, va, 4, Access::kRead).ok());
  const uint64_t faults = navi31().gmc().faults();
  EXPECT_FALSE(cached.Map(kSdma, va, 4, Access::kWrite).ok());
  EXPECT_FALSE(cached.Map(kSdma, va, 4, Access::kWrite).ok());
  const uint64_t unmapped = va + 0x1000;
  EXPECT_FALSE(cached.Map(kSdma, unmapped, 4, Access::kRead).ok());
  EXPECT_FALSE(cached.Map(kSdma, unmapped, 4, Access::kRead).ok());
  EXPECT_EQ(navi31().gmc().faults(), faults + 4);
  // Another context's access to the same address is its own translation.
  const MemoryClient other{Hub::kGc, 2, 0x42, "other-context"};
  EXPECT_FALSE(cached.Map(other, va, 4, Access::kRead).ok());
}

// Context 0's system aperture is read from the registers on every translation: writing them drops kept views, as
// does switching bus mastering off for a view of system memory.
TEST_F(GmcModelTest, ApertureWritesAndBusMasteringDropKeptViews) {
  const MemoryClient psp{Hub::kMm, 0, 0, "psp"};
  ProgramMmhubAperture();
  CachedMemory cached(memory());
  ASSERT_TRUE(cached.Map(psp, GmcModel::kFbStart + kData, 4, Access::kRead).ok());
  mmhub_->Write(regs::mmhub::MMMC_VM_SYSTEM_APERTURE_HIGH_ADDR{}.set_raw(0));
  EXPECT_FALSE(cached.Map(psp, GmcModel::kFbStart + kData, 4, Access::kRead).ok()) << "outside the aperture now";

  const uint64_t va = 0x30'0000;
  const uint64_t ptb = BuildFourLevel(1, va);
  auto dma = device_->AllocDma(4096);
  ASSERT_TRUE(dma.ok());
  WriteQword(ptb + ((va >> 12) & 0x1ff) * 8, (*dma)->device_address(0) | kPte | vm::AMDGPU_PTE_SYSTEM);
  auto view = cached.Map(kSdma, va, 4, Access::kWrite);
  ASSERT_TRUE(view.ok()) << view.status();
  EXPECT_EQ(view->data(), (*dma)->cpu());
  ASSERT_TRUE(device_->SetBusMaster(false).ok());
  auto refused = cached.Map(kSdma, va, 4, Access::kWrite);
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kPermissionDenied) << refused.status();
}

// Lookup is for prefetching ahead of the CP: it only ever gives a view the cache already holds, translates nothing
// and faults nothing, and gives nothing once the translation generation moved on.
TEST_F(GmcModelTest, ALookupOnlyReadsWhatTheEngineAlreadyHolds) {
  const uint64_t va = 0x30'0000;
  const uint64_t ptb = BuildFourLevel(1, va);
  WriteQword(ptb + ((va >> 12) & 0x1ff) * 8, kData | kPte);
  CachedMemory cached(memory());
  const uint64_t walks = navi31().gmc().page_walks();
  const uint64_t faults = navi31().gmc().faults();
  EXPECT_EQ(cached.Lookup(kSdma, va, Access::kRead), nullptr) << "not held yet";
  EXPECT_EQ(cached.Lookup(kSdma, va + 0x1000, Access::kRead), nullptr) << "unmapped: no fault either";
  EXPECT_EQ(navi31().gmc().page_walks(), walks);
  EXPECT_EQ(navi31().gmc().faults(), faults);
  ASSERT_TRUE(cached.Map(kSdma, va, 4, Access::kRead).ok());
  EXPECT_EQ(cached.Lookup(kSdma, va + 0x40, Access::kRead), vram_.data() + kData + 0x40);
  EXPECT_EQ(cached.Lookup(kSdma, va + 0x40, Access::kWrite), nullptr) << "held for reads only";
  ASSERT_TRUE(testing::InvalidateGcTlb(*bar5_, 1));
  EXPECT_EQ(cached.Lookup(kSdma, va + 0x40, Access::kRead), nullptr) << "the invalidation dropped it";
}

// The engines' packet reads and fence writes (ReadMemory, MapDword, MapQword on a CachedMemory) take a held view
// only for a whole access under the translation it was made with, by the same client, for the same kind of access;
// anything else is translated (and checked) as before.
TEST_F(GmcModelTest, AnEnginesReadsUseAHeldViewOnlyForWhatItHolds) {
  const uint64_t va = 0x30'0000;
  const uint64_t ptb = BuildFourLevel(1, va);
  const uint64_t second_page = kData + 0x3000;  // not contiguous with the first
  WriteQword(ptb + ((va >> 12) & 0x1ff) * 8, kData | vm::AMDGPU_PTE_VALID | vm::AMDGPU_PTE_READABLE);
  WriteQword(ptb + (((va >> 12) + 1) & 0x1ff) * 8, second_page | kPte);
  WriteQword(kData + 0x10, 0x1111'2222'3333'4444);
  WriteQword(kData + 0xff8, 0x5555'6666'7777'8888);
  WriteQword(second_page, 0x9999'aaaa'bbbb'cccc);
  CachedMemory cached(memory());
  uint64_t value = 0;
  auto bytes = [&value] { return std::span<uint8_t>(reinterpret_cast<uint8_t*>(&value), sizeof(value)); };

  ASSERT_TRUE(ReadMemory(cached, kSdma, va + 0x10, bytes()).ok());
  EXPECT_EQ(value, 0x1111'2222'3333'4444u);
  EXPECT_EQ(cached.misses(), 1u);
  const uint64_t walks = navi31().gmc().page_walks();
  WriteQword(kData + 0x10, 0x4444'3333'2222'1111);
  ASSERT_TRUE(ReadMemory(cached, kSdma, va + 0x10, bytes()).ok());
  EXPECT_EQ(value, 0x4444'3333'2222'1111u) << "the held view is the memory, not a copy of it";
  EXPECT_EQ(cached.hits(), 1u);
  EXPECT_EQ(navi31().gmc().page_walks(), walks);

  // Across the page boundary: the held page has only the first half, so the access goes piece by piece.
  ASSERT_TRUE(ReadMemory(cached, kSdma, va + 0xffc, bytes()).ok());
  EXPECT_EQ(value, 0xbbbb'cccc'5555'6666u);
  EXPECT_EQ(cached.hits(), 2u) << "the first piece";
  EXPECT_EQ(cached.misses(), 2u) << "the second page";

  // Held for reads, but the page is read-only: a fence write there still faults, every time.
  const uint64_t faults = navi31().gmc().faults();
  EXPECT_FALSE(MapQword(cached, kSdma, va + 0x10, Access::kWrite).ok());
  EXPECT_FALSE(MapDword(cached, kSdma, va + 0x10, Access::kWrite).ok());
  EXPECT_EQ(navi31().gmc().faults(), faults + 2);
  // Misaligned fences are refused even where a view is held.
  EXPECT_EQ(MapDword(cached, kSdma, va + 0x12, Access::kRead).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(MapQword(cached, kSdma, va + 0x14, Access::kRead).status().code(), absl::StatusCode::kInvalidArgument);
  // Another context does not get this one's view.
  const MemoryClient other{Hub::kGc, 2, 0x42, "other-context"};
  EXPECT_FALSE(ReadMemory(cached, other, va + 0x10, bytes()).ok());

  // Writable second page: the fence write is held after its first translation.
  auto fence = MapQword(cached, kSdma, va + 0x1008, Access::kWrite);
  ASSERT_TRUE(fence.ok()) << fence.status();
  const uint64_t hits = cached.hits();
  auto again = MapQword(cached, kSdma, va + 0x1008, Access::kWrite);
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(*again, *fence);
  EXPECT_EQ(reinterpret_cast<uint8_t*>(*again), vram_.data() + second_page + 8);
  EXPECT_EQ(cached.hits(), hits + 1);

  // Remapped and invalidated: the next read sees the new page.
  WriteQword(ptb + ((va >> 12) & 0x1ff) * 8, second_page | kPte);
  ASSERT_TRUE(testing::InvalidateGcTlb(*bar5_, 1));
  ASSERT_TRUE(ReadMemory(cached, kSdma, va, bytes()).ok());
  EXPECT_EQ(value, 0x9999'aaaa'bbbb'ccccu);
}

}  // namespace
}  // namespace am::sim
