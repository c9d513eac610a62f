// Issue 22's boot numbers: a cold boot of the virtual AD102 (power-on state) and a warm one (after a process shut
// GSP-RM down cleanly) through GSP-RM 535.113.01, driver and virtual GPU together, with each step's share as a
// counter. Needs Debian's firmware-nvidia-graphics on BAREGPU_FIRMWARE_PATH (tools/fetch_firmware.sh); skipped
// without it.
//
// What a step costs here is not what it costs on a board: the virtual booter checks what a real one checks by
// hashing and comparing the 38 MiB GSP-RM image (nv/sim/booter_model), and the virtual FWSEC and GSP-RM answer at once.
#include <map>
#include <memory>
#include <string>

#include "absl/time/time.h"
#include "benchmark/benchmark.h"
#include "nv/device.h"
#include "pci/sim/persistent_state.h"

namespace nv {
namespace {

// Boots `name`, adds each step's milliseconds to `step_ms`, and shuts GSP-RM down outside the timing. False (with
// the benchmark skipped) when the boot fails.
bool TimedBoot(benchmark::State& state, const std::string& name, std::map<std::string, double>& step_ms) {
  state.PauseTiming();
  absl::StatusOr<std::unique_ptr<Device>> device = Device::Open(name);
  if (!device.ok()) {
    state.SkipWithError(std::string(device.status().message()).c_str());
    return false;
  }
  state.ResumeTiming();
  const absl::Status booted = (*device)->Boot();
  state.PauseTiming();
  if (!booted.ok()) {
    state.SkipWithError(std::string(booted.message()).c_str());
    return false;
  }
  for (const BootStep& step : (*device)->steps()) step_ms[step.name] += absl::ToDoubleMilliseconds(step.duration);
  const absl::Status shut_down = (*device)->Shutdown();
  if (!shut_down.ok()) {
    state.SkipWithError(std::string(shut_down.message()).c_str());
    return false;
  }
  state.ResumeTiming();
  return true;
}

void ReportSteps(benchmark::State& state, const std::map<std::string, double>& step_ms) {
  for (const auto& [name, ms] : step_ms) {
    state.counters[name + "_ms"] = benchmark::Counter(ms, benchmark::Counter::kAvgIterations);
  }
}

// From power-on: FWSEC-FRTS, booter_load, GSP-RM's INIT_DONE, all with state no process left.
void BM_ColdBootVirtualAd102(benchmark::State& state) {
  std::map<std::string, double> step_ms;
  for (auto _ : state) {
    state.PauseTiming();
    const bool cycled = pci::sim::PersistentState::PowerCycle("sim:ad102:bench-cold").ok();
    state.ResumeTiming();
    if (!cycled) return state.SkipWithError("power cycle failed");
    if (!TimedBoot(state, "sim:ad102:bench-cold", step_ms)) return;
  }
  ReportSteps(state, step_ms);
}
BENCHMARK(BM_ColdBootVirtualAd102)->Unit(benchmark::kMillisecond)->Iterations(5)->UseRealTime();

// After a clean shutdown by an earlier process: WPR2 down, the same steps (GSP-RM cannot outlive the process whose
// memory holds its queues, so there is no partial boot as on the virtual Navi31).
void BM_WarmBootVirtualAd102(benchmark::State& state) {
  std::map<std::string, double> step_ms;
  (void)pci::sim::PersistentState::PowerCycle("sim:ad102:bench-warm");
  {
    // The earlier process's boot and clean shutdown (the destructor shuts down), outside the loop.
    absl::StatusOr<std::unique_ptr<Device>> first = Device::Open("sim:ad102:bench-warm");
    if (!first.ok()) return state.SkipWithError(std::string(first.status().message()).c_str());
    if (absl::Status booted = (*first)->Boot(); !booted.ok()) {
      return state.SkipWithError(std::string(booted.message()).c_str());
    }
  }
  for (auto _ : state) {
    if (!TimedBoot(state, "sim:ad102:bench-warm", step_ms)) return;
  }
  ReportSteps(state, step_ms);
}
BENCHMARK(BM_WarmBootVirtualAd102)->Unit(benchmark::kMillisecond)->Iterations(5)->UseRealTime();

}  // namespace
}  // namespace nv

BENCHMARK_MAIN();
