// Bit-level float helpers for the interpreter: reinterpretation, half precision (the host's _Float16, which
// rounds to nearest even like the hardware's default MODE), and flushing of denormals when MODE says so.
#ifndef BAREGPU_AM_SIM_ISA_FLOAT_BITS_H_
#define BAREGPU_AM_SIM_ISA_FLOAT_BITS_H_

#include <bit>
#include <cmath>
#include <cstdint>

namespace am::sim::isa {

// IEEE 754 binary32: the sign is bit 31.
inline constexpr uint32_t kF32SignBit = uint32_t{1} << 31;
// binary16: bit 15.
inline constexpr uint16_t kF16SignBit = uint16_t{1} << 15;

inline float AsF32(uint32_t bits) { return std::bit_cast<float>(bits); }
inline uint32_t Bits32(float value) { return std::bit_cast<uint32_t>(value); }
inline double AsF64(uint64_t bits) { return std::bit_cast<double>(bits); }
inline uint64_t Bits64(double value) { return std::bit_cast<uint64_t>(value); }
inline float F16ToF32(uint16_t bits) { return static_cast<float>(std::bit_cast<_Float16>(bits)); }
inline uint16_t F32ToF16(float value) { return std::bit_cast<uint16_t>(static_cast<_Float16>(value)); }
inline _Float16 AsF16(uint16_t bits) { return std::bit_cast<_Float16>(bits); }
inline uint16_t Bits16(_Float16 value) { return std::bit_cast<uint16_t>(value); }

// The half-precision encodings of the float inline constants (operand codes 240..248: 0.5, -0.5, 1, -1, 2, -2, 4,
// -4, 1/(2 pi)), which 16-bit float operands take.
inline constexpr uint16_t kInlineF16[] = {0x3800, 0xb800, 0x3c00, 0xbc00, 0x4000, 0xc000, 0x4400, 0xc400, 0x3118};

// bfloat16: the high half of an f32 (sign, 8 exponent bits, 7 fraction bits). Widening is exact; narrowing rounds
// to nearest even, and a NaN stays a NaN (quietened: a truncated NaN payload could otherwise read as infinity).
inline constexpr int kBf16Shift = 16;
inline float Bf16ToF32(uint16_t bits) { return std::bit_cast<float>(uint32_t{bits} << kBf16Shift); }
inline uint16_t F32ToBf16(float value) {
  constexpr uint32_t kQuietBit = 0x00400000u;  // the f32 fraction's top bit
  const uint32_t bits = std::bit_cast<uint32_t>(value);
  if (std::isnan(value)) return static_cast<uint16_t>((bits | kQuietBit) >> kBf16Shift);
  const uint32_t lsb = (bits >> kBf16Shift) & 1;  // ties go to the even neighbour
  const uint32_t half_ulp_minus_one = (1u << (kBf16Shift - 1)) - 1;
  return static_cast<uint16_t>((bits + half_ulp_minus_one + lsb) >> kBf16Shift);
}

// MODE.FP_DENORM (RDNA3 ISA, MODE register): bits [5:4] single precision, [7:6] double and half precision; 0 flushes
// denormal inputs and outputs, 3 keeps both.
inline bool FlushF32(uint32_t mode) { return ((mode >> 4) & 3) == 0; }
inline bool FlushF16F64(uint32_t mode) { return ((mode >> 6) & 3) == 0; }

inline uint32_t FlushDenormF32(uint32_t bits) { return (bits & 0x7f800000u) == 0 ? bits & 0x80000000u : bits; }
inline uint64_t FlushDenormF64(uint64_t bits) {
  return (bits & 0x7ff0000000000000ull) == 0 ? bits & 0x8000000000000000ull : bits;
}
inline uint16_t FlushDenormF16(uint16_t bits) { return (bits & 0x7c00) == 0 ? bits & 0x8000 : bits; }

// The hardware's float to integer conversions saturate and send NaN to 0.
inline int32_t CvtF32ToI32(float f) {
  if (std::isnan(f)) return 0;
  if (f >= 2147483648.0f) return INT32_MAX;
  if (f <= -2147483648.0f) return INT32_MIN;
  return static_cast<int32_t>(f);
}
inline uint32_t CvtF32ToU32(float f) {
  if (std::isnan(f) || f <= 0.0f) return 0;
  if (f >= 4294967296.0f) return UINT32_MAX;
  return static_cast<uint32_t>(f);
}
inline int32_t CvtF64ToI32(double f) {
  if (std::isnan(f)) return 0;
  if (f >= 2147483647.0) return INT32_MAX;
  if (f <= -2147483648.0) return INT32_MIN;
  return static_cast<int32_t>(f);
}
inline uint32_t CvtF64ToU32(double f) {
  if (std::isnan(f) || f <= 0.0) return 0;
  if (f >= 4294967295.0) return UINT32_MAX;
  return static_cast<uint32_t>(f);
}

}  // namespace am::sim::isa

#endif  // BAREGPU_AM_SIM_ISA_FLOAT_BITS_H_
