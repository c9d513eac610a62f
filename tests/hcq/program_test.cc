// Programs from the gfx1100 test corpus (tests/am/sim/isa/kernels): loading, kernel arguments and launch
// dimensions from variables, one and two kernels a hundred times, a memory barrier before a kernel reads host
// data. The kernels run on the virtual GPU's RDNA3 interpreter (am/sim/isa).
#include "hcq/program.h"

#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "hcq/device.h"
#include "hcq/graph.h"
#include "tests/hcq/hcq_fixture.h"

namespace hcq {
namespace {

auto* const kStateDir = am::sim::testing::RegisterSimStateDir();

std::vector<uint8_t> ReadCorpus(const std::string& name) {
  const char* build = std::getenv("BAREGPU_BUILD_ROOT");
  if (build == nullptr) return {};
  std::ifstream file(std::string(build) + "/tests/am/sim/isa/kernels/" + name, std::ios::binary);
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(file), {});
}

class ProgramTest : public testing::HcqTest {
 protected:
  void SetUp() override {
    testing::HcqTest::SetUp();
    code_ = ReadCorpus("vector_add-O2.co");
    if (code_.empty()) GTEST_SKIP() << "vector_add-O2.co is not built (tests/am/sim/isa/kernels)";
    auto program = dev_->LoadProgram(code_, "vector_add");
    ASSERT_TRUE(program.ok()) << program.status();
    program_ = std::move(*program);
    for (auto* buffer : {&a_, &b_, &c_}) {
      auto made = dev_->allocator().alloc(4 * kN);
      ASSERT_TRUE(made.ok());
      *buffer = *made;
    }
    for (uint32_t i = 0; i < kN; ++i) {
      reinterpret_cast<float*>(a_.cpu())[i] = static_cast<float>(i);
      reinterpret_cast<float*>(b_.cpu())[i] = static_cast<float>(3 * i + 1);
      reinterpret_cast<float*>(c_.cpu())[i] = -1;
    }
  }
  void TearDown() override {
    program_.reset();
    testing::HcqTest::TearDown();
  }
  float C(uint32_t i) const { return reinterpret_cast<const float*>(c_.cpu())[i]; }

