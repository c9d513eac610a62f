// Threads: several threads, each with queues of its own, submitting to one device at once — the common case of an
// HCQ client (issue 23, defect 1: four threads x 2,000 kernels lost submissions, overran the ring or produced wrong
// outputs while every signal arrived). Every output is checked; a submission lost shows as a timeout, one run with
// another thread's arguments as a wrong output.
#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "hcq/device.h"
#include "hcq/hcq.h"
#include "hcq/program.h"
#include "pci/sim/persistent_state.h"
#include "tests/am/sim/sim_state_dir.h"
#include "tests/stress/corpus.h"
#include "tests/stress/stress_report.h"

namespace {

auto* const kStateDir = am::sim::testing::RegisterSimStateDir();

constexpr int kThreads = 4;
constexpr uint64_t kKernelsPerThread = 2000;
constexpr uint32_t kElements = 64;
constexpr uint64_t kWaitMs = 30'000;

// One thread's launches of vector_add on buffers of its own; what it saw goes into the counters.
struct Counters {
  std::atomic<uint64_t> tried{0}, survived{0}, lost{0};
  std::atomic<bool> reported{false};
  void Lose(const std::string& why) {
    ++lost;
    if (!reported.exchange(true)) ADD_FAILURE() << why;
  }
};

class ThreadsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    code_ = stress::ReadCodeObject("vector_add-O2");
    if (code_.empty()) GTEST_SKIP() << "vector_add-O2.co is not built";
    ASSERT_TRUE(pci::sim::PersistentState::PowerCycle("sim:navi31:threads").ok());
    ASSERT_EQ(hcq_device_open("sim:navi31:threads", &dev_), HCQ_OK) << hcq_last_error();
    ASSERT_EQ(hcq_program_load(dev_, code_.data(), code_.size(), "vector_add", &program_), HCQ_OK) << hcq_last_error();
  }
  void TearDown() override {
    if (program_ != nullptr) hcq_program_free(program_);
    if (dev_ != nullptr) hcq_device_close(dev_);
  }

  // Thread `t`'s work: each launch adds a thread- and launch-specific value, so a launch that ran with another's
  // arguments or not at all shows in the output. With `gate`, every launch first waits on that shared signal
  // reaching the round (opened by the main thread), so the queues' waits and submits interleave on the rings.
  void Worker(int t, uint64_t kernels, Counters& counters, hcq_signal* gate, std::atomic<uint64_t>* progress) {
    struct Finish {
      std::atomic<uint64_t>* progress;
      uint64_t kernels;
      ~Finish() {
        if (progress != nullptr) progress->store(kernels);  // gone: no round waits for it any more
      }
    } finish{progress, kernels};
    hcq_buffer *a = nullptr, *b = nullptr, *c = nullptr;
    hcq_signal* done = nullptr;
    hcq_queue* queue = nullptr;
    if (hcq_buffer_alloc(dev_, kElements * 4, 1, &a) != HCQ_OK ||
        hcq_buffer_alloc(dev_, kElements * 4, 1, &b) != HCQ_OK ||
        hcq_buffer_alloc(dev_, kElements * 4, 1, &c) != HCQ_OK || hcq_signal_new(dev_, 0, &done) != HCQ_OK ||
        hcq_queue_new_compute(dev_, &queue) != HCQ_OK) {
      counters.Lose(std::string("thread set-up: ") + hcq_last_error());
      return;
    }
    auto* in_a = static_cast<uint32_t*>(hcq_buffer_cpu(a));
    auto* in_b = static_cast<uint32_t*>(hcq_buffer_cpu(b));
    auto* out = static_cast<float*>(hcq_buffer_cpu(c));
    hcq_buffer* const buffers[] = {a, b, c};
    const uint32_t n = kElements, global[3] = {1, 1, 1}, local[3] = {kElements, 1, 1};
    for (uint64_t i = 1; i <= kernels; ++i) {
      ++counters.tried;
      const float base = static_cast<float>(t * 100'000 + i);
      for (uint32_t k = 0; k < kElements; ++k) {
        reinterpret_cast<float*>(in_a)[k] = base;
        reinterpret_cast<float*>(in_b)[k] = static_cast<float>(k);
      }
      hcq_queue_reset(queue);
      if (gate != nullptr) hcq_queue_wait(queue, gate, i);
      hcq_queue_memory_barrier(queue);
      hcq_queue_exec(queue, program_, buffers, 3, &n, 1, global, local);
      hcq_queue_signal(queue, done, i);
      if (hcq_queue_submit(queue, nullptr, 0) != HCQ_OK) {
        counters.Lose(std::string("submit: ") + hcq_last_error());
        break;
      }
      if (progress != nullptr) progress->store(i);
      if (hcq_signal_wait(done, i, kWaitMs) != HCQ_OK) {
        counters.Lose("thread " + std::to_string(t) + " launch " + std::to_string(i) + ": " + hcq_last_error());
        break;
      }
      bool right = true;
      for (uint32_t k = 0; k < kElements && right; ++k) right = out[k] == base + static_cast<float>(k);
      if (!right) {
        counters.Lose("thread " + std::to_string(t) + " launch " + std::to_string(i) + ": wrong output " +
                      std::to_string(out[0]) + ", expected " + std::to_string(base));
      } else {
        ++counters.survived;
      }
    }
    hcq_queue_free(queue);
    hcq_signal_free(done);
    for (hcq_buffer* buffer : {a, b, c}) hcq_buffer_free(buffer);
  }

  std::vector<char> code_;
  hcq_device* dev_ = nullptr;
  hcq_program* program_ = nullptr;
};

