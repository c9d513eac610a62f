// Issue 7's interpreter speed: the corpus's vector_add (-O2, wave32) over 1 Mi elements with one worker, which is
// the benchmark's own thread, so the rate (instructions executed x 32 lanes per CPU second of that thread) is the
// per-core figure the issue sets a target for (100 M/s; issue 24: 1 G/s) even on a loaded machine; the same on 1
// and 2 workers by the wall clock (issue 24's scaling). Also a small dispatch by a fresh executor against a warm
// one (issue 24). And two kernels tinygrad's AMD backend really makes (issue 24, session 14): its 256x256 f32
// matmul and the first kernel of its 1 Mi-element f32 sum, built from the LLVM IR tinygrad rendered
// (tests/bench/tinygrad_kernels), same units.
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <functional>
#include <iterator>
#include <memory>
#include <string>
#include <vector>

#include "am/code_object.h"
#include "am/kernel_dispatch.h"
#include "am/regs/gc.h"
#include "am/regs/sh_mem_constants.h"
#include "am/sim/isa/program.h"
#include "am/sim/isa/rdna3_executor.h"
#include "am/sim/isa/worker_pool.h"
#include "benchmark/benchmark.h"
#include "tests/am/sim/isa/kernels/corpus.h"
#include "tests/am/sim/model_fixture.h"
#include "tests/bench/tinygrad_kernels/tinygrad_kernels.h"

namespace am::sim::isa {
namespace {

// Buffers and arguments take whole pages, as the driver's allocations and the GMC's 4 KiB mappings do: a smaller
// placement in FlatMemory is a partial page, which the interpreter's per-dispatch page table cannot keep, so every
// lane would take the general path (a harness effect, not what a device run sees).
constexpr uint64_t kGpuPageBytes = 4096;
uint64_t WholePages(uint64_t bytes) { return (bytes + kGpuPageBytes - 1) / kGpuPageBytes * kGpuPageBytes; }

constexpr uint64_t kCode = 0x100000, kKernargs = 0x200000, kA = 0x1000000, kB = 0x2000000, kC = 0x3000000;

// The dispatch state the CP would give a wave32 kernel whose code is at kCode and whose arguments are at kKernargs,
// as am::Gfx programs the queue (DEFAULT_SH_MEM_CONFIG; the benchmarks' kernels use no FLAT apertures).
DispatchState KernelDispatch(const CodeObject::Kernel& kernel, std::array<uint32_t, 3> workgroup,
                             std::array<uint32_t, 3> grid) {
  // gfx11 compute allocates LDS in 512-byte granules (AMDGPUUsage, GRANULATED_LDS_SIZE).
  constexpr uint32_t kLdsGranule = 512;
  const KernelDescriptor& kd = kernel.descriptor;
  DispatchState dispatch;
  dispatch.program_address = kCode + kernel.entry_offset;
  dispatch.pgm_rsrc1 = kd.compute_pgm_rsrc1;
  // The CP fills LDS_SIZE from the dispatch's group segment size (the descriptor leaves it 0).
  dispatch.pgm_rsrc2 = regs::gc::COMPUTE_PGM_RSRC2::FromRaw(kd.compute_pgm_rsrc2)
                           .lds_size((kd.group_segment_fixed_size + kLdsGranule - 1) / kLdsGranule)
                           .raw();
  dispatch.pgm_rsrc3 = kd.compute_pgm_rsrc3;
  dispatch.user_data[0] = static_cast<uint32_t>(kKernargs);
  dispatch.user_data[1] = static_cast<uint32_t>(kKernargs >> 32);
  dispatch.num_thread = workgroup;
  dispatch.dimensions = grid;
  dispatch.dispatch_initiator = regs::gc::COMPUTE_DISPATCH_INITIATOR{}.compute_shader_en(1).cs_w32_en(1).raw();
  dispatch.memory = {Hub::kGc, 0, 0, "sq", false};
  dispatch.sh_mem.config = regs::gc::SH_MEM_CONFIG{}
                               .alignment_mode(regs::gc::SH_MEM_ALIGNMENT_MODE_UNALIGNED)
                               .initial_inst_prefetch(kInstructionPrefetchLines)
                               .raw();
  return dispatch;
}

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
      std::span<uint8_t> b = memory.Place(address, WholePages(uint64_t{n} * 4));
      return std::span<float>(reinterpret_cast<float*>(b.data()), n);
    };
    std::span<float> a = floats(kA), b = floats(kB);
    c = floats(kC);
    for (uint32_t i = 0; i < n; ++i) a[i] = static_cast<float>(i), b[i] = 0.5f * static_cast<float>(i);
    std::span<uint8_t> args = memory.Place(kKernargs, WholePages(256));
    const uint64_t pointers[3] = {kA, kB, kC};
    std::memcpy(args.data(), pointers, sizeof(pointers));
    std::memcpy(args.data() + 24, &n, 4);

