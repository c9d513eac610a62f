#include "pci/host_memory.h"

#include <sys/mman.h>

#include <cstdint>

#include "gtest/gtest.h"

namespace pci {
namespace {

TEST(HostMemoryTest, IsPageAlignedZeroedAndRoundedUp) {
  auto memory = HostMemory::Allocate(5000);
  ASSERT_TRUE(memory.ok()) << memory.status();
  EXPECT_EQ(reinterpret_cast<uintptr_t>(memory->data()) % kPageSize, 0u);
  EXPECT_EQ(memory->size(), 2 * kPageSize);
  for (size_t i = 0; i < memory->size(); ++i) ASSERT_EQ(memory->data()[i], 0) << i;
  memory->data()[memory->size() - 1] = 0xab;  // the whole rounded size is usable
}

TEST(HostMemoryTest, ZeroSizeIsAnError) {
  auto memory = HostMemory::Allocate(0);
  ASSERT_FALSE(memory.ok());
  EXPECT_EQ(memory.status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(HostMemoryTest, AbsurdSizesAreRefusedBeforeMapping) {
  auto memory = HostMemory::Allocate(SIZE_MAX - 10);
  ASSERT_FALSE(memory.ok());
  EXPECT_EQ(memory.status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(HostMemoryTest, MovesTransferOwnership) {
  HostMemory a = *HostMemory::Allocate(kPageSize);
  uint8_t* data = a.data();
  HostMemory b = std::move(a);
  EXPECT_EQ(b.data(), data);
  EXPECT_EQ(a.data(), nullptr);  // NOLINT(bugprone-use-after-move): the moved-from object is empty by contract
  EXPECT_EQ(a.size(), 0u);
}

TEST(HostMemoryTest, LockedMemoryIsResidentOrExplainsTheLimit) {
  auto memory = HostMemory::Allocate(16 * kPageSize, {.locked = true});
  if (!memory.ok()) {
    // Without the privilege to lock, the error must say how to raise the limit.
    EXPECT_NE(std::string(memory.status().message()).find("RLIMIT_MEMLOCK"), std::string::npos);
  } else {
    EXPECT_EQ(memory->size(), 16 * kPageSize);
  }
}

TEST(HostMemoryTest, NumaBindingToNodeZeroWorksOnEveryMachine) {
  EXPECT_GE(NumaNodeCount(), 1);
  auto memory = HostMemory::Allocate(kPageSize, {.numa_node = 0});
  ASSERT_TRUE(memory.ok()) << memory.status();
}

TEST(HostMemoryTest, ShareableMemoryIsTheSamePagesThroughItsFd) {
  auto memory = HostMemory::Allocate(3 * kPageSize, {.shareable = true});
  ASSERT_TRUE(memory.ok()) << memory.status();
  ASSERT_GE(memory->fd(), 0);
  void* other = ::mmap(nullptr, memory->size(), PROT_READ | PROT_WRITE, MAP_SHARED, memory->fd(), 0);
  ASSERT_NE(other, MAP_FAILED);
  auto* bytes = static_cast<uint8_t*>(other);
  memory->data()[kPageSize + 7] = 0x5a;
  EXPECT_EQ(bytes[kPageSize + 7], 0x5a);
  bytes[2 * kPageSize] = 0xc3;
  EXPECT_EQ(memory->data()[2 * kPageSize], 0xc3);
  ::munmap(other, memory->size());
}

TEST(HostMemoryTest, OnlyShareableMemoryHasAnFd) {
  auto memory = HostMemory::Allocate(kPageSize);
  ASSERT_TRUE(memory.ok());
  EXPECT_EQ(memory->fd(), -1);
}

}  // namespace
}  // namespace pci
