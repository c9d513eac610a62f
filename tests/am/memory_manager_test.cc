// The memory manager over the virtual Navi31: regions, VRAM and DMA mappings at global addresses, checked by the
// device's own page-table walker.
#include "am/memory_manager.h"

#include <algorithm>
#include <cstring>

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

constexpr sim::MemoryClient kEngine{sim::Hub::kGc, 1, 0, "test"};

class MemoryManagerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(pci::sim::PersistentState::PowerCycle("sim:navi31:mm").ok());
    auto device = pci::Open("sim:navi31:mm");
    ASSERT_TRUE(device.ok()) << device.status();
    device_ = std::move(*device);
    ASSERT_TRUE(device_->SetBusMaster(true).ok());
    bar5_.emplace(*device_->MapMmio(5));
    // The test stands in for the PSP's RLC autoload, which powers GC: before it the GC hub takes no writes.
    static_cast<sim::Navi31&>(*device_).firmware().SetRlcAutoloaded();
    auto manager = MemoryManager::Create(*device_->MapMemory(0), {.vram_size = navi31().config().vram_size}, va_);
    ASSERT_TRUE(manager.ok()) << manager.status();
    manager_ = std::move(*manager);
    sim::testing::ProgramGcContext(*bar5_, 1, PageTable::kDepth, manager_->page_table().root(), 0,
                                   PageTable::kAddressSpace - 1);
    manager_->set_tlb_flush([this] {
      return sim::testing::InvalidateGcTlb(*bar5_, 1) ? absl::OkStatus() : absl::DeadlineExceededError("no ack");
    });
  }
  sim::Navi31& navi31() { return static_cast<sim::Navi31&>(*device_); }

  VaAllocator va_{VaAllocator::kStart, VaAllocator::kEnd};
  std::unique_ptr<pci::Device> device_;
  std::optional<sim::testing::Bar5> bar5_;
  std::unique_ptr<MemoryManager> manager_;
};

