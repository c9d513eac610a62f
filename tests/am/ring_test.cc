// am::Ring's room accounting (issue 24): Append judges room against the read pointer it last read and reads the
// engine's only when that shows none, so a submit does not take the engine's cache line every time. It must still
// never write over packets the engine has not read, nor refuse room the engine has freed.
#include "am/ring.h"

#include <array>
#include <cstdint>
#include <vector>

#include "gtest/gtest.h"

namespace am {
namespace {

constexpr uint32_t kRingDwords = 64;

// A ring in host memory with the engine's read pointer a plain word the test moves, as the MEC reports it (wrapping
// dwords: kPm4RingFormat).
class RingTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ring_.Attach({.ring = std::span<uint8_t>(reinterpret_cast<uint8_t*>(memory_.data()), kRingDwords * 4),
                  .rptr = &rptr_,
                  .doorbells = pci::Mmio::Direct(doorbells_.data(), sizeof(doorbells_)),
                  .registers = pci::Mmio::Direct(registers_.data(), sizeof(registers_))},
                 0);
  }
  // The engine consumed everything up to the write pointer.
  void Consume() { rptr_ = static_cast<uint32_t>(ring_.wptr() % kRingDwords); }

  std::array<uint32_t, kRingDwords> memory_{};
  uint32_t rptr_ = 0;
  std::array<uint64_t, 8> doorbells_{};
  std::array<uint32_t, 16> registers_{};
  Ring ring_{kPm4RingFormat};
};

TEST_F(RingTest, RefusesToOverwriteWhatTheEngineHasNotRead) {
  const std::vector<uint32_t> packet(16, 0xc0001000);  // 16 dwords; a full ring holds at most 63
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(ring_.Write(packet, absl::ZeroDuration()).ok()) << i;
  // 48 pending: a fourth packet would reach the read pointer.
  EXPECT_EQ(ring_.Write(packet, absl::ZeroDuration()).code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_EQ(ring_.wptr(), 48u);
}

TEST_F(RingTest, SeesRoomTheEngineFreedSinceItLastLooked) {
  const std::vector<uint32_t> packet(16, 0xc0001000);
  for (int lap = 0; lap < 8; ++lap) {  // around the ring several times, each time after the engine caught up
    for (int i = 0; i < 3; ++i) ASSERT_TRUE(ring_.Write(packet, absl::ZeroDuration()).ok()) << lap << " " << i;
    EXPECT_FALSE(ring_.Write(packet, absl::ZeroDuration()).ok()) << lap;
    Consume();
  }
  // The engine read part of it: room for exactly what it freed.
  ASSERT_TRUE(ring_.Write(packet, absl::ZeroDuration()).ok());
  ASSERT_TRUE(ring_.Write(packet, absl::ZeroDuration()).ok());
  ASSERT_TRUE(ring_.Write(packet, absl::ZeroDuration()).ok());
  rptr_ = static_cast<uint32_t>((ring_.wptr() - 40) % kRingDwords);  // 40 still pending
  EXPECT_FALSE(ring_.Write(std::vector<uint32_t>(24, 0), absl::ZeroDuration()).ok());
  EXPECT_TRUE(ring_.Write(std::vector<uint32_t>(23, 0), absl::ZeroDuration()).ok());
}

// After Attach at a write pointer a previous process left (a partial boot), nothing is assumed about the read
// pointer: the engine's is read.
TEST_F(RingTest, AReattachedRingReadsTheEnginesPointer) {
  const std::vector<uint32_t> packet(16, 0xc0001000);
  ASSERT_TRUE(ring_.Write(packet, absl::ZeroDuration()).ok());
  Consume();
  // Another process took the ring 60 dwords on, and the engine has read only 10 of them: 50 pending.
  ring_.Attach({.ring = std::span<uint8_t>(reinterpret_cast<uint8_t*>(memory_.data()), kRingDwords * 4),
                .rptr = &rptr_,
                .doorbells = pci::Mmio::Direct(doorbells_.data(), sizeof(doorbells_)),
                .registers = pci::Mmio::Direct(registers_.data(), sizeof(registers_))},
               16 + 60);
  rptr_ = (16 + 10) % kRingDwords;
  EXPECT_FALSE(ring_.Write(packet, absl::ZeroDuration()).ok()) << "only 13 dwords are free";
  EXPECT_TRUE(ring_.Write(std::vector<uint32_t>(13, 0), absl::ZeroDuration()).ok());
}

}  // namespace
}  // namespace am