    dispatch = KernelDispatch(**kernel, {64, 1, 1}, {(n + 63) / 64, 1, 1});
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

// The machine's CPU time so far, from /proc/stat's first line (proc(5): user nice system idle iowait irq softirq
// steal, in USER_HZ ticks), in seconds: what its CPUs ran (idle and iowait left out) and what the hypervisor gave
// other guests while this one wanted to run (steal).
struct MachineCpu {
  double busy_s = 0, steal_s = 0;
  bool ok = false;
};
MachineCpu ReadMachineCpu() {
  std::ifstream stat("/proc/stat");
  std::string cpu;
  std::array<uint64_t, 8> ticks{};
  stat >> cpu;
  for (uint64_t& t : ticks) stat >> t;
  const double hz = static_cast<double>(sysconf(_SC_CLK_TCK));
  if (!stat || cpu != "cpu" || hz <= 0) return {};
  const auto [user, nice, system, idle, iowait, irq, softirq, steal] = ticks;
  return {.busy_s = static_cast<double>(user + nice + system + irq + softirq) / hz,
          .steal_s = static_cast<double>(steal) / hz,
          .ok = true};
}
double ProcessCpuSeconds() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  const auto seconds = [](const timeval& t) { return static_cast<double>(t.tv_sec) + t.tv_usec * 1e-6; };
  return seconds(usage.ru_utime) + seconds(usage.ru_stime);
}

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

// The same dispatch on 1 and 2 workers, timed by the wall clock (a second worker's CPU time is not the benchmark
// thread's), so that lane_instructions_per_s with 2 over that with 1 is what the second worker gives, as measured a
// second or more apart (issue 24's scaling is measured interleaved: BM_VectorAddScaling).
void BM_VectorAddWorkers(benchmark::State& state) {
  RunVectorAdd(state, uint32_t{1} << 20, static_cast<int>(state.range(0)));
}
BENCHMARK(BM_VectorAddWorkers)->ArgName("workers")->Arg(1)->Arg(2)->UseRealTime()->Unit(benchmark::kMillisecond);

// Issue 24's scaling, measured interleaved: the same work on one and on two threads, alternately, each run timed by
// the wall clock, so that a machine whose speed drifts from second to second (the development VM's does) moves both
// sides of a pair alike. Counters: scaling, the median over the pairs of the one-thread run's time over the
// two-thread run's (the second thread's gain; a median, since the VM also slows single runs, either side);
// scaling_of_totals, the same from the summed times; and what kept the machine's cores from the process, from
// /proc/stat over the whole loop, in cores (10 ms ticks: about 1% of a second): other_cores, what else ran (other
// processes, the kernel's own work, less this process's CPU time); steal_cores, what the hypervisor reported giving
// other guests (a nested hypervisor need not report it).
template <typename One, typename Two>
void InterleavedScaling(benchmark::State& state, One one, Two two) {
  std::vector<double> ratios;
  std::array<double, 2> total_s{};
  const MachineCpu machine_before = ReadMachineCpu();
  const double cpu_before = ProcessCpuSeconds();
  const auto loop_start = std::chrono::steady_clock::now();
  for (auto _ : state) {
    std::array<double, 2> wall_s{};
    for (size_t threads = 1; threads <= 2; ++threads) {
      const auto start = std::chrono::steady_clock::now();
      if (std::string error = threads == 1 ? one() : two(); !error.empty()) return state.SkipWithError(error.c_str());
      wall_s[threads - 1] = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      total_s[threads - 1] += wall_s[threads - 1];
    }
    if (wall_s[1] > 0) ratios.push_back(wall_s[0] / wall_s[1]);
  }
  const double loop_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - loop_start).count();
  const double cpu_s = ProcessCpuSeconds() - cpu_before;
  const MachineCpu machine_after = ReadMachineCpu();
  if (ratios.empty() || total_s[1] <= 0 || loop_s <= 0) return;
  std::sort(ratios.begin(), ratios.end());
  const size_t middle = ratios.size() / 2;
  state.counters["scaling"] = ratios.size() % 2 == 1 ? ratios[middle] : (ratios[middle - 1] + ratios[middle]) / 2;
  state.counters["scaling_of_totals"] = total_s[0] / total_s[1];
  state.counters["pairs"] = static_cast<double>(ratios.size());
  if (machine_before.ok && machine_after.ok) {
    state.counters["other_cores"] = (machine_after.busy_s - machine_before.busy_s - cpu_s) / loop_s;
    state.counters["steal_cores"] = (machine_after.steal_s - machine_before.steal_s) / loop_s;
  }
}

