// Two virtual devices: each maps the other's VRAM (peer access), copies peer to peer, and they signal each other.
#include <cstring>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/time/clock.h"
#include "am/completion_interrupts.h"
#include "am/sim/navi31.h"
#include "hcq/amd/amd_device.h"
#include "hcq/device.h"
#include "hcq/graph.h"
#include "tests/hcq/hcq_fixture.h"

namespace hcq {
namespace {

auto* const kStateDir = am::sim::testing::RegisterSimStateDir();

constexpr absl::Duration kLimit = absl::Seconds(10);

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
  static const am::CompletionInterrupts& Interrupts(Device& device) {
    return dynamic_cast<amd::AmdDevice&>(device).am().completion_interrupts();
  }
  // Until a wait sleeps on A's interrupt holding `peer`'s.
  void AwaitSleeperHolding(Device& peer) {
    const absl::Time deadline = absl::Now() + kLimit;
    while (a_->sleeping_waits() < 1 || Interrupts(peer).holders() < 1) {
      ASSERT_LT(absl::Now(), deadline) << "the wait never went to sleep holding the peer's interrupts";
      std::this_thread::yield();
    }
  }
  static am::sim::Navi31& Sim(Device& device) {
    return static_cast<am::sim::Navi31&>(dynamic_cast<amd::AmdDevice&>(device).am().pci());
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

// A wait on one of A's signals that a queue of B writes sleeps on B's interrupt too (hcq/signal_writers.h): B's
// queue writes the signal behind a gate no device knows (writing it wakes nobody), so only B's end-of-pipe interrupt
// can wake the wait before its sleep's limit.
TEST_F(PeerTest, AWaitOnASharedSignalSleepsOnThePeersInterruptToo) {
  ASSERT_TRUE(a_->ShareSignalsWith(*b_).ok());
  auto done = a_->NewSignal(0);
  auto gate_memory = b_->allocator().alloc(Signal::kBytes, {.kind = MemoryKind::kHost});
  ASSERT_TRUE(done.ok() && gate_memory.ok());
  Signal gate(/*device=*/nullptr, gate_memory->va(), gate_memory->cpu());
  auto queue = b_->NewComputeQueue();
  queue->wait(gate, 1).signal(*done, 1);
  ASSERT_TRUE(queue->submit(*b_).ok());
  const Device::WaitStats before = a_->wait_stats();
  absl::Status result;
  std::thread waiter([&] { result = done->wait(1, kLimit); });
  AwaitSleeperHolding(*b_);
  gate.set_value(1);  // even when the wait never slept: it then ends
  waiter.join();
  EXPECT_TRUE(result.ok()) << result;
  EXPECT_GE(a_->wait_stats().interrupt_wakes - before.interrupt_wakes, 1u) << "woken only by the sleep's limit";
  EXPECT_EQ(Interrupts(*b_).holders(), 0) << "the wait kept holding the peer's interrupts";
}

// A peer closing while a wait listens to its interrupt: the close returns once the wait let go of the peer, and the
// wait goes on (a host write then ends it).
TEST_F(PeerTest, ClosingAPeerLetsGoOfTheWaitsListeningToIt) {
  ASSERT_TRUE(a_->ShareSignalsWith(*b_).ok());
  auto done = a_->NewSignal(0);
  ASSERT_TRUE(done.ok());
  absl::Status result;
  std::thread waiter([&] { result = done->wait(1, kLimit); });
  AwaitSleeperHolding(*b_);
  b_.reset();
  EXPECT_EQ(a_->sleeping_waits(), 1u);
  done->set_value(1);
  waiter.join();
  EXPECT_TRUE(result.ok()) << result;
  // A later sleeping wait on A listens to A alone.
  EXPECT_EQ(done->wait(2, absl::Milliseconds(5)).code(), absl::StatusCode::kDeadlineExceeded);
}

TEST_F(PeerTest, HostMemoryOfAnotherDeviceIsReachableOnceMapped) {
  constexpr uint64_t kSize = 64 << 10;
  auto host = a_->allocator().alloc(kSize, {.kind = MemoryKind::kHost});
  auto vram = b_->allocator().alloc(kSize);
  ASSERT_TRUE(host.ok() && vram.ok());
  for (uint64_t i = 0; i < kSize; ++i) host->cpu()[i] = static_cast<uint8_t>(i * 7 + 1);
  std::memset(vram->cpu(), 0, kSize);

  // B's copy engine reads A's host memory through B's own DMA path.
  auto queue = b_->NewCopyQueue();
  ASSERT_TRUE(b_->synchronize().ok());
  ASSERT_TRUE(b_->allocator().map(*host).ok());
  ASSERT_EQ(host->mapped().size(), 2u);
  queue->copy(vram->va(), host->va(), kSize).signal(b_->timeline_signal(), b_->next_timeline());
  ASSERT_TRUE(queue->submit(*b_).ok());
  ASSERT_TRUE(b_->synchronize().ok());
  EXPECT_EQ(std::memcmp(vram->cpu(), host->cpu(), kSize), 0);

  // And back: B writes A's host memory, which the CPU sees through A's view.
  std::memset(vram->cpu(), 0xc3, kSize);
  queue->reset();
  queue->copy(host->va(), vram->va(), kSize).signal(b_->timeline_signal(), b_->next_timeline());
  ASSERT_TRUE(queue->submit(*b_).ok());
  ASSERT_TRUE(b_->synchronize().ok());
  EXPECT_EQ(host->cpu()[0], 0xc3);
  EXPECT_EQ(host->cpu()[kSize - 1], 0xc3);

  // Freeing on the owner takes the mapping out of B's page tables first.
  ASSERT_TRUE(a_->allocator().free(*host).ok());
  auto* b = dynamic_cast<amd::AmdDevice*>(b_.get());
  EXPECT_FALSE(b->am().memory().page_table().Walk(host->va()).valid);
}

TEST_F(PeerTest, SignalsInHostMemoryAreSharedToo) {
  std::unique_ptr<Device> c = testing::OpenFresh("sim:navi31:peer-c");
  ASSERT_NE(c, nullptr);
  ASSERT_TRUE(c->ShareSignalsWith(*b_).ok());
  auto on_c = c->NewSignal(0);
  ASSERT_TRUE(on_c.ok());
  auto queue = b_->NewCopyQueue();
  queue->signal(*on_c, 7);
  ASSERT_TRUE(queue->submit(*b_).ok());
  EXPECT_TRUE(on_c->wait(7, absl::Seconds(5)).ok());
}

TEST_F(PeerTest, ClosingTheOwnerRevokesItsMemoryFromPeers) {
  std::unique_ptr<Device> c = testing::OpenFresh("sim:navi31:peer-c");
  ASSERT_NE(c, nullptr);
  auto host = c->allocator().alloc(4096, {.kind = MemoryKind::kHost});
  auto vram = c->allocator().alloc(4096);
  ASSERT_TRUE(host.ok() && vram.ok());
  ASSERT_TRUE(b_->allocator().map(*host).ok());
  ASSERT_TRUE(b_->allocator().map(*vram).ok());
  auto* b = dynamic_cast<amd::AmdDevice*>(b_.get());
  ASSERT_TRUE(b->am().memory().page_table().Walk(host->va()).valid);
  ASSERT_TRUE(b->am().memory().page_table().Walk(vram->va()).valid);
  c.reset();
  EXPECT_FALSE(b->am().memory().page_table().Walk(host->va()).valid);
  EXPECT_FALSE(b->am().memory().page_table().Walk(vram->va()).valid);
  EXPECT_EQ(host->mapped().size(), 1u);  // the owner is still listed; B is not
}

TEST_F(PeerTest, GraphOrdersEntriesOfTwoDevicesByTheMemoryTheyShare) {
  ASSERT_TRUE(a_->ShareSignalsWith(*b_).ok());
  ASSERT_TRUE(b_->ShareSignalsWith(*a_).ok());
  constexpr uint64_t kSize = 1 << 20;
  auto source = a_->allocator().alloc(kSize), back = a_->allocator().alloc(kSize);
  auto middle = b_->allocator().alloc(kSize), out = b_->allocator().alloc(kSize);
  ASSERT_TRUE(source.ok() && back.ok() && middle.ok() && out.ok());
  ASSERT_TRUE(a_->allocator().map(*middle).ok());  // A's copy engine writes it
  ASSERT_TRUE(a_->allocator().map(*out).ok());     // and reads this one back
  Graph graph(0);
  graph.AddCopy(*a_, middle->va(), source->va(), kSize);  // A: source -> B's middle
  graph.AddCopy(*b_, out->va(), middle->va(), kSize);     // B: after A's copy
  graph.AddCopy(*a_, back->va(), out->va(), kSize);       // A: after B's copy
  absl::Status finalized = graph.Finalize();
  ASSERT_TRUE(finalized.ok()) << finalized;
  EXPECT_EQ(graph.queues(), 3u);  // B waits for A's first segment, so A's last copy starts a second one

  // With A's copy engine hung, B's copy must not start: its timeline stays behind and `out` untouched.
  std::memset(source->cpu(), 0x5a, kSize);
  std::memset(out->cpu(), 0, kSize);
  std::memset(back->cpu(), 0, kSize);
  Sim(*a_).sdma().InjectHang(0, true);
  ASSERT_TRUE(graph.Run({}).ok());
  EXPECT_EQ(b_->timeline_signal().wait(b_->timeline_value() - 1, absl::Milliseconds(50)).code(),
            absl::StatusCode::kDeadlineExceeded);
  EXPECT_EQ(out->cpu()[0], 0);
  Sim(*a_).sdma().InjectHang(0, false);
  ASSERT_TRUE(a_->synchronize().ok());
  ASSERT_TRUE(b_->synchronize().ok());
  EXPECT_EQ(out->cpu()[kSize - 1], 0x5a);
  EXPECT_EQ(back->cpu()[0], 0x5a);
  EXPECT_EQ(back->cpu()[kSize - 1], 0x5a);

  for (int run = 1; run <= 20; ++run) {
    std::memset(source->cpu(), run, kSize);
    ASSERT_TRUE(graph.Run({}).ok());
    ASSERT_TRUE(a_->synchronize().ok());
    ASSERT_TRUE(b_->synchronize().ok());
    ASSERT_EQ(back->cpu()[0], run) << run;
    ASSERT_EQ(back->cpu()[kSize - 1], run) << run;
  }
}

TEST_F(PeerTest, GraphEntriesSharingNoMemoryRunSideBySide) {
  auto a_in = a_->allocator().alloc(4096), a_out = a_->allocator().alloc(4096);
  auto b_in = b_->allocator().alloc(4096), b_out = b_->allocator().alloc(4096);
  ASSERT_TRUE(a_in.ok() && a_out.ok() && b_in.ok() && b_out.ok());
  Graph graph(0);
  graph.AddCopy(*a_, a_out->va(), a_in->va(), 4096);
  graph.AddCopy(*b_, b_out->va(), b_in->va(), 4096);
  ASSERT_TRUE(graph.Finalize().ok());  // no edge, so no shared signals needed
  std::memset(b_in->cpu(), 7, 4096);
  Sim(*a_).sdma().InjectHang(0, true);
  ASSERT_TRUE(graph.Run({}).ok());
  EXPECT_TRUE(b_->synchronize().ok());  // B does not wait for the hung A
  EXPECT_EQ(b_out->cpu()[4095], 7);
  Sim(*a_).sdma().InjectHang(0, false);
  EXPECT_TRUE(a_->synchronize().ok());
}

TEST_F(PeerTest, GraphEdgeWithoutSharedSignalsSaysHowToShareThem) {
  auto a_buffer = a_->allocator().alloc(4096), b_buffer = b_->allocator().alloc(4096);
  ASSERT_TRUE(a_buffer.ok() && b_buffer.ok());
  Graph graph(0);
  graph.AddCopy(*a_, b_buffer->va(), a_buffer->va(), 4096);
  graph.AddCopy(*b_, b_buffer->va() + 2048, b_buffer->va(), 1024);
  absl::Status finalized = graph.Finalize();
  EXPECT_EQ(finalized.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_TRUE(absl::StrContains(finalized.message(), "ShareSignalsWith(sim:navi31:peer-b)")) << finalized;
}

}  // namespace
}  // namespace hcq
