#include "am/tlsf_allocator.h"

#include <algorithm>
#include <bit>

#include "absl/strings/str_format.h"

namespace am {

TlsfAllocator::TlsfAllocator(uint64_t base, uint64_t size, uint64_t granule)
    : base_(base),
      granule_(std::bit_ceil(std::max<uint64_t>(granule, 1))),
      granule_shift_(std::countr_zero(granule_)),
      total_granules_(size >> granule_shift_) {
  for (auto& level : heads_) level.fill(kNone);
  if (total_granules_ > 0) {
    InsertFree(NewBlock(0, total_granules_));
    free_granules_ = total_granules_;
  }
}

TlsfAllocator::ListIndex TlsfAllocator::IndexOf(uint64_t granules) {
  if (granules < kSecondLevels) return {0, static_cast<int>(granules)};
  const int log2 = 63 - std::countl_zero(granules);
  return {log2 - kSecondLevelBits + 1, static_cast<int>((granules >> (log2 - kSecondLevelBits)) - kSecondLevels)};
}

int32_t TlsfAllocator::NewBlock(uint64_t start, uint64_t size) {
  int32_t index;
  if (!unused_.empty()) {
    index = unused_.back();
    unused_.pop_back();
    blocks_[index] = Block{};
  } else {
    index = static_cast<int32_t>(blocks_.size());
    blocks_.emplace_back();
  }
  blocks_[index].start = start;
  blocks_[index].size = size;
  return index;
}

void TlsfAllocator::InsertFree(int32_t index) {
  Block& block = blocks_[index];
  const ListIndex list = IndexOf(block.size);
  block.free = true;
  block.prev_free = kNone;
  block.next_free = heads_[list.first][list.second];
  if (block.next_free != kNone) blocks_[block.next_free].prev_free = index;
  heads_[list.first][list.second] = index;
  first_bitmap_ |= uint64_t{1} << list.first;
  second_bitmap_[list.first] |= 1u << list.second;
}

void TlsfAllocator::RemoveFree(int32_t index) {
  Block& block = blocks_[index];
  const ListIndex list = IndexOf(block.size);
  if (block.prev_free != kNone) {
    blocks_[block.prev_free].next_free = block.next_free;
  } else {
    heads_[list.first][list.second] = block.next_free;
    if (block.next_free == kNone) {
      second_bitmap_[list.first] &= ~(1u << list.second);
      if (second_bitmap_[list.first] == 0) first_bitmap_ &= ~(uint64_t{1} << list.first);
    }
  }
  if (block.next_free != kNone) blocks_[block.next_free].prev_free = block.prev_free;
  block.free = false;
  block.prev_free = block.next_free = kNone;
}

int32_t TlsfAllocator::FindFit(uint64_t granules) const {
  // Round up to the next list boundary, so that every block of the list found is large enough.
  if (granules >= kSecondLevels) {
    const int log2 = 63 - std::countl_zero(granules);
    granules += (uint64_t{1} << (log2 - kSecondLevelBits)) - 1;
  }
  const ListIndex list = IndexOf(granules);
  if (list.first >= kFirstLevels) return kNone;
  const uint32_t seconds = second_bitmap_[list.first] & (~0u << list.second);
  if (seconds != 0) return heads_[list.first][std::countr_zero(seconds)];
  if (list.first + 1 >= kFirstLevels) return kNone;
  const uint64_t firsts = first_bitmap_ & (~uint64_t{0} << (list.first + 1));
  if (firsts == 0) return kNone;
  const int first = std::countr_zero(firsts);
  return heads_[first][std::countr_zero(second_bitmap_[first])];
}

void TlsfAllocator::SplitTail(int32_t index, uint64_t granules) {
  const uint64_t rest = blocks_[index].size - granules;
  if (rest == 0) return;
  const int32_t tail = NewBlock(blocks_[index].start + granules, rest);  // may move blocks_
  Block& block = blocks_[index];
  block.size = granules;
  blocks_[tail].prev_physical = index;
  blocks_[tail].next_physical = block.next_physical;
  if (block.next_physical != kNone) blocks_[block.next_physical].prev_physical = tail;
  block.next_physical = tail;
  InsertFree(tail);
}

absl::StatusOr<uint64_t> TlsfAllocator::Allocate(uint64_t size, uint64_t alignment) {
  if (size == 0) return absl::InvalidArgumentError("allocation of 0 bytes");
  if (alignment != 0 && !std::has_single_bit(alignment)) {
    return absl::InvalidArgumentError(absl::StrFormat("alignment %#x is not a power of two", alignment));
  }
  alignment = std::max(alignment, granule_);
  if (size > total_granules_ * granule_) {
    return absl::ResourceExhaustedError(
        absl::StrFormat("%#x bytes requested from a range of %#x bytes", size, total_granules_ * granule_));
  }
  const uint64_t granules = (size + granule_ - 1) >> granule_shift_;
  const uint64_t slack = (alignment >> granule_shift_) - 1;
  const int32_t found = FindFit(granules + slack);
  if (found == kNone) {
    return absl::ResourceExhaustedError(
        absl::StrFormat("no free range of %#x bytes aligned to %#x (free %#x bytes, largest free block %#x bytes)",
                        size, alignment, free_bytes(), largest_free_block()));
  }
  RemoveFree(found);
  int32_t index = found;
  const uint64_t address = base_ + (blocks_[index].start << granule_shift_);
  const uint64_t front = (((address + alignment - 1) & ~(alignment - 1)) - address) >> granule_shift_;
  if (front > 0) {
    // The unaligned head goes back to the free lists as its own block.
    const int32_t head = NewBlock(blocks_[index].start, front);
    Block& block = blocks_[index];
    blocks_[head].prev_physical = block.prev_physical;
    blocks_[head].next_physical = index;
    if (block.prev_physical != kNone) blocks_[block.prev_physical].next_physical = head;
    block.prev_physical = head;
    block.start += front;
    block.size -= front;
    InsertFree(head);
  }
  SplitTail(index, granules);
  free_granules_ -= granules;
  allocated_[blocks_[index].start] = index;
  return base_ + (blocks_[index].start << granule_shift_);
}

absl::Status TlsfAllocator::Free(uint64_t address) {
  const uint64_t offset = address - base_;
  auto it =
      address >= base_ && (offset & (granule_ - 1)) == 0 ? allocated_.find(offset >> granule_shift_) : allocated_.end();
  if (it == allocated_.end()) {
    return absl::NotFoundError(absl::StrFormat("%#x is not an allocation of this allocator", address));
  }
  int32_t index = it->second;
  allocated_.erase(it);
  free_granules_ += blocks_[index].size;
  // Merge with the free neighbours so that the range stays in as few blocks as possible.
  const int32_t next = blocks_[index].next_physical;
  if (next != kNone && blocks_[next].free) {
    RemoveFree(next);
    blocks_[index].size += blocks_[next].size;
    blocks_[index].next_physical = blocks_[next].next_physical;
    if (blocks_[next].next_physical != kNone) blocks_[blocks_[next].next_physical].prev_physical = index;
    unused_.push_back(next);
  }
  const int32_t prev = blocks_[index].prev_physical;
  if (prev != kNone && blocks_[prev].free) {
    RemoveFree(prev);
    blocks_[prev].size += blocks_[index].size;
    blocks_[prev].next_physical = blocks_[index].next_physical;
    if (blocks_[index].next_physical != kNone) blocks_[blocks_[index].next_physical].prev_physical = prev;
    unused_.push_back(index);
    index = prev;
  }
  InsertFree(index);
  return absl::OkStatus();
}

uint64_t TlsfAllocator::AllocationSize(uint64_t address) const {
  if (address < base_ || ((address - base_) & (granule_ - 1)) != 0) return 0;
  auto it = allocated_.find((address - base_) >> granule_shift_);
  return it == allocated_.end() ? 0 : blocks_[it->second].size << granule_shift_;
}

uint64_t TlsfAllocator::largest_free_block() const {
  if (first_bitmap_ == 0) return 0;
  const int first = 63 - std::countl_zero(first_bitmap_);
  const int second = 31 - std::countl_zero(second_bitmap_[first]);
  uint64_t largest = 0;
  for (int32_t i = heads_[first][second]; i != kNone; i = blocks_[i].next_free) {
    largest = std::max(largest, blocks_[i].size);
  }
  return largest << granule_shift_;
}

}  // namespace am
