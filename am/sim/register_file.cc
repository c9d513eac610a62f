#include "am/sim/register_file.h"

namespace am::sim {

uint32_t RegisterFile::ReadDword(uint64_t address) {
  auto it = hooks_.find(address);
  const uint32_t stored = Peek(address);
  if (it == hooks_.end() || !it->second.read) {
    Trace(false, address, stored, it == hooks_.end() ? "storage" : it->second.model);
    return stored;
  }
  const uint32_t value = it->second.read(stored);
  Trace(false, address, value, it->second.model);
  return value;
}

void RegisterFile::WriteDword(uint64_t address, uint32_t value) {
  auto it = hooks_.find(address);
  if (it != hooks_.end() && it->second.gate && !it->second.gate(value)) {
    Trace(true, address, value, "dropped");
    return;
  }
  Poke(address, value);
  Trace(true, address, value, it == hooks_.end() ? "storage" : it->second.model);
  if (it != hooks_.end() && it->second.write) it->second.write(value);
}

void RegisterFile::OnRead(uint64_t address, const char* model, ReadHook hook) {
  Hooks& hooks = hooks_[address];
  hooks.model = model;
  hooks.read = std::move(hook);
}

void RegisterFile::OnWrite(uint64_t address, const char* model, WriteHook hook) {
  Hooks& hooks = hooks_[address];
  hooks.model = model;
  hooks.write = std::move(hook);
}

void RegisterFile::GateWrites(uint64_t address, WriteGate gate) { hooks_[address].gate = std::move(gate); }

void RegisterFile::EnableTrace(bool enable) { tracing_.store(enable, std::memory_order_release); }

std::vector<RegisterFile::TraceEntry> RegisterFile::TakeTrace() {
  base::MutexLock lock(&trace_mu_);
  return std::exchange(trace_, {});
}

void RegisterFile::Trace(bool write, uint64_t address, uint32_t value, const char* model) {
  if (!tracing_.load(std::memory_order_acquire)) return;
  base::MutexLock lock(&trace_mu_);
  trace_.push_back({write, address, value, model});
}

}  // namespace am::sim
