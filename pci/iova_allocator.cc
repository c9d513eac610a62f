#include "pci/iova_allocator.h"

#include <algorithm>

#include "absl/strings/str_format.h"
#include "base/bits.h"
#include "pci/host_memory.h"

namespace pci {

IovaAllocator::IovaAllocator(uint64_t base, uint64_t size) {
  if (size != 0) free_.emplace(base, size);
}

absl::StatusOr<uint64_t> IovaAllocator::Allocate(uint64_t size, uint64_t alignment, uint64_t dma_mask) {
  if (size == 0) return absl::InvalidArgumentError("IOVA allocation of size 0");
  if (!base::IsPowerOfTwo(alignment) || alignment < kPageSize) {
    return absl::InvalidArgumentError(
        absl::StrFormat("IOVA alignment %#x is not a power of two of at least the page size", alignment));
  }
  size = base::AlignUp(size, kPageSize);
  base::MutexLock lock(&mu_);
  for (auto it = free_.begin(); it != free_.end(); ++it) {
    const uint64_t start = base::AlignUp(it->first, alignment);
    const uint64_t end = it->first + it->second;  // exclusive
    if (start < it->first || start >= end || end - start < size) continue;
    if (start + size - 1 > dma_mask) break;  // the free list is ordered: every later range is higher still
    const uint64_t range_start = it->first;
    free_.erase(it);
    if (start > range_start) free_.emplace(range_start, start - range_start);
    if (start + size < end) free_.emplace(start + size, end - (start + size));
    allocated_.emplace(start, size);
    return start;
  }
  uint64_t largest = 0, total = 0;
  for (const auto& [start, len] : free_) {
    largest = std::max(largest, len);
    total += len;
  }
  return absl::ResourceExhaustedError(absl::StrFormat(
      "no free IOVA range of %#x bytes aligned to %#x below DMA mask %#x (free: %#x bytes, largest range %#x)", size,
      alignment, dma_mask, total, largest));
}

absl::Status IovaAllocator::Free(uint64_t iova) {
  base::MutexLock lock(&mu_);
  auto it = allocated_.find(iova);
  if (it == allocated_.end()) {
    return absl::InvalidArgumentError(absl::StrFormat("IOVA %#x was not allocated (double free?)", iova));
  }
  uint64_t start = it->first;
  uint64_t size = it->second;
  allocated_.erase(it);
  auto next = free_.lower_bound(start);
  if (next != free_.end() && start + size == next->first) {
    size += next->second;
    next = free_.erase(next);
  }
  if (next != free_.begin()) {
    auto prev = std::prev(next);
    if (prev->first + prev->second == start) {
      start = prev->first;
      size += prev->second;
      free_.erase(prev);
    }
  }
  free_.emplace(start, size);
  return absl::OkStatus();
}

absl::Status IovaAllocator::Reserve(uint64_t start, uint64_t size) {
  if (size == 0) return absl::OkStatus();
  const uint64_t end = start + size;
  base::MutexLock lock(&mu_);
  auto it = free_.upper_bound(start);
  if (it != free_.begin()) --it;
  while (it != free_.end() && it->first < end) {
    const uint64_t range_start = it->first;
    const uint64_t range_end = range_start + it->second;
    if (range_end <= start) {
      ++it;
      continue;
    }
    it = free_.erase(it);
    if (range_start < start) free_.emplace(range_start, start - range_start);
    if (range_end > end) it = free_.emplace(end, range_end - end).first;
  }
  return absl::OkStatus();
}

uint64_t IovaAllocator::free_bytes() const {
  base::MutexLock lock(&mu_);
  uint64_t total = 0;
  for (const auto& [start, size] : free_) total += size;
  return total;
}

uint64_t IovaAllocator::allocated_bytes() const {
  base::MutexLock lock(&mu_);
  uint64_t total = 0;
  for (const auto& [start, size] : allocated_) total += size;
  return total;
}

}  // namespace pci
