#include "pci/pagemap.h"

#include <cstring>
#include <string>

#include "absl/strings/match.h"
#include "gtest/gtest.h"
#include "pci/host_memory.h"
#include "tests/pci/fake_system.h"

namespace pci {
namespace {

using ::pci::testing::FakeSystem;

std::string Entries(std::initializer_list<uint64_t> entries) {
  std::string bytes;
  for (uint64_t e : entries) bytes.append(reinterpret_cast<const char*>(&e), sizeof(e));
  return bytes;
}

TEST(PagemapTest, PresentEntryGivesFrameTimesPageSizePlusOffset) {
  auto address = DecodePagemapEntry(kPagemapPresent | 0x12345, 0x7f0000001abc, "pagemap");
  ASSERT_TRUE(address.ok()) << address.status();
  EXPECT_EQ(*address, 0x12345abcu);
  // Flag bits above the PFN (soft-dirty 55, exclusive 56) are not part of the address.
  EXPECT_EQ(*DecodePagemapEntry(kPagemapPresent | (uint64_t{3} << 55) | 0x10, 0x0, "pagemap"), 0x10000u);
}

TEST(PagemapTest, ZeroFrameExplainsCapSysAdmin) {
  auto address = DecodePagemapEntry(kPagemapPresent, 0x1000, "/proc/self/pagemap");
  ASSERT_FALSE(address.ok());
  EXPECT_EQ(address.status().code(), absl::StatusCode::kPermissionDenied);
  EXPECT_TRUE(absl::StrContains(address.status().message(), "CAP_SYS_ADMIN")) << address.status();
}

TEST(PagemapTest, AbsentPageIsAnError) {
  auto address = DecodePagemapEntry(0x12345, 0x1000, "pagemap");
  ASSERT_FALSE(address.ok());
  EXPECT_TRUE(absl::StrContains(address.status().message(), "not present")) << address.status();
}

TEST(PagemapTest, ReadsTheEntryForTheAddressFromTheFile) {
  FakeSystem fake;
  fake.WriteFile("proc/self/pagemap", Entries({0, 0, kPagemapPresent | 0xabc, kPagemapPresent}));
  const std::string path = fake.paths().proc + "/self/pagemap";
  auto third = PhysicalAddress(path, 2 * kPageSize + 0x10);
  ASSERT_TRUE(third.ok()) << third.status();
  EXPECT_EQ(*third, 0xabc010u);
  EXPECT_EQ(PhysicalAddress(path, 3 * kPageSize).status().code(), absl::StatusCode::kPermissionDenied);
  auto beyond = PhysicalAddress(path, 100 * kPageSize);
  ASSERT_FALSE(beyond.ok());
  EXPECT_TRUE(absl::StrContains(beyond.status().message(), "no entry for address 0x64000")) << beyond.status();
}

TEST(PagemapTest, ThisProcessesLockedPage) {
  auto memory = HostMemory::Allocate(kPageSize, HostMemoryOptions{false, true, std::nullopt});
  if (!memory.ok()) GTEST_SKIP() << "cannot lock a page here: " << memory.status();
  memory->data()[8] = 1;  // fault it in even where mlock is a no-op (AddressSanitizer intercepts it)
  auto address = PhysicalAddress("/proc/self/pagemap", reinterpret_cast<uintptr_t>(memory->data()) + 8);
  if (!address.ok()) {
    EXPECT_EQ(address.status().code(), absl::StatusCode::kPermissionDenied) << address.status();
    return;
  }
  EXPECT_NE(*address, 0u);
  EXPECT_EQ(*address % kPageSize, 8u);
}

}  // namespace
}  // namespace pci
