// The C API: handles, error codes and the per-thread message, and the same semantics as the C++ interface.
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <thread>
#include <vector>

#include "am/sim/persistent_state.h"
#include "gtest/gtest.h"
#include "hcq/hcq.h"
#include "tests/am/sim/sim_state_dir.h"

namespace {

auto* const kStateDir = am::sim::testing::RegisterSimStateDir();

class CApiTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(am::sim::PersistentState::PowerCycle("sim:navi31:capi").ok());
    ASSERT_EQ(hcq_device_open("sim:navi31:capi", &dev_), HCQ_OK) << hcq_last_error();
  }
  void TearDown() override { hcq_device_close(dev_); }
  hcq_device* dev_ = nullptr;
};

TEST_F(CApiTest, OpeningAnUnknownDeviceFailsWithAMessage) {
  hcq_device* other = nullptr;
  EXPECT_NE(hcq_device_open("sim:no-such-gpu", &other), HCQ_OK);
  EXPECT_EQ(other, nullptr);
  EXPECT_NE(std::string(hcq_last_error()), "");
  // The message is per thread.
  std::thread([] { EXPECT_EQ(std::string(hcq_last_error()), ""); }).join();
  EXPECT_EQ(hcq_device_open(nullptr, &other), HCQ_ERROR_INVALID_ARGUMENT);
}

TEST_F(CApiTest, QueuesSignalWithConstantsAndVariables) {
  hcq_signal* signal = nullptr;
  ASSERT_EQ(hcq_signal_new(dev_, 0, &signal), HCQ_OK);
  hcq_queue* queue = nullptr;
  ASSERT_EQ(hcq_queue_new_compute(dev_, &queue), HCQ_OK);
  hcq_queue_signal_var(queue, signal, 0);
  ASSERT_EQ(hcq_queue_bind(queue), HCQ_OK) << hcq_last_error();
  for (uint64_t v = 1; v <= 10; ++v) {
    ASSERT_EQ(hcq_queue_submit(queue, &v, 1), HCQ_OK) << hcq_last_error();
    ASSERT_EQ(hcq_signal_wait(signal, v, 5000), HCQ_OK) << hcq_last_error();
  }
  EXPECT_EQ(hcq_signal_value(signal), 10u);
  EXPECT_EQ(hcq_queue_submit(queue, nullptr, 0), HCQ_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(hcq_last_error()).find("variable 0"), std::string::npos) << hcq_last_error();
  hcq_queue_free(queue);
  hcq_signal_free(signal);
}

TEST_F(CApiTest, WaitTimesOutWithTimeoutCode) {
  hcq_signal* signal = nullptr;
  ASSERT_EQ(hcq_signal_new(dev_, 0, &signal), HCQ_OK);
  EXPECT_EQ(hcq_signal_wait(signal, 1, 10), HCQ_ERROR_TIMEOUT);
  hcq_signal_set_value(signal, 1);
  EXPECT_EQ(hcq_signal_wait(signal, 1, 10), HCQ_OK);
  hcq_signal_free(signal);
}

