// Small integer helpers for addresses, sizes and masks.
#ifndef BAREGPU_BASE_BITS_H_
#define BAREGPU_BASE_BITS_H_

#include <bit>
#include <cstdint>
#include <cstring>

namespace base {

constexpr bool IsPowerOfTwo(uint64_t v) { return v != 0 && (v & (v - 1)) == 0; }

// Rounds up to a multiple of `alignment`, which must be a power of two. Saturates instead of wrapping.
constexpr uint64_t AlignUp(uint64_t v, uint64_t alignment) {
  const uint64_t mask = alignment - 1;
  if (v > UINT64_MAX - mask) return UINT64_MAX & ~mask;
  return (v + mask) & ~mask;
}
constexpr uint64_t AlignDown(uint64_t v, uint64_t alignment) { return v & ~(alignment - 1); }
constexpr bool IsAligned(uint64_t v, uint64_t alignment) { return (v & (alignment - 1)) == 0; }

// A mask of the low `bits` bits; bits >= 64 gives all ones.
constexpr uint64_t LowBitsMask(unsigned bits) { return bits >= 64 ? UINT64_MAX : (uint64_t{1} << bits) - 1; }

constexpr unsigned Log2Floor(uint64_t v) { return v == 0 ? 0 : 63 - std::countl_zero(v); }

// Stores the low `bytes` (2 or 4) bytes of `value` at `at`, little-endian (as the GPU reads its arguments).
inline void StoreField(uint8_t* at, uint32_t bytes, uint32_t value) {
  if (bytes == 2) {
    const uint16_t narrow = static_cast<uint16_t>(value);
    std::memcpy(at, &narrow, 2);
  } else {
    std::memcpy(at, &value, 4);
  }
}

constexpr uint64_t KiB(uint64_t n) { return n << 10; }
constexpr uint64_t MiB(uint64_t n) { return n << 20; }
constexpr uint64_t GiB(uint64_t n) { return n << 30; }

}  // namespace base

#endif  // BAREGPU_BASE_BITS_H_
