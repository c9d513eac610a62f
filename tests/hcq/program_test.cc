// Programs from the gfx1100 test corpus (tests/am/sim/isa/kernels): loading, kernel arguments and launch
// dimensions from variables, one and two kernels a hundred times, a memory barrier before a kernel reads host
// data. The kernels run on the virtual GPU's RDNA3 interpreter (am/sim/isa).
#include "hcq/program.h"

#include <algorithm>
#include <array>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>
#include <utility>
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

// Issue 19, defect 1: argument memory of launches that are built but not yet submitted is never handed out again.
// Six launches with 4 MiB of arguments each need more than the 16 MiB area; each must still read its own.
TEST_F(ProgramTest, ArgumentsOfUnsubmittedLaunchesAreNotOverwritten) {
  constexpr int kLaunches = 6;
  constexpr uint64_t kArgBytes = uint64_t{4} << 20;
  ASSERT_GT(kLaunches * kArgBytes, dev_->options().kernarg_bytes);
  std::vector<Buffer> outputs;
  auto queue = dev_->NewComputeQueue();
  std::vector<ArgsState> args;
  queue->wait(dev_->timeline_signal(), dev_->timeline_value() - 1);
  for (int i = 0; i < kLaunches; ++i) {
    auto out = dev_->allocator().alloc(4 * kN);
    ASSERT_TRUE(out.ok());
    std::fill_n(reinterpret_cast<float*>(out->cpu()), kN, -1.0f);
    outputs.push_back(*out);
    auto launch = dev_->NewArgs(std::max<uint64_t>(kArgBytes, program_->args_size()), 3);
    ASSERT_TRUE(launch.ok()) << launch.status();
    launch->set_buffer(0, a_);
    launch->set_buffer(1, b_);
    launch->set_buffer(2, *out);
    launch->set_value(0, uint64_t{kN});
    args.push_back(*launch);
  }
  for (int i = 0; i < kLaunches; ++i) queue->exec(*program_, args[i], {(kN + 63) / 64, 1, 1}, {64, 1, 1});
  queue->signal(dev_->timeline_signal(), dev_->next_timeline());
  ASSERT_TRUE(queue->submit(*dev_).ok());
  absl::Status done = dev_->synchronize();
  ASSERT_TRUE(done.ok()) << done;
  for (int launch = 0; launch < kLaunches; ++launch) {
    const float* c = reinterpret_cast<const float*>(outputs[launch].cpu());
    for (uint32_t i = 0; i < kN; ++i) ASSERT_EQ(c[i], static_cast<float>(4 * i + 1)) << "launch " << launch << " " << i;
  }
  // The memory is reused once the timeline passed it: a seventh launch does not grow the areas further.
  const int areas = dev_->kernarg_area().areas();
  auto again = dev_->NewArgs(kArgBytes, 3);
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(dev_->kernarg_area().areas(), areas);
}

// Issue 19, defect 2: a bound queue longer than an INDIRECT_BUFFER's 20-bit size runs whole (as several IBs).
TEST_F(ProgramTest, ABoundQueueBeyondOneIndirectBufferRunsWhole) {
  auto empty = dev_->NewArgs(program_->args_size(), 3);
  auto last = dev_->NewArgs(program_->args_size(), 3);
  ASSERT_TRUE(empty.ok() && last.ok());
  for (ArgsState* args : {&*empty, &*last}) {
    args->set_buffer(0, a_);
    args->set_buffer(1, b_);
    args->set_buffer(2, c_);
  }
  empty->set_value(0, uint64_t{0});  // n = 0: each work-item returns at once
  last->set_value(0, uint64_t{kN});
  auto signal = dev_->NewSignal(0);
  ASSERT_TRUE(signal.ok());
  auto queue = dev_->NewComputeQueue();
  constexpr int kKernels = 30000;  // 36 dwords each: past 2^20 - 1
  for (int i = 0; i < kKernels - 1; ++i) queue->exec(*program_, *empty, {1, 1, 1}, {1, 1, 1});
  queue->exec(*program_, *last, {(kN + 63) / 64, 1, 1}, {64, 1, 1}).signal(*signal, 1);
  ASSERT_GT(queue->dwords().size(), (uint64_t{1} << 20) - 1) << "the queue must exceed one IB";
  ASSERT_TRUE(queue->bind(*dev_).ok());
  ASSERT_TRUE(queue->submit(*dev_).ok());
  absl::Status waited = signal->wait(1, absl::Seconds(20));
  ASSERT_TRUE(waited.ok()) << waited;
  for (uint32_t i = 0; i < kN; ++i) ASSERT_EQ(C(i), static_cast<float>(4 * i + 1)) << i;
}