TEST_F(MemoryManagerTest, RegionsDoNotOverlapAndStayBelowTheReservedTop) {
  auto boot = manager_->AllocBoot(base::MiB(1));
  auto general = manager_->AllocVram(base::MiB(1));
  ASSERT_TRUE(boot.ok() && general.ok());
  EXPECT_LT(*boot + base::MiB(1), manager_->general_base());
  EXPECT_GE(*general, manager_->general_base());
  EXPECT_GE(manager_->page_table().root(), manager_->layout().boot_size);
  EXPECT_LT(manager_->page_table().root(), manager_->general_base());
  auto all = manager_->AllocVram(navi31().config().vram_size);  // more than there is
  EXPECT_EQ(all.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_FALSE(manager_->AllocBoot(base::MiB(64)).ok());
}

// The firmware's 64 MiB at the top of VRAM (kFirmwareReservedTop; tinygrad's AM reserves the same on GC 11) are
// never handed out: allocations take what is left, and the highest ends below it.
TEST_F(MemoryManagerTest, TheFirmwaresTopOfVramIsNeverHandedOut) {
  const uint64_t vram_size = navi31().config().vram_size;
  uint64_t highest_end = 0;
  for (uint64_t size = base::GiB(1); size >= base::MiB(1); size /= 2) {
    for (absl::StatusOr<uint64_t> block = manager_->AllocVram(size); block.ok(); block = manager_->AllocVram(size)) {
      highest_end = std::max(highest_end, *block + size);
    }
  }
  EXPECT_LE(highest_end, vram_size - base::MiB(64));
  EXPECT_GT(highest_end, vram_size - base::MiB(64) - base::MiB(2)) << "the rest of VRAM is handed out";
}

TEST_F(MemoryManagerTest, VramMappingIsReachableByTheDeviceAndGoneAfterUnmap) {
  auto vram = manager_->AllocVram(base::MiB(4), base::MiB(2));
  ASSERT_TRUE(vram.ok());
  auto va = manager_->MapVram(*vram, base::MiB(4));
  ASSERT_TRUE(va.ok()) << va.status();
  EXPECT_GE(*va, VaAllocator::kStart);
  EXPECT_EQ(manager_->page_table().Walk(*va).page_size, base::MiB(2));
  std::span<uint8_t> cpu = *manager_->CpuView(*vram, base::MiB(4));
  std::memcpy(cpu.data() + base::MiB(3), "vram", 4);
  auto view = navi31().gmc().Map(kEngine, *va + base::MiB(3), 4, sim::Access::kRead);
  ASSERT_TRUE(view.ok()) << view.status();
  EXPECT_EQ(std::memcmp(view->data(), "vram", 4), 0);

  ASSERT_TRUE(manager_->Unmap(*va).ok());
  ASSERT_TRUE(manager_->Flush().ok());
  EXPECT_FALSE(navi31().gmc().Map(kEngine, *va, 4, sim::Access::kRead).ok());
  EXPECT_FALSE(manager_->Unmap(*va).ok());
}

// Sizes within a page of 2^64 once rounded up to 0 pages: CpuView then accepted them and the page table was asked
// to map nothing. They are refused as the size they are.
TEST_F(MemoryManagerTest, SizesThatWouldWrapWhenRoundedAreRefused) {
  auto vram = manager_->AllocVram(base::MiB(1));
  ASSERT_TRUE(vram.ok());
  for (uint64_t size : {~uint64_t{0}, ~uint64_t{0} - 4094, ~uint64_t{0} - 4095}) {
    auto at_cpu = manager_->MapVramAtCpuAddress(*vram, size);
    ASSERT_FALSE(at_cpu.ok()) << size;
    EXPECT_EQ(at_cpu.status().code(), absl::StatusCode::kOutOfRange) << at_cpu.status();
    EXPECT_FALSE(manager_->MapVram(*vram, size).ok()) << size;
  }
}

TEST_F(MemoryManagerTest, DmaBufferMappingUsesSystemPages) {
  auto buffer = device_->AllocDma(base::KiB(64));
  ASSERT_TRUE(buffer.ok());
  auto va = manager_->MapSystem(**buffer);
  ASSERT_TRUE(va.ok()) << va.status();
  const char text[] = "sys";
  ASSERT_TRUE(sim::WriteMemory(navi31().gmc(), kEngine, *va + base::KiB(60),
                               std::span(reinterpret_cast<const uint8_t*>(text), 4))
                  .ok());
  EXPECT_STREQ(reinterpret_cast<const char*>((*buffer)->cpu() + base::KiB(60)), "sys");
}

TEST_F(MemoryManagerTest, MapAtSharesAnAddressChosenElsewhere) {
  auto va = va_.Allocate(base::MiB(2));
  ASSERT_TRUE(va.ok());
  auto vram = manager_->AllocVram(base::MiB(2), base::MiB(2));
  ASSERT_TRUE(vram.ok());
  ASSERT_TRUE(manager_->MapAt(*va, base::MiB(2), *vram, {}).ok());
  EXPECT_TRUE(manager_->page_table().Walk(*va).valid);
  ASSERT_TRUE(manager_->Unmap(*va).ok());
  EXPECT_TRUE(va_.Free(*va).ok());  // the address still belonged to whoever allocated it
}

TEST(MemoryManagerLayoutTest, SmallBarNeedsTheTablesVisibleAndTooSmallVramIsRefused) {
  std::vector<uint8_t> small(base::MiB(16));
  auto manager = MemoryManager::Create(small, {.vram_size = base::GiB(1)});
  ASSERT_FALSE(manager.ok());
  EXPECT_NE(manager.status().message().find("CPU-visible"), std::string::npos) << manager.status();
  std::vector<uint8_t> view(base::MiB(128));
  EXPECT_FALSE(MemoryManager::Create(view, {.vram_size = base::MiB(64)}).ok());
  auto fine = MemoryManager::Create(view, {.vram_size = base::GiB(1)});
  ASSERT_TRUE(fine.ok()) << fine.status();
  auto beyond = (*fine)->AllocVram(base::MiB(512));
  ASSERT_TRUE(beyond.ok());
  EXPECT_TRUE((*fine)->CpuView(*beyond, 4096).ok());
  EXPECT_FALSE((*fine)->CpuView(*beyond + base::MiB(256), 4096).ok());  // allocated, but BAR0 does not show it
}

}  // namespace
}  // namespace am
