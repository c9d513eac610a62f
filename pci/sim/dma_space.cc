#include "pci/sim/dma_space.h"

#include <algorithm>
#include <cstring>
#include <iterator>
#include <utility>

namespace pci::sim {

// The protocol (quiescent-state reclamation). Unmap removes the mapping under mu_ and then increments generation_;
// Retire files the memory under the generation after that. An Accessor publishes the generation it read at each
// quiescent point (a release store: its earlier accesses happen before it). Memory retired at generation G is released
// once every registered Accessor has published G or later, or kOffline: having read G, the thread finds the mapping
// gone in any later Translate and sees a changed generation() before it uses any view it kept. Online() publishes 0
// (blocking every release) before it reads the generation, both sequentially consistent, so that a releaser that
// read kOffline has incremented the generation before the waking thread reads it.
DmaSpace::Accessor::Accessor(DmaSpace* space) : space_(space) {
  if (space_ == nullptr) return;
  {
    base::MutexLock lock(&space_->retired_mu_);
    space_->accessors_.push_back(this);
  }
  Online();
}

DmaSpace::Accessor::~Accessor() {
  if (space_ == nullptr) return;
  {
    base::MutexLock lock(&space_->retired_mu_);
    std::erase(space_->accessors_, this);
  }
  if (space_->retired_count_.load(std::memory_order_acquire) != 0) space_->ReleaseRetired();
}

void DmaSpace::Accessor::Quiescent() {
  if (space_ == nullptr) return;
  state_.store(space_->generation_.load(std::memory_order_acquire), std::memory_order_release);
  if (space_->retired_count_.load(std::memory_order_relaxed) != 0) space_->ReleaseRetired();
}

void DmaSpace::Accessor::Offline() {
  if (space_ == nullptr) return;
  state_.store(kOffline, std::memory_order_release);
  if (space_->retired_count_.load(std::memory_order_relaxed) != 0) space_->ReleaseRetired();
}

void DmaSpace::Accessor::Online() {
  if (space_ == nullptr) return;
  state_.store(0, std::memory_order_seq_cst);
  state_.store(space_->generation_.load(std::memory_order_seq_cst), std::memory_order_release);
}

void DmaSpace::Retire(HostMemory memory) {
  {
    base::MutexLock lock(&retired_mu_);
    retired_.push_back(RetiredMemory{generation_.load(std::memory_order_seq_cst), std::move(memory)});
    retired_count_.store(retired_.size(), std::memory_order_release);
  }
  ReleaseRetired();
}

size_t DmaSpace::retired_count() const { return retired_count_.load(std::memory_order_acquire); }

void DmaSpace::ReleaseRetired() {
  std::vector<RetiredMemory> released;
  {
    base::MutexLock lock(&retired_mu_);
    // The oldest generation some awake Accessor may still hold pointers from.
    uint64_t oldest = Accessor::kOffline;
    for (const Accessor* accessor : accessors_)
      oldest = std::min(oldest, accessor->state_.load(std::memory_order_seq_cst));
    auto held = std::partition(retired_.begin(), retired_.end(),
                               [&](const RetiredMemory& retired) { return retired.generation > oldest; });
    released.insert(released.end(), std::make_move_iterator(held), std::make_move_iterator(retired_.end()));
    retired_.erase(held, retired_.end());
    retired_count_.store(retired_.size(), std::memory_order_release);
  }
  // `released` goes back to the host here, outside the lock.
}

void DmaSpace::Map(uint64_t address, uint8_t* host, uint64_t size) {
  base::MutexLock lock(&mu_);
  mappings_[address] = Mapping{host, size};
}

void DmaSpace::Unmap(uint64_t address) {
  base::MutexLock lock(&mu_);
  mappings_.erase(address);
  generation_.fetch_add(1, std::memory_order_seq_cst);
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
