// Peer access between two virtual Navi31s: one GPU's SDMA writes into and reads from the other's VRAM at the
// address the buffer has on its owner, through the importer's page tables and DMA space, as two 7900 XTXs behind
// one IOMMU do. After unmapping, the same access is a page fault and the owner's memory stays as it was.
#include "am/peer_mapping.h"

#include <atomic>
#include <cstring>
#include <vector>

#include "am/device.h"
#include "am/gmc.h"
#include "am/regs/vm_constants.h"
#include "am/sdma.h"
#include "base/bits.h"
#include "firmware/store.h"
#include "gtest/gtest.h"
#include "pci/open.h"
#include "pci/sim/persistent_state.h"
#include "tests/am/sim/sim_state_dir.h"

namespace am {
namespace {

auto* const kStateDir = sim::testing::RegisterSimStateDir();
constexpr uint64_t kBytes = base::MiB(2);

std::unique_ptr<Device> BootVirtual(const std::string& name) {
  EXPECT_TRUE(pci::sim::PersistentState::PowerCycle(name).ok());
  auto pci = pci::Open(name);
  EXPECT_TRUE(pci.ok()) << pci.status();
  if (!pci.ok()) return nullptr;
  auto device = Device::Open(std::move(*pci));
  EXPECT_TRUE(device.ok()) << device.status();
  if (!device.ok() || !(*device)->Boot().ok()) return nullptr;
  return std::move(*device);
}

class PeerMappingTest : public ::testing::Test {
 protected:
  void SetUp() override {
    owner_ = BootVirtual("sim:navi31:peer-owner");
    importer_ = BootVirtual("sim:navi31:peer-importer");
    ASSERT_TRUE(owner_ && importer_);
    auto shared = owner_->memory().AllocVram(kBytes, kBytes);
    auto local = importer_->memory().AllocVram(kBytes, kBytes);
    auto fence = importer_->memory().AllocBoot(4096);
    ASSERT_TRUE(shared.ok() && local.ok() && fence.ok());
    shared_ = *shared, local_ = *local, fence_ = *fence;
    auto va = owner_->memory().MapVram(shared_, kBytes);
    ASSERT_TRUE(va.ok()) << va.status();
    va_ = *va;
    ASSERT_TRUE(owner_->memory().Flush().ok());
  }

  std::span<uint8_t> OwnerBytes() { return *owner_->memory().CpuView(shared_, kBytes); }
  std::span<uint8_t> ImporterBytes() { return *importer_->memory().CpuView(local_, kBytes); }
  // Copies on the importer's SDMA, then a fence; true when the fence landed (the copy finished).
  bool ImporterCopy(uint64_t destination, uint64_t source, uint32_t fence_value) {
    if (!importer_->sdma().Copy(destination, source, kBytes).ok()) return false;
    if (!importer_->sdma().Fence(importer_->McAddress(fence_), fence_value).ok()) return false;
    std::span<uint8_t> fence = *importer_->memory().CpuView(fence_, 4);
    const absl::Time deadline = absl::Now() + absl::Seconds(5);
    while (std::atomic_ref<uint32_t>(*reinterpret_cast<uint32_t*>(fence.data())).load() != fence_value) {
      if (absl::Now() > deadline || importer_->sdma().WaitIdle(absl::ZeroDuration()).ok()) {
        return std::atomic_ref<uint32_t>(*reinterpret_cast<uint32_t*>(fence.data())).load() == fence_value;
      }
    }
    return true;
  }