// BM_VectorAddWorkers' dispatch on an executor of one worker and on one of two, alternately.
void BM_VectorAddScaling(benchmark::State& state) {
  VectorAdd work(uint32_t{1} << 20);
  if (std::string error = work.Prepare(); !error.empty()) return state.SkipWithError(error.c_str());
  Rdna3Executor one_worker(work.fixture.context(), 1), two_workers(work.fixture.context(), 2);
  auto dispatch = [&](Rdna3Executor& executor) {
    absl::Status s = executor.Dispatch(work.dispatch, work.fixture.memory());
    return s.ok() ? std::string() : std::string(s.message());
  };
  InterleavedScaling(
      state, [&] { return dispatch(one_worker); }, [&] { return dispatch(two_workers); });
  if (!work.Correct()) return state.SkipWithError("wrong result");
}
BENCHMARK(BM_VectorAddScaling)->UseRealTime()->Unit(benchmark::kMillisecond);

// The scaling's floor: what a second core gives a plain loop on this machine in the same minute. The same WorkerPool
// the executor dispatches on runs a fixed batch of chunks, taken from a shared counter as the executor takes
// workgroups, on one and on two threads, alternately; a chunk is eight independent xorshift chains on registers
// alone (no memory, nothing shared), as throughput-bound as an interpreter's instruction stream. Its counters are
// BM_VectorAddScaling's.
constexpr int kFloorChunks = 256;
constexpr uint64_t kFloorChainSteps = uint64_t{1} << 13;
uint64_t XorshiftChains(uint64_t seed, uint64_t steps) {
  constexpr int kChains = 8;
  std::array<uint64_t, kChains> x;
  for (int k = 0; k < kChains; ++k) x[k] = seed + (k + 1) * 0x9E3779B97F4A7C15u;  // nonzero seeds
  for (uint64_t i = 0; i < steps; ++i) {
    for (uint64_t& v : x) {  // Marsaglia's xorshift64 (13, 7, 17)
      v ^= v << 13;
      v ^= v >> 7;
      v ^= v << 17;
    }
  }
  uint64_t folded = 0;
  for (uint64_t v : x) folded ^= v;
  return folded;
}
void BM_ScalingFloor(benchmark::State& state) {
  WorkerPool one_thread(1), two_threads(2);
  std::atomic<uint64_t> sink{0};  // what the chains computed, so that they run
  auto run = [&](WorkerPool& pool) {
    std::atomic<int> next{0};
    pool.Run(pool.threads(), [&](int index) {
      uint64_t x = static_cast<uint64_t>(index);
      for (int chunk = next.fetch_add(1, std::memory_order_relaxed); chunk < kFloorChunks;
           chunk = next.fetch_add(1, std::memory_order_relaxed)) {
        x ^= XorshiftChains(x + static_cast<uint64_t>(chunk), kFloorChainSteps);
      }
      sink.fetch_xor(x, std::memory_order_relaxed);
    });
    return std::string();
  };
  InterleavedScaling(
      state, [&] { return run(one_thread); }, [&] { return run(two_threads); });
  benchmark::DoNotOptimize(sink.load());
}
BENCHMARK(BM_ScalingFloor)->UseRealTime()->Unit(benchmark::kMillisecond);

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
// The timed loop of both first-dispatch benchmarks. With `warm_heap`, every copy is loaded and freed once before the
// timed loop, so the first dispatches' new tables reuse memory the process already has instead of faulting fresh pages
// in (issue 24: the difference between the two is what fresh pages cost a first dispatch on this machine).
void FirstDispatches(benchmark::State& state, bool warm_heap) {
  VectorAdd work(kSmallDispatch);
  if (std::string error = work.Prepare(); !error.empty()) return state.SkipWithError(error.c_str());
  std::vector<uint64_t> entries;
  for (int i = 0; i < kFreshKernels; ++i) entries.push_back(work.PlaceCopy(kCopiesBase + i * kCopyStride));
  if (warm_heap) {
    std::vector<std::unique_ptr<Program>> loaded;
    for (uint64_t entry : entries) {
      absl::StatusOr<std::unique_ptr<Program>> program =
          Program::Load(work.fixture.memory(), work.dispatch.memory, entry);
      if (!program.ok()) return state.SkipWithError(std::string(program.status().message()).c_str());
      loaded.push_back(std::move(*program));
    }
  }
  Rdna3Executor executor(work.fixture.context(), /*workers=*/1);
  if (!executor.Dispatch(work.dispatch, work.fixture.memory()).ok()) return state.SkipWithError("dispatch failed");
  size_t next = 0;
  // Page faults are part of what a first dispatch adds (the new program's tables are fresh memory): counted for the
  // whole process, so the profile's account can be checked in any run.
  rusage before{}, after{};
  getrusage(RUSAGE_SELF, &before);
  for (auto _ : state) {
    work.dispatch.program_address = entries[next++];
    if (absl::Status s = executor.Dispatch(work.dispatch, work.fixture.memory()); !s.ok()) {
      return state.SkipWithError(std::string(s.message()).c_str());
    }
  }
  getrusage(RUSAGE_SELF, &after);
  state.counters["page_faults_per_dispatch"] =
      static_cast<double>(after.ru_minflt - before.ru_minflt) / static_cast<double>(state.iterations());
  if (!work.Correct()) return state.SkipWithError("wrong result");
}
void BM_FirstDispatchOfAKernel(benchmark::State& state) { FirstDispatches(state, /*warm_heap=*/false); }
BENCHMARK(BM_FirstDispatchOfAKernel)->Iterations(kFreshKernels)->Unit(benchmark::kMicrosecond);
void BM_FirstDispatchOfAKernelWarmHeap(benchmark::State& state) { FirstDispatches(state, /*warm_heap=*/true); }
BENCHMARK(BM_FirstDispatchOfAKernelWarmHeap)->Iterations(kFreshKernels)->Unit(benchmark::kMicrosecond);