TEST_F(CApiTest, CopiesThroughBuffersAndCopyQueue) {
  hcq_buffer *a = nullptr, *b = nullptr;
  ASSERT_EQ(hcq_buffer_alloc(dev_, 1 << 20, 0, &a), HCQ_OK);
  ASSERT_EQ(hcq_buffer_alloc(dev_, 1 << 20, 1, &b), HCQ_OK);
  EXPECT_NE(hcq_buffer_address(a), 0u);
  EXPECT_EQ(hcq_buffer_size(a), 1u << 20);
  std::string data(1 << 20, 'x');
  for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<char>(i * 7);
  ASSERT_EQ(hcq_buffer_copyin(a, data.data(), data.size()), HCQ_OK) << hcq_last_error();
  hcq_queue* copy = nullptr;
  ASSERT_EQ(hcq_queue_new_copy(dev_, &copy), HCQ_OK);
  hcq_signal* timeline = hcq_device_timeline_signal(dev_);
  hcq_queue_wait(copy, timeline, hcq_device_timeline_value(dev_) - 1);
  hcq_queue_copy(copy, hcq_buffer_address(b), hcq_buffer_address(a), data.size());
  hcq_queue_signal(copy, timeline, hcq_device_next_timeline(dev_));
  ASSERT_EQ(hcq_queue_submit(copy, nullptr, 0), HCQ_OK) << hcq_last_error();
  ASSERT_EQ(hcq_device_synchronize(dev_), HCQ_OK) << hcq_last_error();
  EXPECT_EQ(std::memcmp(hcq_buffer_cpu(b), data.data(), data.size()), 0);
  std::string back(data.size(), '\0');
  ASSERT_EQ(hcq_buffer_copyout(back.data(), a, back.size()), HCQ_OK);
  EXPECT_EQ(back, data);
  // A compute-only command on a copy queue is refused at submit.
  hcq_queue_memory_barrier(copy);
  EXPECT_EQ(hcq_queue_submit(copy, nullptr, 0), HCQ_ERROR_INVALID_ARGUMENT);
  hcq_queue_free(copy);
  hcq_buffer_free(a);
  hcq_buffer_free(b);
}

// A second device copies from this device's host buffer into its own VRAM and signals this device's signal.
TEST_F(CApiTest, APeerDeviceReachesMappedBuffersAndSharedSignals) {
  ASSERT_TRUE(am::sim::PersistentState::PowerCycle("sim:navi31:capi-peer").ok());
  hcq_device* peer = nullptr;
  ASSERT_EQ(hcq_device_open("sim:navi31:capi-peer", &peer), HCQ_OK) << hcq_last_error();
  hcq_buffer *source = nullptr, *destination = nullptr;
  ASSERT_EQ(hcq_buffer_alloc(dev_, 4096, 1, &source), HCQ_OK);
  ASSERT_EQ(hcq_buffer_alloc(peer, 4096, 0, &destination), HCQ_OK);
  std::memset(hcq_buffer_cpu(source), 0x6b, 4096);
  std::memset(hcq_buffer_cpu(destination), 0, 4096);
  hcq_signal* done = nullptr;
  ASSERT_EQ(hcq_signal_new(dev_, 0, &done), HCQ_OK);

  ASSERT_EQ(hcq_buffer_map(peer, source), HCQ_OK) << hcq_last_error();
  ASSERT_EQ(hcq_device_share_signals(dev_, peer), HCQ_OK) << hcq_last_error();
  hcq_queue* copy = nullptr;
  ASSERT_EQ(hcq_queue_new_copy(peer, &copy), HCQ_OK);
  hcq_queue_copy(copy, hcq_buffer_address(destination), hcq_buffer_address(source), 4096);
  hcq_queue_signal(copy, done, 1);
  ASSERT_EQ(hcq_queue_submit(copy, nullptr, 0), HCQ_OK) << hcq_last_error();
  ASSERT_EQ(hcq_signal_wait(done, 1, 10000), HCQ_OK) << hcq_last_error();
  EXPECT_EQ(static_cast<const uint8_t*>(hcq_buffer_cpu(destination))[4095], 0x6b);
  EXPECT_EQ(hcq_buffer_map(peer, nullptr), HCQ_ERROR_INVALID_ARGUMENT);

  hcq_queue_free(copy);
  hcq_signal_free(done);
  hcq_buffer_free(source);
  hcq_buffer_free(destination);
  hcq_device_close(peer);
}

TEST_F(CApiTest, LoadingGarbageAsACodeObjectIsAnError) {
  const char garbage[] = "not an ELF file";
  hcq_program* program = nullptr;
  EXPECT_NE(hcq_program_load(dev_, garbage, sizeof(garbage), "vector_add", &program), HCQ_OK);
  EXPECT_EQ(program, nullptr);
  EXPECT_NE(std::string(hcq_last_error()), "");
}