TEST_F(ThreadsTest, ThreadsWithQueuesOfTheirOwnLoseNothing) {
  Counters counters;
  const uint64_t kernels = kKernelsPerThread * stress::Scale();
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) threads.emplace_back([&, t] { Worker(t, kernels, counters, nullptr, nullptr); });
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(counters.survived.load(), kThreads * kernels);
  stress::Report("threads: 4 threads x 2000 kernels, a queue each", counters.tried, counters.survived, counters.lost);
}

// Every queue waits on one shared signal that the main thread opens round by round, while the threads submit.
TEST_F(ThreadsTest, QueuesWaitingOnASharedSignalLoseNothing) {
  hcq_signal* gate = nullptr;
  ASSERT_EQ(hcq_signal_new(dev_, 0, &gate), HCQ_OK);
  Counters counters;
  const uint64_t kernels = kKernelsPerThread / 4 * stress::Scale();
  std::vector<std::atomic<uint64_t>> progress(kThreads);  // each thread's last submitted launch
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) threads.emplace_back([&, t] { Worker(t, kernels, counters, gate, &progress[t]); });
  // Round r opens once every thread submitted its launch r (or stopped): launches queue up behind the gate first.
  auto all_reached = [&](uint64_t round) {
    for (const std::atomic<uint64_t>& reached : progress) {
      if (reached.load() < round) return false;
    }
    return true;
  };
  for (uint64_t round = 1; round <= kernels; ++round) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(kWaitMs);
    while (!all_reached(round) && std::chrono::steady_clock::now() < deadline) std::this_thread::yield();
    hcq_signal_set_value(gate, round);
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(counters.survived.load(), kThreads * kernels);
  stress::Report("threads: 4 threads x 500 kernels behind a shared signal", counters.tried, counters.survived,
                 counters.lost);
  hcq_signal_free(gate);
}

// The C++ interface: each thread its own queue, its own signals from the shared pool, arguments from the shared
// area, and buffers allocated and freed as it goes (hcq/device.h: all of these are safe from separate threads).
TEST(CppThreadsTest, ThreadsWithQueuesOfTheirOwnLoseNothing) {
  const std::vector<char> code = stress::ReadCodeObject("vector_add-O2");
  if (code.empty()) GTEST_SKIP() << "vector_add-O2.co is not built";
  ASSERT_TRUE(pci::sim::PersistentState::PowerCycle("sim:navi31:cpp-threads").ok());
  auto device = hcq::Device::Open("sim:navi31:cpp-threads");
  ASSERT_TRUE(device.ok()) << device.status();
  hcq::Device& dev = **device;
  auto program = dev.LoadProgram(std::span(reinterpret_cast<const uint8_t*>(code.data()), code.size()), "vector_add");
  ASSERT_TRUE(program.ok()) << program.status();
  Counters counters;
  const uint64_t kernels = kKernelsPerThread / 4 * stress::Scale();
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      std::unique_ptr<hcq::ComputeQueue> queue = dev.NewComputeQueue();
      for (uint64_t i = 1; i <= kernels; ++i) {
        ++counters.tried;
        auto a = dev.allocator().alloc(kElements * 4, {.kind = hcq::MemoryKind::kHost});
        auto c = dev.allocator().alloc(kElements * 4, {.kind = hcq::MemoryKind::kHost});
        auto done = dev.NewSignal(0);
        auto args = dev.NewArgs((*program)->args_size(), 3);
        if (!a.ok() || !c.ok() || !done.ok() || !args.ok()) {
          counters.Lose("thread set-up: " + std::string(!a.ok()      ? a.status().message()
                                                        : !c.ok()    ? c.status().message()
                                                        : !done.ok() ? done.status().message()
                                                                     : args.status().message()));
          return;
        }
        const float base = static_cast<float>(t * 100'000 + i);
        auto* in = reinterpret_cast<float*>(a->cpu());
        for (uint32_t k = 0; k < kElements; ++k) in[k] = base + static_cast<float>(k);
        args->set_buffer(0, *a);
        args->set_buffer(1, *a);
        args->set_buffer(2, *c);
        args->set_value(0, kElements);
        queue->reset();
        queue->memory_barrier().exec(**program, *args, {1, 1, 1}, {kElements, 1, 1}).signal(*done, 1);
        absl::Status status = queue->submit(dev);
        if (status.ok()) status = done->wait(1, absl::Milliseconds(kWaitMs));
        const auto* out = reinterpret_cast<const float*>(c->cpu());
        if (!status.ok()) {
          counters.Lose("thread " + std::to_string(t) + " launch " + std::to_string(i) + ": " +
                        std::string(status.message()));
        } else if (out[1] != 2 * (base + 1)) {
          counters.Lose("thread " + std::to_string(t) + " launch " + std::to_string(i) + ": wrong output " +
                        std::to_string(out[1]));
        } else {
          ++counters.survived;
        }
        dev.FreeSignal(*done);
        (void)dev.allocator().free(*a);
        (void)dev.allocator().free(*c);
        if (!status.ok()) return;
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(counters.survived.load(), kThreads * kernels);
  stress::Report("threads: 4 threads x 500 kernels, C++ queues, signals, arguments and buffers", counters.tried,
                 counters.survived, counters.lost);
}

}  // namespace
