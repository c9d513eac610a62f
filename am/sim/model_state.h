// Model state that outlives the process, as the chip's internal state does: which firmware the PSP loaded, the
// PSP's and SMU's protocol state, engines' internal pointers. It lives in the device's persistent "model" region
// next to VRAM and registers, so a second process finds the device as the first left it. Each model owns one
// fixed block and keeps a plain struct there (static_assert that it fits); all access is through std::atomic_ref
// or under the model's own lock, because engine threads and the driver's thread share it.
#ifndef BAREGPU_AM_SIM_MODEL_STATE_H_
#define BAREGPU_AM_SIM_MODEL_STATE_H_

#include <cstdint>
#include <span>

namespace am::sim {

struct ModelState {
  static constexpr uint32_t kBlockBytes = 4096;
  uint8_t firmware[kBlockBytes];  // LoadedFirmware
  uint8_t psp[kBlockBytes];
  uint8_t smu[kBlockBytes];
  uint8_t gmc[kBlockBytes];
  uint8_t ih[kBlockBytes];
  uint8_t gfx[kBlockBytes];
  uint8_t sdma[kBlockBytes];
  uint8_t clock[kBlockBytes];  // GpuClock's power-on instant
  uint8_t spare[8 * kBlockBytes];
};
static_assert(sizeof(ModelState) == 64 * 1024);

// A model's block as its own plain struct. The region is page-aligned and zero at cold power-on, so T's
// all-zeros value must be its power-on state.
template <typename T>
T& StateBlock(uint8_t (&block)[ModelState::kBlockBytes]) {
  static_assert(sizeof(T) <= ModelState::kBlockBytes, "model state does not fit its block");
  static_assert(alignof(T) <= 64);
  return *reinterpret_cast<T*>(block);
}

}  // namespace am::sim

#endif  // BAREGPU_AM_SIM_MODEL_STATE_H_
