#include "pci/sim/dma_space.h"

#include <algorithm>
#include <cstring>
#include <iterator>

namespace pci::sim {

void DmaSpace::Map(uint64_t address, uint8_t* host, uint64_t size) {
  base::MutexLock lock(&mu_);
  mappings_[address] = Mapping{host, size};
}

void DmaSpace::Unmap(uint64_t address) {
  base::MutexLock lock(&mu_);
  mappings_.erase(address);
  generation_.fetch_add(1, std::memory_order_acq_rel);
}

template <typename Fn>
bool DmaSpace::ForEachPiece(uint64_t address, uint64_t size, bool write, bool device_access, Fn fn) {
  if (device_access && !bus_master()) {
    RecordFault(DmaFault{address, size, write, /*bus_master_disabled=*/true});
    return false;
  }
  if (size == 0) return true;
  const uint64_t end = address + size;
  bool covered = end > address;  // a range that wraps the address space is never mapped
  {
    base::ReaderMutexLock lock(&mu_);
    // First pass: the whole range must be covered, so that a faulting access moves no data at all.
    for (uint64_t cursor = address; covered && cursor < end;) {
      auto it = mappings_.upper_bound(cursor);
      if (it == mappings_.begin()) {
        covered = false;
        break;
      }
      --it;
      const uint64_t mapping_end = it->first + it->second.size;
      covered = cursor < mapping_end;
      cursor = mapping_end;
    }
    for (uint64_t cursor = address; covered && cursor < end;) {
      auto it = std::prev(mappings_.upper_bound(cursor));
      const uint64_t offset = cursor - it->first;
      const uint64_t length = std::min(end - cursor, it->second.size - offset);
      fn(it->second.host + offset, cursor - address, length);
      cursor += length;
    }
  }
  if (!covered && device_access) RecordFault(DmaFault{address, size, write, false});
  return covered;
}

bool DmaSpace::Read(uint64_t address, void* destination, uint64_t size) {
  auto* out = static_cast<uint8_t*>(destination);
  return ForEachPiece(address, size, false, /*device_access=*/true,
                      [&](uint8_t* host, uint64_t done, uint64_t length) { std::memcpy(out + done, host, length); });
}

bool DmaSpace::Peek(uint64_t address, void* destination, uint64_t size) {
  auto* out = static_cast<uint8_t*>(destination);
  return ForEachPiece(address, size, false, /*device_access=*/false,
                      [&](uint8_t* host, uint64_t done, uint64_t length) { std::memcpy(out + done, host, length); });
}

bool DmaSpace::Write(uint64_t address, const void* source, uint64_t size) {
  const auto* in = static_cast<const uint8_t*>(source);
  return ForEachPiece(address, size, true, /*device_access=*/true,
                      [&](uint8_t* host, uint64_t done, uint64_t length) { std::memcpy(host, in + done, length); });
}

uint8_t* DmaSpace::Translate(uint64_t address, uint64_t size) {
  if (!bus_master()) return nullptr;
  base::ReaderMutexLock lock(&mu_);
  auto it = mappings_.upper_bound(address);
  if (it == mappings_.begin()) return nullptr;
  --it;
  const uint64_t offset = address - it->first;
  if (offset >= it->second.size || it->second.size - offset < size) return nullptr;
  return it->second.host + offset;
}

std::optional<DmaFault> DmaSpace::last_fault() const {
  base::MutexLock lock(&mu_);
  return last_fault_;
}

void DmaSpace::RecordFault(const DmaFault& fault) {
  base::MutexLock lock(&mu_);
  last_fault_ = fault;
  fault_count_.fetch_add(1, std::memory_order_acq_rel);
}

}  // namespace pci::sim
