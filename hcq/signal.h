// hcq::Signal: a value and a timestamp in memory every queue of the device (and mapped peers) reaches. Queues
// write it (signal, timestamp) and wait on it; the host reads, writes and waits on it.
//
// Layout (16 bytes): the value at +0 (the engines compare and write its low 32 bits: PM4 WAIT_REG_MEM, RELEASE_MEM
// DATA_SEL 1, SDMA FENCE and POLL_REGMEM are 32-bit), the timestamp at +8 (a 64-bit count of the 100 MHz GPU
// clock, RELEASE_MEM DATA_SEL 3 / SDMA TIMESTAMP).
#ifndef BAREGPU_HCQ_SIGNAL_H_
#define BAREGPU_HCQ_SIGNAL_H_

#include <atomic>
#include <cstdint>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace hcq {

class Device;

// The wait timeout: HCQDEV_WAIT_TIMEOUT_MS when set (an error when it is not a number of milliseconds), else 30 s.
absl::StatusOr<absl::Duration> DefaultWaitTimeout();

class Signal {
 public:
  static constexpr uint64_t kBytes = 16;
  // GPU timestamps count a 100 MHz reference clock (gfx11's RLC_REFCLK, as amdgpu's gpu clock counter).
  static constexpr uint64_t kTicksPerMicrosecond = 100;

  Signal() = default;
  // `in_device_memory`: the signal lives in VRAM, written by the host through the BAR; set_value then flushes the
  // HDP so a queue already polling the value sees it (host-memory signals are coherent without it).
  Signal(Device* device, uint64_t va, uint8_t* cpu, bool in_device_memory = false)
      : device_(device), va_(va), cpu_(cpu), in_device_memory_(in_device_memory) {}

  bool valid() const { return cpu_ != nullptr; }
  Device* device() const { return device_; }
  uint64_t value_address() const { return va_; }
  uint64_t timestamp_address() const { return va_ + 8; }

  uint64_t value() const { return Word(0).load(std::memory_order_acquire); }
  void set_value(uint64_t value) const {
    Word(0).store(value, std::memory_order_release);
    if (in_device_memory_) FlushDeviceWrites();
  }
  bool in_device_memory() const { return in_device_memory_; }
  uint64_t timestamp_ticks() const { return Word(1).load(std::memory_order_acquire); }
  // Microseconds of GPU time at the last timestamp command.
  double timestamp() const { return static_cast<double>(timestamp_ticks()) / kTicksPerMicrosecond; }

  // Until value() >= value: spins briefly, then sleeps in growing steps. On timeout the error names the device
  // and its queues' pointers and the packet each is stopped at.
  absl::Status wait(uint64_t value) const;
  absl::Status wait(uint64_t value, absl::Duration timeout) const;

 private:
  void FlushDeviceWrites() const;
  std::atomic_ref<uint64_t> Word(int index) const {
    return std::atomic_ref<uint64_t>(reinterpret_cast<uint64_t*>(cpu_)[index]);
  }

  Device* device_ = nullptr;
  uint64_t va_ = 0;
  uint8_t* cpu_ = nullptr;
  bool in_device_memory_ = false;
};

}  // namespace hcq

#endif  // BAREGPU_HCQ_SIGNAL_H_