// Fresh anonymous memory in 4 KiB pages (MADV_NOHUGEPAGE), handed out one untouched page at a time: each Touch() is
// one page fault, and no system call besides; false once every page has been touched.
class FreshPages {
 public:
  static constexpr size_t kPageBytes = 4096;  // x86-64's base page (MADV_NOHUGEPAGE keeps the mapping in them)
  explicit FreshPages(size_t pages) : bytes_(pages * kPageBytes) {
    void* memory = ::mmap(nullptr, bytes_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (memory == MAP_FAILED) return;
    (void)::madvise(memory, bytes_, MADV_NOHUGEPAGE);
    base_ = static_cast<volatile uint8_t*>(memory);
  }
  ~FreshPages() {
    if (base_ != nullptr) ::munmap(const_cast<uint8_t*>(base_), bytes_);
  }
  bool ok() const { return base_ != nullptr; }
  bool Touch() {
    if (next_ >= bytes_) return false;
    base_[next_] = 1;
    next_ += kPageBytes;
    return true;
  }

 private:
  size_t bytes_;
  volatile uint8_t* base_ = nullptr;
  size_t next_ = 0;
};

// Issue 24's first dispatch: what a page fault costs this machine, alone and in the dispatch that follows it (a first
// dispatch's new tables are fresh memory). Each iteration times four regions by the wall clock (steady_clock, read
// through the vDSO: the CPU-time clock is a system call, a kernel entry in every region), each after an untimed warm
// dispatch, so that every region finds the TLB and caches as a dispatch leaves them: nothing (the clock's own cost);
// one fresh page faulted in; BM_WarmDispatch/1's dispatch; one fresh page faulted in, then the dispatch. Counters,
// medians over the iterations less the clock's: fault_ns, dispatch_ns, fault_then_dispatch_ns, and after_fault_ns
// (the last less the two before it): what the fault costs the work after it beyond its own time, such as a TLB the
// kernel entry emptied. The time reported is the four regions' total.
constexpr int kFaultIterations = 2048;
void BM_PageFaultBesideADispatch(benchmark::State& state) {
  VectorAdd work(kSmallDispatch);
  if (std::string error = work.Prepare(); !error.empty()) return state.SkipWithError(error.c_str());
  FreshPages pages(2 * kFaultIterations);
  if (!pages.ok()) return state.SkipWithError("mmap failed");
  Rdna3Executor executor(work.fixture.context(), /*workers=*/1);
  auto dispatch = [&] { return executor.Dispatch(work.dispatch, work.fixture.memory()).ok(); };
  if (!dispatch()) return state.SkipWithError("dispatch failed");
  std::array<std::vector<double>, 4> regions_ns;  // nothing, fault, dispatch, fault then dispatch
  for (std::vector<double>& samples : regions_ns) samples.reserve(kFaultIterations);
  // The wall time of `region` after an untimed warm dispatch, in ns; negative when a dispatch (or the region) failed.
  auto timed = [&](auto region) -> double {
    if (!dispatch()) return -1;
    const auto start = std::chrono::steady_clock::now();
    if (!region()) return -1;
    return std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - start).count();
  };
  for (auto _ : state) {
    const std::array<double, 4> ns = {timed([] { return true; }), timed([&] { return pages.Touch(); }), timed(dispatch),
                                      timed([&] { return pages.Touch() && dispatch(); })};
    double total = 0;
    for (size_t i = 0; i < ns.size(); ++i) {
      if (ns[i] < 0) return state.SkipWithError("a dispatch failed or no fresh page was left");
      regions_ns[i].push_back(ns[i]);
      total += ns[i];
    }
    state.SetIterationTime(total * 1e-9);
  }
  if (!work.Correct()) return state.SkipWithError("wrong result");
  std::array<double, 4> median;
  for (size_t i = 0; i < median.size(); ++i) {
    std::vector<double>& samples = regions_ns[i];
    std::nth_element(samples.begin(), samples.begin() + samples.size() / 2, samples.end());
    median[i] = samples[samples.size() / 2] - (i == 0 ? 0 : median[0]);
  }
  state.counters["clock_ns"] = median[0];
  state.counters["fault_ns"] = median[1];
  state.counters["dispatch_ns"] = median[2];
  state.counters["fault_then_dispatch_ns"] = median[3];
  state.counters["after_fault_ns"] = median[3] - median[1] - median[2];
}
BENCHMARK(BM_PageFaultBesideADispatch)->Iterations(kFaultIterations)->UseManualTime()->Unit(benchmark::kMicrosecond);

