// A two-level segregated-fit (TLSF) allocator of address ranges: VRAM for the memory manager, GPU virtual
// addresses for the VA allocator. Allocation and free are O(1): a first level per power of two and sixteen
// second-level lists per power of two, found through two bitmaps; blocks split on allocation and merge with free
// neighbours on free. It manages offsets only (it never touches the memory), in granules of a power-of-two size.
//
// The design follows Masmano et al., "TLSF: a new dynamic memory allocator for real-time systems" (2004), which
// tinygrad's TLSFAllocator also follows. Block records live in a pool that only grows; steady-state allocation
// and free do not allocate host memory.
#ifndef BAREGPU_AM_TLSF_ALLOCATOR_H_
#define BAREGPU_AM_TLSF_ALLOCATOR_H_

#include <array>
#include <cstdint>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace am {

class TlsfAllocator {
 public:
  // Manages [base, base + size); `granule` (a power of two) is the smallest unit and alignment; `size` is
  // rounded down to whole granules.
  TlsfAllocator(uint64_t base, uint64_t size, uint64_t granule);

  // An address of at least `size` bytes (rounded up to granules), aligned to `alignment` (a power of two; at
  // least the granule). ResourceExhausted when no free range fits, naming the largest one.
  absl::StatusOr<uint64_t> Allocate(uint64_t size, uint64_t alignment = 0);
  // Frees what Allocate returned; an address that is not an allocation is an error and changes nothing.
  absl::Status Free(uint64_t address);
  // The size (in bytes) of the allocation at `address`, or 0 when there is none.
  uint64_t AllocationSize(uint64_t address) const;

  uint64_t base() const { return base_; }
  uint64_t size() const { return total_granules_ * granule_; }
  uint64_t granule() const { return granule_; }
  uint64_t free_bytes() const { return free_granules_ * granule_; }
  uint64_t largest_free_block() const;
  size_t allocation_count() const { return allocated_.size(); }

 private:
  static constexpr int kSecondLevelBits = 4;
  static constexpr int kSecondLevels = 1 << kSecondLevelBits;
  static constexpr int kFirstLevels = 64;
  static constexpr int32_t kNone = -1;

  struct Block {
    uint64_t start;  // in granules from base
    uint64_t size;   // in granules
    int32_t prev_physical = kNone, next_physical = kNone;
    int32_t prev_free = kNone, next_free = kNone;
    bool free = false;
  };
  struct ListIndex {
    int first;
    int second;
  };

  static ListIndex IndexOf(uint64_t granules);
  int32_t NewBlock(uint64_t start, uint64_t size);
  void InsertFree(int32_t block);
  void RemoveFree(int32_t block);
  // The head of a free list whose every block holds at least `granules`; kNone when there is none.
  int32_t FindFit(uint64_t granules) const;
  // Cuts `block` to `granules` and returns the rest as a new free block.
  void SplitTail(int32_t block, uint64_t granules);

  const uint64_t base_;
  const uint64_t granule_;
  const int granule_shift_;
  const uint64_t total_granules_;
  uint64_t free_granules_ = 0;
  std::vector<Block> blocks_;
  std::vector<int32_t> unused_;
  uint64_t first_bitmap_ = 0;
  std::array<uint32_t, kFirstLevels> second_bitmap_{};
  std::array<std::array<int32_t, kSecondLevels>, kFirstLevels> heads_;
  absl::flat_hash_map<uint64_t, int32_t> allocated_;  // start granule -> block
};

}  // namespace am

#endif  // BAREGPU_AM_TLSF_ALLOCATOR_H_