// Issue 19, defect 3: closing a device while its queues wait on signals that never come stops the engines before
// their memory goes (without that the PM4 engine polled the freed signal pool: SIGSEGV in most runs).
TEST(CApiCloseTest, ClosingADeviceWhoseQueuesStillWaitIsSafe) {
  for (int run = 0; run < 5; ++run) {
    ASSERT_TRUE(am::sim::PersistentState::PowerCycle("sim:navi31:capi-close").ok());
    hcq_device* dev = nullptr;
    ASSERT_EQ(hcq_device_open("sim:navi31:capi-close", &dev), HCQ_OK) << hcq_last_error();
    hcq_signal* never = nullptr;
    hcq_signal* done = nullptr;
    ASSERT_EQ(hcq_signal_new(dev, 0, &never), HCQ_OK);
    ASSERT_EQ(hcq_signal_new(dev, 0, &done), HCQ_OK);
    hcq_queue* compute = nullptr;
    hcq_queue* copy = nullptr;
    ASSERT_EQ(hcq_queue_new_compute(dev, &compute), HCQ_OK);
    ASSERT_EQ(hcq_queue_new_copy(dev, &copy), HCQ_OK);
    for (hcq_queue* q : {compute, copy}) {
      hcq_queue_wait(q, never, 1);
      hcq_queue_signal(q, done, 1);
      ASSERT_EQ(hcq_queue_submit(q, nullptr, 0), HCQ_OK) << hcq_last_error();
    }
    hcq_device_close(dev);  // the queues are still waiting
    EXPECT_EQ(hcq_signal_value(done), 0u);
    EXPECT_EQ(hcq_queue_submit(compute, nullptr, 0), HCQ_ERROR_FAILED_PRECONDITION);
    hcq_queue_free(compute);
    hcq_queue_free(copy);
    hcq_signal_free(never);
    hcq_signal_free(done);
  }
  // The next open finds the device usable (the engines were stopped cleanly and come back on the partial boot).
  hcq_device* dev = nullptr;
  ASSERT_EQ(hcq_device_open("sim:navi31:capi-close", &dev), HCQ_OK) << hcq_last_error();
  hcq_signal* signal = nullptr;
  hcq_queue* queue = nullptr;
  ASSERT_EQ(hcq_signal_new(dev, 0, &signal), HCQ_OK);
  ASSERT_EQ(hcq_queue_new_compute(dev, &queue), HCQ_OK);
  hcq_queue_signal(queue, signal, 3);
  ASSERT_EQ(hcq_queue_submit(queue, nullptr, 0), HCQ_OK) << hcq_last_error();
  EXPECT_EQ(hcq_signal_wait(signal, 3, 5000), HCQ_OK) << hcq_last_error();
  hcq_queue_free(queue);
  hcq_signal_free(signal);
  hcq_device_close(dev);
}

// Issue 19, defect 4: the device may be closed before its objects; they then only release their handles, and
// calls that need the device fail with FAILED_PRECONDITION.
TEST(CApiCloseTest, ClosingTheDeviceBeforeItsObjectsIsSafe) {
  ASSERT_TRUE(am::sim::PersistentState::PowerCycle("sim:navi31:capi-order").ok());
  hcq_device* dev = nullptr;
  ASSERT_EQ(hcq_device_open("sim:navi31:capi-order", &dev), HCQ_OK) << hcq_last_error();
  hcq_buffer* vram = nullptr;
  hcq_buffer* host = nullptr;
  hcq_signal* signal = nullptr;
  hcq_queue* queue = nullptr;
  ASSERT_EQ(hcq_buffer_alloc(dev, 4096, 0, &vram), HCQ_OK);
  ASSERT_EQ(hcq_buffer_alloc(dev, 4096, 1, &host), HCQ_OK);
  ASSERT_EQ(hcq_signal_new(dev, 0, &signal), HCQ_OK);
  ASSERT_EQ(hcq_queue_new_compute(dev, &queue), HCQ_OK);
  hcq_queue_signal(queue, signal, 1);
  ASSERT_EQ(hcq_queue_bind(queue), HCQ_OK) << hcq_last_error();  // a bound queue owns device memory too
  hcq_device_close(dev);
  const char data[4] = {1, 2, 3, 4};
  EXPECT_EQ(hcq_buffer_copyin(vram, data, sizeof(data)), HCQ_ERROR_FAILED_PRECONDITION);
  EXPECT_NE(std::string(hcq_last_error()).find("closed"), std::string::npos) << hcq_last_error();
  EXPECT_EQ(hcq_buffer_cpu(host), nullptr);
  EXPECT_EQ(hcq_signal_wait(signal, 1, 10), HCQ_ERROR_FAILED_PRECONDITION);
  hcq_buffer_free(vram);
  hcq_buffer_free(host);
  hcq_signal_free(signal);
  hcq_queue_free(queue);
}

