// Buffers and copies: VRAM and host memory, copies short, long (several packets), above 4 GiB, many small ones,
// copy in and out of any size through the staging ring.
#include "hcq/allocator.h"

#include <numeric>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "am/page_table.h"
#include "hcq/device.h"
#include "tests/hcq/hcq_fixture.h"

namespace hcq {
namespace {

auto* const kStateDir = am::sim::testing::RegisterSimStateDir();

std::vector<uint8_t> Pattern(size_t size, uint32_t seed) {
  std::vector<uint8_t> data(size);
  uint32_t x = seed * 2654435761u + 1;
  for (auto& byte : data) byte = static_cast<uint8_t>((x = x * 1103515245u + 12345u) >> 16);
  return data;
}

class AllocatorTest : public testing::HcqTest {
 protected:
  // Small staging so that transfers stream through it several times; small packets so copies split.
  DeviceOptions Options() override {
    return {.staging_buffers = 3, .staging_bytes = 64 << 10, .max_copy_packet_bytes = 100 << 10};
  }
  absl::Status CopyAndWait(uint64_t destination, uint64_t source, uint64_t size) {
    auto queue = dev_->NewCopyQueue();
    queue->wait(dev_->timeline_signal(), dev_->timeline_value() - 1)
        .copy(destination, source, size)
        .signal(dev_->timeline_signal(), dev_->next_timeline());
    if (absl::Status s = queue->submit(*dev_); !s.ok()) return s;
    return dev_->synchronize();
  }
};

TEST_F(AllocatorTest, BuffersHaveAddressesViewsAndOwners) {
  auto vram = dev_->allocator().alloc(10000);
  ASSERT_TRUE(vram.ok()) << vram.status();
  EXPECT_NE(vram->va(), 0u);
  EXPECT_NE(vram->cpu(), nullptr);
  EXPECT_EQ(vram->size(), 10000u);
  ASSERT_EQ(vram->mapped().size(), 1u);
  EXPECT_EQ(vram->mapped()[0], dev_.get());
  Buffer view = vram->offset(4096, 100);
  EXPECT_EQ(view.va(), vram->va() + 4096);
  EXPECT_EQ(view.cpu(), vram->cpu() + 4096);
  EXPECT_EQ(view.size(), 100u);
  EXPECT_EQ(vram->offset(9990, 100).size(), 10u);  // clamped to the buffer
  EXPECT_TRUE(dev_->allocator().free(*vram).ok());
  EXPECT_FALSE(dev_->allocator().free(*vram).ok());  // twice
}

// A size near 2^64 once rounded up to 0 and was reported as "allocation of 0 bytes". Every size too large for the
// device is refused naming the size asked for, whether it wraps when rounded or not.
TEST_F(AllocatorTest, SizesTooLargeAreRefusedNamingTheRequestedSize) {
  std::vector<uint64_t> sizes = {~uint64_t{0}, ~uint64_t{0} - 4095, ~uint64_t{0} - 4096};
  for (int bit = 40; bit < 64; ++bit) {
    for (uint64_t size : {(uint64_t{1} << bit) - 1, uint64_t{1} << bit, (uint64_t{1} << bit) + 1}) {
      sizes.push_back(size);
    }
  }
  for (uint64_t size : sizes) {
    for (MemoryKind kind : {MemoryKind::kVram, MemoryKind::kHost}) {
      // Host memory up to the 48-bit limit is reserved lazily and listed page by page: a TiB takes minutes.
      if (kind == MemoryKind::kHost && size <= am::PageTable::kAddressSpace) continue;
      auto made = dev_->allocator().alloc(size, {.kind = kind});
      ASSERT_FALSE(made.ok()) << size;
      const std::string message(made.status().message());
      EXPECT_TRUE(absl::StrContains(message, absl::StrCat("allocate ", size, " bytes"))) << message;
      EXPECT_FALSE(absl::StrContains(message, " 0 bytes")) << message;
      EXPECT_EQ(made.status().code(), absl::StatusCode::kResourceExhausted) << message;
    }
  }
  // The device still allocates afterwards.
  auto small = dev_->allocator().alloc(4096);
  ASSERT_TRUE(small.ok()) << small.status();
  EXPECT_TRUE(dev_->allocator().free(*small).ok());
}

TEST_F(AllocatorTest, ShortCopyVramToVram) {
  auto a = dev_->allocator().alloc(4096), b = dev_->allocator().alloc(4096);
  ASSERT_TRUE(a.ok() && b.ok());
  auto data = Pattern(100, 1);
  std::memcpy(a->cpu() + 3, data.data(), data.size());
  std::memset(b->cpu(), 0, 4096);
  ASSERT_TRUE(CopyAndWait(b->va() + 7, a->va() + 3, 100).ok());
  EXPECT_EQ(std::memcmp(b->cpu() + 7, data.data(), 100), 0);
  EXPECT_EQ(b->cpu()[6], 0);
  EXPECT_EQ(b->cpu()[107], 0);
}

TEST_F(AllocatorTest, LongCopySplitsIntoPackets) {
  const uint64_t size = (1 << 20) + 12345;
  auto a = dev_->allocator().alloc(size), b = dev_->allocator().alloc(size);
  ASSERT_TRUE(a.ok() && b.ok());
  auto data = Pattern(size, 2);
  std::memcpy(a->cpu(), data.data(), size);
  auto queue = dev_->NewCopyQueue();
  queue->copy(b->va(), a->va(), size);
  // 100 KiB packets of 7 dwords each.
  EXPECT_EQ(queue->dwords().size(), 7u * ((size + (100 << 10) - 1) / (100 << 10)));
  ASSERT_TRUE(CopyAndWait(b->va(), a->va(), size).ok());
  EXPECT_EQ(std::memcmp(b->cpu(), data.data(), size), 0);
}

TEST_F(AllocatorTest, CopyAbove4GiBOfVram) {
  // VRAM is sparse in the virtual device: 5 GiB costs only the pages touched.
  auto big = dev_->allocator().alloc(uint64_t{5} << 30);
  ASSERT_TRUE(big.ok()) << big.status();
  const uint64_t high = (uint64_t{4} << 30) + 4096 * 3 + 8;
  auto data = Pattern(5000, 3);
  auto host = dev_->allocator().alloc(8192, {.kind = MemoryKind::kHost});
  ASSERT_TRUE(host.ok());
  std::memcpy(host->cpu(), data.data(), data.size());
  ASSERT_TRUE(CopyAndWait(big->va() + high, host->va(), data.size()).ok());
  EXPECT_EQ(std::memcmp(big->cpu() + high, data.data(), data.size()), 0);
  ASSERT_TRUE(dev_->allocator().free(*big).ok());
}

TEST_F(AllocatorTest, ManySmallCopiesFromAHostBuffer) {
  auto host = dev_->allocator().alloc(64 << 10, {.kind = MemoryKind::kHost});
  auto vram = dev_->allocator().alloc(64 << 10);
  ASSERT_TRUE(host.ok() && vram.ok());
  auto data = Pattern(64 << 10, 4);
  std::memcpy(host->cpu(), data.data(), data.size());
  std::memset(vram->cpu(), 0, 64 << 10);
  auto queue = dev_->NewCopyQueue();
  queue->wait(dev_->timeline_signal(), dev_->timeline_value() - 1);
  for (uint64_t off = 0; off < (64 << 10); off += 256) queue->copy(vram->va() + off, host->va() + off, 256);
  queue->signal(dev_->timeline_signal(), dev_->next_timeline());
  ASSERT_TRUE(queue->bind(*dev_).ok());  // 256 packets: by reference
  ASSERT_TRUE(queue->submit(*dev_).ok());
  ASSERT_TRUE(dev_->synchronize().ok());
  EXPECT_EQ(std::memcmp(vram->cpu(), data.data(), data.size()), 0);
}

TEST_F(AllocatorTest, CopyInAndOutOfAnySizeThroughStaging) {
  for (size_t size : {size_t{1}, size_t{4095}, size_t{64 << 10}, size_t{1000003}}) {
    auto buffer = dev_->allocator().alloc(size, {.cpu_access = false});
    ASSERT_TRUE(buffer.ok());
    auto data = Pattern(size, static_cast<uint32_t>(size));
    ASSERT_TRUE(dev_->allocator().copyin(*buffer, data).ok()) << size;
    std::vector<uint8_t> back(size);
    ASSERT_TRUE(dev_->allocator().copyout(back, *buffer).ok()) << size;
    EXPECT_EQ(back, data) << size;
    ASSERT_TRUE(dev_->allocator().free(*buffer).ok());
  }
}

TEST_F(AllocatorTest, CopyInBeyondTheBufferIsRefused) {
  auto buffer = dev_->allocator().alloc(100);
  ASSERT_TRUE(buffer.ok());
  std::vector<uint8_t> data(101);
  EXPECT_EQ(dev_->allocator().copyin(*buffer, data).code(), absl::StatusCode::kOutOfRange);
}

TEST_F(AllocatorTest, HostBufferMappedIntoTheDeviceIsWrittenByIt) {
  auto host = dev_->allocator().alloc(4096, {.kind = MemoryKind::kHost});
  auto vram = dev_->allocator().alloc(4096);
  ASSERT_TRUE(host.ok() && vram.ok());
  auto data = Pattern(4096, 5);
  std::memcpy(vram->cpu(), data.data(), 4096);
  ASSERT_TRUE(CopyAndWait(host->va(), vram->va(), 4096).ok());
  EXPECT_EQ(std::memcmp(host->cpu(), data.data(), 4096), 0);
}

TEST_F(AllocatorTest, CpuVisibleBuffersSitAtTheirCpuAddress) {
  // tinygrad's HCQ writes host buffers through their GPU address (ctypes.memset(buf.va_addr, ...)): one pointer for
  // both. The engine's write through that address lands in the memory the CPU reads there.
  auto host = dev_->allocator().alloc(8192, {.kind = MemoryKind::kHost});
  auto vram = dev_->allocator().alloc(8192);
  ASSERT_TRUE(host.ok() && vram.ok());
  EXPECT_EQ(host->va(), reinterpret_cast<uintptr_t>(host->cpu()));
  EXPECT_EQ(vram->va(), reinterpret_cast<uintptr_t>(vram->cpu()));  // CPU-visible VRAM too (through BAR0)
  auto data = Pattern(8192, 9);
  std::memcpy(vram->cpu(), data.data(), 8192);
  ASSERT_TRUE(CopyAndWait(reinterpret_cast<uintptr_t>(host->cpu()), vram->va(), 8192).ok());
  EXPECT_EQ(std::memcmp(host->cpu(), data.data(), 8192), 0);
}

}  // namespace
}  // namespace hcq