// The part of a first dispatch a warm one skips: fetching and decoding a program the process has not seen
// (Program::Load), the next of the kFreshKernels copies of vector_add at each iteration. The programs are kept, as
// the executor keeps the ones it loaded.
void BM_ProgramLoad(benchmark::State& state) {
  VectorAdd work(kSmallDispatch);
  if (std::string error = work.Prepare(); !error.empty()) return state.SkipWithError(error.c_str());
  std::vector<uint64_t> entries;
  for (int i = 0; i < kFreshKernels; ++i) entries.push_back(work.PlaceCopy(kCopiesBase + i * kCopyStride));
  std::vector<std::unique_ptr<Program>> loaded;
  loaded.reserve(kFreshKernels);
  size_t next = 0;
  for (auto _ : state) {
    absl::StatusOr<std::unique_ptr<Program>> program =
        Program::Load(work.fixture.memory(), work.dispatch.memory, entries[next++]);
    if (!program.ok()) return state.SkipWithError(std::string(program.status().message()).c_str());
    loaded.push_back(std::move(*program));
  }
  state.counters["instructions"] = static_cast<double>(loaded.back()->instruction_count());
}
BENCHMARK(BM_ProgramLoad)->Iterations(kFreshKernels)->Unit(benchmark::kMicrosecond);
// Program::Load alone, on memory the process already has: the same kFreshKernels copies loaded in turn, each
// program freed before the next load, so its tables reuse the last one's memory. Beside BM_ProgramLoad (every
// program kept, as an executor keeps them), the difference is what fresh pages cost a load.
void BM_ProgramLoadReusedMemory(benchmark::State& state) {
  VectorAdd work(kSmallDispatch);
  if (std::string error = work.Prepare(); !error.empty()) return state.SkipWithError(error.c_str());
  std::vector<uint64_t> entries;
  for (int i = 0; i < kFreshKernels; ++i) entries.push_back(work.PlaceCopy(kCopiesBase + i * kCopyStride));
  size_t next = 0;
  for (auto _ : state) {
    absl::StatusOr<std::unique_ptr<Program>> program =
        Program::Load(work.fixture.memory(), work.dispatch.memory, entries[next++ % kFreshKernels]);
    if (!program.ok()) return state.SkipWithError(std::string(program.status().message()).c_str());
    benchmark::DoNotOptimize(program->get());
  }
}
BENCHMARK(BM_ProgramLoadReusedMemory)->Unit(benchmark::kMicrosecond);

