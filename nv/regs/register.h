// Typed NVIDIA registers, in the manner of am/regs/register.h (Fuchsia's hwreg): one struct per register
// (generated into nv/regs/<chip>.h by tools/nv/generate.py), a named accessor pair per field, so that a misspelt
// register or field does not compile:
//
//   bar0.Write(regs::ga102::NV_PFALCON_FALCON_CPUCTL{}.startcpu(1), gsp_falcon_base);
//
// It shares am::regs' field machinery (FieldSpec, FieldValue, BAREGPU_REG_FIELD); what differs is the address: an
// NVIDIA register is a byte offset in BAR0, either absolute or relative to an engine's base (the falcon headers
// define their registers once for every falcon), and many come as arrays (NV_..._(i) in the headers).
#ifndef BAREGPU_NV_REGS_REGISTER_H_
#define BAREGPU_NV_REGS_REGISTER_H_

#include <cassert>
#include <cstdint>

#include "am/regs/register.h"

namespace nv::regs {

using am::regs::FieldSpec;
using am::regs::FieldValue;

// What a register's offset is relative to.
enum class Unit : uint8_t {
  kAbsolute,         // BAR0 byte offset
  kFalcon,           // NV_PFALCON_FALCON_*: an engine's falcon base (NV_PGSP, NV_PSEC)
  kFalcon2,          // NV_PFALCON2_FALCON_*: the engine's falcon2 base (NV_FALCON2_GSP_BASE)
  kFbif,             // NV_PFALCON_FBIF_*: the engine's FBIF base (NV_PGSP_FBIF_BASE)
  kRiscv,            // NV_PRISCV_RISCV_*: the engine's RISC-V registers, at its falcon2 base
  kVirtualFunction,  // NV_VIRTUAL_FUNCTION_*: the virtual function's window (no base in the vendored headers)
};

// The bases one engine's relative units resolve against (generated per chip as kGsp, kSec2, kNvdec0 in
// nv/regs/<chip>.h, from the headers' NV_PGSP range, NV_FALCON2_GSP_BASE and NV_PGSP_FBIF_BASE and their SEC2 and
// NVDEC counterparts).
struct EngineBases {
  uint32_t falcon;
  uint32_t falcon2;  // also the RISC-V registers' base
  uint32_t fbif;

  // The base of `unit` in this engine; absolute registers have base 0. The virtual function window has no base in
  // the vendored headers, so asking for it is a programming error.
  constexpr uint32_t Base(Unit unit) const {
    switch (unit) {
      case Unit::kAbsolute:
        return 0;
      case Unit::kFalcon:
        return falcon;
      case Unit::kFalcon2:
      case Unit::kRiscv:
        return falcon2;
      case Unit::kFbif:
        return fbif;
      case Unit::kVirtualFunction:
        break;
    }
    assert(false && "no base for the virtual function window");
    return 0;
  }
  // The BAR0 byte address of register R (element `index` of an array register) in this engine.
  template <typename R>
  constexpr uint32_t AddressOf(uint32_t index = 0) const {
    return Base(R::kUnit) + R::address(index);
  }
};

// `Derived` supplies kName and kFields (generated). kStride/kCount describe an array register NAME(i) at
// kOffset + i * kStride (kCount 0: the header gives no __SIZE_1); plain registers have stride 0 and count 1.
template <typename Derived, Unit kUnitOf, uint32_t kByteOffset, uint32_t kByteStride, uint32_t kElements>
class Register : public am::regs::RegisterValue<Derived> {
 public:
  static constexpr Unit kUnit = kUnitOf;
  static constexpr uint32_t kOffset = kByteOffset;
  static constexpr uint32_t kStride = kByteStride;
  static constexpr uint32_t kCount = kElements;

  // The byte offset of element `index` (relative to kUnit's base).
  static constexpr uint32_t address(uint32_t index = 0) {
    assert((kStride != 0 || index == 0) && (kCount == 0 || index < kCount) && "register index out of range");
    return kOffset + index * kStride;
  }

 protected:
  // Element `index` of an indexed field F(i) whose element 0 sits at bit kLow, kWidth bits wide.
  template <unsigned kLow, unsigned kWidth, unsigned kStrideBits, unsigned kElementCount>
  constexpr uint32_t GetIndexed(uint32_t index) const {
    assert(index < kElementCount && "field index out of range");
    return (this->raw_ >> (kLow + index * kStrideBits)) & ((uint64_t{1} << kWidth) - 1);
  }
  template <unsigned kLow, unsigned kWidth, unsigned kStrideBits, unsigned kElementCount>
  constexpr Derived& SetIndexed(uint32_t index, uint32_t value) {
    assert(index < kElementCount && (uint64_t{value} >> kWidth) == 0 && "field index or value out of range");
    const uint32_t mask = static_cast<uint32_t>(((uint64_t{1} << kWidth) - 1) << (kLow + index * kStrideBits));
    this->raw_ = (this->raw_ & ~mask) | ((value << (kLow + index * kStrideBits)) & mask);
    return this->self();
  }
};

}  // namespace nv::regs

// An indexed field F(i): `name(i)` reads element i, `name(i, v)` sets it.
#define BAREGPU_NV_REG_FIELD_ARRAY(name, low, width, stride, count)            \
  constexpr uint32_t name(uint32_t index) const {                              \
    return this->template GetIndexed<low, width, stride, count>(index);        \
  }                                                                            \
  constexpr auto& name(uint32_t index, uint32_t value) {                       \
    return this->template SetIndexed<low, width, stride, count>(index, value); \
  }

#endif  // BAREGPU_NV_REGS_REGISTER_H_
