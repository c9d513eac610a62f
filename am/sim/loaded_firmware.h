// Which firmware the virtual PSP has loaded (GFX_FW_TYPE_* from psp_gfx_if.h, am/regs/psp_constants.h) and
// whether the RLC autoload ran. Firmware is what makes engines come alive: the GFX, SDMA and SMU models ask here
// before they start. Kept in the device's persistent model state (one process boots, the next finds it booted).
#ifndef BAREGPU_AM_SIM_LOADED_FIRMWARE_H_
#define BAREGPU_AM_SIM_LOADED_FIRMWARE_H_

#include <atomic>
#include <cstdint>
#include <optional>

#include "am/sim/model_state.h"

namespace am::sim {

class LoadedFirmware {
 public:
  static constexpr uint32_t kMaxType = 256;

  explicit LoadedFirmware(ModelState& state) : state_(StateBlock<State>(state.firmware)) {}

  void Load(uint32_t gfx_fw_type, uint32_t version) {
    if (gfx_fw_type >= kMaxType) return;
    std::atomic_ref<uint32_t>(state_.version[gfx_fw_type]).store(version, std::memory_order_relaxed);
    std::atomic_ref<uint64_t>(state_.loaded[gfx_fw_type / 64])
        .fetch_or(uint64_t{1} << (gfx_fw_type % 64), std::memory_order_release);
  }
  bool Has(uint32_t gfx_fw_type) const {
    if (gfx_fw_type >= kMaxType) return false;
    return (std::atomic_ref<uint64_t>(state_.loaded[gfx_fw_type / 64]).load(std::memory_order_acquire) >>
            (gfx_fw_type % 64)) &
           1;
  }
  uint32_t Version(uint32_t gfx_fw_type) const {
    return gfx_fw_type < kMaxType ? std::atomic_ref<uint32_t>(state_.version[gfx_fw_type]).load() : 0;
  }
  // Where an engine's firmware starts (the container's ucode_start_addr_lo/hi, a byte address in the engine's
  // instruction space; what a driver programs into CP_MEC_RS64_PRGRM_CNTR_START). The PSP only receives the ucode
  // array, not the container header, so whoever knows the file records it; unset when nobody did.
  void SetUcodeStart(uint32_t gfx_fw_type, uint64_t address) {
    if (gfx_fw_type >= kMaxType) return;
    std::atomic_ref<uint64_t>(state_.ucode_start[gfx_fw_type]).store(address | kUcodeStartSet);
  }
  std::optional<uint64_t> UcodeStart(uint32_t gfx_fw_type) const {
    if (gfx_fw_type >= kMaxType) return std::nullopt;
    const uint64_t value = std::atomic_ref<uint64_t>(state_.ucode_start[gfx_fw_type]).load();
    if ((value & kUcodeStartSet) == 0) return std::nullopt;
    return value & ~kUcodeStartSet;
  }
  // The RLC autoload (PSP GFX_CMD_ID_AUTOLOAD_RLC) started the RLC, which then brought up the CP firmware.
  void SetRlcAutoloaded() { std::atomic_ref<uint32_t>(state_.rlc_autoloaded).store(1, std::memory_order_release); }
  bool rlc_autoloaded() const {
    return std::atomic_ref<uint32_t>(state_.rlc_autoloaded).load(std::memory_order_acquire) != 0;
  }
  // A mode1 reset or power cycle: nothing is loaded any more.
  void Clear() {
    for (uint64_t& word : state_.loaded) std::atomic_ref<uint64_t>(word).store(0);
    for (uint64_t& start : state_.ucode_start) std::atomic_ref<uint64_t>(start).store(0);
    std::atomic_ref<uint32_t>(state_.rlc_autoloaded).store(0);
  }

 private:
  struct State {
    uint64_t loaded[kMaxType / 64];
    uint32_t version[kMaxType];
    uint32_t rlc_autoloaded;
    uint32_t reserved;
    uint64_t ucode_start[kMaxType];  // bit 63: recorded (an instruction-space address never reaches it)
  };
  static constexpr uint64_t kUcodeStartSet = uint64_t{1} << 63;
  State& state_;
};

}  // namespace am::sim

#endif  // BAREGPU_AM_SIM_LOADED_FIRMWARE_H_
