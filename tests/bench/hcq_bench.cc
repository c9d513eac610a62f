// Issue 8's HCQ numbers on the virtual Navi31: building and submitting queues, graph replay, signal round trip (and
// its floor, an atomic ping-pong between two threads), host-to-VRAM bandwidth through the staging ring.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>
#include <iterator>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "benchmark/benchmark.h"
#include "hcq/amd/amd_program.h"
#include "hcq/device.h"
#include "hcq/graph.h"
#include "hcq/program.h"
#include "pci/sim/persistent_state.h"
#include "tests/am/sim/isa/kernels/corpus.h"

namespace hcq {
namespace {

// The calling thread's CPU time over short regions, less what reading the clock adds to them. Linux has no vDSO path
// for CLOCK_THREAD_CPUTIME_ID, so every read is a system call, and a region's figure holds about one whole call (the
// end of the read that starts it, the start of the one that ends it): 560-640 ns on the development VM (issue 24,
// session 21), where system calls cost that much: about 70 ns of each kernel's figure in an 8-kernel graph replay.
// So every region is preceded by an empty one, read the same way, whose figure Stop subtracts; their mean is the
// counter clock_ns, so that the correction is in every report. (Google Benchmark's own CPU time reads the same clock,
// once per batch of iterations and at every PauseTiming/ResumeTiming.)
class ThreadCpuRegion {
 public:
  void Start() {
    const double empty_start = Now();
    empty_ = Now() - empty_start;
    clock_seconds_ += empty_;
    ++regions_;
    start_ = Now();
  }
  // The CPU time since Start, less the empty region's.
  double Stop() const { return Now() - start_ - empty_; }
  // The mean of the empty regions: what one region's figure held of the clock's own cost.
  double clock_ns() const { return regions_ == 0 ? 0 : clock_seconds_ / static_cast<double>(regions_) * 1e9; }

