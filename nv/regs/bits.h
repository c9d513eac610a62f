// A bit range hi:lo as NVIDIA's headers write fields ("5:4", or MW(30:0) for a QMD's bits): the generated class
// constants (nv/regs/cl*_constants.h) use it for method fields.
#ifndef BAREGPU_NV_REGS_BITS_H_
#define BAREGPU_NV_REGS_BITS_H_

#include <cstdint>

namespace nv::regs {

struct Bits {
  uint32_t hi;
  uint32_t lo;
  constexpr uint32_t width() const { return hi - lo + 1; }
  // The mask within a 32-bit word (method data); only for ranges inside one.
  constexpr uint32_t mask() const { return static_cast<uint32_t>(((uint64_t{1} << width()) - 1) << lo); }
  // `value` placed in the range, as DRF_NUM does.
  constexpr uint32_t Place(uint32_t value) const { return (value << lo) & mask(); }
  friend constexpr bool operator==(const Bits&, const Bits&) = default;
};

}  // namespace nv::regs

#endif  // BAREGPU_NV_REGS_BITS_H_
