// hcq::Signal: a value and a timestamp in memory every queue of the device (and mapped peers) reaches. Queues
// write it (signal, timestamp) and wait on it; the host reads, writes and waits on it.
//
// Layout (16 bytes): the value at +0, the timestamp at +8 (a 64-bit count of the 100 MHz GPU clock, RELEASE_MEM
// DATA_SEL 3 / SDMA TIMESTAMP).
//
// Values are 32 bits wide, everywhere: the engines compare and write 32 bits (PM4 WAIT_REG_MEM, RELEASE_MEM
// DATA_SEL 1, SDMA FENCE and POLL_REGMEM), so the host reads and writes the same 32-bit word atomically (never a
// 64-bit access over a word an engine writes 32 bits of) and the upper half of the slot stays 0. The interface
// keeps tinygrad's uint64_t: set_value takes the value modulo 2^32, and queue commands with a constant above
// kMaxValue are refused at bind/submit. The timeline wraps long before (DeviceOptions::timeline_wrap).
#ifndef BAREGPU_HCQ_SIGNAL_H_
#define BAREGPU_HCQ_SIGNAL_H_

#include <atomic>
#include <cstdint>
#include <optional>

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
  static constexpr uint64_t kMaxValue = 0xffffffff;
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

  uint64_t value() const { return Value32().load(std::memory_order_acquire); }
  // Waits sleeping on the device's interrupt (hcq/interrupt_sleep.h) are woken: no engine interrupts for a host
  // write. (The store is sequentially consistent against that wake-up's check for sleepers.)
  void set_value(uint64_t value) const {
    Value32().store(static_cast<uint32_t>(value), std::memory_order_seq_cst);
    if (in_device_memory_) FlushDeviceWrites();
    if (device_ != nullptr) WakeSleepingWaits();
  }
  bool in_device_memory() const { return in_device_memory_; }
  uint64_t timestamp_ticks() const { return Word(1).load(std::memory_order_acquire); }
  // Microseconds of GPU time at the last timestamp command.
  double timestamp() const { return static_cast<double>(timestamp_ticks()) / kTicksPerMicrosecond; }

  // Until value() >= value: spins briefly, then sleeps until the device's interrupt says a signal changed
  // (hcq/interrupt_sleep.h), or in growing steps on a device without one. On timeout the error names the device
  // and its queues' pointers and the packet each is stopped at. A fault the device reports before the wait returns
  // (Device::PollFaults, each step of the sleep and once at the end) ends it at once with absl::AbortedError naming
  // the fault, even when the value was reached: Device::RecoverAfter then resets what is stuck.
  absl::Status wait(uint64_t value) const;
  absl::Status wait(uint64_t value, absl::Duration timeout) const;

 private:
  void FlushDeviceWrites() const;
  void WakeSleepingWaits() const;
  // The slow path's sleeps: on the device's interrupt (nullopt when it has none), or blind in growing steps.
  std::optional<absl::Status> SleepOnInterrupt(uint64_t value, absl::Duration timeout, uint64_t faults_before) const;
  absl::Status SleepBlind(uint64_t value, absl::Duration timeout, uint64_t faults_before) const;
  absl::Status TimedOut(uint64_t value, absl::Duration timeout) const;
  // The wait's fault error when the device reported faults since `faults_before`, else OK.
  absl::Status FaultsDuring(uint64_t value, uint64_t faults_before) const;
  // The value's 32-bit word (little-endian: the slot's first four bytes).
  std::atomic_ref<uint32_t> Value32() const { return std::atomic_ref<uint32_t>(*reinterpret_cast<uint32_t*>(cpu_)); }
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
