// The GPU's reference clock counter: 100 MHz on Navi31 (the rate Linux assumes for gfx11's
// amdgpu_gfx_get_gpu_clock_counter consumers; RLC_REFCLK / 100 MHz, see gfx_v11_0.c). Engines stamp it into
// fences (RELEASE_MEM data_sel 3, SDMA TIMESTAMP) and the IH into entries; the driver reads it via registers.
#ifndef BAREGPU_AM_SIM_GPU_CLOCK_H_
#define BAREGPU_AM_SIM_GPU_CLOCK_H_

#include <atomic>
#include <chrono>
#include <cstdint>

namespace am::sim {

class GpuClock {
 public:
  static constexpr uint64_t kHz = 100'000'000;

  // A clock that starts now: for a model tested on its own.
  GpuClock() : power_on_ns_(SteadyNanoseconds()) {}
  // The device's clock, counting from its power-on as the chip's counter does: `power_on_ns` is kept in the
  // device's persistent model state (0 at cold power-on, set here then), so every process that opens the device
  // reads one count and timestamps (IH entries, fences) keep increasing from one holder to the next. The host's
  // monotonic clock is per boot: a state directory older than the host's boot restarts the count (a power loss).
  explicit GpuClock(uint64_t& power_on_ns) {
    std::atomic_ref<uint64_t> stored(power_on_ns);
    const uint64_t now = SteadyNanoseconds();
    uint64_t seen = stored.load(std::memory_order_acquire);
    while (seen == 0 || seen > now) {
      if (stored.compare_exchange_weak(seen, now, std::memory_order_acq_rel)) {
        seen = now;
        break;
      }
    }
    power_on_ns_ = seen;
  }

  // Ticks since the device powered on. Monotonic, 10 ns per tick.
  uint64_t Now() const { return (SteadyNanoseconds() - power_on_ns_) / (1'000'000'000 / kHz); }

 private:
  // CLOCK_MONOTONIC (std::chrono::steady_clock on Linux): one time line for every process of this boot.
  static uint64_t SteadyNanoseconds() {
    return static_cast<uint64_t>(
        std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
            .count());
  }

  uint64_t power_on_ns_ = 0;
};

}  // namespace am::sim

#endif  // BAREGPU_AM_SIM_GPU_CLOCK_H_
