// The driver's page tables, written into the virtual Navi31's VRAM through BAR0 and checked by what the device's
// own page-table walker (the GMC model behind GpuMemory) makes of them, as the hardware would.
#include "am/page_table.h"

#include <cstring>

#include "am/regs/vm.h"
#include "am/sim/navi31.h"
#include "gtest/gtest.h"
#include "pci/open.h"
#include "pci/sim/persistent_state.h"
#include "tests/am/sim/bar5.h"
#include "tests/am/sim/sim_state_dir.h"
#include "tests/am/sim/vm_context.h"

namespace am {
namespace {

auto* const kStateDir = sim::testing::RegisterSimStateDir();

constexpr uint64_t kTableRegion = 0x100000;
constexpr uint64_t kTableRegionSize = 64 << 20;
constexpr uint32_t kVmid = 1;
constexpr sim::MemoryClient kEngine{sim::Hub::kGc, kVmid, 0, "test"};
constexpr uint64_t kMiB = 1 << 20;
constexpr uint64_t kGiB = uint64_t{1} << 30;

class PageTableTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(pci::sim::PersistentState::PowerCycle("sim:navi31:pt").ok());
    auto device = pci::Open("sim:navi31:pt");
    ASSERT_TRUE(device.ok()) << device.status();
    device_ = std::move(*device);
    ASSERT_TRUE(device_->SetBusMaster(true).ok());
    bar5_.emplace(*device_->MapMmio(5));
    // The test stands in for the PSP's RLC autoload, which powers GC: before it the GC hub takes no writes.
    static_cast<sim::Navi31&>(*device_).firmware().SetRlcAutoloaded();
    vram_ = *device_->MapMemory(0);
    auto table = PageTable::Create(vram_, 0, tables_);
    ASSERT_TRUE(table.ok()) << table.status();
    table_ = std::move(*table);
    sim::testing::ProgramGcContext(*bar5_, kVmid, PageTable::kDepth, table_->root(), 0, PageTable::kAddressSpace - 1);
  }
  sim::Navi31& navi31() { return static_cast<sim::Navi31&>(*device_); }
  // Where the device's walker sends `va`, as an offset into VRAM (or nullopt when it faults / is not VRAM).
  std::optional<uint64_t> DeviceVramOffset(uint64_t va) {
    auto view = navi31().gmc().Map(kEngine, va, 1, sim::Access::kRead);
    if (!view.ok()) return std::nullopt;
    const uint8_t* host = view->data();
    if (host < vram_.data() || host >= vram_.data() + vram_.size()) return std::nullopt;
    return static_cast<uint64_t>(host - vram_.data());
  }

  TlsfAllocator tables_{kTableRegion, kTableRegionSize, PageTable::kPageSize};
  std::unique_ptr<pci::Device> device_;
  std::optional<sim::testing::Bar5> bar5_;
  std::span<uint8_t> vram_;
  std::unique_ptr<PageTable> table_;
};