// A kernel tinygrad compiled (tests/bench/tinygrad_kernels: the IR tinygrad rendered, compiled the way its
// AMDLLVMCompiler does into a relocatable object) with its buffers: tinygrad passes only buffer pointers, in order,
// as the explicit kernel arguments, and its kernels need nothing but the kernarg pointer among the user SGPRs.
struct TinygradKernel {
  // Empty when ready, else why not. `buffers` are the kernel's data0, data1, ... sizes in bytes.
  std::string Prepare(const char* file, const char* name, std::vector<uint64_t> buffers, std::array<uint32_t, 3> grid,
                      std::array<uint32_t, 3> workgroup) {
    const std::string path = std::string(testing::kTinygradKernelDir) + "/" + file;
    std::ifstream in(path, std::ios::binary);
    std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    absl::StatusOr<CodeObject> code = CodeObject::Parse(bytes, path);
    if (!code.ok()) return std::string(code.status().message());
    absl::StatusOr<const CodeObject::Kernel*> kernel = code->FindKernel(name);
    if (!kernel.ok()) return std::string(kernel.status().message());
    const KernelDescriptor& kd = (*kernel)->descriptor;
    if (kd.kernel_code_properties !=
        (KernelDescriptor::kEnableSgprKernargSegmentPtr | KernelDescriptor::kEnableWavefrontSize32)) {
      return std::string(name) + " wants more than the kernarg pointer in its user SGPRs";
    }
    testing::FlatMemory& memory = fixture.memory();
    const std::vector<uint8_t> image = code->ImageAt(kCode);
    // Whole pages, as a driver maps code (the program fetch reads past the relocatable image's last section).
    std::span<uint8_t> placed = memory.Place(kCode, WholePages(CodeBytesWithPrefetchGuard(image.size())));
    std::memcpy(placed.data(), image.data(), image.size());
    std::span<uint8_t> args = memory.Place(kKernargs, WholePages(256));
    uint64_t address = kA;
    for (size_t i = 0; i < buffers.size(); ++i) {
      data.push_back(memory.Place(address, buffers[i]));
      std::memcpy(args.data() + 8 * i, &address, 8);
      address += (buffers[i] + 0xfffff) & ~uint64_t{0xfffff};
    }
    dispatch = KernelDispatch(**kernel, workgroup, grid);
    return "";
  }
  std::span<float> floats(int i) {
    return std::span<float>(reinterpret_cast<float*>(data[i].data()), data[i].size() / 4);
  }

  testing::ModelFixture fixture;
  DispatchState dispatch;
  std::vector<std::span<uint8_t>> data;
};

