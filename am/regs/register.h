// Typed registers in the manner of Fuchsia's hwreg: one struct per register (generated into am/regs/<ip>.h for
// the registers listed in tools/regs/typed_registers.txt), a named accessor pair per field, so that a misspelt
// register or field does not compile and no call site shifts or masks by hand:
//
//   gc.Write(regs::gc::CP_HQD_PQ_CONTROL{}.queue_size(7).rptr_block_size(5).unord_dispatch(1));
//   if (mm.Read<regs::mmhub::MMVM_L2_PROTECTION_FAULT_STATUS>().valid()) ...
//
// Fields follow Linux's REG_GET_FIELD/REG_SET_FIELD: value = (raw & mask) >> shift. Setting a value that does
// not fit its field is a programming error (asserted); the bits outside the field are dropped.
#ifndef BAREGPU_AM_REGS_REGISTER_H_
#define BAREGPU_AM_REGS_REGISTER_H_

#include <cassert>
#include <cstdint>
#include <vector>

#include "absl/strings/string_view.h"
#include "am/regs/ip.h"

namespace am::regs {

// One field of a typed register, as its generated kFields table lists it.
struct FieldSpec {
  const char* name;
  uint32_t mask;
  uint8_t shift;
};

// A field and its value in a decoded register value.
struct FieldValue {
  absl::string_view name;
  uint32_t value;
  friend bool operator==(const FieldValue&, const FieldValue&) = default;
};

// A 32-bit register value with typed fields: what every typed register (AMD's below, NVIDIA's in
// nv/regs/register.h) shares. `Derived` supplies kName and kFields (generated).
template <typename Derived>
class RegisterValue {
 public:
  static constexpr Derived FromRaw(uint32_t raw) {
    Derived reg;
    reg.set_raw(raw);
    return reg;
  }
  constexpr uint32_t raw() const { return raw_; }
  constexpr Derived& set_raw(uint32_t raw) {
    raw_ = raw;
    return self();
  }

  // Every field with its value, in the header's order.
  std::vector<FieldValue> Decode() const {
    std::vector<FieldValue> fields;
    fields.reserve(Derived::kFields.size());
    for (const FieldSpec& f : Derived::kFields) fields.push_back({f.name, (raw_ & f.mask) >> f.shift});
    return fields;
  }

  friend constexpr bool operator==(const RegisterValue& a, const RegisterValue& b) { return a.raw_ == b.raw_; }

 protected:
  template <uint32_t kMask, unsigned kShift>
  constexpr uint32_t GetField() const {
    return (raw_ & kMask) >> kShift;
  }
  template <uint32_t kMask, unsigned kShift>
  constexpr Derived& SetField(uint32_t value) {
    assert(((value << kShift) & ~kMask) == 0 && (value >> (31 - kShift) >> 1) == 0 && "value does not fit field");
    raw_ = (raw_ & ~kMask) | ((value << kShift) & kMask);
    return self();
  }
  constexpr Derived& self() { return static_cast<Derived&>(*this); }

  uint32_t raw_ = 0;
};

// The base of every typed AMD register: where it is (IP block, BASE_IDX segment, dword offset).
template <typename Derived, Ip kIpBlock, uint8_t kSegmentIndex, uint32_t kDwordOffset>
class Register : public RegisterValue<Derived> {
 public:
  static constexpr Ip kIp = kIpBlock;
  static constexpr uint8_t kSegment = kSegmentIndex;  // BASE_IDX
  static constexpr uint32_t kOffset = kDwordOffset;   // dwords from the segment base
};

}  // namespace am::regs

// Declares the accessor pair of one field inside a generated register struct: `name()` reads it and
// `name(v)` sets it, returning the register so that calls chain.
#define BAREGPU_REG_FIELD(name, mask, shift)                                         \
  constexpr uint32_t name() const { return this->template GetField<mask, shift>(); } \
  constexpr auto& name(uint32_t value) { return this->template SetField<mask, shift>(value); }

#endif  // BAREGPU_AM_REGS_REGISTER_H_
