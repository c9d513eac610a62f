// The virtual GPU's register space: every register is plain storage (kept in the device's persistent state)
// unless an IP model hooks its address to give it behaviour. Addressed by absolute dword address, like the
// hardware's, so it is an am::regs::DwordSpace and models use the typed registers on it.
//
// Hooks are installed while the device is built and never change afterwards, so lookups need no lock; stores
// are atomic so engine threads and the driver's thread may touch registers concurrently.
#ifndef BAREGPU_AM_SIM_REGISTER_FILE_H_
#define BAREGPU_AM_SIM_REGISTER_FILE_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "am/regs/ip_bases.h"
#include "base/mutex.h"

namespace am::sim {

class RegisterFile {
 public:
  // Reads return what the hook computes from the stored value; writes store first, then call the hook.
  using ReadHook = std::function<uint32_t(uint32_t stored)>;
  using WriteHook = std::function<void(uint32_t value)>;
  // Asked before a write lands: false drops it (nothing stored, no write hook), as the part loses writes to a block
  // that is not powered.
  using WriteGate = std::function<bool(uint32_t value)>;

  struct TraceEntry {
    bool write;
    uint64_t address;  // dword address
    uint32_t value;
    const char* model;  // the model that handled it, "storage" when none did
  };

  explicit RegisterFile(std::span<uint32_t> storage) : storage_(storage) {}

  uint32_t ReadDword(uint64_t address);
  void WriteDword(uint64_t address, uint32_t value);
  // Storage access for models (no hooks, no trace): what the hardware holds. Inline: the engines' loops read their
  // control registers between packets.
  uint32_t Peek(uint64_t address) const {
    if (address >= storage_.size()) return 0xffffffff;  // beyond the register space: an unclaimed read
    return std::atomic_ref<uint32_t>(storage_[address]).load(std::memory_order_acquire);
  }
  void Poke(uint64_t address, uint32_t value) {
    if (address >= storage_.size()) return;
    std::atomic_ref<uint32_t>(storage_[address]).store(value, std::memory_order_release);
  }
  uint64_t size_dwords() const { return storage_.size(); }

  void OnRead(uint64_t address, const char* model, ReadHook hook);
  void OnWrite(uint64_t address, const char* model, WriteHook hook);
  void GateWrites(uint64_t address, WriteGate gate);

  // The model-level trace: which model handled which access, for tests and `--trace`.
  void EnableTrace(bool enable);
  std::vector<TraceEntry> TakeTrace();

 private:
  struct Hooks {
    const char* model = "storage";
    ReadHook read;
    WriteHook write;
    WriteGate gate;
  };
  void Trace(bool write, uint64_t address, uint32_t value, const char* model);

  std::span<uint32_t> storage_;
  absl::flat_hash_map<uint64_t, Hooks> hooks_;
  std::atomic<bool> tracing_{false};
  base::Mutex trace_mu_;
  std::vector<TraceEntry> trace_ ABSL_GUARDED_BY(trace_mu_);
};

// The absolute dword address of typed register R in instance 0 of its IP block, for installing hooks. A register
// whose segment has no base resolves past the register space, where hooks are never reached.
template <typename R>
uint64_t RegisterAddress(const regs::IpBases& bases) {
  auto address = bases.Resolve(R::kIp, 0, R::kSegment, R::kOffset);
  return address.ok() ? *address : UINT64_MAX;
}

}  // namespace am::sim

#endif  // BAREGPU_AM_SIM_REGISTER_FILE_H_
