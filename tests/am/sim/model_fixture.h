// A stand-alone device context for testing one IP model: a register file with the Navi31 bases, memory that
// maps GPU addresses the test placed (anything else faults, like an unmapped page), an interrupt sink that
// records entries, doorbells, the clock, loaded firmware and the error log. Tests then speak to the model only
// through registers, memory and doorbells, as the driver would.
#ifndef BAREGPU_TESTS_AM_SIM_MODEL_FIXTURE_H_
#define BAREGPU_TESTS_AM_SIM_MODEL_FIXTURE_H_

#include <sys/mman.h>

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <vector>

#include "absl/strings/str_format.h"
#include "am/regs/power_on_values.h"
#include "am/regs/register_space.h"
#include "am/sim/model_context.h"
#include "am/sim/navi31.h"

namespace am::sim::testing {

// GPU address ranges backed by host buffers the test allocated; everything else faults.
class FlatMemory : public GpuMemory {
 public:
  // Backs [address, address + size) with zeroed host memory and returns it.
  std::span<uint8_t> Place(uint64_t address, uint64_t size) {
    std::lock_guard lock(mu_);
    auto& buffer = buffers_[address];
    buffer.assign(size, 0);
    return {buffer.data(), buffer.size()};
  }
  absl::StatusOr<std::span<uint8_t>> Map(const MemoryClient& client, uint64_t address, uint64_t length,
                                         Access access) override {
    std::lock_guard lock(mu_);
    auto it = buffers_.upper_bound(address);
    if (it != buffers_.begin()) {
      --it;
      const uint64_t offset = address - it->first;
      if (offset < it->second.size()) {
        return std::span<uint8_t>(it->second.data() + offset, std::min(length, it->second.size() - offset));
      }
    }
    ++faults_;
    return absl::NotFoundError(absl::StrFormat("%s: %s of unmapped GPU address %#x", client.name,
                                               access == Access::kWrite ? "write" : "read", address));
  }
  int faults() const {
    std::lock_guard lock(mu_);
    return faults_;
  }

 private:
  mutable std::mutex mu_;
  std::map<uint64_t, std::vector<uint8_t>> buffers_;
  int faults_ = 0;
};

class RecordingInterrupts : public InterruptSink {
 public:
  void Post(const InterruptEntry& entry) override {
    std::lock_guard lock(mu_);
    entries_.push_back(entry);
    cv_.notify_all();
  }
  std::vector<InterruptEntry> entries() const {
    std::lock_guard lock(mu_);
    return entries_;
  }
  // Waits (bounded) until at least `count` entries arrived.
  bool WaitFor(size_t count, std::chrono::milliseconds timeout = std::chrono::seconds(10)) {
    std::unique_lock lock(mu_);
    return cv_.wait_for(lock, timeout, [&] { return entries_.size() >= count; });
  }

 private:
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::vector<InterruptEntry> entries_;
};

class ModelFixture {
 public:
  ModelFixture()
      : storage_(static_cast<uint32_t*>(::mmap(nullptr, kStorageBytes, PROT_READ | PROT_WRITE,
                                               MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0))),
        registers_(std::span<uint32_t>(storage_, Navi31::kRegisterSpaceDwords)),
        bases_(Navi31Bases()),
        doorbells_(Navi31::kDoorbellBarSize / 4),
        state_(std::make_unique<ModelState>()),
        firmware_(*state_),
        context_{registers_, bases_,    memory_, interrupts_, doorbells_,
                 clock_,     firmware_, errors_, *state_,     /*dma=*/nullptr} {
    // The registers power on as the device's do (Navi31::PowerOnDefaults): the kernel's *_default.h values.
    for (const regs::PowerOnValue& reset : regs::PowerOnValues()) {
      const absl::StatusOr<uint64_t> address = bases_.Resolve(reset.ip, 0, reset.segment, reset.offset);
      if (address.ok() && *address < registers_.size_dwords()) registers_.Poke(*address, reset.value);
    }
  }
  ~ModelFixture() { ::munmap(storage_, kStorageBytes); }

  ModelContext& context() { return context_; }
  RegisterFile& registers() { return registers_; }
  const regs::IpBases& bases() const { return bases_; }
  FlatMemory& memory() { return memory_; }
  RecordingInterrupts& interrupts() { return interrupts_; }
  DoorbellRouter& doorbells() { return doorbells_; }
  LoadedFirmware& firmware() { return firmware_; }
  DeviceErrorLog& errors() { return errors_; }
  ModelState& state() { return *state_; }

  // Typed registers of one IP through the register file's hooks, as the driver's BAR accesses would arrive.
  template <regs::Ip kIp>
  regs::IpRegisters<kIp, RegisterFile> Regs() {
    return *regs::IpRegisters<kIp, RegisterFile>::Create(registers_, bases_);
  }

 private:
  static constexpr size_t kStorageBytes = Navi31::kRegisterSpaceDwords * sizeof(uint32_t);
  uint32_t* storage_;
  RegisterFile registers_;
  regs::IpBases bases_;
  FlatMemory memory_;
  RecordingInterrupts interrupts_;
  DoorbellRouter doorbells_;
  GpuClock clock_;
  std::unique_ptr<ModelState> state_;
  LoadedFirmware firmware_;
  DeviceErrorLog errors_;
  ModelContext context_;
};

}  // namespace am::sim::testing

#endif  // BAREGPU_TESTS_AM_SIM_MODEL_FIXTURE_H_