TEST_F(PageTableTest, FourKibPagesTranslateOnTheDevice) {
  const uint64_t va = 0x7f00'1234'5000;
  ASSERT_TRUE(table_->Map(va, 3 * PageTable::kPageSize, 0x3000'0000 + 0x1000, {}).ok());
  EXPECT_EQ(DeviceVramOffset(va + 0x10), 0x3000'1010u);
  EXPECT_EQ(DeviceVramOffset(va + 0x2ff8), 0x3000'3ff8u);
  EXPECT_EQ(DeviceVramOffset(va + 0x3000), std::nullopt);  // past the mapping
  const PageTable::Translation t = table_->Walk(va + 0x10);
  ASSERT_TRUE(t.valid);
  EXPECT_EQ(t.address, 0x3000'1010u);
  EXPECT_EQ(t.page_size, PageTable::kPageSize);
  EXPECT_EQ(t.steps.size(), 4u);
}

TEST_F(PageTableTest, HugePagesWhereAlignmentAllows) {
  // 1 GiB + 2 MiB + 4 KiB, VA and VRAM both 1 GiB aligned: one 1 GiB page, one 2 MiB page, one 4 KiB page.
  const uint64_t va = 8 * kGiB;
  const uint64_t size = kGiB + 2 * kMiB + PageTable::kPageSize;
  ASSERT_TRUE(table_->Map(va, size, 2 * kGiB, {}).ok());
  EXPECT_EQ(table_->Walk(va + 5).page_size, kGiB);
  EXPECT_EQ(table_->Walk(va + kGiB + 5).page_size, 2 * kMiB);
  EXPECT_EQ(table_->Walk(va + kGiB + 2 * kMiB).page_size, PageTable::kPageSize);
  EXPECT_EQ(DeviceVramOffset(va + 0x3fff'fff0), 2 * kGiB + 0x3fff'fff0);
  EXPECT_EQ(DeviceVramOffset(va + kGiB + 0x1f'0000), 3 * kGiB + 0x1f'0000);
  EXPECT_EQ(DeviceVramOffset(va + kGiB + 2 * kMiB + 8), 3 * kGiB + 2 * kMiB + 8);
  // Unaligned VRAM: only 4 KiB pages.
  ASSERT_TRUE(table_->Map(va + 2 * kGiB, 2 * kMiB, 0x5000, {}).ok());
  EXPECT_EQ(table_->Walk(va + 2 * kGiB).page_size, PageTable::kPageSize);
}

TEST_F(PageTableTest, ContiguousRunsCarryFragmentsTheDeviceHonours) {
  const uint64_t va = 0x40'0000'0000;
  ASSERT_TRUE(table_->Map(va, 64 << 10, 0x2000'0000, {}).ok());  // 16 pages, both 64 KiB aligned
  EXPECT_EQ(regs::vm::PteFragmentOf(table_->Walk(va + 0x5000).steps.back().entry), 4u);
  const uint64_t walks = navi31().gmc().page_walks();
  for (uint64_t page = 0; page < 16; ++page) {
    EXPECT_EQ(DeviceVramOffset(va + page * PageTable::kPageSize), 0x2000'0000 + page * PageTable::kPageSize);
  }
  EXPECT_EQ(navi31().gmc().page_walks(), walks + 1);  // one walk filled the TLB for the whole fragment
}

TEST_F(PageTableTest, SystemPagesReachTheDmaBuffer) {
  auto buffer = device_->AllocDma(4 * PageTable::kPageSize);
  ASSERT_TRUE(buffer.ok());
  const uint64_t va = 0x10'0000'0000;
  ASSERT_TRUE(table_->MapPages(va, (*buffer)->page_addresses(), {.system = true, .snooped = true}).ok());
  const char message[] = "dma";
  ASSERT_TRUE(sim::WriteMemory(navi31().gmc(), kEngine, va + 3 * PageTable::kPageSize + 8,
                               std::span(reinterpret_cast<const uint8_t*>(message), 4))
                  .ok());
  EXPECT_STREQ(reinterpret_cast<const char*>((*buffer)->cpu() + 3 * PageTable::kPageSize + 8), "dma");
  EXPECT_TRUE(table_->Walk(va).steps.back().entry & regs::vm::AMDGPU_PTE_SYSTEM);
}

TEST_F(PageTableTest, OverlapsAndBadRangesAreRefusedWithoutChanges) {
  const uint64_t va = 0x100'0000;
  ASSERT_TRUE(table_->Map(va, 8 * PageTable::kPageSize, 0x100'0000, {}).ok());
  const size_t tables = table_->table_count();
  EXPECT_EQ(table_->Map(va + 0x7000, 2 * PageTable::kPageSize, 0x200'0000, {}).code(),
            absl::StatusCode::kAlreadyExists);
  EXPECT_FALSE(DeviceVramOffset(va + 0x8000).has_value());  // the refused map wrote nothing
  EXPECT_EQ(table_->table_count(), tables);
  EXPECT_FALSE(table_->Map(va + 1, PageTable::kPageSize, 0, {}).ok());
  EXPECT_FALSE(table_->Map(PageTable::kAddressSpace - PageTable::kPageSize, 2 * PageTable::kPageSize, 0, {}).ok());
  EXPECT_FALSE(table_->Map(va, 0, 0, {}).ok());
}

TEST_F(PageTableTest, UnmapFreesEmptyTablesAndRefusesToCutHugePages) {
  ASSERT_EQ(table_->table_count(), 1u);
  ASSERT_TRUE(table_->Map(0x7000'0000'0000, 4 * PageTable::kPageSize, 0x100'0000, {}).ok());
  EXPECT_EQ(table_->table_count(), 4u);  // PDB1, PDB0 and a page table under the root
  ASSERT_TRUE(table_->Unmap(0x7000'0000'0000, 4 * PageTable::kPageSize).ok());
  EXPECT_EQ(table_->table_count(), 1u);
  EXPECT_EQ(tables_.allocation_count(), 1u);  // only the root is left in the page-table region

  ASSERT_TRUE(table_->Map(2 * kMiB, 2 * kMiB, 2 * kMiB, {}).ok());
  EXPECT_FALSE(table_->Unmap(2 * kMiB, PageTable::kPageSize).ok());
  EXPECT_TRUE(table_->Walk(2 * kMiB).valid);
  EXPECT_TRUE(table_->Unmap(2 * kMiB, 2 * kMiB).ok());
  EXPECT_FALSE(table_->Walk(2 * kMiB).valid);
}

TEST_F(PageTableTest, UnmappingInsideAFragmentStopsItsNeighboursVouchingForTheHole) {
  const uint64_t va = 0x40'0000'0000;
  ASSERT_TRUE(table_->Map(va, 64 << 10, 0x2000'0000, {}).ok());
  ASSERT_TRUE(table_->Unmap(va + 5 * PageTable::kPageSize, PageTable::kPageSize).ok());
  EXPECT_EQ(regs::vm::PteFragmentOf(table_->Walk(va + 4 * PageTable::kPageSize).steps.back().entry), 0u);
  ASSERT_TRUE(sim::testing::InvalidateGcTlb(*bar5_, kVmid));
  EXPECT_EQ(DeviceVramOffset(va + 4 * PageTable::kPageSize), 0x2000'0000 + 4 * PageTable::kPageSize);
  EXPECT_EQ(DeviceVramOffset(va + 5 * PageTable::kPageSize), std::nullopt);  // the hole faults on the device
  EXPECT_EQ(DeviceVramOffset(va + 6 * PageTable::kPageSize), 0x2000'0000 + 6 * PageTable::kPageSize);
}

}  // namespace
}  // namespace am
