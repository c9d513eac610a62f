// Issue 7's interpreter speed: the corpus's vector_add (-O2, wave32) over 1 Mi elements with one worker, which is
// the benchmark's own thread, so the rate (instructions executed x 32 lanes per CPU second of that thread) is the
// per-core figure the issue sets a target for (100 M/s; issue 24: 1 G/s) even on a loaded machine; the same on 1
// and 2 workers by the wall clock (issue 24's scaling). Also a small dispatch by a fresh executor against a warm
// one (issue 24).
#include <cstdint>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "am/code_object.h"
#include "am/kernel_dispatch.h"
#include "am/regs/gc.h"
#include "am/regs/sh_mem_constants.h"
#include "am/sim/isa/rdna3_executor.h"
#include "benchmark/benchmark.h"
#include "tests/am/sim/isa/kernels/corpus.h"
#include "tests/am/sim/model_fixture.h"

namespace am::sim::isa {
namespace {

constexpr uint64_t kCode = 0x100000, kKernargs = 0x200000, kA = 0x1000000, kB = 0x2000000, kC = 0x3000000;

// The corpus's vector_add over `n` elements, placed in a model's memory as the driver would place it.
struct VectorAdd {
  explicit VectorAdd(uint32_t n) : n(n) {}

  // Empty when ready, else why not.
  std::string Prepare() {
    const std::string path = std::string(testing::kCorpusDir) + "/vector_add-O2.co";
    std::ifstream in(path, std::ios::binary);
    std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    absl::StatusOr<CodeObject> code = CodeObject::Parse(bytes, path);
    if (!code.ok()) return std::string(code.status().message());
    absl::StatusOr<const CodeObject::Kernel*> kernel = code->FindKernel("vector_add");
    if (!kernel.ok()) return "no vector_add kernel";
    const KernelDescriptor& kd = (*kernel)->descriptor;
    if (kd.kernel_code_properties !=
        (KernelDescriptor::kEnableSgprKernargSegmentPtr | KernelDescriptor::kEnableWavefrontSize32)) {
      return "vector_add-O2 wants more than the kernarg pointer in its user SGPRs";
    }
    testing::FlatMemory& memory = fixture.memory();
    // The image and the instruction prefetcher's guard after it, as the driver maps code.
    std::span<uint8_t> image = memory.Place(kCode, CodeBytesWithPrefetchGuard(code->image().size()));
    std::memcpy(image.data(), code->image().data(), code->image().size());
    code_image.assign(code->image().begin(), code->image().end());
    entry_offset = (*kernel)->entry_offset;
    auto floats = [&](uint64_t address) {
      std::span<uint8_t> b = memory.Place(address, uint64_t{n} * 4);
      return std::span<float>(reinterpret_cast<float*>(b.data()), n);
    };
    std::span<float> a = floats(kA), b = floats(kB);
    c = floats(kC);
    for (uint32_t i = 0; i < n; ++i) a[i] = static_cast<float>(i), b[i] = 0.5f * static_cast<float>(i);
    std::span<uint8_t> args = memory.Place(kKernargs, 256);
    const uint64_t pointers[3] = {kA, kB, kC};
    std::memcpy(args.data(), pointers, sizeof(pointers));
    std::memcpy(args.data() + 24, &n, 4);

    dispatch.program_address = kCode + (*kernel)->entry_offset;
    dispatch.pgm_rsrc1 = kd.compute_pgm_rsrc1;
    dispatch.pgm_rsrc2 = kd.compute_pgm_rsrc2;
    dispatch.pgm_rsrc3 = kd.compute_pgm_rsrc3;
    dispatch.user_data[0] = static_cast<uint32_t>(kKernargs);
    dispatch.user_data[1] = static_cast<uint32_t>(kKernargs >> 32);
    dispatch.num_thread = {64, 1, 1};
    dispatch.dimensions = {(n + 63) / 64, 1, 1};
    dispatch.dispatch_initiator = regs::gc::COMPUTE_DISPATCH_INITIATOR{}.compute_shader_en(1).cs_w32_en(1).raw();
    dispatch.memory = {Hub::kGc, 0, 0, "sq", false};
    // SH_MEM_CONFIG as am::Gfx programs it (DEFAULT_SH_MEM_CONFIG); vector_add uses no FLAT apertures.
    dispatch.sh_mem.config = regs::gc::SH_MEM_CONFIG{}
                                 .alignment_mode(regs::gc::SH_MEM_ALIGNMENT_MODE_UNALIGNED)
                                 .initial_inst_prefetch(kInstructionPrefetchLines)
                                 .raw();
    return "";
  }
  bool Correct() const {
    for (uint32_t i = 0; i < n; i += 4099) {
      if (c[i] != 1.5f * static_cast<float>(i)) return false;
    }
    return true;
  }

  // Another copy of the code object's image at `address` (page aligned, clear of the code, kernel arguments and
  // buffers above): the same kernel at an address the executor has not seen. Returns the dispatch's program address.
  uint64_t PlaceCopy(uint64_t address) {
    std::span<uint8_t> image = fixture.memory().Place(address, CodeBytesWithPrefetchGuard(code_image.size()));
    std::memcpy(image.data(), code_image.data(), code_image.size());
    return address + entry_offset;
  }

