// Two virtual devices: each maps the other's VRAM (peer access), copies peer to peer, and they signal each other.
#include <cstring>
#include <vector>

#include "absl/strings/match.h"
#include "hcq/device.h"
#include "tests/hcq/hcq_fixture.h"

namespace hcq {
namespace {

auto* const kStateDir = am::sim::testing::RegisterSimStateDir();

class PeerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    a_ = testing::OpenFresh("sim:navi31:peer-a", {.signals_in_vram = true});
    b_ = testing::OpenFresh("sim:navi31:peer-b", {.signals_in_vram = true});
    ASSERT_NE(a_, nullptr);
    ASSERT_NE(b_, nullptr);
  }
  void TearDown() override {
    b_.reset();
    a_.reset();
  }
  std::unique_ptr<Device> a_, b_;
};

TEST_F(PeerTest, CopiesFromOneDevicesVramIntoTheOthers) {
  const uint64_t size = (3 << 20) + 4096;
  auto source = a_->allocator().alloc(size);
  auto destination = b_->allocator().alloc(size);
  ASSERT_TRUE(source.ok() && destination.ok());
  for (uint64_t i = 0; i < size; ++i) source->cpu()[i] = static_cast<uint8_t>(i * 13 + 7);
  std::memset(destination->cpu(), 0, size);
  // A's copy engine writes B's VRAM; B's timeline waits for it.
  absl::Status transferred = a_->allocator().transfer(*destination, *source, size);
  ASSERT_TRUE(transferred.ok()) << transferred;
  ASSERT_EQ(destination->mapped().size(), 2u);
  ASSERT_TRUE(b_->synchronize().ok());
  EXPECT_EQ(std::memcmp(destination->cpu(), source->cpu(), size), 0);
  // Freeing the buffer on its owner removes the peer's mapping first.
  EXPECT_TRUE(b_->allocator().free(*destination).ok());
}

TEST_F(PeerTest, DevicesSignalEachOther) {
  ASSERT_TRUE(a_->ShareSignalsWith(*b_).ok());
  ASSERT_TRUE(b_->ShareSignalsWith(*a_).ok());
  auto on_a = a_->NewSignal(0), on_b = b_->NewSignal(0);
  ASSERT_TRUE(on_a.ok() && on_b.ok());
  // A waits for B's signal, answers on its own; B waits for the answer.
  auto a_queue = a_->NewComputeQueue();
  a_queue->wait(*on_b, 1).signal(*on_a, 2);
  ASSERT_TRUE(a_queue->submit(*a_).ok());
  EXPECT_FALSE(on_a->wait(2, absl::Milliseconds(20)).ok());
  auto b_queue = b_->NewCopyQueue();
  b_queue->signal(*on_b, 1).wait(*on_a, 2).signal(*on_b, 3);
  ASSERT_TRUE(b_queue->submit(*b_).ok());
  EXPECT_TRUE(on_b->wait(3, absl::Seconds(5)).ok());
  EXPECT_EQ(on_a->value(), 2u);
}

TEST_F(PeerTest, HostMemoryOfAnotherDeviceIsNotMappable) {
  auto host = a_->allocator().alloc(4096, {.kind = MemoryKind::kHost});
  ASSERT_TRUE(host.ok());
  absl::Status mapped = b_->allocator().map(*host);
  EXPECT_EQ(mapped.code(), absl::StatusCode::kUnimplemented);
  EXPECT_TRUE(absl::StrContains(mapped.message(), "allocate it in VRAM")) << mapped;
}

}  // namespace
}  // namespace hcq
