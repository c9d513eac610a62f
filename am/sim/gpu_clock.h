// The GPU's reference clock counter: 100 MHz on Navi31 (the rate Linux assumes for gfx11's
// amdgpu_gfx_get_gpu_clock_counter consumers; RLC_REFCLK / 100 MHz, see gfx_v11_0.c). Engines stamp it into
// fences (RELEASE_MEM data_sel 3, SDMA TIMESTAMP) and the IH into entries; the driver reads it via registers.
#ifndef BAREGPU_AM_SIM_GPU_CLOCK_H_
#define BAREGPU_AM_SIM_GPU_CLOCK_H_

#include <chrono>
#include <cstdint>

namespace am::sim {

class GpuClock {
 public:
  static constexpr uint64_t kHz = 100'000'000;

  // Ticks since the device was opened. Monotonic, 10 ns per tick.
  uint64_t Now() const {
    const auto elapsed = std::chrono::steady_clock::now() - start_;
    return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(elapsed).count()) /
           (1'000'000'000 / kHz);
  }

 private:
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
};

}  // namespace am::sim

#endif  // BAREGPU_AM_SIM_GPU_CLOCK_H_