// Issue 19, defect 4: NULL elements of argument arrays are errors, not crashes.
TEST_F(CApiTest, NullBufferElementsAreErrors) {
  const char* build = std::getenv("BAREGPU_BUILD_ROOT");
  std::ifstream file(std::string(build ? build : ".") + "/tests/am/sim/isa/kernels/vector_add-O2.co", std::ios::binary);
  const std::vector<char> code{std::istreambuf_iterator<char>(file), {}};
  if (code.empty()) GTEST_SKIP() << "vector_add-O2.co is not built";
  hcq_program* program = nullptr;
  ASSERT_EQ(hcq_program_load(dev_, code.data(), code.size(), "vector_add", &program), HCQ_OK) << hcq_last_error();
  hcq_buffer* buffer = nullptr;
  ASSERT_EQ(hcq_buffer_alloc(dev_, 4096, 0, &buffer), HCQ_OK);
  hcq_buffer* const buffers[] = {buffer, nullptr, buffer};
  const uint32_t n = 16, groups[3] = {1, 1, 1}, size[3] = {16, 1, 1};
  EXPECT_EQ(hcq_program_run(program, buffers, 3, &n, 1, groups, size, 1, nullptr), HCQ_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(hcq_last_error()).find("buffers[1] is NULL"), std::string::npos) << hcq_last_error();
  hcq_queue* queue = nullptr;
  ASSERT_EQ(hcq_queue_new_compute(dev_, &queue), HCQ_OK);
  hcq_queue_exec(queue, program, buffers, 3, &n, 1, groups, size);
  EXPECT_EQ(hcq_queue_submit(queue, nullptr, 0), HCQ_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(hcq_last_error()).find("buffers[1] is NULL"), std::string::npos) << hcq_last_error();
  hcq_queue_free(queue);
  hcq_buffer_free(buffer);
  hcq_program_free(program);
}

// Issue 19, defect 4: the device is safe to use from several threads (hcq.h says which calls): buffers, signals and
// queue submits from four threads at once.
TEST_F(CApiTest, SeveralThreadsShareADevice) {
  std::vector<std::thread> threads;
  std::atomic<int> failures{0};
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 20; ++i) {
        hcq_buffer* buffer = nullptr;
        hcq_signal* signal = nullptr;
        hcq_queue* queue = nullptr;
        if (hcq_buffer_alloc(dev_, 8192, 0, &buffer) != HCQ_OK || hcq_signal_new(dev_, 0, &signal) != HCQ_OK ||
            hcq_queue_new_compute(dev_, &queue) != HCQ_OK) {
          ++failures;
          return;
        }
        uint32_t in[64], out[64] = {};
        for (uint32_t k = 0; k < 64; ++k) in[k] = static_cast<uint32_t>(t * 1000 + i * 64 + k);
        hcq_queue_signal(queue, signal, static_cast<uint64_t>(i + 1));
        if (hcq_buffer_copyin(buffer, in, sizeof(in)) != HCQ_OK || hcq_queue_submit(queue, nullptr, 0) != HCQ_OK ||
            hcq_signal_wait(signal, static_cast<uint64_t>(i + 1), 10000) != HCQ_OK ||
            hcq_buffer_copyout(out, buffer, sizeof(out)) != HCQ_OK || std::memcmp(in, out, sizeof(in)) != 0) {
          ++failures;
        }
        hcq_queue_free(queue);
        hcq_signal_free(signal);
        hcq_buffer_free(buffer);
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(failures.load(), 0) << hcq_last_error();
}

}  // namespace
