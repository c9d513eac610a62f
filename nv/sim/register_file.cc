#include "nv/sim/register_file.h"

#include <atomic>

namespace nv::sim {

void RegisterFile::Claim(uint32_t address, const Register& reg) {
  if (address / 4 < storage_.size()) registers_[address & ~uint32_t{3}] = reg;
}

const RegisterFile::Register* RegisterFile::Find(uint32_t address) const {
  auto it = registers_.find(address & ~uint32_t{3});
  return it == registers_.end() ? nullptr : &it->second;
}

std::optional<uint32_t> RegisterFile::Read(uint32_t address) const {
  if (Find(address) == nullptr) return std::nullopt;
  return std::atomic_ref<uint32_t>(storage_[address / 4]).load(std::memory_order_acquire);
}

RegisterFile::WriteResult RegisterFile::Write(uint32_t address, uint32_t value, PrivSource source) {
  const Register* reg = Find(address);
  if (reg == nullptr) return WriteResult::kUnclaimed;
  const uint32_t writable = source == PrivSource::kHost ? reg->host_writable : reg->priv_writable;
  // A read-modify-write that a concurrent writer (the host beside a falcon) cannot tear.
  std::atomic_ref<uint32_t> word(storage_[address / 4]);
  uint32_t old = word.load(std::memory_order_acquire);
  while (!word.compare_exchange_weak(old, (old & ~writable) | (value & writable), std::memory_order_acq_rel)) {
  }
  return ((old ^ value) & ~writable) != 0 ? WriteResult::kProtected : WriteResult::kStored;
}

void RegisterFile::PowerOn() {
  for (const auto& [address, reg] : registers_) {
    std::atomic_ref<uint32_t>(storage_[address / 4]).store(reg.power_on, std::memory_order_release);
  }
}

}  // namespace nv::sim