 private:
  static double Now() {
    timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) * 1e-9;
  }
  double start_ = 0, empty_ = 0, clock_seconds_ = 0;
  int64_t regions_ = 0;
};

// The median of `values` (reordered), 0 for none: the figure of a run's batches or regions that a few interrupted ones
// do not move.
double Median(std::vector<double>& values) {
  if (values.empty()) return 0;
  const auto middle = values.begin() + static_cast<ptrdiff_t>(values.size() / 2);
  std::nth_element(values.begin(), middle, values.end());
  return *middle;
}

// The virtual GPU every benchmark opens; BAREGPU_BENCH_DEVICE names another (tools/bench/compare gives its own, so
// that it never shares one with a test or benchmark running beside it).
std::string BenchDeviceName() {
  const char* name = std::getenv("BAREGPU_BENCH_DEVICE");
  return name != nullptr && *name != '\0' ? name : "sim:navi31:hcq-bench";
}

std::unique_ptr<Device> OpenBenchDevice() {
  const std::string name = BenchDeviceName();
  (void)pci::sim::PersistentState::PowerCycle(name);
  auto device = Device::Open(name);
  return device.ok() ? std::move(*device) : nullptr;
}

// The corpus's vector_add (-O2), which the RDNA3 interpreter runs; null when the corpus is not built.
std::unique_ptr<Program> LoadVectorAdd(Device& dev) {
  std::ifstream file(std::string(am::sim::testing::kCorpusDir) + "/vector_add-O2.co", std::ios::binary);
  const std::vector<uint8_t> code{std::istreambuf_iterator<char>(file), {}};
  auto program = dev.LoadProgram(code, "vector_add");
  return program.ok() ? std::move(*program) : nullptr;
}

// CPU cost of building a compute queue of `pairs` exec + signal pairs from empty (vector_add over 4 x 64 work-items,
// each signal its own value): the commands only; nothing is submitted. "dwords" is the queue's length per build.
void BuildExecSignalPairs(benchmark::State& state, int pairs) {
  auto dev = OpenBenchDevice();
  if (!dev) return state.SkipWithError("open failed");
  std::unique_ptr<Program> program = LoadVectorAdd(*dev);
  if (!program) return state.SkipWithError("the corpus's vector_add is not built");
  auto signal = dev->NewSignal();
  auto args = dev->NewArgs(program->args_size(), 3);
  if (!signal.ok() || !args.ok()) return state.SkipWithError("setup failed");
  auto queue = dev->NewComputeQueue();
  uint64_t value = 0;
  for (auto _ : state) {
    queue->reset();
    for (int i = 0; i < pairs; ++i) queue->exec(*program, *args, {4, 1, 1}, {64, 1, 1}).signal(*signal, ++value);
    benchmark::DoNotOptimize(queue->dwords().data());
  }
  state.SetItemsProcessed(state.iterations() * pairs);
  state.counters["dwords"] = static_cast<double>(queue->dwords().size());
}
// One pair on a warmed-up queue (the figure earlier READMEs report).
void BM_BuildExecSignal(benchmark::State& state) { BuildExecSignalPairs(state, 1); }
BENCHMARK(BM_BuildExecSignal);
// Issue 24's side-by-side rows (tools/bench/compare): 1, 8 and 64 pairs.
void BM_BuildExecSignalPairs(benchmark::State& state) { BuildExecSignalPairs(state, static_cast<int>(state.range(0))); }
BENCHMARK(BM_BuildExecSignalPairs)->Arg(1)->Arg(8)->Arg(64);

// One copy of 1 MiB (a single COPY_LINEAR packet) between two VRAM buffers, then a signal (an SDMA FENCE).
void BM_BuildCopySignal(benchmark::State& state) {
  auto dev = OpenBenchDevice();
  if (!dev) return state.SkipWithError("open failed");
  constexpr uint64_t kBytes = uint64_t{1} << 20;
  auto source = dev->allocator().alloc(kBytes), destination = dev->allocator().alloc(kBytes);
  auto signal = dev->NewSignal();
  if (!source.ok() || !destination.ok() || !signal.ok()) return state.SkipWithError("setup failed");
  auto queue = dev->NewCopyQueue();
  uint64_t value = 0;
  for (auto _ : state) {
    queue->reset();
    queue->copy(destination->va(), source->va(), kBytes).signal(*signal, ++value);
    benchmark::DoNotOptimize(queue->dwords().data());
  }
  state.SetItemsProcessed(state.iterations());
  state.counters["dwords"] = static_cast<double>(queue->dwords().size());
}
BENCHMARK(BM_BuildCopySignal);

// The bound-submit benchmarks submit this many times between two waits for the ring to drain.
constexpr uint64_t kSubmitsPerDrain = 64;

// The timed loop of the bound-submit benchmarks: submits `queue` (bound, its one variable the submit's count; each
// submit `kernels` kernels) once per iteration, timed in batches of kSubmitsPerDrain submits (manual time: the
// submitting thread's CPU time over the batch, ThreadCpuRegion); after each batch, outside the timing, a fence on the
// ring behind them is waited for, so the ring never fills. (PauseTiming/ResumeTiming around the wait put one read of
// the thread's CPU clock, a system call, into every batch: 9 ns of each submit on the development VM.)
//
// Each batch starts with one untimed submit: the drain's wait often outlasts the engine's polling (EngineWakeup: it
// sleeps after 50 us without work; the wait sleeps in steps of up to 100 us once it stops spinning), so that submit's
// doorbell wakes a sleeping engine (a futex wake: 3-4 us of CPU and 5.5 us of wall on the development VM, a C program)
// and finds the submit path's lines cold. Its median wall time is the counter first_submit_median_ns; the batch after
// it measures submits to an engine that is running, as in a program that keeps a queue fed. (Timed inside the batch,
// those wakes made up about two thirds of the 8-per-queue figure there, in whichever share of the batches met a
// sleeping engine.)
//
// Besides the mean (Google Benchmark's figure, and cpu_s_per_kernel), the counter batch_median_ns_per_kernel is the
// median batch's CPU time per kernel: the slowest few batches of a run cost several times the median (issue 24,
// session 21). The median still moves between runs and sometimes within one (one exec + signal per queue: 49-132 ns in
// 14 runs of the same binary, session 23; one run's batches stepped from about 47 to about 100 ns halfway), for a
// reason not identified (docs/performance.md, "Issue 24 (performance), session 23").
// False (with the benchmark's error set) when a submit or the device fails.
bool SubmitBoundQueue(benchmark::State& state, Device& dev, ComputeQueue& queue, Signal& fence, int kernels) {
  uint64_t fenced = 0, value = 0, timed = 0;
  auto drain = [&] {
    auto fence_queue = dev.NewComputeQueue();
    fence_queue->signal(fence, ++fenced);
    return fence_queue->submit(dev).ok() && fence.wait(fenced).ok();
  };
  ThreadCpuRegion batch;
  const Device::WaitStats waits_before = dev.wait_stats();
  uint64_t drains = 0;
  const uint64_t iterations = static_cast<uint64_t>(state.max_iterations);
  std::vector<double> batch_ns_per_kernel, first_submit_ns;
  batch_ns_per_kernel.reserve(iterations / kSubmitsPerDrain + 1);
  first_submit_ns.reserve(iterations / kSubmitsPerDrain + 1);
  for (auto _ : state) {
    if (timed % kSubmitsPerDrain == 0) {
      // The batch's first submit, untimed: it finds the engine as the drain left it (asleep after a long wait, when
      // the doorbell pays a futex wake) and the submit path's lines cold; its wall time is reported apart.
      const auto start = std::chrono::steady_clock::now();
      const uint64_t vals[] = {++value};
      if (!queue.submit(dev, vals).ok()) {
        state.SkipWithError("submit failed");
        return false;
      }
      first_submit_ns.push_back(
          std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - start).count());
      batch.Start();
    }
    const uint64_t vals[] = {++value};
    const bool submitted = queue.submit(dev, vals).ok();
    ++timed;
    if (timed % kSubmitsPerDrain == 0 || timed == iterations || !submitted) {
      const double seconds = batch.Stop();
      state.SetIterationTime(seconds);
      if (!submitted) {
        state.SkipWithError("submit failed");
        return false;
      }
      const uint64_t submits = (timed - 1) % kSubmitsPerDrain + 1;
      batch_ns_per_kernel.push_back(seconds * 1e9 / static_cast<double>(submits * kernels));
      ++drains;
      if (!drain()) {
        state.SkipWithError("the device did not finish");
        return false;
      }
    } else {
      state.SetIterationTime(0);
    }
  }
  if (!drain()) {
    state.SkipWithError("the device did not finish");
    return false;
  }
  state.counters["clock_ns"] = batch.clock_ns();
  state.counters["batch_median_ns_per_kernel"] = Median(batch_ns_per_kernel);
  state.counters["first_submit_median_ns"] = Median(first_submit_ns);
  // How the drains' waits slept (hcq/interrupt_sleep.h): each interrupt a queue raised while a drain slept woke it.
  const Device::WaitStats waits = dev.wait_stats();
  const double per_drain = 1.0 / static_cast<double>(std::max<uint64_t>(drains, 1));
  state.counters["sleeps_per_drain"] = static_cast<double>(waits.sleeps - waits_before.sleeps) * per_drain;
  state.counters["interrupt_wakes_per_drain"] =
      static_cast<double>(waits.interrupt_wakes - waits_before.interrupt_wakes) * per_drain;
  return true;
}