void RunTinygradKernel(benchmark::State& state, TinygradKernel& work, const std::function<bool()>& correct) {
  Rdna3Executor executor(work.fixture.context(), /*workers=*/1);
  for (auto _ : state) {
    if (absl::Status s = executor.Dispatch(work.dispatch, work.fixture.memory()); !s.ok()) {
      return state.SkipWithError(std::string(s.message()).c_str());
    }
  }
  if (!correct()) return state.SkipWithError("wrong result");
  state.counters["lane_instructions_per_s"] =
      benchmark::Counter(static_cast<double>(executor.lane_instructions()), benchmark::Counter::kIsRate);
}

// tinygrad's C = A @ B for 256x256 f32 matrices (kernel r_8_4_8_16_4_4_64_4: 4 x 8 workgroups of 8 x 16 lanes, each
// lane 4 x 4 outputs; v_dual_fmac/fmamk pairs, global_load_b128). Small integers make every sum exact, so the host
// checks rows exactly.
constexpr int kMatmulSize = 256;
void BM_TinygradMatmulF32(benchmark::State& state) {
  TinygradKernel work;
  const uint64_t bytes = uint64_t{kMatmulSize} * kMatmulSize * 4;
  if (std::string error =
          work.Prepare("matmul_f32_256.elf", "r_8_4_8_16_4_4_64_4", {bytes, bytes, bytes}, {4, 8, 1}, {8, 16, 1});
      !error.empty()) {
    return state.SkipWithError(error.c_str());
  }
  std::span<float> c = work.floats(0), a = work.floats(1), b = work.floats(2);
  for (int i = 0; i < kMatmulSize; ++i) {
    for (int j = 0; j < kMatmulSize; ++j) {
      a[i * kMatmulSize + j] = static_cast<float>((i + 2 * j) % 7 - 3);
      b[i * kMatmulSize + j] = static_cast<float>((3 * i + j) % 5 - 2);
    }
  }
  RunTinygradKernel(state, work, [&] {
    for (int i = 0; i < kMatmulSize; i += 37) {
      for (int j = 0; j < kMatmulSize; ++j) {
        float sum = 0;
        for (int k = 0; k < kMatmulSize; ++k) sum += a[i * kMatmulSize + k] * b[k * kMatmulSize + j];
        if (c[i * kMatmulSize + j] != sum) return false;
      }
    }
    return true;
  });
}
BENCHMARK(BM_TinygradMatmulF32)->Unit(benchmark::kMillisecond);

// The first kernel of tinygrad's sum of 2^20 f32 (r_256_16_256: 256 workgroups of 16 lanes, half a wave32, each lane
// adding 256 elements, then the workgroup's 16 partial sums through LDS; global_load_b128, ds_store/ds_load,
// v_add_f32). Small integers again: every partial sum is exact.
constexpr uint32_t kSumElements = 1u << 20, kSumWorkgroups = 256;
void BM_TinygradSumF32(benchmark::State& state) {
  TinygradKernel work;
  if (std::string error =
          work.Prepare("sum_f32_1m.elf", "r_256_16_256", {kSumWorkgroups * 4, uint64_t{kSumElements} * 4},
                       {kSumWorkgroups, 1, 1}, {16, 1, 1});
      !error.empty()) {
    return state.SkipWithError(error.c_str());
  }
  std::span<float> partial = work.floats(0), in = work.floats(1);
  for (uint32_t i = 0; i < kSumElements; ++i) in[i] = static_cast<float>(static_cast<int>(i % 17) - 8);
  RunTinygradKernel(state, work, [&] {
    const uint32_t per_workgroup = kSumElements / kSumWorkgroups;
    for (uint32_t w = 0; w < kSumWorkgroups; ++w) {
      int64_t sum = 0;
      for (uint32_t i = w * per_workgroup; i < (w + 1) * per_workgroup; ++i) sum += static_cast<int>(i % 17) - 8;
      if (partial[w] != static_cast<float>(sum)) return false;
    }
    return true;
  });
}
BENCHMARK(BM_TinygradSumF32)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace am::sim::isa

BENCHMARK_MAIN();
