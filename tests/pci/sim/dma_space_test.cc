#include "pci/sim/dma_space.h"

#include <sys/mman.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <optional>
#include <thread>
#include <utility>
#include <vector>

#include "gtest/gtest.h"
#include "pci/host_memory.h"

namespace pci::sim {
namespace {

class DmaSpaceTest : public ::testing::Test {
 protected:
  using Accessor = DmaSpace::Accessor;
  DmaSpaceTest() : low_(4096, 0xaa), high_(4096, 0xbb) {
    dma_.Map(0x10000, low_.data(), low_.size());
    dma_.Map(0x11000, high_.data(), high_.size());  // adjacent: together one 8 KiB range
    dma_.set_bus_master(true);
  }
  DmaSpace dma_;
  std::vector<uint8_t> low_, high_;
};

TEST_F(DmaSpaceTest, ReadsAndWritesSpanAdjacentMappings) {
  std::vector<uint8_t> data(64, 0x42);
  ASSERT_TRUE(dma_.Write(0x10fe0, data.data(), data.size()));
  EXPECT_EQ(low_[4095], 0x42);
  EXPECT_EQ(high_[31], 0x42);
  EXPECT_EQ(high_[32], 0xbb);
  std::vector<uint8_t> back(64);
  ASSERT_TRUE(dma_.Read(0x10fe0, back.data(), back.size()));
  EXPECT_EQ(back, data);
  EXPECT_EQ(dma_.fault_count(), 0u);
}

TEST_F(DmaSpaceTest, PartlyUnmappedRangesMoveNothingAndFault) {
  std::vector<uint8_t> data(64, 0x42);
  ASSERT_FALSE(dma_.Write(0x11fe0, data.data(), data.size()));  // runs 32 bytes past the end
  for (uint8_t b : high_) ASSERT_EQ(b, 0xbb);
  ASSERT_FALSE(dma_.Write(0xffe0, data.data(), data.size()));  // starts 32 bytes before the start
  for (uint8_t b : low_) ASSERT_EQ(b, 0xaa);
  EXPECT_EQ(dma_.fault_count(), 2u);
  EXPECT_EQ(dma_.last_fault()->address, 0xffe0u);
  EXPECT_FALSE(dma_.Write(UINT64_MAX - 8, data.data(), 64));  // wraps around the address space
}

TEST_F(DmaSpaceTest, TranslateOnlyInsideOneMapping) {
  EXPECT_EQ(dma_.Translate(0x10010, 16), low_.data() + 0x10);
  EXPECT_EQ(dma_.Translate(0x10ff0, 32), nullptr);  // crosses into the next mapping
  EXPECT_EQ(dma_.Translate(0x12000, 1), nullptr);
  dma_.Unmap(0x10000);
  EXPECT_EQ(dma_.Translate(0x10010, 16), nullptr);
}

TEST_F(DmaSpaceTest, NoBusMasterNoAccess) {
  dma_.set_bus_master(false);
  uint8_t byte = 0;
  EXPECT_FALSE(dma_.Read(0x10000, &byte, 1));
  EXPECT_EQ(dma_.Translate(0x10000, 1), nullptr);
  EXPECT_TRUE(dma_.last_fault()->bus_master_disabled);
}

// Whether the page holding `address` is still mapped in this process (mincore fails with ENOMEM for an unmapped one).
bool PageMapped(const uint8_t* address) {
  unsigned char resident = 0;
  errno = 0;
  auto* page = reinterpret_cast<void*>(reinterpret_cast<uintptr_t>(address) & ~uintptr_t{4095});
  const bool mapped = ::mincore(page, 4096, &resident) == 0;
  EXPECT_TRUE(mapped || errno == ENOMEM) << std::strerror(errno);
  return mapped;
}

// A buffer mapped at kRetiredAddress, filled with `fill`: what a driver's DMA buffer is to the space.
constexpr uint64_t kRetiredAddress = 0x40000;
uint8_t* MapFilledBuffer(DmaSpace& dma, HostMemory& memory, uint8_t fill = 0x5a) {
  absl::StatusOr<HostMemory> allocated = HostMemory::Allocate(4096);
  EXPECT_TRUE(allocated.ok()) << allocated.status();
  memory = std::move(*allocated);
  std::memset(memory.data(), fill, memory.size());
  dma.Map(kRetiredAddress, memory.data(), memory.size());
  return memory.data();
}

// The driver frees that buffer: the space forgets the mapping, then takes the memory to release.
void FreeBuffer(DmaSpace& dma, HostMemory memory) {
  dma.Unmap(kRetiredAddress);
  dma.Retire(std::move(memory));
}

TEST_F(DmaSpaceTest, RetiredMemoryGoesBackAtOnceWhenNoEngineIsRegistered) {
  HostMemory memory;
  uint8_t* host = MapFilledBuffer(dma_, memory);
  FreeBuffer(dma_, std::move(memory));
  EXPECT_EQ(dma_.retired_count(), 0u);
  EXPECT_FALSE(PageMapped(host));
}

TEST_F(DmaSpaceTest, AnAwakeAccessorKeepsWhatItTranslatedUntilItsNextQuiescentPoint) {
  Accessor engine(&dma_);
  HostMemory memory;
  MapFilledBuffer(dma_, memory);
  const uint8_t* translated = dma_.Translate(kRetiredAddress + 16, 64);
  ASSERT_NE(translated, nullptr);
  // The driver frees the buffer while the engine still holds the pointer.
  FreeBuffer(dma_, std::move(memory));
  EXPECT_EQ(dma_.retired_count(), 1u);
  EXPECT_EQ(dma_.Translate(kRetiredAddress + 16, 64), nullptr);  // the mapping itself is gone at once
  ASSERT_TRUE(PageMapped(translated));
  EXPECT_EQ(translated[63], 0x5a);  // a late access reads what was there, and brings nothing down
  engine.Quiescent();
  EXPECT_EQ(dma_.retired_count(), 0u);
  EXPECT_FALSE(PageMapped(translated));
}

TEST_F(DmaSpaceTest, AQuiescentPointBeforeTheUnmapDoesNotReleaseIt) {
  std::optional<Accessor> engine(std::in_place, &dma_);
  HostMemory memory;
  uint8_t* host = MapFilledBuffer(dma_, memory);
  engine->Quiescent();
  ASSERT_NE(dma_.Translate(kRetiredAddress, 4096), nullptr);
  FreeBuffer(dma_, std::move(memory));
  EXPECT_EQ(dma_.retired_count(), 1u);
  EXPECT_TRUE(PageMapped(host));
  engine.reset();  // an engine thread that ends holds nothing
  EXPECT_EQ(dma_.retired_count(), 0u);
  EXPECT_FALSE(PageMapped(host));
}

TEST_F(DmaSpaceTest, ASleepingAccessorHoldsNothingAndWakesUpHoldingWhatItTranslatesThen) {
  Accessor engine(&dma_);
  engine.Offline();
  HostMemory first;
  uint8_t* first_host = MapFilledBuffer(dma_, first);
  FreeBuffer(dma_, std::move(first));
  EXPECT_EQ(dma_.retired_count(), 0u);
  EXPECT_FALSE(PageMapped(first_host));
  // Awake again, it translates a new buffer: freeing that one waits for the engine's next quiescent point.
  engine.Online();
  HostMemory second;
  uint8_t* second_host = MapFilledBuffer(dma_, second);
  ASSERT_EQ(dma_.Translate(kRetiredAddress, 4096), second_host);
  FreeBuffer(dma_, std::move(second));
  EXPECT_EQ(dma_.retired_count(), 1u);
  engine.Offline();  // going to sleep releases it
  EXPECT_EQ(dma_.retired_count(), 0u);
  EXPECT_FALSE(PageMapped(second_host));
}

TEST_F(DmaSpaceTest, MemoryIsKeptUntilTheLastAwakeAccessorPasses) {
  Accessor mec(&dma_), sdma(&dma_);
  HostMemory memory;
  uint8_t* host = MapFilledBuffer(dma_, memory);
  FreeBuffer(dma_, std::move(memory));
  mec.Quiescent();
  EXPECT_EQ(dma_.retired_count(), 1u);
  EXPECT_TRUE(PageMapped(host));
  sdma.Quiescent();
  EXPECT_EQ(dma_.retired_count(), 0u);
}

// An engine thread reading through fresh translations between quiescent points while the driver maps, fills and
// frees buffers as fast as it can, each filled with a value of its own. Without retirement the engine's pointer
// outlived the buffer: it read unmapped memory (the process died) or the next buffer the host put at the same
// address (a pass saw two values, or the zeroes of fresh memory).
TEST_F(DmaSpaceTest, AnEngineReadingWhileTheDriverFreesNeverTouchesUnmappedMemory) {
  std::atomic<bool> stop{false};
  std::atomic<uint64_t> reads{0}, wrong{0};
  std::thread engine([&] {
    Accessor access(&dma_);
    while (!stop.load(std::memory_order_acquire)) {
      access.Quiescent();
      const uint8_t* host = dma_.Translate(kRetiredAddress, 4096);
      if (host == nullptr) continue;
      // A pointer kept across the driver's free: every byte is still that buffer's.
      const uint8_t fill = host[0];
      for (size_t i = 0; i < 4096; i += 64) {
        if (host[i] != fill || fill == 0) wrong.fetch_add(1, std::memory_order_relaxed);
      }
      reads.fetch_add(1, std::memory_order_relaxed);
    }
  });
  // At least kBuffers buffers, and on until the engine has read through kReads translations meanwhile (bounded:
  // a thread the scheduler never runs in 10 s fails the test rather than passing it with nothing read).
  constexpr int kBuffers = 5000;
  constexpr uint64_t kReads = 100;
  const uint64_t reads_before = reads.load();
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  for (int i = 0; i < kBuffers || (reads.load() - reads_before < kReads && std::chrono::steady_clock::now() < deadline);
       ++i) {
    HostMemory memory;
    MapFilledBuffer(dma_, memory, static_cast<uint8_t>(1 + i % 255));
    FreeBuffer(dma_, std::move(memory));
  }
  const uint64_t reads_during = reads.load() - reads_before;
  stop.store(true, std::memory_order_release);
  engine.join();
  EXPECT_GE(reads_during, kReads);
  EXPECT_EQ(wrong.load(), 0u);
  EXPECT_EQ(dma_.retired_count(), 0u);  // the engine's exit released the last
}

}  // namespace
}  // namespace pci::sim
