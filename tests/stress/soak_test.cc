// Soak: 100,000 kernels, 100,000 copies and 100,000 bare submits through the C API (as HCQ clients use it, each
// with signals of their own rather than the device's timeline), outputs checked, with the process's resident
// memory and open file descriptors compared after warm-up and at the end. Issue 23, defect 6: the kernel
// arguments of hcq_queue_exec were reclaimed only by the device's timeline, so a client that never signalled it
// grew by 256 bytes per kernel (+25 MB here) until the argument area ran out.
#include <dirent.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "hcq/hcq.h"
#include "pci/sim/persistent_state.h"
#include "tests/am/sim/sim_state_dir.h"
#include "tests/stress/corpus.h"
#include "tests/stress/stress_report.h"

namespace {

auto* const kStateDir = am::sim::testing::RegisterSimStateDir();

constexpr uint64_t kOperations = 100'000;
constexpr uint64_t kWarmUp = 10'000;
// Resident memory may move by a few pages (the allocator's own caches, the interpreter's per-thread state); a leak of
// even 64 bytes per operation would pass this over 90,000 operations.
constexpr int64_t kRssSlackBytes = int64_t{2} << 20;
constexpr uint32_t kElements = 64;  // one wave of vector_add

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
constexpr bool kSanitized = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
constexpr bool kSanitized = true;
#else
constexpr bool kSanitized = false;
#endif
#else
constexpr bool kSanitized = false;
#endif

int64_t ResidentBytes() {
  std::ifstream statm("/proc/self/statm");
  int64_t pages = 0, resident = 0;
  statm >> pages >> resident;
  return resident * ::sysconf(_SC_PAGESIZE);
}

int OpenDescriptors() {
  int count = 0;
  if (DIR* dir = ::opendir("/proc/self/fd")) {
    while (const dirent* entry = ::readdir(dir)) count += entry->d_name[0] != '.';
    ::closedir(dir);
  }
  return count;
}

class SoakTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(pci::sim::PersistentState::PowerCycle("sim:navi31:soak").ok());
    ASSERT_EQ(hcq_device_open("sim:navi31:soak", &dev_), HCQ_OK) << hcq_last_error();
  }
  void TearDown() override { hcq_device_close(dev_); }

  // Runs `operation(i)` for i in [1, kOperations * scale], which returns whether its result was right; samples
  // memory and descriptors after warm-up and at the end, and reports the figures.
  template <typename Operation>
  void Soak(const std::string& what, Operation operation) {
    const uint64_t count = kOperations * stress::Scale();
    uint64_t survived = 0, lost = 0;
    int64_t warm_rss = 0;
    int warm_fds = 0;
    for (uint64_t i = 1; i <= count; ++i) {
      if (operation(i)) {
        ++survived;
      } else if (++lost == 1) {
        ADD_FAILURE() << what << ": operation " << i << " failed: " << hcq_last_error();
      }
      if (lost > 10) break;  // broken for good: do not spend the suite's time on it
      if (i == kWarmUp) warm_rss = ResidentBytes(), warm_fds = OpenDescriptors();
    }
    const int64_t growth = ResidentBytes() - warm_rss;
    std::printf("%s: resident memory %+lld bytes from operation %llu to %llu (%.1f bytes per operation)\n",
                what.c_str(), static_cast<long long>(growth), static_cast<unsigned long long>(kWarmUp),
                static_cast<unsigned long long>(count), static_cast<double>(growth) / (count - kWarmUp));
    EXPECT_EQ(OpenDescriptors(), warm_fds) << what;
    // A sanitizer's allocator keeps freed memory in quarantine, so only an uninstrumented build measures leaks.
    if (!kSanitized) {
      EXPECT_LT(growth, kRssSlackBytes) << what << ": resident memory grew after warm-up";
      if (growth >= kRssSlackBytes) ++lost;
    }
    stress::Report(what, count, survived, lost);
  }

  hcq_device* dev_ = nullptr;
};