  uint32_t n;
  std::vector<uint8_t> code_image;
  uint64_t entry_offset = 0;
  testing::ModelFixture fixture;
  DispatchState dispatch;
  std::span<float> c;
};

// `workers` threads run the dispatch's workgroups; the rate is per second of whatever time the benchmark reports
// (the benchmark thread's CPU time by default, the wall clock with UseRealTime).
void RunVectorAdd(benchmark::State& state, uint32_t n, int workers) {
  VectorAdd work(n);
  if (std::string error = work.Prepare(); !error.empty()) return state.SkipWithError(error.c_str());
  Rdna3Executor executor(work.fixture.context(), workers);
  for (auto _ : state) {
    if (absl::Status s = executor.Dispatch(work.dispatch, work.fixture.memory()); !s.ok()) {
      return state.SkipWithError(std::string(s.message()).c_str());
    }
  }
  if (!work.Correct()) return state.SkipWithError("wrong result");
  state.counters["lane_instructions_per_s"] =
      benchmark::Counter(static_cast<double>(executor.lane_instructions()), benchmark::Counter::kIsRate);
  state.SetItemsProcessed(int64_t{work.n} * state.iterations());
}
void BM_VectorAdd(benchmark::State& state) {
  RunVectorAdd(state, static_cast<uint32_t>(state.range(0)), /*workers=*/1);
}
BENCHMARK(BM_VectorAdd)->Arg(1 << 20)->Unit(benchmark::kMillisecond);

// Issue 24's scaling: the same dispatch on 1 and 2 workers, timed by the wall clock (a second worker's CPU time is
// not the benchmark thread's), so that lane_instructions_per_s with 2 over that with 1 is what the second worker
// gives. On a machine with fewer idle cores than workers it measures the machine, not the executor.
void BM_VectorAddWorkers(benchmark::State& state) {
  RunVectorAdd(state, uint32_t{1} << 20, static_cast<int>(state.range(0)));
}
BENCHMARK(BM_VectorAddWorkers)->ArgName("workers")->Arg(1)->Arg(2)->UseRealTime()->Unit(benchmark::kMillisecond);

// Issue 24's first dispatch against a warm one: a small vector_add (4 workgroups of 64), with 1 and 2 workers (the
// virtual GPU uses as many as the machine has hardware threads), dispatched by an executor
// that has never run the kernel (it fetches and decodes the program and sizes its waves' registers) and by one
// that has (its program table is kept while the code is unchanged).
constexpr uint32_t kSmallDispatch = 256;
void BM_FirstDispatch(benchmark::State& state) {
  VectorAdd work(kSmallDispatch);
  if (std::string error = work.Prepare(); !error.empty()) return state.SkipWithError(error.c_str());
  for (auto _ : state) {
    Rdna3Executor executor(work.fixture.context(), static_cast<int>(state.range(0)));
    if (absl::Status s = executor.Dispatch(work.dispatch, work.fixture.memory()); !s.ok()) {
      return state.SkipWithError(std::string(s.message()).c_str());
    }
  }
  if (!work.Correct()) return state.SkipWithError("wrong result");
}
BENCHMARK(BM_FirstDispatch)->ArgName("workers")->Arg(1)->Arg(2)->Unit(benchmark::kMicrosecond);
void BM_WarmDispatch(benchmark::State& state) {
  VectorAdd work(kSmallDispatch);
  if (std::string error = work.Prepare(); !error.empty()) return state.SkipWithError(error.c_str());
  Rdna3Executor executor(work.fixture.context(), static_cast<int>(state.range(0)));
  if (!executor.Dispatch(work.dispatch, work.fixture.memory()).ok()) return state.SkipWithError("dispatch failed");
  for (auto _ : state) {
    if (absl::Status s = executor.Dispatch(work.dispatch, work.fixture.memory()); !s.ok()) {
      return state.SkipWithError(std::string(s.message()).c_str());
    }
  }
  if (!work.Correct()) return state.SkipWithError("wrong result");
}
BENCHMARK(BM_WarmDispatch)->ArgName("workers")->Arg(1)->Arg(2)->Unit(benchmark::kMicrosecond);

// Issue 24's "first dispatch of a kernel": a warm executor (its workers and waves made by an earlier dispatch) runs a
// kernel it has not seen, so the dispatch fetches and decodes the program first. Each iteration takes the next of
// kFreshKernels copies of vector_add at addresses of their own; BM_WarmDispatch/1 is the later dispatch to compare.
constexpr int kFreshKernels = 512;
constexpr uint64_t kCopiesBase = 0x4000000, kCopyStride = 0x10000;
void BM_FirstDispatchOfAKernel(benchmark::State& state) {
  VectorAdd work(kSmallDispatch);
  if (std::string error = work.Prepare(); !error.empty()) return state.SkipWithError(error.c_str());
  std::vector<uint64_t> entries;
  for (int i = 0; i < kFreshKernels; ++i) entries.push_back(work.PlaceCopy(kCopiesBase + i * kCopyStride));
  Rdna3Executor executor(work.fixture.context(), /*workers=*/1);
  if (!executor.Dispatch(work.dispatch, work.fixture.memory()).ok()) return state.SkipWithError("dispatch failed");
  size_t next = 0;
  for (auto _ : state) {
    work.dispatch.program_address = entries[next++];
    if (absl::Status s = executor.Dispatch(work.dispatch, work.fixture.memory()); !s.ok()) {
      return state.SkipWithError(std::string(s.message()).c_str());
    }
  }
  if (!work.Correct()) return state.SkipWithError("wrong result");
}
BENCHMARK(BM_FirstDispatchOfAKernel)->Iterations(kFreshKernels)->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace am::sim::isa

BENCHMARK_MAIN();