TEST_F(ProgramTest, MemoryBarrierBeforeAKernelReadsHostWrittenData) {
  auto host = dev_->allocator().alloc(4 * kN, {.kind = MemoryKind::kHost});
  ASSERT_TRUE(host.ok());
  for (uint32_t i = 0; i < kN; ++i) reinterpret_cast<float*>(host->cpu())[i] = static_cast<float>(10 * i);
  auto args = dev_->NewArgs(program_->args_size(), 3);
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

// tinygrad's compiler hands LLVM's relocatable object (ET_REL) over unlinked: vector_add's .o files, laid out and
// relocated by am::CodeObject (the descriptor's R_AMDGPU_REL64 to the code), run as the linked code object does.
TEST_F(ProgramTest, VectorAddFromItsRelocatableObject) {
  for (const char* file : {"vector_add-O2.o", "vector_add-O0.o"}) {
    std::vector<uint8_t> code = ReadCorpus(file);
    ASSERT_FALSE(code.empty()) << file;
    auto program = dev_->LoadProgram(code, "vector_add");
    ASSERT_TRUE(program.ok()) << file << ": " << program.status();
    std::fill_n(reinterpret_cast<float*>(c_.cpu()), kN, -1.0f);
    const uint32_t n[] = {kN};
    auto time = (**program)(std::vector<Buffer>{a_, b_, c_}, {(kN + 63) / 64, 1, 1}, {64, 1, 1}, n, true);
    ASSERT_TRUE(time.ok()) << file << ": " << time.status();
    for (uint32_t i = 0; i < kN; ++i) ASSERT_EQ(C(i), static_cast<float>(4 * i + 1)) << file << " element " << i;
  }
}

// relocations.elf (tests/am/sim/isa/kernels/relocations.ll through llc-19, unlinked): the code finds @table through
// R_AMDGPU_REL32_LO/HI, and @table holds @values' absolute address (R_AMDGPU_ABS64), which only the loader knows:
// out[i] = values[i] = 11, 22, 33, 44 only if it was resolved against the address the image landed at.
TEST_F(ProgramTest, RelocatableObjectWithAnAbsoluteAddressRuns) {
  std::vector<uint8_t> code = ReadCorpus("relocations.elf");
  ASSERT_FALSE(code.empty()) << "relocations.elf is not built (tests/am/sim/isa/kernels)";
  auto program = dev_->LoadProgram(code, "indirect");
  ASSERT_TRUE(program.ok()) << program.status();
  uint32_t* out = reinterpret_cast<uint32_t*>(c_.cpu());
  std::fill_n(out, 8, 0u);
  auto time = (**program)(std::vector<Buffer>{c_}, {1, 1, 1}, {4, 1, 1}, {}, true);
  ASSERT_TRUE(time.ok()) << time.status();
  EXPECT_EQ(std::vector<uint32_t>(out, out + 5), (std::vector<uint32_t>{11, 22, 33, 44, 0}));
}

// launch_dims.cl: each workgroup's work-item 0 records the launch's shape as the kernel reads it, from the code
// object V5 hidden arguments and the HSA dispatch packet.
class LaunchDimsTest : public ProgramTest {
 protected:
  static constexpr uint32_t kRecordWords = 12, kSalt = 0x3c000000;
  // Expected record of a launch of `groups` x `size` (launch_dims.cl's layout), from the launch itself.
  static std::vector<uint32_t> Record(std::array<uint32_t, 3> groups, std::array<uint32_t, 3> size) {
    uint32_t dims = 1;
    for (uint32_t d = 1; d < 3; ++d) {
      if (groups[d] * size[d] > 1) dims = d + 1;
    }
    return {groups[0],           groups[1],           groups[2],           size[0], size[1],  size[2], dims,
            groups[0] * size[0], groups[1] * size[1], groups[2] * size[2], size[0], 1 ^ kSalt};
  }
  // Every workgroup's record matches, and nothing was written past the last one.
  void ExpectRecords(const Buffer& out, std::array<uint32_t, 3> groups, std::array<uint32_t, 3> size) {
    const uint32_t* words = reinterpret_cast<const uint32_t*>(out.cpu());
    const std::vector<uint32_t> expected = Record(groups, size);
    const uint32_t records = groups[0] * groups[1] * groups[2];
    for (uint32_t r = 0; r < records; ++r) {
      for (uint32_t w = 0; w < kRecordWords; ++w) ASSERT_EQ(words[r * kRecordWords + w], expected[w]) << r << " " << w;
    }
    EXPECT_EQ(words[records * kRecordWords], 0xdeadbeefu);
  }
  Buffer Output() {
    auto out = dev_->allocator().alloc(64 * kRecordWords * 4);
    EXPECT_TRUE(out.ok());
    std::fill_n(reinterpret_cast<uint32_t*>(out->cpu()), 64 * kRecordWords, 0xdeadbeefu);
    return *out;
  }
};

TEST_F(LaunchDimsTest, KernelsReadTheirLaunchFromHiddenArgumentsAndTheDispatchPacket) {
  for (const char* file : {"launch_dims-O0.co", "launch_dims-O2.co", "launch_dims_v4-O0.co", "launch_dims_v4-O2.co"}) {
    SCOPED_TRACE(file);
    std::vector<uint8_t> code = ReadCorpus(file);
    ASSERT_FALSE(code.empty());
    auto program = dev_->LoadProgram(code, "launch_dims");
    ASSERT_TRUE(program.ok()) << program.status();
    // The packet follows the kernel arguments, 64-byte aligned.
    EXPECT_EQ((*program)->args_size(), ((*program)->kernarg_size() + 63) / 64 * 64 + 64);
    for (auto [groups, size] : {std::pair<std::array<uint32_t, 3>, std::array<uint32_t, 3>>{{3, 2, 2}, {8, 4, 2}},
                                {{5, 1, 1}, {32, 1, 1}},
                                {{2, 3, 1}, {4, 4, 1}}}) {
      Buffer out = Output();
      const uint32_t salt[] = {kSalt};
      auto time = (**program)(std::vector<Buffer>{out}, {groups[0], groups[1], groups[2]}, {size[0], size[1], size[2]},
                              salt, true);
      ASSERT_TRUE(time.ok()) << time.status();
      ExpectRecords(out, groups, size);
    }
  }
}

TEST_F(LaunchDimsTest, VariableDimensionsReachTheHiddenArgumentsAtEverySubmit) {
  std::vector<uint8_t> code = ReadCorpus("launch_dims-O2.co");
  auto program = dev_->LoadProgram(code, "launch_dims");
  ASSERT_TRUE(program.ok()) << program.status();
  Buffer out = Output();
  auto args = dev_->NewArgs((*program)->args_size(), 1);
  ASSERT_TRUE(args.ok());
  args->set_buffer(0, out);
  args->set_value(0, uint64_t{kSalt});
  auto queue = dev_->NewComputeQueue();
  // Workgroups in x and the workgroup size in y vary; the grid sizes in the packet scale by the constant factor.
  queue->wait(dev_->timeline_signal(), Variable{2})
      .exec(**program, *args, {Variable{0}, 2, 1}, {16, Variable{1}, 1})
      .signal(dev_->timeline_signal(), Variable{3});
  for (auto [x_groups, y_size] : {std::pair<uint32_t, uint32_t>{4, 2}, {1, 1}, {3, 8}}) {
    std::fill_n(reinterpret_cast<uint32_t*>(out.cpu()), 64 * kRecordWords, 0xdeadbeefu);
    const uint64_t var_vals[] = {x_groups, y_size, dev_->timeline_value() - 1, dev_->next_timeline()};
    ASSERT_TRUE(queue->submit(*dev_, var_vals).ok());
    ASSERT_TRUE(dev_->synchronize().ok());
    ExpectRecords(out, {x_groups, 2, 1}, {16, y_size, 1});
  }
}

TEST_F(LaunchDimsTest, AGraphReplaysTheLaunchWithNewDimensions) {
  auto program = dev_->LoadProgram(ReadCorpus("launch_dims-O0.co"), "launch_dims");
  ASSERT_TRUE(program.ok()) << program.status();
  Buffer out = Output();
  Graph graph(2);
  const Buffer buffers[] = {out};
  const Value values[] = {uint64_t{kSalt}};
  graph.AddKernel(**program, buffers, values, {Variable{0}, 1, 2}, {8, 2, Variable{1}});
  absl::Status finalized = graph.Finalize();
  ASSERT_TRUE(finalized.ok()) << finalized;
  for (auto [x_groups, z_size] : {std::pair<uint32_t, uint32_t>{2, 2}, {5, 1}, {1, 4}}) {
    std::fill_n(reinterpret_cast<uint32_t*>(out.cpu()), 64 * kRecordWords, 0xdeadbeefu);
    const uint64_t var_vals[] = {x_groups, z_size};
    ASSERT_TRUE(graph.Run(var_vals).ok());
    ASSERT_TRUE(graph.Wait().ok());
    ExpectRecords(out, {x_groups, 1, 2}, {8, 2, z_size});
  }
}

TEST_F(LaunchDimsTest, AGridSizeOfTwoVariablesAndShortArgumentsAreRefused) {
  auto program = dev_->LoadProgram(ReadCorpus("launch_dims-O2.co"), "launch_dims");
  ASSERT_TRUE(program.ok()) << program.status();
  Buffer out = Output();
  auto args = dev_->NewArgs((*program)->args_size(), 1);
  ASSERT_TRUE(args.ok());
  args->set_buffer(0, out);
  auto queue = dev_->NewComputeQueue();
  queue->exec(**program, *args, {Variable{0}, 1, 1}, {Variable{1}, 1, 1});
  const uint64_t var_vals[] = {2, 8};
  absl::Status submitted = queue->submit(*dev_, var_vals);
  EXPECT_EQ(submitted.code(), absl::StatusCode::kUnimplemented);
  EXPECT_TRUE(absl::StrContains(submitted.message(), "make one of them a constant")) << submitted;

  // Argument memory sized for the explicit arguments only: no room for the hidden ones and the packet.
  auto short_args = dev_->NewArgs(16, 1);
  ASSERT_TRUE(short_args.ok());
  auto second = dev_->NewComputeQueue();
  second->exec(**program, *short_args, {1, 1, 1}, {1, 1, 1});
  submitted = second->submit(*dev_);
  EXPECT_EQ(submitted.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StrContains(submitted.message(), "allocate Program::args_size()")) << submitted;
}

}  // namespace
}  // namespace hcq