  static constexpr uint32_t kN = 1000;
  std::vector<uint8_t> code_;
  std::unique_ptr<Program> program_;
  Buffer a_, b_, c_;
};

TEST_F(ProgramTest, LoadsTheKernelWithItsArgumentSize) {
  EXPECT_EQ(program_->name(), "vector_add");
  EXPECT_GE(program_->kernarg_size(), 28u);  // three pointers and a uint
  auto missing = dev_->LoadProgram(code_, "no_such_kernel");
  EXPECT_FALSE(missing.ok());
  EXPECT_TRUE(absl::StrContains(missing.status().message(), "vector_add")) << missing.status();
  std::vector<uint8_t> truncated(code_.begin(), code_.begin() + 100);
  EXPECT_FALSE(dev_->LoadProgram(truncated, "vector_add").ok());
}

TEST_F(ProgramTest, VectorAddOnceReportsItsTime) {
  const uint32_t n[] = {kN};
  auto time = (*program_)(std::vector<Buffer>{a_, b_, c_}, {(kN + 63) / 64, 1, 1}, {64, 1, 1}, n, true);
  ASSERT_TRUE(time.ok()) << time.status();
  EXPECT_GT(*time, 0.0);
  for (uint32_t i = 0; i < kN; ++i) ASSERT_EQ(C(i), static_cast<float>(4 * i + 1)) << i;
}

TEST_F(ProgramTest, ArgumentsAndDimensionsFromVariablesOneAndTwoKernelsAHundredTimes) {
  auto d = dev_->allocator().alloc(4 * kN);
  ASSERT_TRUE(d.ok());
  // n and the grid are variables 0 and 1; the second kernel adds b again into d.
  Graph graph(2);
  const Value n[] = {Variable{0}};
  graph.AddKernel(*program_, std::vector<Buffer>{a_, b_, c_}, n, {Variable{1}, 1, 1}, {64, 1, 1});
  graph.AddKernel(*program_, std::vector<Buffer>{c_, b_, *d}, n, {Variable{1}, 1, 1}, {64, 1, 1});
  ASSERT_TRUE(graph.Finalize().ok());
  for (uint32_t run = 0; run < 100; ++run) {
    const uint32_t count = run % 2 ? kN : kN / 2;
    const uint64_t vals[] = {count, (count + 63) / 64};
    std::fill_n(reinterpret_cast<float*>(d->cpu()), kN, -1.0f);
    ASSERT_TRUE(graph.Run(vals).ok());
    absl::Status done = dev_->synchronize();
    ASSERT_TRUE(done.ok()) << done;
    const float* out = reinterpret_cast<const float*>(d->cpu());
    ASSERT_EQ(out[count - 1], static_cast<float>(7 * (count - 1) + 2)) << run;
    if (count < kN) {
      ASSERT_EQ(out[count], -1.0f) << run;  // beyond n: untouched
    }
  }
}

TEST_F(ProgramTest, MemoryBarrierBeforeAKernelReadsHostWrittenData) {
  auto host = dev_->allocator().alloc(4 * kN, {.kind = MemoryKind::kHost});
  ASSERT_TRUE(host.ok());
  for (uint32_t i = 0; i < kN; ++i) reinterpret_cast<float*>(host->cpu())[i] = static_cast<float>(10 * i);
  auto args = dev_->NewArgs(program_->kernarg_size(), 3);
  ASSERT_TRUE(args.ok());
  args->set_buffer(0, *host);
  args->set_buffer(1, b_);
  args->set_buffer(2, c_);
  args->set_value(0, uint64_t{kN});
  auto queue = dev_->NewComputeQueue();
  queue->wait(dev_->timeline_signal(), dev_->timeline_value() - 1)
      .memory_barrier()
      .exec(*program_, *args, {(kN + 63) / 64, 1, 1}, {64, 1, 1})
      .signal(dev_->timeline_signal(), dev_->next_timeline());
  ASSERT_TRUE(queue->submit(*dev_).ok());
  absl::Status done = dev_->timeline_signal().wait(dev_->timeline_value() - 1, absl::Seconds(10));
  ASSERT_TRUE(done.ok()) << done;
  for (uint32_t i = 0; i < kN; ++i) ASSERT_EQ(C(i), static_cast<float>(13 * i + 1)) << i;
}

TEST_F(ProgramTest, ScratchKernelGetsPrivateMemory) {
  for (const char* file : {"scratch-O0.co", "scratch-O2.co"}) {
    std::vector<uint8_t> code = ReadCorpus(file);
    ASSERT_FALSE(code.empty()) << file;
    auto program = dev_->LoadProgram(code, "scratch");
    ASSERT_TRUE(program.ok()) << program.status();
    uint32_t* in = reinterpret_cast<uint32_t*>(a_.cpu());
    uint32_t* out = reinterpret_cast<uint32_t*>(c_.cpu());
    for (uint32_t i = 0; i < kN; ++i) in[i] = i * 2654435761u, out[i] = 0;
    const uint32_t n[] = {kN};
    auto time = (**program)(std::vector<Buffer>{a_, c_}, {(kN + 63) / 64, 1, 1}, {64, 1, 1}, n, true);
    ASSERT_TRUE(time.ok()) << file << ": " << time.status();
    // The kernel's computation (scratch.cl), on the host.
    for (uint32_t i = 0; i < kN; ++i) {
      uint32_t slots[48];
      const uint32_t x = in[i];
      for (uint32_t j = 0; j < 48; ++j) slots[j] = (x * (j + 1)) ^ (j << 24);
      const uint32_t first = x % 48, second = (x >> 8) % 48;
      slots[first] += slots[second];
      ASSERT_EQ(out[i], slots[first] ^ slots[(first + second) % 48]) << file << " element " << i;
    }
  }
}

}  // namespace
}  // namespace hcq