// Submitting a bound compute queue of `state.range(0)` exec + signal pairs (vector_add over 64 elements, the signal
// value a variable): patch, INDIRECT_BUFFER into the ring, HDP flush, doorbell. CPU time of the submitting thread per
// kernel; the virtual device runs the kernels on its own threads. Every kSubmitsPerDrain submits (outside the timing) a
// fence on the ring behind them is waited for, so the ring never fills. (The bound queue is patched in place, so its
// own signal cannot tell when earlier submissions ran: each reads the latest value.)
void BM_SubmitBoundExecSignal(benchmark::State& state) {
  auto dev = OpenBenchDevice();
  if (!dev) return state.SkipWithError("open failed");
  auto program = LoadVectorAdd(*dev);
  if (!program) return state.SkipWithError("vector_add-O2.co did not load (is the corpus built?)");
  auto signal = dev->NewSignal(), fence = dev->NewSignal();
  auto a = dev->allocator().alloc(256), b = dev->allocator().alloc(256), c = dev->allocator().alloc(256);
  auto args = dev->NewArgs(program->args_size(), 3);
  if (!signal.ok() || !fence.ok() || !a.ok() || !b.ok() || !c.ok() || !args.ok()) {
    return state.SkipWithError("setup failed");
  }
  args->set_buffer(0, *a);
  args->set_buffer(1, *b);
  args->set_buffer(2, *c);
  args->set_value(0, uint64_t{64});
  const int kernels = static_cast<int>(state.range(0));
  auto queue = dev->NewComputeQueue();
  for (int i = 0; i < kernels; ++i) queue->exec(*program, *args, {1, 1, 1}, {64, 1, 1}).signal(*signal, Variable{0});
  if (!queue->bind(*dev).ok()) return state.SkipWithError("bind failed");
  if (!SubmitBoundQueue(state, *dev, *queue, *fence, kernels)) return;
  state.SetItemsProcessed(state.iterations() * kernels);
  state.counters["cpu_s_per_kernel"] = benchmark::Counter(static_cast<double>(state.iterations() * kernels),
                                                          benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}
// A fixed count: every submitted kernel really runs on the interpreter (about 20 us each), and Google Benchmark's
// default would submit until 0.5 s of the submitting thread's CPU time, millions of kernels (12 minutes).
BENCHMARK(BM_SubmitBoundExecSignal)->Arg(1)->Arg(8)->UseManualTime()->Iterations(8192);

// Submitting a bound compute queue of one signal (its value a variable): the submit path's own cost (patch,
// INDIRECT_BUFFER into the ring, HDP flush, doorbell) without a kernel behind it, so it can run long enough to profile.
// CPU time of the submitting thread; the ring is drained every kSubmitsPerDrain submits outside the timing, as above.
void BM_SubmitBoundSignal(benchmark::State& state) {
  auto dev = OpenBenchDevice();
  if (!dev) return state.SkipWithError("open failed");
  auto signal = dev->NewSignal(), fence = dev->NewSignal();
  if (!signal.ok() || !fence.ok()) return state.SkipWithError("setup failed");
  auto queue = dev->NewComputeQueue();
  queue->signal(*signal, Variable{0});
  if (!queue->bind(*dev).ok()) return state.SkipWithError("bind failed");
  if (!SubmitBoundQueue(state, *dev, *queue, *fence, /*kernels=*/1)) return;
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_SubmitBoundSignal)->UseManualTime();

// Graph replay, per recorded entry: a graph of 256 copies of 64 bytes (kernels need the ISA interpreter); each
// iteration is one Run() (patch + submit of its bound queue) on an idle device, whose work is waited for outside
// the timing.
void BM_GraphReplayPerEntry(benchmark::State& state) {
  auto dev = OpenBenchDevice();
  if (!dev) return state.SkipWithError("open failed");
  auto a = dev->allocator().alloc(1 << 16), b = dev->allocator().alloc(1 << 16);
  if (!a.ok() || !b.ok()) return state.SkipWithError("alloc failed");
  constexpr int kEntries = 256;
  Graph graph(0);
  for (int i = 0; i < kEntries; ++i) graph.AddCopy(*dev, b->va() + 64 * i, a->va() + 64 * i, 64);
  if (!graph.Finalize().ok()) return state.SkipWithError("finalize failed");
  ThreadCpuRegion run;
  for (auto _ : state) {
    if (!graph.Wait().ok()) return state.SkipWithError("wait failed");
    // Only Run() is timed, in CPU time of this thread (manual time: Pause/ResumeTiming would cost more than what is
    // measured; wall time on the loaded 2-core machine mostly measures the scheduler).
    run.Start();
    const bool ok = graph.Run({}).ok();
    state.SetIterationTime(run.Stop());
    if (!ok) return state.SkipWithError("run failed");
  }
  (void)dev->synchronize();
  state.SetItemsProcessed(state.iterations() * kEntries);
  state.counters["clock_ns"] = run.clock_ns();
}
BENCHMARK(BM_GraphReplayPerEntry)->UseManualTime();

// Graph replay of `state.range(0)` kernels (issue 24's "graph replay, 8 kernels, CPU per kernel"): vector_add over 64
// elements, its element count a variable, recorded once; each iteration is one Run() (patch + submit) on an idle
// device, timed in CPU time of this thread (ThreadCpuRegion: the clock's own cost taken out); the run's work is waited
// for outside the timing.
void BM_GraphReplayKernels(benchmark::State& state) {
  auto dev = OpenBenchDevice();
  if (!dev) return state.SkipWithError("open failed");
  auto program = LoadVectorAdd(*dev);
  if (!program) return state.SkipWithError("vector_add-O2.co did not load (is the corpus built?)");
  auto a = dev->allocator().alloc(256), b = dev->allocator().alloc(256), c = dev->allocator().alloc(256);
  if (!a.ok() || !b.ok() || !c.ok()) return state.SkipWithError("alloc failed");
  const int kernels = static_cast<int>(state.range(0));
  Graph graph(1);
  const std::vector<Buffer> buffers{*a, *b, *c};
  const std::vector<Value> count{Variable{0}};
  for (int i = 0; i < kernels; ++i) graph.AddKernel(*program, buffers, count, {1, 1, 1}, {64, 1, 1});
  if (!graph.Finalize().ok()) return state.SkipWithError("finalize failed");
  uint64_t value = 0;
  ThreadCpuRegion run;
  // A second reading of the same Run()s by the wall clock (vDSO, no system call): the median is what an uninterrupted
  // Run() takes, a check on the CPU figure's correction.
  std::vector<double> wall_ns;
  wall_ns.reserve(static_cast<size_t>(state.max_iterations));
  for (auto _ : state) {
    if (!graph.Wait().ok()) return state.SkipWithError("wait failed");
    const uint64_t vals[] = {64 - (++value % 2)};
    run.Start();
    const auto wall_start = std::chrono::steady_clock::now();
    const bool ok = graph.Run(vals).ok();
    const auto wall_end = std::chrono::steady_clock::now();
    state.SetIterationTime(run.Stop());
    if (!ok) return state.SkipWithError("run failed");
    wall_ns.push_back(std::chrono::duration<double, std::nano>(wall_end - wall_start).count());
  }
  if (!graph.Wait().ok()) return state.SkipWithError("wait failed");
  state.SetItemsProcessed(state.iterations() * kernels);
  state.counters["clock_ns"] = run.clock_ns();
  state.counters["wall_median_ns_per_kernel"] = Median(wall_ns) / kernels;
  state.counters["cpu_s_per_kernel"] = benchmark::Counter(static_cast<double>(state.iterations() * kernels),
                                                          benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}
// Every replayed kernel really runs (about 20 us each): a fixed count bounds the benchmark.
BENCHMARK(BM_GraphReplayKernels)->Arg(1)->Arg(8)->UseManualTime()->Iterations(2048);

// The round trip and its two floors are also timed by the wall clock in batches of kRoundTripsPerBatch iterations:
// besides Google Benchmark's mean over the run, each reports the median batch per iteration (batch_median_ns), the same
// statistic on both sides of issue 24's ratio. On the development VM a run's mean takes in whatever else the two vCPUs
// did meanwhile (the round trip's runs of one state read 250-320 ns by their means); the median batch is the protocol's
// own time.
constexpr uint64_t kRoundTripsPerBatch = 64;
// Spins until `done` (one untimed hand-over before a timed loop: a new thread, or a device thread that went to sleep,
// can take milliseconds to be scheduled on the development VM, which would otherwise be the whole of a short run);
// false after a second.
template <typename Done>
bool WarmUp(Done done) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(1);
  while (!done()) {
    if (std::chrono::steady_clock::now() >= deadline) return false;
  }
  return true;
}
class RoundTripBatches {
 public:
  explicit RoundTripBatches(const benchmark::State& state) {
    batch_ns_.reserve(state.max_iterations / kRoundTripsPerBatch + 1);
  }
  // After each iteration.
  void Count() {
    if (++count_ % kRoundTripsPerBatch != 0) return;
    const auto now = std::chrono::steady_clock::now();
    if (count_ > kRoundTripsPerBatch) {
      batch_ns_.push_back(static_cast<double>(std::chrono::nanoseconds(now - start_).count()) / kRoundTripsPerBatch);
    }
    start_ = now;
  }
  void Report(benchmark::State& state) { state.counters["batch_median_ns"] = Median(batch_ns_); }

 private:
  uint64_t count_ = 0;
  std::chrono::steady_clock::time_point start_;
  std::vector<double> batch_ns_;
};

// The timed loop of both floors, whose peer thread is already started: `send(value)` hands value 1, 2, ... to the
// peer and `answered(value)` says its answer has come back; one untimed hand-over first (WarmUp).
template <typename Send, typename Answered>
void TimeHandOvers(benchmark::State& state, Send send, Answered answered) {
  uint64_t value = 1;
  send(value);
  if (!WarmUp([&] { return answered(value); })) {
    return state.SkipWithError("the peer thread did not answer within a second");
  }
  RoundTripBatches batches(state);
  for (auto _ : state) {
    send(++value);
    while (!answered(value)) {
    }
    batches.Count();
  }
  batches.Report(state);
}

// Host signals through the compute queue and waits for the device's answer: submit + MEC + spin wait.
void BM_SignalRoundTrip(benchmark::State& state) {
  auto dev = OpenBenchDevice();
  if (!dev) return state.SkipWithError("open failed");
  auto signal = dev->NewSignal();
  if (!signal.ok()) return state.SkipWithError("signal failed");
  auto queue = dev->NewComputeQueue();
  queue->signal(*signal, Variable{0});
  if (!queue->bind(*dev).ok()) return state.SkipWithError("bind failed");
  uint64_t value = 1;
  const uint64_t first[] = {value};
  if (!queue->submit(*dev, first).ok() || !signal->wait(value).ok()) return state.SkipWithError("round trip failed");
  RoundTripBatches batches(state);
  for (auto _ : state) {
    const uint64_t vals[] = {++value};
    if (!queue->submit(*dev, vals).ok() || !signal->wait(value).ok()) return state.SkipWithError("round trip failed");
    batches.Count();
  }
  batches.Report(state);
}
BENCHMARK(BM_SignalRoundTrip)->UseRealTime();

// The floor for the signal round trip (issue 24: within 2x of it): two threads passing a counter back and forth
// through one cache line each way, both spinning, as the host and the MEC thread do. One iteration is one round
// trip. A hardware-free figure of this machine's cross-core latency.
void BM_AtomicPingPong(benchmark::State& state) {
  alignas(64) std::atomic<uint64_t> ping{0};
  alignas(64) std::atomic<uint64_t> pong{0};
  std::atomic<bool> stop{false};
  std::thread peer([&] {
    uint64_t seen = 0;
    while (!stop.load(std::memory_order_relaxed)) {
      const uint64_t value = ping.load(std::memory_order_acquire);
      if (value != seen) {
        seen = value;
        pong.store(value, std::memory_order_release);
      }
    }
  });
  TimeHandOvers(
      state, [&](uint64_t value) { ping.store(value, std::memory_order_release); },
      [&](uint64_t value) { return pong.load(std::memory_order_acquire) == value; });
  stop.store(true, std::memory_order_relaxed);
  peer.join();
}
BENCHMARK(BM_AtomicPingPong)->UseRealTime();

// The round trip's protocol with nothing else in it, a second floor: the host writes a value into an indirect buffer's
// line, a ring entry naming that buffer into another and a doorbell into a third; the peer, spinning on the doorbell,
// prefetches the buffer it ran last (as ComputeQueue::Run's loop does), reads the ring entry, then the buffer the entry
// names (a load that depends on the ring's) and writes the value into the signal's line, on which the host spins. These
// are the hand-overs of BM_SignalRoundTrip (doorbell, ring, INDIRECT_BUFFER, RELEASE_MEM) through plain cache lines:
// what any implementation of that protocol pays on this machine. On the development VM it reads 1.0-1.1x
// BM_AtomicPingPong (session 21: 96-111 ns beside 97 ns; without the prefetch the dependent load adds a hand-over,
// 131-177 ns), so the round trip's time above it is the driver's and the virtual GPU's own work.
void BM_ProtocolFloor(benchmark::State& state) {
  struct alignas(64) Line {
    std::atomic<uint64_t> value{0};
  };
  Line doorbell, ring, buffers[2], signal;
  std::atomic<bool> stop{false};
  std::thread peer([&] {
    uint64_t seen = 0;
    while (!stop.load(std::memory_order_relaxed)) {
      const uint64_t rung = doorbell.value.load(std::memory_order_acquire);
      if (rung == seen) continue;
      seen = rung;
      __builtin_prefetch(&buffers[0]);
      const uint64_t entry = ring.value.load(std::memory_order_relaxed);
      const uint64_t value = buffers[entry & 1].value.load(std::memory_order_relaxed);
      signal.value.store(value, std::memory_order_release);
    }
  });
  TimeHandOvers(
      state,
      [&](uint64_t value) {
        buffers[0].value.store(value, std::memory_order_relaxed);
        ring.value.store(value << 1, std::memory_order_relaxed);  // an entry naming buffers[0]
        doorbell.value.store(value, std::memory_order_release);
      },
      [&](uint64_t value) { return signal.value.load(std::memory_order_acquire) == value; });
  stop.store(true, std::memory_order_relaxed);
  peer.join();
}
BENCHMARK(BM_ProtocolFloor)->UseRealTime();

// Host memory to VRAM through the staging ring (copyin), 64 MiB per iteration.
void BM_CopyInBandwidth(benchmark::State& state) {
  auto dev = OpenBenchDevice();
  if (!dev) return state.SkipWithError("open failed");
  const uint64_t size = uint64_t{64} << 20;
  auto buffer = dev->allocator().alloc(size);
  if (!buffer.ok()) return state.SkipWithError("alloc failed");
  std::vector<uint8_t> data(size, 0x3c);
  // Once outside the timing: the first touch of the staging buffers and of sparse VRAM is not the transfer's cost.
  if (!dev->allocator().copyin(*buffer, data).ok() || !dev->synchronize().ok()) return state.SkipWithError("copyin");
  for (auto _ : state) {
    if (!dev->allocator().copyin(*buffer, data).ok() || !dev->synchronize().ok()) {
      return state.SkipWithError("copyin failed");
    }
  }
  state.SetBytesProcessed(state.iterations() * size);
}
BENCHMARK(BM_CopyInBandwidth)->Unit(benchmark::kMillisecond)->UseRealTime()->Iterations(8);

}  // namespace
}  // namespace hcq

BENCHMARK_MAIN();