TEST_F(SoakTest, KernelsLeaveMemoryFlat) {
  const std::vector<char> code = stress::ReadCodeObject("vector_add-O2");
  if (code.empty()) GTEST_SKIP() << "vector_add-O2.co is not built";
  hcq_program* program = nullptr;
  ASSERT_EQ(hcq_program_load(dev_, code.data(), code.size(), "vector_add", &program), HCQ_OK) << hcq_last_error();
  hcq_buffer *a = nullptr, *b = nullptr, *c = nullptr;
  ASSERT_EQ(hcq_buffer_alloc(dev_, kElements * 4, 1, &a), HCQ_OK);
  ASSERT_EQ(hcq_buffer_alloc(dev_, kElements * 4, 1, &b), HCQ_OK);
  ASSERT_EQ(hcq_buffer_alloc(dev_, kElements * 4, 1, &c), HCQ_OK);
  auto* in_a = static_cast<float*>(hcq_buffer_cpu(a));
  auto* in_b = static_cast<float*>(hcq_buffer_cpu(b));
  auto* out = static_cast<float*>(hcq_buffer_cpu(c));
  hcq_signal* done = nullptr;
  hcq_queue* queue = nullptr;
  ASSERT_EQ(hcq_signal_new(dev_, 0, &done), HCQ_OK);
  ASSERT_EQ(hcq_queue_new_compute(dev_, &queue), HCQ_OK);
  hcq_buffer* const buffers[] = {a, b, c};
  const uint32_t n = kElements, global[3] = {1, 1, 1}, local[3] = {kElements, 1, 1};
  Soak("soak: kernels (C API, own signals)", [&](uint64_t i) {
    // Inputs change every launch, so a launch that did not run (or ran with stale arguments) shows.
    for (uint32_t k = 0; k < kElements; ++k) in_a[k] = static_cast<float>(i % 1000), in_b[k] = static_cast<float>(k);
    hcq_queue_reset(queue);
    hcq_queue_memory_barrier(queue);
    hcq_queue_exec(queue, program, buffers, 3, &n, 1, global, local);
    hcq_queue_signal(queue, done, i);
    if (hcq_queue_submit(queue, nullptr, 0) != HCQ_OK || hcq_signal_wait(done, i, 10'000) != HCQ_OK) return false;
    for (uint32_t k = 0; k < kElements; ++k) {
      if (out[k] != static_cast<float>(i % 1000) + static_cast<float>(k)) return false;
    }
    return true;
  });
  hcq_queue_free(queue);
  hcq_signal_free(done);
  for (hcq_buffer* buffer : {a, b, c}) hcq_buffer_free(buffer);
  hcq_program_free(program);
}

TEST_F(SoakTest, CopiesLeaveMemoryFlat) {
  hcq_buffer *source = nullptr, *destination = nullptr;
  ASSERT_EQ(hcq_buffer_alloc(dev_, 4096, 1, &source), HCQ_OK);
  ASSERT_EQ(hcq_buffer_alloc(dev_, 4096, 1, &destination), HCQ_OK);
  auto* from = static_cast<uint32_t*>(hcq_buffer_cpu(source));
  auto* to = static_cast<uint32_t*>(hcq_buffer_cpu(destination));
  hcq_signal* done = nullptr;
  hcq_queue* queue = nullptr;
  ASSERT_EQ(hcq_signal_new(dev_, 0, &done), HCQ_OK);
  ASSERT_EQ(hcq_queue_new_copy(dev_, &queue), HCQ_OK);
  Soak("soak: copies (C API, SDMA)", [&](uint64_t i) {
    const uint32_t offset = static_cast<uint32_t>(i % 1024);
    from[offset] = static_cast<uint32_t>(i);
    hcq_queue_reset(queue);
    hcq_queue_copy(queue, hcq_buffer_address(destination) + offset * 4, hcq_buffer_address(source) + offset * 4, 4);
    hcq_queue_signal(queue, done, i);
    if (hcq_queue_submit(queue, nullptr, 0) != HCQ_OK || hcq_signal_wait(done, i, 10'000) != HCQ_OK) return false;
    return to[offset] == static_cast<uint32_t>(i);
  });
  hcq_queue_free(queue);
  hcq_signal_free(done);
  hcq_buffer_free(source);
  hcq_buffer_free(destination);
}

TEST_F(SoakTest, BoundSubmitsLeaveMemoryFlat) {
  hcq_signal* done = nullptr;
  hcq_queue* queue = nullptr;
  ASSERT_EQ(hcq_signal_new(dev_, 0, &done), HCQ_OK);
  ASSERT_EQ(hcq_queue_new_compute(dev_, &queue), HCQ_OK);
  hcq_queue_signal_var(queue, done, 0);
  ASSERT_EQ(hcq_queue_bind(queue), HCQ_OK) << hcq_last_error();
  Soak("soak: bound submits (C API, signal only)", [&](uint64_t i) {
    return hcq_queue_submit(queue, &i, 1) == HCQ_OK && hcq_signal_wait(done, i, 10'000) == HCQ_OK;
  });
  hcq_queue_free(queue);
  hcq_signal_free(done);
}

}  // namespace