  std::unique_ptr<Device> owner_, importer_;
  uint64_t shared_ = 0, local_ = 0, fence_ = 0, va_ = 0;
};

TEST_F(PeerMappingTest, TheImporterWritesAndReadsTheOwnersVramAtTheSameAddress) {
  auto peer = PeerMapping::Create(*importer_, *owner_, shared_, kBytes, va_);
  ASSERT_TRUE(peer.ok()) << peer.status();
  EXPECT_EQ((*peer)->va(), va_);

  for (size_t i = 0; i < kBytes; ++i) ImporterBytes()[i] = static_cast<uint8_t>(i * 13 + 1);
  ASSERT_TRUE(ImporterCopy(va_, importer_->McAddress(local_), 1));
  EXPECT_EQ(std::memcmp(OwnerBytes().data(), ImporterBytes().data(), kBytes), 0);

  // The other way: the owner's data comes back into the importer's VRAM.
  for (size_t i = 0; i < kBytes; ++i) OwnerBytes()[i] = static_cast<uint8_t>(i * 5 + 3);
  std::memset(ImporterBytes().data(), 0, kBytes);
  ASSERT_TRUE(ImporterCopy(importer_->McAddress(local_), va_, 2));
  EXPECT_EQ(std::memcmp(OwnerBytes().data(), ImporterBytes().data(), kBytes), 0);

  // The importer's page tables translate the VA to a system page at the peer's device address.
  const PageTable::Translation walk = importer_->memory().page_table().Walk(va_ + 4096);
  ASSERT_TRUE(walk.valid);
  EXPECT_EQ(walk.address, (*peer)->device_address() + 4096);
  ASSERT_FALSE(walk.steps.empty());
  EXPECT_NE(walk.steps.back().entry & regs::vm::AMDGPU_PTE_SYSTEM, 0u);
}

TEST_F(PeerMappingTest, AfterUnmappingTheAccessFaultsAndTheOwnersMemoryIsUntouched) {
  auto peer = PeerMapping::Create(*importer_, *owner_, shared_, kBytes, va_);
  ASSERT_TRUE(peer.ok()) << peer.status();
  peer->reset();
  std::memset(OwnerBytes().data(), 0x5a, kBytes);
  std::memset(ImporterBytes().data(), 0xa5, kBytes);
  // The hubs redirect the faulting writes to the importer's dummy page, as amdgpu sets them up (B13): the copy
  // completes into the dummy page, never the owner's memory, and no queue stopped.
  EXPECT_TRUE(ImporterCopy(va_, importer_->McAddress(local_), 3));
  for (uint8_t byte : OwnerBytes()) ASSERT_EQ(byte, 0x5a);
  for (uint8_t byte : importer_->gmc().dummy_page_memory()) ASSERT_EQ(byte, 0xa5);
  auto resets = importer_->RecoverQueues();
  ASSERT_TRUE(resets.ok()) << resets.status();
  EXPECT_TRUE(resets->empty());
}

TEST_F(PeerMappingTest, TheImporterReachesHostMemoryTheOwnerAllocated) {
  auto host = owner_->pci().AllocDma(kBytes);
  ASSERT_TRUE(host.ok()) << host.status();
  const uint64_t va = va_ + (uint64_t{1} << 30);  // a VA the owner's VRAM mapping does not use
  auto peer = PeerMapping::CreateForHostMemory(*importer_, {(*host)->cpu(), (*host)->size()}, va, false);
  ASSERT_TRUE(peer.ok()) << peer.status();
  for (size_t i = 0; i < kBytes; ++i) ImporterBytes()[i] = static_cast<uint8_t>(i * 3 + 11);
  ASSERT_TRUE(ImporterCopy(va, importer_->McAddress(local_), 4));
  EXPECT_EQ(std::memcmp((*host)->cpu(), ImporterBytes().data(), kBytes), 0);

  // A snooped system page at the importer's own device address for that memory.
  const PageTable::Translation walk = importer_->memory().page_table().Walk(va);
  ASSERT_TRUE(walk.valid);
  EXPECT_EQ(walk.address, (*peer)->device_address());
  ASSERT_FALSE(walk.steps.empty());
  EXPECT_NE(walk.steps.back().entry & regs::vm::AMDGPU_PTE_SYSTEM, 0u);
  EXPECT_NE(walk.steps.back().entry & regs::vm::AMDGPU_PTE_SNOOPED, 0u);
  peer->reset();
  EXPECT_FALSE(importer_->memory().page_table().Walk(va).valid);
}

TEST_F(PeerMappingTest, MisalignedRequestsAreRefusedWithTheirValues) {
  auto peer = PeerMapping::Create(*importer_, *owner_, shared_ + 100, kBytes, va_);
  ASSERT_FALSE(peer.ok());
  EXPECT_EQ(peer.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(peer.status().message().find("multiples of 4096"), std::string::npos) << peer.status();
  EXPECT_FALSE(PeerMapping::Create(*importer_, *owner_, shared_, 0, va_).ok());
  std::vector<uint8_t> unaligned(2 * 4096);
  auto host = PeerMapping::CreateForHostMemory(*importer_, {unaligned.data() + 1, 4096}, va_, false);
  ASSERT_FALSE(host.ok());
  EXPECT_NE(host.status().message().find("multiples of 4096"), std::string::npos) << host.status();
}

}  // namespace
}  // namespace am
