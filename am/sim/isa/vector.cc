// Vector ALU (VOP1, VOP2, VOPC, VOP3, VOP3SD, VOP3P, VOPD, DPP), per the RDNA3 ISA pseudocode. Every operation
// runs over the wave's lanes in one loop; sources are resolved once per instruction into a VGPR row or a broadcast
// value, so a lane costs a load, the operation and a store.
#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <optional>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_format.h"
#include "absl/strings/string_view.h"
#include "am/sim/isa/float_bits.h"
#include "am/sim/isa/opcode_names.h"
#include "am/sim/isa/opcodes.h"
#include "am/sim/isa/wmma.h"
#include "am/sim/isa/workgroup_runner.h"

namespace am::sim::isa {
namespace {

uint32_t AbsoluteDifference(uint32_t x, uint32_t y) { return x > y ? x - y : y - x; }
// The four bytes' absolute differences, summed (V_SAD_U8, V_SAD_HI_U8).
uint32_t SumOfByteDifferences(uint32_t x, uint32_t y) {
  uint32_t sum = 0;
  for (int shift = 0; shift < 32; shift += 8) sum += AbsoluteDifference((x >> shift) & 0xff, (y >> shift) & 0xff);
  return sum;
}

// A resolved source: a VGPR row (and the next row for 64-bit operands) or a value for every lane.
struct Src {
  const uint32_t* lo = nullptr;
  const uint32_t* hi = nullptr;
  uint64_t value = 0;
  uint32_t u32(int lane) const { return lo != nullptr ? lo[lane] : static_cast<uint32_t>(value); }
  uint64_t u64(int lane) const { return lo != nullptr ? (lo[lane] | uint64_t{hi[lane]} << 32) : value; }
};

// VOPC semantics by opcode, parsed once from the mnemonics (v_cmp[x]_<cond>_<type>).
struct CompareOp {
  enum Type : uint8_t { kNone, kF16, kF32, kF64, kI16, kU16, kI32, kU32, kI64, kU64 } type = kNone;
  enum Cond : uint8_t { kF, kLt, kEq, kLe, kGt, kLg, kGe, kO, kU, kNge, kNlg, kNgt, kNle, kNeq, kNlt, kT, kClass };
  Cond cond = kF;
  bool writes_exec = false;
};

const CompareOp* CompareTable() {
  static const auto* table = [] {
    auto* t = new CompareOp[256];
    static constexpr std::pair<const char*, CompareOp::Cond> kConds[] = {
        {"f", CompareOp::kF},     {"lt", CompareOp::kLt},   {"eq", CompareOp::kEq},      {"le", CompareOp::kLe},
        {"gt", CompareOp::kGt},   {"lg", CompareOp::kLg},   {"ne", CompareOp::kLg},      {"ge", CompareOp::kGe},
        {"o", CompareOp::kO},     {"u", CompareOp::kU},     {"nge", CompareOp::kNge},    {"nlg", CompareOp::kNlg},
        {"ngt", CompareOp::kNgt}, {"nle", CompareOp::kNle}, {"neq", CompareOp::kNeq},    {"nlt", CompareOp::kNlt},
        {"t", CompareOp::kT},     {"tru", CompareOp::kT},   {"class", CompareOp::kClass}};
    static constexpr std::pair<const char*, CompareOp::Type> kTypes[] = {
        {"f16", CompareOp::kF16}, {"f32", CompareOp::kF32}, {"f64", CompareOp::kF64},
        {"i16", CompareOp::kI16}, {"u16", CompareOp::kU16}, {"i32", CompareOp::kI32},
        {"u32", CompareOp::kU32}, {"i64", CompareOp::kI64}, {"u64", CompareOp::kU64}};
    for (int op = 0; op < 256; ++op) {
      const char* name = OpcodeName(Encoding::kVopc, op);
      if (name == nullptr) continue;
      absl::string_view n = name;
      CompareOp c;
      if (absl::StartsWith(n, "v_cmpx_")) {
        c.writes_exec = true;
        n.remove_prefix(7);
      } else if (absl::StartsWith(n, "v_cmp_")) {
        n.remove_prefix(6);
      } else {
        continue;
      }
      const size_t us = n.rfind('_');
      if (us == absl::string_view::npos) continue;
      const absl::string_view cond = n.substr(0, us), type = n.substr(us + 1);
      for (auto [text, value] : kConds) {
        if (cond == text) c.cond = value;
      }
      for (auto [text, value] : kTypes) {
        if (type == text) c.type = value;
      }
      t[op] = c;
    }
    return t;
  }();
  return table;
}

template <typename T>
inline bool CompareValues(CompareOp::Cond cond, T a, T b) {
  switch (cond) {
    case CompareOp::kF:
      return false;
    case CompareOp::kLt:
      return a < b;
    case CompareOp::kEq:
      return a == b;
    case CompareOp::kLe:
      return a <= b;
    case CompareOp::kGt:
      return a > b;
    case CompareOp::kLg:
      return a < b || a > b;
    case CompareOp::kGe:
      return a >= b;
    case CompareOp::kO:
      return a == a && b == b;
    case CompareOp::kU:
      return a != a || b != b;
    case CompareOp::kNge:
      return !(a >= b);
    case CompareOp::kNlg:
      return !(a < b || a > b);
    case CompareOp::kNgt:
      return !(a > b);
    case CompareOp::kNle:
      return !(a <= b);
    case CompareOp::kNeq:
      return !(a == b);
    case CompareOp::kNlt:
      return !(a < b);
    case CompareOp::kT:
      return true;
    default:
      return false;
  }
}

// V_CMP_CLASS: bit index of a value's class in the mask (0 sNaN, 1 qNaN, 2 -inf, 3 -normal, 4 -denormal, 5 -0,
// 6 +0, 7 +denormal, 8 +normal, 9 +inf).
template <typename T>
int FloatClass(T v, bool quiet_bit) {
  if (std::isnan(v)) return quiet_bit ? 1 : 0;
  const bool neg = std::signbit(v);
  if (std::isinf(v)) return neg ? 2 : 9;
  if (v == 0) return neg ? 5 : 6;
  if (std::fpclassify(v) == FP_SUBNORMAL) return neg ? 4 : 7;
  return neg ? 3 : 8;
}

float ApplyModsF32(float v, int i, uint8_t abs, uint8_t neg) {
  if ((abs >> i) & 1) v = std::fabs(v);
  if ((neg >> i) & 1) v = -v;
  return v;
}
double ApplyModsF64(double v, int i, uint8_t abs, uint8_t neg) {
  if ((abs >> i) & 1) v = std::fabs(v);
  if ((neg >> i) & 1) v = -v;
  return v;
}

uint16_t F32ToF16Rtz(float f) {
  uint16_t h = F32ToF16(f);
  if (std::isfinite(f) && std::fabs(F16ToF32(h)) > std::fabs(f)) --h;
  return h;
}

float Fract(float x) { return std::isinf(x) ? std::copysign(0.0f, x) : std::min(x - std::floor(x), 0x1.fffffep-1f); }
double Fract64(double x) {
  return std::isinf(x) ? std::copysign(0.0, x) : std::min(x - std::floor(x), 0x1.fffffffffffffp-1);
}

template <typename T>
T Median3(T a, T b, T c) {
  return std::max(std::min(a, b), std::min(std::max(a, b), c));
}

float MinF(float a, float b) {
  if (std::isnan(a)) return b;
  if (std::isnan(b)) return a;
  return std::fmin(a, b);
}
float MaxF(float a, float b) {
  if (std::isnan(a)) return b;
  if (std::isnan(b)) return a;
  return std::fmax(a, b);
}
// V_MED3_F16 as the ISA's pseudocode has it: with a NaN operand the result is v_min3 (which skips NaNs);
// otherwise the larger of the two operands that are not the maximum.
float Med3F(float a, float b, float c) {
  if (std::isnan(a) || std::isnan(b) || std::isnan(c)) return MinF(MinF(a, b), c);
  const float max3 = MaxF(MaxF(a, b), c);
  if (max3 == a) return MaxF(b, c);
  if (max3 == b) return MaxF(a, c);
  return MaxF(a, b);
}

// V_DIV_SCALE: the prescaling of the division sequence. Inputs in the normal range need none (D = S0, VCC = 0);
// the extreme cases scale by 2^+-64 (single) or 2^+-128 (double) as the ISA pseudocode describes.
template <typename T>
T DivScale(T s0, T s1, T s2, bool& vcc) {
  constexpr int kScale = sizeof(T) == 4 ? 64 : 128;
  constexpr int kMantissa = sizeof(T) == 4 ? 23 : 52;
  constexpr int kMaxExpDiff = sizeof(T) == 4 ? 96 : 768;
  vcc = false;
  if (s2 == 0 || s1 == 0) return std::numeric_limits<T>::quiet_NaN();
  int e1 = 0, e2 = 0;
  std::frexp(s1, &e1);
  std::frexp(s2, &e2);
  const T min_normal = std::numeric_limits<T>::min();
  if (e2 - e1 >= kMaxExpDiff) {
    vcc = true;
    return s0 == s1 ? std::ldexp(s0, kScale) : s0;
  }
  if (std::fabs(s1) < min_normal) return std::ldexp(s0, kScale);
  const bool rcp_denorm = std::fabs(T(1) / s1) < min_normal;
  const bool quot_denorm = std::fabs(s2 / s1) < min_normal;
  if (rcp_denorm && quot_denorm) {
    vcc = true;
    return s0 == s1 ? std::ldexp(s0, kScale) : s0;
  }
  if (rcp_denorm) return std::ldexp(s0, -kScale);
  if (quot_denorm) {
    vcc = true;
    return s0 == s2 ? std::ldexp(s0, kScale) : s0;
  }
  if (e2 - 1 <= kMantissa - 126 && sizeof(T) == 4) return std::ldexp(s0, kScale);
  return s0;
}

// 2/pi as a binary fraction, most significant bit first (bit k of the sequence weighs 2^-(k+1)): floor(2/pi * 2^1216),
// worked out with Python integers from Machin's formula for pi (its hex digits begin A2F9836E 4E441529 FC2757D1).
constexpr uint64_t kTwoOverPi[19] = {0xa2f9836e4e441529, 0xfc2757d1f534ddc0, 0xdb6295993c439041, 0xfe5163abdebbc561,
                                     0xb7246e3a424dd2e0, 0x06492eea09d1921c, 0xfe1deb1cb129a73e, 0xe88235f52ebb4484,
                                     0xe99c7026b45f7e41, 0x3991d639835339f4, 0x9c845f8bbdf9283b, 0x1ff897ffde05980f,
                                     0xef2f118b5a0a6d1f, 0x6d367ecf27cb09b7, 0x4f463f669e5fea2d, 0x7527bac7ebe5f17b,
                                     0x3d0739f78a5292ea, 0x6bfb5fb11f8d5d08, 0x56033046fc7b6bab};

// V_TRIG_PREOP_F64 (RDNA3 ISA pseudocode): the 53 bits of 2/pi that start `53 * S1[4:0]` bits into its fraction,
// moved further along by how far S0's exponent is past 1077, scaled back to their place (ldexp by -53 - shift,
// plus 128 for exponents from 1968, where the scaled product would underflow). The ISA defines 1201 bits of 2/pi;
// later ones read 0.
double TrigPreop(double x, uint32_t segment) {
  const int exponent = static_cast<int>((Bits64(x) >> 52) & 0x7ff);
  const int shift = 53 * static_cast<int>(segment & 31) + (exponent > 1077 ? exponent - 1077 : 0);
  uint64_t bits = 0;
  for (int k = shift; k < shift + 53; ++k) {
    bits = bits << 1 | (k < 1201 ? (kTwoOverPi[k / 64] >> (63 - k % 64)) & 1 : 0);
  }
  return std::ldexp(static_cast<double>(bits), -53 - shift + (exponent >= 1968 ? 128 : 0));
}

template <typename T>
T DivFixup(T quotient, T denominator, T numerator) {
  const bool sign = std::signbit(denominator) != std::signbit(numerator);
  const T inf = std::numeric_limits<T>::infinity();
  if (std::isnan(denominator) || std::isnan(numerator)) return std::numeric_limits<T>::quiet_NaN();
  if (denominator == 0 && numerator == 0) return std::numeric_limits<T>::quiet_NaN();
  if (std::isinf(denominator) && std::isinf(numerator)) return std::numeric_limits<T>::quiet_NaN();
  if (denominator == 0 || std::isinf(numerator)) return sign ? -inf : inf;
  if (std::isinf(denominator) || numerator == 0) return sign ? -T(0) : T(0);
  if (std::isnan(quotient)) return sign ? -inf : inf;
  return sign ? -std::fabs(quotient) : std::fabs(quotient);
}

// V_FMA_F32 and its forms (fmac, fmamk, fmaak, VOPD's): one rounding, as the host's fma. Which NaN an operation
// with NaN operands returns, the RDNA3 ISA does not say; the host's would depend on the order the compiler passes
// fma's factors (GCC treats them as interchangeable), so the general, fast and VOPD paths could disagree. Pinned
// here: the first NaN operand in source order (S0, S1, S2), quietened. An invalid operation on non-NaN operands
// (inf * 0, inf - inf) gives the host's default NaN, the same on every path.
[[gnu::always_inline]] inline float FmaF32(float a, float b, float c) {
  const float r = std::fma(a, b, c);
  if (!std::isnan(r)) [[likely]] {
    return r;
  }
  constexpr uint32_t kQuietBit = 0x00400000u;  // the f32 fraction's top bit
  if (std::isnan(a)) return AsF32(Bits32(a) | kQuietBit);
  if (std::isnan(b)) return AsF32(Bits32(b) | kQuietBit);
  if (std::isnan(c)) return AsF32(Bits32(c) | kQuietBit);
  return r;
}

// f32_to_snorm / f32_to_unorm / f16_to_*norm (RDNA3 ISA pseudocode of V_CVT_PK_NORM_* and V_CVT_NORM_*_F16): the
// ISA names the functions without defining them. Modelled as the D3D/OpenGL normalized conversion the instructions
// exist for (GL 4.6 section 8.4.4.2 packSnorm2x16/packUnorm2x16): NaN gives 0, the value is clamped to [-1, 1]
// (snorm) or [0, 1] (unorm), scaled by 32767 or 65535 and rounded to the nearest integer. The product is exact in
// double (a 24-bit significand times a 16-bit constant), so the only rounding is the last one, to nearest even; an
// exact half occurs only at +-0.5 (16383.5, 32767.5), where even and away-from-zero agree.
int16_t ToSnorm16(float v) {
  if (std::isnan(v)) return 0;
  return static_cast<int16_t>(std::nearbyint(std::clamp(static_cast<double>(v), -1.0, 1.0) * 32767.0));
}
uint16_t ToUnorm16(float v) {
  if (std::isnan(v)) return 0;
  return static_cast<uint16_t>(std::nearbyint(std::clamp(static_cast<double>(v), 0.0, 1.0) * 65535.0));
}
// v_cvt_i16_f32 / v_cvt_u16_f32 as V_CVT_PK_I16_F32 / V_CVT_PK_U16_F32 use them: truncation toward zero, saturated
// to the 16-bit range, NaN to 0 (the ISA's float-to-integer conversions, like V_CVT_I32_F32).
uint16_t CvtF32ToI16(float v) {
  if (std::isnan(v)) return 0;
  return static_cast<uint16_t>(static_cast<int16_t>(std::clamp(std::trunc(v), -32768.0f, 32767.0f)));
}
uint16_t CvtF32ToU16(float v) {
  if (std::isnan(v)) return 0;
  return static_cast<uint16_t>(std::clamp(std::trunc(v), 0.0f, 65535.0f));
}
// SAT8 of V_SAT_PK_U8_I16 (RDNA3 ISA pseudocode): a signed 16-bit value saturated to 0..255.
uint32_t Sat8(int16_t v) { return static_cast<uint32_t>(std::clamp<int>(v, 0, 255)); }

// A double rounded to bfloat16 (8 significant bits, f32's exponent range): nearest even under the default mode
// (nearbyint follows the host's mode, which DirectedRoundingValu sets from MODE.FP_ROUND), overflow to infinity,
// NaN quietened. Done on the double directly because rounding to f32 first could round twice.
uint16_t RoundToBf16(double v) {
  if (std::isnan(v)) return F32ToBf16(static_cast<float>(v));
  if (v == 0 || std::isinf(v)) return static_cast<uint16_t>(Bits32(static_cast<float>(v)) >> kBf16Shift);
  int exponent = 0;
  std::frexp(v, &exponent);                              // |v| = m * 2^exponent, m in [0.5, 1)
  constexpr int kBf16Bits = 8, kBf16MinExponent = -125;  // f32's: 2^-126 is the smallest normal, m >= 0.5
  const int quantum = std::max(exponent, kBf16MinExponent) - kBf16Bits;
  const double rounded = std::ldexp(std::nearbyint(std::ldexp(v, -quantum)), quantum);
  return static_cast<uint16_t>(Bits32(static_cast<float>(rounded)) >> kBf16Shift);  // exact, or infinity
}

// V_DOT2_F16_F16 / V_DOT2_BF16_BF16 (RDNA3 ISA pseudocode): tmp = S2; tmp += S0.lo * S1.lo; tmp += S0.hi * S1.hi,
// every value typed f16 (bf16). The pseudocode gives no wider intermediate, so each product and each sum is rounded
// to the 16-bit type, in that order; a fused implementation in the hardware would differ in the last bit for some
// inputs (not documented). The products and sums are exact in double (f16: 22 significant bits over a 40-bit
// exponent span; bf16 products 16 bits; a bf16 sum that is not exact has addends too far apart for the smaller to
// move the rounding), so each step rounds once. `round` rounds a double to the 16-bit type,
// `widen` widens one exactly.
template <typename Round, typename Widen>
uint16_t Dot2Rounded16(uint32_t s0, uint32_t s1, uint16_t s2, Round round, Widen widen) {
  auto at = [&](uint32_t v, int half) { return widen(static_cast<uint16_t>(v >> (16 * half))); };
  uint16_t tmp = s2;
  for (int half = 0; half < 2; ++half) {
    const uint16_t product = round(at(s0, half) * at(s1, half));
    tmp = round(widen(tmp) + widen(product));
  }
  return tmp;
}

// DPP (on VOP1/VOP2/VOPC, VOP3 and VOP3P): out[lane] = src0's VGPR `row` at the lane the control word picks.
// Returns the lanes that take a value (the others are not written), or nothing for a DPP16 control the
// interpreter does not know. A source lane outside EXEC is fetched only with FI (LLVM AMDGPUModifierSyntax, fi):
// otherwise DPP8 reads 0 from it and DPP16 treats it as an invalid lane, which BOUND_CTRL turns into 0 or into no
// write.
std::optional<uint64_t> DppGather(const Instruction& inst, int n, uint64_t exec, const uint32_t* row, uint32_t* out) {
  const uint32_t w = inst.dpp_word;
  uint64_t enabled = 0;
  for (int lane = 0; lane < n; ++lane) {
    int from = -1;
    if (inst.dpp == 8) {
      from = (lane & ~7) | ((w >> (8 + 3 * (lane & 7))) & 7);
      if (!inst.dpp_fi && !((exec >> from) & 1)) {
        out[lane] = 0;
        enabled |= uint64_t{1} << lane;
        continue;
      }
    } else {
      const uint32_t ctrl = (w >> 8) & 0x1ff;
      const int in_row = lane & 15, row_base = lane & ~15;
      if (ctrl <= 0xff) {
        from = (lane & ~3) | ((ctrl >> (2 * (lane & 3))) & 3);
      } else if (ctrl >= 0x101 && ctrl <= 0x10f) {
        const int s = in_row + static_cast<int>(ctrl - 0x100);
        from = s < 16 ? row_base + s : -1;
      } else if (ctrl >= 0x111 && ctrl <= 0x11f) {
        const int s = in_row - static_cast<int>(ctrl - 0x110);
        from = s >= 0 ? row_base + s : -1;
      } else if (ctrl >= 0x121 && ctrl <= 0x12f) {
        from = row_base + ((in_row - static_cast<int>(ctrl - 0x120)) & 15);
      } else if (ctrl == 0x140) {
        from = row_base + (15 - in_row);
      } else if (ctrl == 0x141) {
        from = (lane & ~7) | (7 - (lane & 7));
      } else if (ctrl >= 0x150 && ctrl <= 0x15f) {
        from = row_base + static_cast<int>(ctrl - 0x150);
      } else if (ctrl >= 0x160 && ctrl <= 0x16f) {
        from = row_base + (in_row ^ static_cast<int>(ctrl - 0x160));
      } else {
        return std::nullopt;
      }
      const uint32_t row_mask = (w >> 28) & 0xf, bank_mask = (w >> 24) & 0xf;
      if (!((row_mask >> (lane >> 4)) & 1) || !((bank_mask >> ((lane & 15) >> 2)) & 1)) continue;
      const bool bound_ctrl = (w >> 19) & 1, fetch_inactive = (w >> 18) & 1;
      if (from < 0 || from >= n || (!fetch_inactive && !((exec >> from) & 1))) {
        if (!bound_ctrl) continue;
        out[lane] = 0;
        enabled |= uint64_t{1} << lane;
        continue;
      }
    }
    if (from < 0 || from >= n) continue;
    out[lane] = row[from];
    enabled |= uint64_t{1} << lane;
  }
  return enabled;
}

}  // namespace

FastValu FastValuOf(const Instruction& inst) {
  const bool valu = inst.encoding == Encoding::kVop1 || inst.encoding == Encoding::kVop2 ||
                    inst.encoding == Encoding::kVopc || inst.encoding == Encoding::kVop3;
  // The general path applies these; the fast one leaves them out.
  if (!valu || inst.dpp != 0 || inst.abs != 0 || inst.neg != 0 || inst.opsel != 0 || inst.clamp != 0 ||
      inst.omod != 0) {
    return FastValu::kNone;
  }
  const uint16_t op = inst.valu_op;
  if (op < 256) {
    const CompareOp& cmp = CompareTable()[op];
    const bool type = cmp.type == CompareOp::kI32 || cmp.type == CompareOp::kU32 || cmp.type == CompareOp::kF32;
    return type && cmp.cond != CompareOp::kClass ? FastValu::kCompare : FastValu::kNone;
  }
  switch (op) {
    case vop3::kVMovB32:
      return FastValu::kMovB32;
    case vop3::kVAddNcU32:
      return FastValu::kAddNcU32;
    case vop3::kVSubNcU32:
      return FastValu::kSubNcU32;
    case vop3::kVSubrevNcU32:
      return FastValu::kSubrevNcU32;
    case vop3::kVAndB32:
      return FastValu::kAndB32;
    case vop3::kVOrB32:
      return FastValu::kOrB32;
    case vop3::kVXorB32:
      return FastValu::kXorB32;
    case vop3::kVLshlrevB32:
      return FastValu::kLshlrevB32;
    case vop3::kVLshrrevB32:
      return FastValu::kLshrrevB32;
    case vop3::kVAshrrevI32:
      return FastValu::kAshrrevI32;
    case vop3::kVMinU32:
      return FastValu::kMinU32;
    case vop3::kVMaxU32:
      return FastValu::kMaxU32;
    case vop3::kVMinI32:
      return FastValu::kMinI32;
    case vop3::kVMaxI32:
      return FastValu::kMaxI32;
    case vop3::kVMulLoU32:
      return FastValu::kMulLoU32;
    case vop3::kVMulU32U24:
      return FastValu::kMulU32U24;
    case vop3::kVLshlOrB32:
      return FastValu::kLshlOrB32;
    case vop3::kVLshlAddU32:
      return FastValu::kLshlAddU32;
    case vop3::kVAddLshlU32:
      return FastValu::kAddLshlU32;
    case vop3::kVAdd3U32:
      return FastValu::kAdd3U32;
    case vop3::kVAndOrB32:
      return FastValu::kAndOrB32;
    case vop3::kVOr3B32:
      return FastValu::kOr3B32;
    case vop3::kVAddF32:
      return FastValu::kAddF32;
    case vop3::kVSubF32:
      return FastValu::kSubF32;
    case vop3::kVSubrevF32:
      return FastValu::kSubrevF32;
    case vop3::kVMulF32:
      return FastValu::kMulF32;
    case vop3::kVFmaF32:
      return FastValu::kFmaF32;
    case vop3::kVFmacF32:
      return FastValu::kFmacF32;
    case 256 + vop2::kVFmamkF32:
      return FastValu::kFmamkF32;
    case 256 + vop2::kVFmaakF32:
      return FastValu::kFmaakF32;
    case vop3::kVCndmaskB32:
      return FastValu::kCndmaskB32;
    case vop3::kVAddCoU32:
      return FastValu::kAddCoU32;
    case vop3::kVSubCoU32:
      return FastValu::kSubCoU32;
    case vop3::kVSubrevCoU32:
      return FastValu::kSubrevCoU32;
    case vop3::kVAddCoCiU32:
      return FastValu::kAddCoCiU32;
    case vop3::kVSubCoCiU32:
      return FastValu::kSubCoCiU32;
    case vop3::kVSubrevCoCiU32:
      return FastValu::kSubrevCoCiU32;
    case vop3::kVLshlrevB64:
      return FastValu::kLshlrevB64;
    default:
      return FastValu::kNone;
  }
}

namespace {

// Bodies of the fast path's loops. The lanes are the N lanes of the wave (32 or 64, a constant so that the loops
// have a fixed count).
template <int N>
inline constexpr uint64_t kAllLanes = N == 64 ? ~uint64_t{0} : (uint64_t{1} << N) - 1;

// Marks a lane loop whose iterations are independent: lane l reads only lane l of its rows and writes only lane l of
// its destination. A destination row is a source row itself or another row (VGPR rows are 64 lanes apart, the
// handler's own rows are arrays of their own), never one shifted by a few lanes, so a vector of lanes loads its
// sources before it stores them back, as the lanes one by one would. Said to GCC (ivdep) so that it vectorizes
// without the run-time overlap check that its -O2 cost model does not pay for. Nothing for clang: its -O2 pays for
// the check, and its one way to say this (vectorize(assume_safety)) also demands vectorization and warns, an error
// under -Werror, for the loops it cannot vectorize.
#if defined(__clang__)
#define BAREGPU_INDEPENDENT_LANES
#else
#define BAREGPU_INDEPENDENT_LANES _Pragma("GCC ivdep")
#endif

// r[l] = FmaF32(a[l], b[l], c[l]) for n lanes (32 or 64). On x86-64 GCC and clang also make a copy for CPUs with
// FMA3 and pick one at load time (an ifunc): there std::fma is a vfmadd and the loop vectorizes, where the baseline
// build (x86-64, no FMA) calls libm's fmaf for every lane. Every copy gives the correctly rounded fma, and the lanes
// whose result is a NaN are redone through FmaF32 for its NaN rule, so the copies agree bit for bit with each other
// and with Valu. The loops run in blocks of 32 so that their trip count is a constant (GCC's -O2 cost model
// vectorizes no loop that would need an epilogue); r is never a source row.
// Not under ThreadSanitizer: the clones' ifunc resolver runs while the dynamic loader relocates, before the TSan
// runtime is set up, and TSan's instrumentation of it crashed every program at start.
#if defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define BAREGPU_NO_IFUNC 1
#endif
#endif
#if defined(__SANITIZE_THREAD__)
#define BAREGPU_NO_IFUNC 1
#endif
#if defined(__x86_64__) && !defined(BAREGPU_NO_IFUNC)
[[gnu::target_clones("fma", "default")]]
#endif
void FmaLanes(const uint32_t* a, const uint32_t* b, const uint32_t* c, uint32_t* __restrict r, int n) {
  constexpr int kBlock = 32;
  for (int base = 0; base < n; base += kBlock) {
    BAREGPU_INDEPENDENT_LANES
    for (int l = base; l < base + kBlock; ++l) r[l] = Bits32(std::fma(AsF32(a[l]), AsF32(b[l]), AsF32(c[l])));
  }
  // Kept apart from the fma loop, which a reduction would keep from vectorizing. A NaN (exponent all ones, fraction
  // not 0) is a magnitude above 0x7f800000: adding 0x007fffff carries it into bit 31, which no other magnitude
  // reaches (and none overflows). An add and an or per lane vectorize; a compare per lane, whose bool GCC widened
  // lane by lane, did not, and was most of this function's time in tinygrad's matmul. In blocks of 32 lanes, as the
  // fma loop: GCC -O2 vectorizes only a loop whose trip count needs no scalar remainder.
  uint32_t nan = 0;
  for (int base = 0; base < n; base += kBlock) {
    for (int l = base; l < base + kBlock; ++l) nan |= (r[l] & ~kF32SignBit) + 0x007fffffu;
  }
  if ((nan & kF32SignBit) == 0) [[likely]] {
    return;
  }
  for (int l = 0; l < n; ++l) {
    if ((r[l] & ~kF32SignBit) > 0x7f800000u) r[l] = Bits32(FmaF32(AsF32(a[l]), AsF32(b[l]), AsF32(c[l])));
  }
}

// d[l] = f(l) for the lanes EXEC enables: one loop over every lane when all are, else the enabled ones in order.
template <int N, typename F>
inline void Apply(uint32_t* d, uint64_t exec, F f) {
  if (exec == kAllLanes<N>) {
    BAREGPU_INDEPENDENT_LANES
    for (int l = 0; l < N; ++l) d[l] = f(l);
    return;
  }
  for (uint64_t m = exec; m != 0; m &= m - 1) {
    const int l = std::countr_zero(m);
    d[l] = f(l);
  }
}
// The lane mask of `bit(l)` (0 or 1) over the active lanes. The bits go to bytes first, in a loop that vectorizes,
// then 8 bytes at a time into 8 mask bits: the product of the 8 bytes (each 0 or 1) as a little-endian word with
// 0x0102040810204080 has byte i's bit at bit 56 + i, with no carries between the partial products.
template <int N, typename F>
inline uint64_t MaskOf(uint64_t exec, F bit) {
  uint8_t bits[N];
  for (int l = 0; l < N; ++l) bits[l] = static_cast<uint8_t>(bit(l));
  uint64_t mask = 0;
  for (int k = 0; k < N / 8; ++k) {
    uint64_t eight;
    std::memcpy(&eight, bits + 8 * k, sizeof(eight));
    mask |= ((eight * 0x0102040810204080ull) >> 56) << (8 * k);
  }
  return mask & exec;
}
// The lanes of a mask as dwords (0 or 1), 4 lanes per table entry: kLaneDwords[m] has dword i = bit i of the 4-bit m.
inline constexpr auto kLaneDwords = [] {
  std::array<std::array<uint32_t, 4>, 16> table{};
  for (int m = 0; m < 16; ++m) {
    for (int i = 0; i < 4; ++i) table[m][i] = (m >> i) & 1;
  }
  return table;
}();
template <int N>
inline void MaskToDwords(uint64_t mask, uint32_t* dwords) {
  for (int k = 0; k < N / 4; ++k) std::memcpy(dwords + 4 * k, kLaneDwords[(mask >> (4 * k)) & 0xf].data(), 16);
}
// One comparison over the lanes, its condition a constant so that the loop body is one compare.
template <int N, typename T, CompareOp::Cond kCond>
uint64_t CompareMask(const T* x, const T* y, uint64_t exec) {
  return MaskOf<N>(exec, [&](int l) { return CompareValues(kCond, x[l], y[l]); });
}
template <int N, typename T, size_t... kConds>
uint64_t CompareLanes(CompareOp::Cond cond, const T* x, const T* y, uint64_t exec, std::index_sequence<kConds...>) {
  using Compare = uint64_t (*)(const T*, const T*, uint64_t);
  static constexpr Compare kByCond[] = {&CompareMask<N, T, static_cast<CompareOp::Cond>(kConds)>...};
  return kByCond[cond](x, y, exec);
}

// The carry out of bit 31 of sum = x + y (+ a carry in), and the borrow of difference = x - y (- a borrow in), from
// bit 31 of the operands and the result alone (a full adder's carry is the majority of its inputs), so that the
// lane loops stay in 32-bit arithmetic, which vectorizes: carry = x + y + ci > 2^32 - 1, borrow = y + bi > x.
inline uint32_t AddCarry(uint32_t x, uint32_t y, uint32_t sum) { return ((x & y) | ((x | y) & ~sum)) >> 31; }
inline uint32_t SubBorrow(uint32_t x, uint32_t y, uint32_t difference) {
  return ((~x & y) | (~(x ^ y) & difference)) >> 31;
}

}  // namespace

// One handler per FastValu operation and wave width (Run<Op>), so that each is a small function whose lane loop
// the compiler inlines and vectorizes; RunFastValu calls the one the decoder chose through a table.
template <int N>
class FastValuLanes {
 public:
  using Flow = WorkgroupRunner::Flow;
  static Flow Dispatch(WorkgroupRunner& runner, Wave& wave, const Instruction& inst) {
    return kHandlers[static_cast<size_t>(inst.fast_valu)](runner, wave, inst);
  }

 private:
  using Handler = Flow (*)(WorkgroupRunner&, Wave&, const Instruction&);
  template <size_t... kOps>
  static constexpr std::array<Handler, sizeof...(kOps)> Handlers(std::index_sequence<kOps...>) {
    return {&Run<static_cast<FastValu>(kOps)>...};
  }
  template <FastValu kOp>
  static Flow Run(WorkgroupRunner& runner, Wave& wave, const Instruction& inst) {
    if constexpr (kOp == FastValu::kNone) {
      return runner.Valu(wave, inst);
    } else {
      FastValuLanes lanes(runner, wave, inst);
      return lanes.Execute<kOp>();
    }
  }

  FastValuLanes(WorkgroupRunner& runner, Wave& wave, const Instruction& inst)
      : runner_(runner), wave_(wave), inst_(inst), exec_(wave.exec()), flush32_(FlushF32(wave.mode)) {}

  // Source i as a row: its VGPR's, or a scalar operand (resolved as Valu resolves it) broadcast to every lane. A
  // 64-bit source's high dwords are in hi_[i].
  void Source(int i) {
    const uint16_t code = inst_.src[i];
    if (operand::IsVgpr(code)) {
      s_[i] = wave_.v(code - operand::kVgpr0);
      hi_[i] = wave_.v(code - operand::kVgpr0 + 1);
      return;
    }
    ScalarSource(i);
  }
  // Kept out of Source, so that Source's VGPR case is small enough to be inlined.
  [[gnu::noinline]] void ScalarSource(int i) {
    const uint16_t code = inst_.src[i];
    const uint64_t value = inst_.src_dwords[i] == 2 ? runner_.ScalarValue64(wave_, inst_, code, inst_.float_bits == 64)
                                                    : runner_.ScalarValue(wave_, inst_, code);
    std::fill_n(splat_[i], N, static_cast<uint32_t>(value));
    s_[i] = splat_[i];
    if (inst_.src_dwords[i] == 2) {
      std::fill_n(splat_hi_[i], N, static_cast<uint32_t>(value >> 32));
      hi_[i] = splat_hi_[i];
    }
  }
  // A float source under MODE's denormal flush (Valu's f32in without modifiers): flushed in a copy.
  void FloatSource(int i) {
    Source(i);
    if (flush32_) {
      for (int l = 0; l < N; ++l) flushed_[i][l] = FlushDenormF32(s_[i][l]);
      s_[i] = flushed_[i];
    }
  }
  uint32_t* D() { return wave_.v(inst_.vdst); }

  template <typename F>
  Flow Binary(F f) {
    Source(0);
    Source(1);
    const uint32_t *a = s_[0], *b = s_[1];
    Apply<N>(D(), exec_, [&](int l) { return f(a[l], b[l]); });
    return Flow::kNext;
  }
  template <typename F>
  Flow Ternary(F f) {
    Source(0);
    Source(1);
    Source(2);
    const uint32_t *a = s_[0], *b = s_[1], *c = s_[2];
    Apply<N>(D(), exec_, [&](int l) { return f(a[l], b[l], c[l]); });
    return Flow::kNext;
  }
  // The result under MODE's denormal flush (Valu's out_f32 without omod and clamp).
  template <typename F>
  Flow FloatBinary(F f) {
    FloatSource(0);
    FloatSource(1);
    const uint32_t *a = s_[0], *b = s_[1];
    if (flush32_) {
      Apply<N>(D(), exec_, [&](int l) { return FlushDenormF32(Bits32(f(AsF32(a[l]), AsF32(b[l])))); });
    } else {
      Apply<N>(D(), exec_, [&](int l) { return Bits32(f(AsF32(a[l]), AsF32(b[l]))); });
    }
    return Flow::kNext;
  }
  // `value(x, y, carry_in)` is a lane's result; `carry(x, y, result)` its carry-out (0 or 1). Two functions, not one
  // returning both, so that each loop has a plain 32-bit body the compiler vectorizes. The carry-outs come first:
  // D may be a source.
  template <bool kCarryIn, typename V, typename C>
  Flow Carry(V value, C carry) {
    Source(0);
    Source(1);
    const uint32_t *a = s_[0], *b = s_[1];
    uint64_t carry_out;
    if constexpr (kCarryIn) {
      uint32_t carry_in[N];
      MaskToDwords<N>(wave_.mask_at(inst_.src[2]), carry_in);
      carry_out = MaskOf<N>(exec_, [&](int l) { return carry(a[l], b[l], value(a[l], b[l], carry_in[l])); });
      Apply<N>(D(), exec_, [&](int l) { return value(a[l], b[l], carry_in[l]); });
    } else {
      carry_out = MaskOf<N>(exec_, [&](int l) { return carry(a[l], b[l], value(a[l], b[l], 0)); });
      Apply<N>(D(), exec_, [&](int l) { return value(a[l], b[l], 0); });
    }
    wave_.set_mask_at(inst_.sdst, carry_out);
    return Flow::kNext;
  }
  template <typename T>
  uint64_t Compare(CompareOp::Cond cond, const T* x, const T* y) {
    return CompareLanes<N, T>(cond, x, y, exec_, std::make_index_sequence<CompareOp::kT + 1>());
  }

  template <FastValu kOp>
  Flow Execute() {
    if constexpr (kOp == FastValu::kMovB32) {
      Source(0);
      const uint32_t* a = s_[0];
      Apply<N>(D(), exec_, [&](int l) { return a[l]; });
      return Flow::kNext;
    } else if constexpr (kOp == FastValu::kAddNcU32) {
      return Binary([](uint32_t x, uint32_t y) { return x + y; });
    } else if constexpr (kOp == FastValu::kSubNcU32) {
      return Binary([](uint32_t x, uint32_t y) { return x - y; });
    } else if constexpr (kOp == FastValu::kSubrevNcU32) {
      return Binary([](uint32_t x, uint32_t y) { return y - x; });
    } else if constexpr (kOp == FastValu::kAndB32) {
      return Binary([](uint32_t x, uint32_t y) { return x & y; });
    } else if constexpr (kOp == FastValu::kOrB32) {
      return Binary([](uint32_t x, uint32_t y) { return x | y; });
    } else if constexpr (kOp == FastValu::kXorB32) {
      return Binary([](uint32_t x, uint32_t y) { return x ^ y; });
    } else if constexpr (kOp == FastValu::kLshlrevB32) {
      return Binary([](uint32_t x, uint32_t y) { return y << (x & 31); });
    } else if constexpr (kOp == FastValu::kLshrrevB32) {
      return Binary([](uint32_t x, uint32_t y) { return y >> (x & 31); });
    } else if constexpr (kOp == FastValu::kAshrrevI32) {
      return Binary([](uint32_t x, uint32_t y) { return static_cast<uint32_t>(static_cast<int32_t>(y) >> (x & 31)); });
    } else if constexpr (kOp == FastValu::kMinU32) {
      return Binary([](uint32_t x, uint32_t y) { return std::min(x, y); });
    } else if constexpr (kOp == FastValu::kMaxU32) {
      return Binary([](uint32_t x, uint32_t y) { return std::max(x, y); });
    } else if constexpr (kOp == FastValu::kMinI32) {
      return Binary([](uint32_t x, uint32_t y) {
        return static_cast<uint32_t>(std::min(static_cast<int32_t>(x), static_cast<int32_t>(y)));
      });
    } else if constexpr (kOp == FastValu::kMaxI32) {
      return Binary([](uint32_t x, uint32_t y) {
        return static_cast<uint32_t>(std::max(static_cast<int32_t>(x), static_cast<int32_t>(y)));
      });
    } else if constexpr (kOp == FastValu::kMulLoU32) {
      return Binary([](uint32_t x, uint32_t y) { return x * y; });
    } else if constexpr (kOp == FastValu::kMulU32U24) {
      return Binary([](uint32_t x, uint32_t y) { return (x & 0xffffff) * (y & 0xffffff); });
    } else if constexpr (kOp == FastValu::kLshlOrB32) {
      return Ternary([](uint32_t x, uint32_t y, uint32_t z) { return (x << (y & 31)) | z; });
    } else if constexpr (kOp == FastValu::kLshlAddU32) {
      return Ternary([](uint32_t x, uint32_t y, uint32_t z) { return (x << (y & 31)) + z; });
    } else if constexpr (kOp == FastValu::kAddLshlU32) {
      return Ternary([](uint32_t x, uint32_t y, uint32_t z) { return (x + y) << (z & 31); });
    } else if constexpr (kOp == FastValu::kAdd3U32) {
      return Ternary([](uint32_t x, uint32_t y, uint32_t z) { return x + y + z; });
    } else if constexpr (kOp == FastValu::kAndOrB32) {
      return Ternary([](uint32_t x, uint32_t y, uint32_t z) { return (x & y) | z; });
    } else if constexpr (kOp == FastValu::kOr3B32) {
      return Ternary([](uint32_t x, uint32_t y, uint32_t z) { return x | y | z; });
    } else if constexpr (kOp == FastValu::kAddF32) {
      return FloatBinary([](float x, float y) { return x + y; });
    } else if constexpr (kOp == FastValu::kSubF32) {
      return FloatBinary([](float x, float y) { return x - y; });
    } else if constexpr (kOp == FastValu::kSubrevF32) {
      return FloatBinary([](float x, float y) { return y - x; });
    } else if constexpr (kOp == FastValu::kMulF32) {
      return FloatBinary([](float x, float y) { return x * y; });
    } else if constexpr (kOp == FastValu::kFmaF32 || kOp == FastValu::kFmacF32 || kOp == FastValu::kFmamkF32 ||
                         kOp == FastValu::kFmaakF32) {
      // The addend and factors by form: fma S0 * S1 + S2, fmac S0 * S1 + D, fmamk S0 * K + S1, fmaak S0 * S1 + K.
      // Every value an input (the accumulator D included) flushed as Valu flushes them; K, the literal, as it is.
      FloatSource(0);
      FloatSource(1);
      const uint32_t* c = nullptr;
      if constexpr (kOp == FastValu::kFmaF32) {
        FloatSource(2);
        c = s_[2];
      } else if constexpr (kOp == FastValu::kFmacF32) {
        c = D();
        if (flush32_) {
          for (int l = 0; l < N; ++l) flushed_[2][l] = FlushDenormF32(c[l]);
          c = flushed_[2];
        }
      } else {
        std::fill_n(splat_[2], N, inst_.literal);
        c = splat_[2];
      }
      const uint32_t* a = s_[0];
      const uint32_t* b = kOp == FastValu::kFmamkF32 ? c : s_[1];
      if constexpr (kOp == FastValu::kFmamkF32) c = s_[1];
      uint32_t r[N];
      FmaLanes(a, b, c, r, N);
      if (flush32_) {
        Apply<N>(D(), exec_, [&](int l) { return FlushDenormF32(r[l]); });
      } else {
        Apply<N>(D(), exec_, [&](int l) { return r[l]; });
      }
      return Flow::kNext;
    } else if constexpr (kOp == FastValu::kCndmaskB32) {
      Source(0);
      Source(1);
      const uint32_t *a = s_[0], *b = s_[1];
      const uint64_t select = wave_.mask_at(inst_.src[2]);
      Apply<N>(D(), exec_, [&](int l) { return ((select >> l) & 1) != 0 ? b[l] : a[l]; });
      return Flow::kNext;
    } else if constexpr (kOp == FastValu::kAddCoU32) {
      return Carry<false>([](uint32_t x, uint32_t y, uint32_t) { return x + y; },
                          [](uint32_t x, uint32_t y, uint32_t r) { return AddCarry(x, y, r); });
    } else if constexpr (kOp == FastValu::kSubCoU32) {
      return Carry<false>([](uint32_t x, uint32_t y, uint32_t) { return x - y; },
                          [](uint32_t x, uint32_t y, uint32_t r) { return SubBorrow(x, y, r); });
    } else if constexpr (kOp == FastValu::kSubrevCoU32) {
      return Carry<false>([](uint32_t x, uint32_t y, uint32_t) { return y - x; },
                          [](uint32_t x, uint32_t y, uint32_t r) { return SubBorrow(y, x, r); });
    } else if constexpr (kOp == FastValu::kAddCoCiU32) {
      return Carry<true>([](uint32_t x, uint32_t y, uint32_t ci) { return x + y + ci; },
                         [](uint32_t x, uint32_t y, uint32_t r) { return AddCarry(x, y, r); });
    } else if constexpr (kOp == FastValu::kSubCoCiU32) {
      return Carry<true>([](uint32_t x, uint32_t y, uint32_t bi) { return x - y - bi; },
                         [](uint32_t x, uint32_t y, uint32_t r) { return SubBorrow(x, y, r); });
    } else if constexpr (kOp == FastValu::kSubrevCoCiU32) {
      return Carry<true>([](uint32_t x, uint32_t y, uint32_t bi) { return y - x - bi; },
                         [](uint32_t x, uint32_t y, uint32_t r) { return SubBorrow(y, x, r); });
    } else if constexpr (kOp == FastValu::kLshlrevB64) {
      Source(0);
      Source(1);
      const uint32_t *shift = s_[0], *lo = s_[1], *high = hi_[1];
      uint32_t *d = D(), *d_hi = wave_.v(inst_.vdst + 1);
      // Both halves in one loop, each lane's sources read before its destination is written (D may overlap the
      // source pair). SSE2 has no per-lane 64-bit shift, so the loop is scalar whatever its shape.
      auto lane = [&](int l) {
        const uint64_t value = (lo[l] | uint64_t{high[l]} << 32) << (shift[l] & 63);
        d[l] = static_cast<uint32_t>(value);
        d_hi[l] = static_cast<uint32_t>(value >> 32);
      };
      if (exec_ == kAllLanes<N>) {
        for (int l = 0; l < N; ++l) lane(l);
      } else {
        for (uint64_t m = exec_; m != 0; m &= m - 1) lane(std::countr_zero(m));
      }
      return Flow::kNext;
    } else {
      static_assert(kOp == FastValu::kCompare);
      const CompareOp& cmp = CompareTable()[inst_.valu_op];
      uint64_t mask = 0;
      if (cmp.type == CompareOp::kF32) {
        FloatSource(0);
        FloatSource(1);
        float x[N], y[N];
        for (int l = 0; l < N; ++l) x[l] = AsF32(s_[0][l]), y[l] = AsF32(s_[1][l]);
        mask = Compare(cmp.cond, x, y);
      } else if (cmp.type == CompareOp::kI32) {
        Source(0);
        Source(1);
        int32_t x[N], y[N];
        for (int l = 0; l < N; ++l) x[l] = static_cast<int32_t>(s_[0][l]), y[l] = static_cast<int32_t>(s_[1][l]);
        mask = Compare(cmp.cond, x, y);
      } else {
        Source(0);
        Source(1);
        mask = Compare(cmp.cond, s_[0], s_[1]);
      }
      if (cmp.writes_exec) {
        wave_.set_exec(mask);
      } else {
        wave_.set_mask_at(inst_.sdst, mask);
      }
      return Flow::kNext;
    }
  }

  WorkgroupRunner& runner_;
  Wave& wave_;
  const Instruction& inst_;
  const uint64_t exec_;
  const bool flush32_;
  const uint32_t* s_[3] = {nullptr, nullptr, nullptr};
  const uint32_t* hi_[3] = {nullptr, nullptr, nullptr};
  uint32_t splat_[3][N];
  uint32_t splat_hi_[3][N];
  uint32_t flushed_[3][N];

  static constexpr std::array<Handler, kFastValuCount> kHandlers = Handlers(std::make_index_sequence<kFastValuCount>());
};

WorkgroupRunner::Flow WorkgroupRunner::RunFastValu(Wave& wave, const Instruction& inst) {
  return wave.lanes == 64 ? FastValuLanes<64>::Dispatch(*this, wave, inst)
                          : FastValuLanes<32>::Dispatch(*this, wave, inst);
}

WorkgroupRunner::Flow WorkgroupRunner::Valu(Wave& wave, const Instruction& inst) {
  const int n = wave.lanes;
  const uint64_t exec = wave.exec();
  const uint16_t op = inst.valu_op;
  const bool vop3 = inst.encoding == Encoding::kVop3;
  const bool flush32 = FlushF32(wave.mode), flush16_64 = FlushF16F64(wave.mode);

  // Resolve the sources.
  Src src[3];
  for (int i = 0; i < 3; ++i) {
    const uint16_t code = inst.src[i];
    if (operand::IsVgpr(code)) {
      src[i].lo = wave.v(code - operand::kVgpr0);
      src[i].hi = wave.v(code - operand::kVgpr0 + 1);
    } else if (inst.src_dwords[i] == 2) {
      src[i].value = ScalarValue64(wave, inst, code, inst.float_bits == 64);
    } else if (inst.float_bits == 16 && code >= operand::kFloatHalf && code <= operand::kInvTwoPi) {
      src[i].value = kInlineF16[code - operand::kFloatHalf];
    } else {
      src[i].value = ScalarValue(wave, inst, code);
    }
  }
  // DPP: src0 comes from another lane of its VGPR.
  uint32_t dpp_row[kMaxLanes];
  uint64_t dpp_enabled = ~uint64_t{0};
  if (inst.dpp != 0) {
    const std::optional<uint64_t> enabled = DppGather(inst, n, exec, src[0].lo, dpp_row);
    if (!enabled.has_value()) return Illegal(wave, inst, "DPP control not implemented by the interpreter");
    dpp_enabled = *enabled;
    src[0].lo = dpp_row;
    src[0].hi = dpp_row;
  }
  const uint64_t active = exec & dpp_enabled;
  const uint8_t abs = inst.abs, neg = inst.neg;

  auto a = [&](int l) { return src[0].u32(l); };
  auto b = [&](int l) { return src[1].u32(l); };
  auto c = [&](int l) { return src[2].u32(l); };
  auto a64 = [&](int l) { return src[0].u64(l); };
  auto b64 = [&](int l) { return src[1].u64(l); };
  auto c64 = [&](int l) { return src[2].u64(l); };
  auto f32in = [&](int i, uint32_t bits) {
    if (flush32) bits = FlushDenormF32(bits);
    return ApplyModsF32(AsF32(bits), i, abs, neg);
  };
  auto fa = [&](int l) { return f32in(0, a(l)); };
  auto fb = [&](int l) { return f32in(1, b(l)); };
  auto fc = [&](int l) { return f32in(2, c(l)); };
  auto f64in = [&](int i, uint64_t bits) {
    if (flush16_64) bits = FlushDenormF64(bits);
    return ApplyModsF64(AsF64(bits), i, abs, neg);
  };
  auto da = [&](int l) { return f64in(0, a64(l)); };
  auto db = [&](int l) { return f64in(1, b64(l)); };
  auto dc = [&](int l) { return f64in(2, c64(l)); };
  // Half sources: VOP3 op_sel picks the high half.
  auto h = [&](int i, uint32_t bits) {
    uint16_t v = static_cast<uint16_t>(vop3 && ((inst.opsel >> i) & 1) ? bits >> 16 : bits);
    if (flush16_64) v = FlushDenormF16(v);
    return ApplyModsF32(F16ToF32(v), i, abs, neg);
  };
  auto ha = [&](int l) { return h(0, a(l)); };
  auto hb = [&](int l) { return h(1, b(l)); };
  auto hc = [&](int l) { return h(2, c(l)); };
  auto u16 = [&](int i, uint32_t bits) {
    return static_cast<uint16_t>(vop3 && ((inst.opsel >> i) & 1) ? bits >> 16 : bits);
  };
  auto i16 = [&](int i, uint32_t bits) { return static_cast<int16_t>(u16(i, bits)); };

  uint32_t* d = wave.v(inst.vdst);
  uint32_t* d_hi = wave.v(inst.vdst + 1);
  const float omod_scale = inst.omod == 1 ? 2.0f : inst.omod == 2 ? 4.0f : inst.omod == 3 ? 0.5f : 1.0f;
  auto out_f32 = [&](float r) {
    if (inst.omod != 0) r *= omod_scale;
    if (inst.clamp) r = std::isnan(r) ? 0.0f : std::clamp(r, 0.0f, 1.0f);
    uint32_t bits = Bits32(r);
    return flush32 ? FlushDenormF32(bits) : bits;
  };
  auto out_f64 = [&](double r) {
    if (inst.omod != 0) r *= omod_scale;
    if (inst.clamp) r = std::isnan(r) ? 0.0 : std::clamp(r, 0.0, 1.0);
    const uint64_t bits = Bits64(r);
    return flush16_64 ? FlushDenormF64(bits) : bits;
  };
  auto out_f16 = [&](float r) {
    if (inst.omod != 0) r *= omod_scale;
    if (inst.clamp) r = std::isnan(r) ? 0.0f : std::clamp(r, 0.0f, 1.0f);
    const uint16_t bits = F32ToF16(r);
    return flush16_64 ? FlushDenormF16(bits) : bits;
  };
  // Loops over the active lanes.
  auto each = [&](auto body) {
    if (active == wave.all_lanes()) {
      for (int l = 0; l < n; ++l) body(l);
    } else {
      for (uint64_t m = active; m != 0; m &= m - 1) body(std::countr_zero(m));
    }
  };
  auto set32 = [&](auto f) { each([&](int l) { d[l] = f(l); }); };
  auto set64 = [&](auto f) {
    each([&](int l) {
      const uint64_t r = f(l);
      d[l] = static_cast<uint32_t>(r);
      d_hi[l] = static_cast<uint32_t>(r >> 32);
    });
  };
  auto setf32 = [&](auto f) { each([&](int l) { d[l] = out_f32(f(l)); }); };
  auto setf64 = [&](auto f) {
    each([&](int l) {
      const uint64_t r = out_f64(f(l));
      d[l] = static_cast<uint32_t>(r);
      d_hi[l] = static_cast<uint32_t>(r >> 32);
    });
  };
  // 16-bit results go to the low half (or the high half with VOP3 op_sel[3]); the other half is kept.
  auto set16 = [&](auto f) {
    const bool high = vop3 && ((inst.opsel >> 3) & 1);
    each([&](int l) {
      const uint32_t r = static_cast<uint16_t>(f(l));
      d[l] = high ? (d[l] & 0xffffu) | (r << 16) : (d[l] & 0xffff0000u) | r;
    });
  };
  auto setf16 = [&](auto f) { set16([&](int l) { return out_f16(f(l)); }); };

  if (op < 256) {  // VOPC
    const CompareOp& cmp = CompareTable()[op];
    if (cmp.type == CompareOp::kNone) return Illegal(wave, inst, "VOPC operation not implemented by the interpreter");
    uint64_t mask = 0;
    each([&](int l) {
      bool r = false;
      if (cmp.cond == CompareOp::kClass) {
        const uint32_t classes = b(l);
        int cls = 0;
        if (cmp.type == CompareOp::kF32) {
          cls = FloatClass(fa(l), (a(l) >> 22) & 1);
        } else if (cmp.type == CompareOp::kF64) {
          cls = FloatClass(da(l), (a64(l) >> 51) & 1);
        } else {
          cls = FloatClass(ha(l), (a(l) >> 9) & 1);
        }
        r = (classes >> cls) & 1;
      } else {
        switch (cmp.type) {
          case CompareOp::kF16:
            r = CompareValues(cmp.cond, ha(l), hb(l));
            break;
          case CompareOp::kF32:
            r = CompareValues(cmp.cond, fa(l), fb(l));
            break;
          case CompareOp::kF64:
            r = CompareValues(cmp.cond, da(l), db(l));
            break;
          case CompareOp::kI16:
            r = CompareValues(cmp.cond, static_cast<int16_t>(u16(0, a(l))), static_cast<int16_t>(u16(1, b(l))));
            break;
          case CompareOp::kU16:
            r = CompareValues(cmp.cond, u16(0, a(l)), u16(1, b(l)));
            break;
          case CompareOp::kI32:
            r = CompareValues(cmp.cond, static_cast<int32_t>(a(l)), static_cast<int32_t>(b(l)));
            break;
          case CompareOp::kU32:
            r = CompareValues(cmp.cond, a(l), b(l));
            break;
          case CompareOp::kI64:
            r = CompareValues(cmp.cond, static_cast<int64_t>(a64(l)), static_cast<int64_t>(b64(l)));
            break;
          case CompareOp::kU64:
            r = CompareValues(cmp.cond, a64(l), b64(l));
            break;
          default:
            break;
        }
      }
      if (r) mask |= uint64_t{1} << l;
    });
    if (cmp.writes_exec) {
      wave.set_exec(mask);
    } else {
      wave.set_mask_at(inst.sdst, mask);
    }
    return Flow::kNext;
  }

  switch (op) {
    // VOP2 operations (VOP3 numbering 256..).
    case vop3::kVCndmaskB32: {
      // In VOP3 the sources take abs/neg, applied to the bits as on floats (clear / flip bit 31): the ISA lists
      // V_CNDMASK_B32 among the VOP3 opcodes with input modifiers, and LLVM folds c ? -x : x into one.
      const uint64_t sel = wave.mask_at(inst.src[2]);
      auto modified = [&](int i, uint32_t bits) {
        if ((abs >> i) & 1) bits &= ~kF32SignBit;
        if ((neg >> i) & 1) bits ^= kF32SignBit;
        return bits;
      };
      set32([&](int l) { return ((sel >> l) & 1) ? modified(1, b(l)) : modified(0, a(l)); });
      break;
    }
    case vop3::kVAddF32:
      setf32([&](int l) { return fa(l) + fb(l); });
      break;
    case vop3::kVSubF32:
      setf32([&](int l) { return fa(l) - fb(l); });
      break;
    case vop3::kVSubrevF32:
      setf32([&](int l) { return fb(l) - fa(l); });
      break;
    case vop3::kVMulF32:
      setf32([&](int l) { return fa(l) * fb(l); });
      break;
    case vop3::kVMulDx9ZeroF32:
      setf32([&](int l) { return (fa(l) == 0.0f || fb(l) == 0.0f) ? 0.0f : fa(l) * fb(l); });
      break;
    case vop3::kVMulI32I24:
      set32([&](int l) {
        return static_cast<uint32_t>((static_cast<int32_t>(a(l) << 8) >> 8) * (static_cast<int32_t>(b(l) << 8) >> 8));
      });
      break;
    case vop3::kVMulHiI32I24:
      set32([&](int l) {
        return static_cast<uint32_t>(
            (int64_t{static_cast<int32_t>(a(l) << 8) >> 8} * (static_cast<int32_t>(b(l) << 8) >> 8)) >> 32);
      });
      break;
    case vop3::kVMulU32U24:
      set32([&](int l) { return (a(l) & 0xffffff) * (b(l) & 0xffffff); });
      break;
    case vop3::kVMulHiU32U24:
      set32([&](int l) { return static_cast<uint32_t>((uint64_t{a(l) & 0xffffff} * (b(l) & 0xffffff)) >> 32); });
      break;
    case vop3::kVMinF32:
      setf32([&](int l) { return MinF(fa(l), fb(l)); });
      break;
    case vop3::kVMaxF32:
      setf32([&](int l) { return MaxF(fa(l), fb(l)); });
      break;
    case vop3::kVMinI32:
      set32([&](int l) {
        return static_cast<uint32_t>(std::min(static_cast<int32_t>(a(l)), static_cast<int32_t>(b(l))));
      });
      break;
    case vop3::kVMaxI32:
      set32([&](int l) {
        return static_cast<uint32_t>(std::max(static_cast<int32_t>(a(l)), static_cast<int32_t>(b(l))));
      });
      break;
    case vop3::kVMinU32:
      set32([&](int l) { return std::min(a(l), b(l)); });
      break;
    case vop3::kVMaxU32:
      set32([&](int l) { return std::max(a(l), b(l)); });
      break;
    case vop3::kVLshlrevB32:
      set32([&](int l) { return b(l) << (a(l) & 31); });
      break;
    case vop3::kVLshrrevB32:
      set32([&](int l) { return b(l) >> (a(l) & 31); });
      break;
    case vop3::kVAshrrevI32:
      set32([&](int l) { return static_cast<uint32_t>(static_cast<int32_t>(b(l)) >> (a(l) & 31)); });
      break;
    case vop3::kVAndB32:
      set32([&](int l) { return a(l) & b(l); });
      break;
    case vop3::kVOrB32:
      set32([&](int l) { return a(l) | b(l); });
      break;
    case vop3::kVXorB32:
      set32([&](int l) { return a(l) ^ b(l); });
      break;
    case vop3::kVXnorB32:
      set32([&](int l) { return ~(a(l) ^ b(l)); });
      break;
    case vop3::kVAddCoCiU32:
    case vop3::kVSubCoCiU32:
    case vop3::kVSubrevCoCiU32: {
      const uint64_t carry_in = wave.mask_at(inst.src[2]);
      uint64_t carry_out = 0;
      each([&](int l) {
        const uint64_t ci = (carry_in >> l) & 1;
        uint64_t r;
        bool co;
        if (op == vop3::kVAddCoCiU32) {
          r = uint64_t{a(l)} + b(l) + ci;
          co = (r >> 32) != 0;
        } else {
          const uint32_t x = op == vop3::kVSubCoCiU32 ? a(l) : b(l), y = op == vop3::kVSubCoCiU32 ? b(l) : a(l);
          r = uint64_t{x} - y - ci;
          co = uint64_t{y} + ci > x;
        }
        d[l] = static_cast<uint32_t>(r);
        if (co) carry_out |= uint64_t{1} << l;
      });
      wave.set_mask_at(inst.sdst, carry_out);
      break;
    }
    case vop3::kVAddNcU32:
      set32([&](int l) { return a(l) + b(l); });
      break;
    case vop3::kVSubNcU32:
      set32([&](int l) { return a(l) - b(l); });
      break;
    case vop3::kVSubrevNcU32:
      set32([&](int l) { return b(l) - a(l); });
      break;
    case vop3::kVFmacF32:
      // The accumulator is an input like the others: flushed when MODE flushes f32 denormals.
      setf32([&](int l) { return FmaF32(fa(l), fb(l), AsF32(flush32 ? FlushDenormF32(d[l]) : d[l])); });
      break;
    case 256 + vop2::kVFmamkF32:
      setf32([&](int l) { return FmaF32(fa(l), AsF32(inst.literal), fb(l)); });
      break;
    case 256 + vop2::kVFmaakF32:
      setf32([&](int l) { return FmaF32(fa(l), fb(l), AsF32(inst.literal)); });
      break;
    case vop3::kVCvtPkRtzF16F32:
      set32([&](int l) { return F32ToF16Rtz(fa(l)) | (uint32_t{F32ToF16Rtz(fb(l))} << 16); });
      break;
    case vop3::kVAddF16:
      setf16([&](int l) { return ha(l) + hb(l); });
      break;
    case vop3::kVSubF16:
      setf16([&](int l) { return ha(l) - hb(l); });
      break;
    case vop3::kVSubrevF16:
      setf16([&](int l) { return hb(l) - ha(l); });
      break;
    case vop3::kVMulF16:
      setf16([&](int l) { return ha(l) * hb(l); });
      break;
    case vop3::kVFmacF16:
      setf16([&](int l) { return std::fma(ha(l), hb(l), F16ToF32(static_cast<uint16_t>(d[l]))); });
      break;
    case 256 + vop2::kVFmamkF16:
      setf16([&](int l) { return std::fma(ha(l), F16ToF32(static_cast<uint16_t>(inst.literal)), hb(l)); });
      break;
    case 256 + vop2::kVFmaakF16:
      setf16([&](int l) { return std::fma(ha(l), hb(l), F16ToF32(static_cast<uint16_t>(inst.literal))); });
      break;
    case vop3::kVMaxF16:
      setf16([&](int l) { return MaxF(ha(l), hb(l)); });
      break;
    case vop3::kVMinF16:
      setf16([&](int l) { return MinF(ha(l), hb(l)); });
      break;
    case vop3::kVLdexpF16:
      setf16([&](int l) { return std::ldexp(ha(l), static_cast<int16_t>(u16(1, b(l)))); });
      break;

    // VOP1 operations (VOP3 numbering 384..).
    case vop3::kVNop:
      break;
    case vop3::kVMovB32:
      set32([&](int l) { return a(l); });
      break;
    case vop3::kVReadfirstlaneB32: {
      const int lane = exec == 0 ? 0 : std::countr_zero(exec);
      WriteScalar(wave, inst.vdst, a(lane));
      break;
    }
    case vop3::kVCvtI32F64:
      set32([&](int l) { return static_cast<uint32_t>(CvtF64ToI32(da(l))); });
      break;
    case vop3::kVCvtF64I32:
      setf64([&](int l) { return static_cast<double>(static_cast<int32_t>(a(l))); });
      break;
    case vop3::kVCvtF32I32:
      setf32([&](int l) { return static_cast<float>(static_cast<int32_t>(a(l))); });
      break;
    case vop3::kVCvtF32U32:
      setf32([&](int l) { return static_cast<float>(a(l)); });
      break;
    case vop3::kVCvtU32F32:
      set32([&](int l) { return CvtF32ToU32(fa(l)); });
      break;
    case vop3::kVCvtI32F32:
      set32([&](int l) { return static_cast<uint32_t>(CvtF32ToI32(fa(l))); });
      break;
    case vop3::kVCvtF16F32:
      setf16([&](int l) { return fa(l); });
      break;
    case vop3::kVCvtF32F16:
      setf32([&](int l) { return ha(l); });
      break;
    case vop3::kVCvtNearestI32F32:
      set32([&](int l) { return static_cast<uint32_t>(CvtF32ToI32(std::floor(fa(l) + 0.5f))); });
      break;
    case vop3::kVCvtFloorI32F32:
      set32([&](int l) { return static_cast<uint32_t>(CvtF32ToI32(std::floor(fa(l)))); });
      break;
    case vop3::kVCvtF32F64:
      setf32([&](int l) { return static_cast<float>(da(l)); });
      break;
    case vop3::kVCvtF64F32:
      setf64([&](int l) { return static_cast<double>(fa(l)); });
      break;
    case vop3::kVCvtF32Ubyte0:
      setf32([&](int l) { return static_cast<float>(a(l) & 0xff); });
      break;
    case vop3::kVCvtF32Ubyte1:
      setf32([&](int l) { return static_cast<float>((a(l) >> 8) & 0xff); });
      break;
    case vop3::kVCvtF32Ubyte2:
      setf32([&](int l) { return static_cast<float>((a(l) >> 16) & 0xff); });
      break;
    case vop3::kVCvtF32Ubyte3:
      setf32([&](int l) { return static_cast<float>(a(l) >> 24); });
      break;
    case vop3::kVCvtU32F64:
      set32([&](int l) { return CvtF64ToU32(da(l)); });
      break;
    case vop3::kVCvtF64U32:
      setf64([&](int l) { return static_cast<double>(a(l)); });
      break;
    case vop3::kVTruncF64:
      setf64([&](int l) { return std::trunc(da(l)); });
      break;
    case vop3::kVCeilF64:
      setf64([&](int l) { return std::ceil(da(l)); });
      break;
    case vop3::kVRndneF64:
      setf64([&](int l) { return ::roundeven(da(l)); });
      break;
    case vop3::kVFloorF64:
      setf64([&](int l) { return std::floor(da(l)); });
      break;
    case vop3::kVFractF32:
      setf32([&](int l) { return Fract(fa(l)); });
      break;
    case vop3::kVTruncF32:
      setf32([&](int l) { return std::trunc(fa(l)); });
      break;
    case vop3::kVCeilF32:
      setf32([&](int l) { return std::ceil(fa(l)); });
      break;
    case vop3::kVRndneF32:
      setf32([&](int l) { return ::roundevenf(fa(l)); });
      break;
    case vop3::kVFloorF32:
      setf32([&](int l) { return std::floor(fa(l)); });
      break;
    case vop3::kVExpF32:
      setf32([&](int l) { return std::exp2(fa(l)); });
      break;
    case vop3::kVLogF32:
      setf32([&](int l) { return std::log2(fa(l)); });
      break;
    case vop3::kVRcpF32:
    case vop3::kVRcpIflagF32:
      setf32([&](int l) { return 1.0f / fa(l); });
      break;
    case vop3::kVRsqF32:
      setf32([&](int l) { return 1.0f / std::sqrt(fa(l)); });
      break;
    case vop3::kVRcpF64:
      setf64([&](int l) { return 1.0 / da(l); });
      break;
    case vop3::kVRsqF64:
      setf64([&](int l) { return 1.0 / std::sqrt(da(l)); });
      break;
    case vop3::kVSqrtF32:
      setf32([&](int l) { return std::sqrt(fa(l)); });
      break;
    case vop3::kVSqrtF64:
      setf64([&](int l) { return std::sqrt(da(l)); });
      break;
    // V_SIN/V_COS take the angle in revolutions.
    case vop3::kVSinF32:
      setf32([&](int l) { return static_cast<float>(std::sin(fa(l) * 2.0 * M_PI)); });
      break;
    case vop3::kVCosF32:
      setf32([&](int l) { return static_cast<float>(std::cos(fa(l) * 2.0 * M_PI)); });
      break;
    case vop3::kVNotB32:
      set32([&](int l) { return ~a(l); });
      break;
    case vop3::kVBfrevB32:
      set32([&](int l) {
        uint32_t v = a(l), r = 0;
        for (int i = 0; i < 32; ++i) r |= ((v >> i) & 1) << (31 - i);
        return r;
      });
      break;
    case vop3::kVClzI32U32:
      set32([&](int l) { return a(l) == 0 ? ~0u : static_cast<uint32_t>(std::countl_zero(a(l))); });
      break;
    case vop3::kVCtzI32B32:
      set32([&](int l) { return a(l) == 0 ? ~0u : static_cast<uint32_t>(std::countr_zero(a(l))); });
      break;
    case vop3::kVClsI32:
      set32([&](int l) {
        const uint32_t v = a(l), x = (v & 0x80000000u) ? ~v : v;
        return x == 0 ? ~0u : static_cast<uint32_t>(std::countl_zero(x) - 1);
      });
      break;
    case vop3::kVFrexpExpI32F64:
      set32([&](int l) {
        int e = 0;
        const double v = da(l);
        if (!std::isfinite(v)) return 0u;
        std::frexp(v, &e);
        return static_cast<uint32_t>(e);
      });
      break;
    case vop3::kVFrexpMantF64:
      setf64([&](int l) {
        int e = 0;
        const double v = da(l);
        return std::isfinite(v) ? std::frexp(v, &e) : v;
      });
      break;
    case vop3::kVFractF64:
      setf64([&](int l) { return Fract64(da(l)); });
      break;
    case vop3::kVFrexpExpI32F32:
      set32([&](int l) {
        int e = 0;
        const float v = fa(l);
        if (!std::isfinite(v)) return 0u;
        std::frexp(v, &e);
        return static_cast<uint32_t>(e);
      });
      break;
    case vop3::kVFrexpMantF32:
      setf32([&](int l) {
        int e = 0;
        const float v = fa(l);
        return std::isfinite(v) ? std::frexp(v, &e) : v;
      });
      break;
    case vop3::kVCvtF16U16:
      setf16([&](int l) { return static_cast<float>(u16(0, a(l))); });
      break;
    case vop3::kVCvtF16I16:
      setf16([&](int l) { return static_cast<float>(static_cast<int16_t>(u16(0, a(l)))); });
      break;
    case vop3::kVCvtU16F16:
      set16([&](int l) {
        const float v = ha(l);
        return static_cast<uint16_t>(std::isnan(v) || v <= 0 ? 0 : v >= 65535.0f ? 65535 : static_cast<int>(v));
      });
      break;
    case vop3::kVCvtI16F16:
      set16([&](int l) {
        const float v = ha(l);
        return static_cast<uint16_t>(std::isnan(v) ? 0 : static_cast<int16_t>(std::clamp(v, -32768.0f, 32767.0f)));
      });
      break;
    case vop3::kVRcpF16:
      setf16([&](int l) { return 1.0f / ha(l); });
      break;
    case vop3::kVSqrtF16:
      setf16([&](int l) { return std::sqrt(ha(l)); });
      break;
    case vop3::kVRsqF16:
      setf16([&](int l) { return 1.0f / std::sqrt(ha(l)); });
      break;
    case vop3::kVLogF16:
      setf16([&](int l) { return std::log2(ha(l)); });
      break;
    case vop3::kVExpF16:
      setf16([&](int l) { return std::exp2(ha(l)); });
      break;
    case vop3::kVFloorF16:
      setf16([&](int l) { return std::floor(ha(l)); });
      break;
    case vop3::kVCeilF16:
      setf16([&](int l) { return std::ceil(ha(l)); });
      break;
    case vop3::kVTruncF16:
      setf16([&](int l) { return std::trunc(ha(l)); });
      break;
    case vop3::kVRndneF16:
      setf16([&](int l) { return ::roundevenf(ha(l)); });
      break;
    case vop3::kVFractF16:
      setf16([&](int l) { return Fract(ha(l)); });
      break;
    case vop3::kVMovB16:
      set16([&](int l) { return u16(0, a(l)); });
      break;
    case vop3::kVNotB16:
      set16([&](int l) { return static_cast<uint16_t>(~u16(0, a(l))); });
      break;
    case vop3::kVCvtI32I16:
      set32([&](int l) { return static_cast<uint32_t>(static_cast<int16_t>(u16(0, a(l)))); });
      break;
    case vop3::kVCvtU32U16:
      set32([&](int l) { return uint32_t{u16(0, a(l))}; });
      break;

    // Native VOP3 operations.
    case vop3::kVFmaF32:
      setf32([&](int l) { return FmaF32(fa(l), fb(l), fc(l)); });
      break;
    case vop3::kVFmaF64:
      setf64([&](int l) { return std::fma(da(l), db(l), dc(l)); });
      break;
    case vop3::kVFmaF16:
      setf16([&](int l) { return std::fma(ha(l), hb(l), hc(l)); });
      break;
    case vop3::kVMadU32U24:
      set32([&](int l) { return (a(l) & 0xffffff) * (b(l) & 0xffffff) + c(l); });
      break;
    case vop3::kVMadI32I24:
      set32([&](int l) {
        return static_cast<uint32_t>((static_cast<int32_t>(a(l) << 8) >> 8) * (static_cast<int32_t>(b(l) << 8) >> 8)) +
               c(l);
      });
      break;
    case vop3::kVBfeU32:
      set32([&](int l) {
        const uint32_t off = b(l) & 31, w = c(l) & 31;
        return w == 0 ? 0u : (a(l) >> off) & ((1u << w) - 1);
      });
      break;
    case vop3::kVBfeI32:
      set32([&](int l) {
        const uint32_t off = b(l) & 31, w = c(l) & 31;
        if (w == 0) return 0u;
        const uint32_t field = (a(l) >> off) & ((1u << w) - 1);
        return static_cast<uint32_t>(static_cast<int32_t>(field << (32 - w)) >> (32 - w));
      });
      break;
    case vop3::kVBfiB32:
      set32([&](int l) { return (a(l) & b(l)) | (~a(l) & c(l)); });
      break;
    case vop3::kVAlignbitB32:
      set32([&](int l) { return static_cast<uint32_t>(((uint64_t{a(l)} << 32 | b(l)) >> (c(l) & 31))); });
      break;
    case vop3::kVAlignbyteB32:
      set32([&](int l) { return static_cast<uint32_t>(((uint64_t{a(l)} << 32 | b(l)) >> (8 * (c(l) & 3)))); });
      break;
    case vop3::kVMin3F32:
      setf32([&](int l) { return MinF(MinF(fa(l), fb(l)), fc(l)); });
      break;
    case vop3::kVMax3F32:
      setf32([&](int l) { return MaxF(MaxF(fa(l), fb(l)), fc(l)); });
      break;
    case vop3::kVMed3F32:
      setf32([&](int l) { return Median3(fa(l), fb(l), fc(l)); });
      break;
    case vop3::kVMin3I32:
      set32([&](int l) {
        return static_cast<uint32_t>(
            std::min({static_cast<int32_t>(a(l)), static_cast<int32_t>(b(l)), static_cast<int32_t>(c(l))}));
      });
      break;
    case vop3::kVMax3I32:
      set32([&](int l) {
        return static_cast<uint32_t>(
            std::max({static_cast<int32_t>(a(l)), static_cast<int32_t>(b(l)), static_cast<int32_t>(c(l))}));
      });
      break;
    case vop3::kVMed3I32:
      set32([&](int l) {
        return static_cast<uint32_t>(
            Median3(static_cast<int32_t>(a(l)), static_cast<int32_t>(b(l)), static_cast<int32_t>(c(l))));
      });
      break;
    case vop3::kVMin3U32:
      set32([&](int l) { return std::min({a(l), b(l), c(l)}); });
      break;
    case vop3::kVMax3U32:
      set32([&](int l) { return std::max({a(l), b(l), c(l)}); });
      break;
    case vop3::kVMed3U32:
      set32([&](int l) { return Median3(a(l), b(l), c(l)); });
      break;
    // 16-bit three-operand forms (what clang emits for byte and half reductions): op_sel picks each source's
    // half and the destination's, like the other VOP3 16-bit operations.
    case vop3::kVMin3U16:
      set16([&](int l) { return std::min({u16(0, a(l)), u16(1, b(l)), u16(2, c(l))}); });
      break;
    case vop3::kVMax3U16:
      set16([&](int l) { return std::max({u16(0, a(l)), u16(1, b(l)), u16(2, c(l))}); });
      break;
    case vop3::kVMed3U16:
      set16([&](int l) { return Median3(u16(0, a(l)), u16(1, b(l)), u16(2, c(l))); });
      break;
    case vop3::kVMin3I16:
      set16([&](int l) { return std::min({i16(0, a(l)), i16(1, b(l)), i16(2, c(l))}); });
      break;
    case vop3::kVMax3I16:
      set16([&](int l) { return std::max({i16(0, a(l)), i16(1, b(l)), i16(2, c(l))}); });
      break;
    case vop3::kVMed3I16:
      set16([&](int l) { return Median3(i16(0, a(l)), i16(1, b(l)), i16(2, c(l))); });
      break;
    case vop3::kVMin3F16:
      setf16([&](int l) { return MinF(MinF(ha(l), hb(l)), hc(l)); });
      break;
    case vop3::kVMax3F16:
      setf16([&](int l) { return MaxF(MaxF(ha(l), hb(l)), hc(l)); });
      break;
    case vop3::kVMed3F16:
      setf16([&](int l) { return Med3F(ha(l), hb(l), hc(l)); });
      break;
    case vop3::kVMaxminF32:
      setf32([&](int l) { return MinF(MaxF(fa(l), fb(l)), fc(l)); });
      break;
    case vop3::kVMinmaxF32:
      setf32([&](int l) { return MaxF(MinF(fa(l), fb(l)), fc(l)); });
      break;
    case vop3::kVMaxminF16:
      setf16([&](int l) { return MinF(MaxF(ha(l), hb(l)), hc(l)); });
      break;
    case vop3::kVMinmaxF16:
      setf16([&](int l) { return MaxF(MinF(ha(l), hb(l)), hc(l)); });
      break;
    // 16-bit multiply-add; VOP3's clamp saturates an integer result to its type's range (as LLVM uses it for
    // saturating arithmetic), else the result wraps.
    case vop3::kVMadU16:
      set16([&](int l) {
        const uint32_t r = uint32_t{u16(0, a(l))} * u16(1, b(l)) + u16(2, c(l));
        return inst.clamp ? std::min<uint32_t>(r, 0xffff) : r;
      });
      break;
    case vop3::kVMadI16:
      set16([&](int l) {
        const int32_t r = int32_t{i16(0, a(l))} * i16(1, b(l)) + i16(2, c(l));
        return static_cast<uint16_t>(inst.clamp ? std::clamp(r, -32768, 32767) : r);
      });
      break;
    // Sums of absolute differences onto S2 (RDNA3 ISA, V_SAD_*): per byte, per byte into bits 31:16, per half, and
    // of the whole dwords.
    case vop3::kVSadU8:
      set32([&](int l) { return c(l) + SumOfByteDifferences(a(l), b(l)); });
      break;
    case vop3::kVSadHiU8:
      set32([&](int l) { return c(l) + (SumOfByteDifferences(a(l), b(l)) << 16); });
      break;
    case vop3::kVSadU16:
      set32([&](int l) {
        return c(l) + AbsoluteDifference(a(l) & 0xffff, b(l) & 0xffff) + AbsoluteDifference(a(l) >> 16, b(l) >> 16);
      });
      break;
    case vop3::kVSadU32:
      set32([&](int l) { return c(l) + AbsoluteDifference(a(l), b(l)); });
      break;
    // Per byte, the average of S0's and S1's bytes rounded by the bit of S2 at the byte's lowest position.
    case vop3::kVLerpU8:
      set32([&](int l) {
        uint32_t r = 0;
        for (int byte = 0; byte < 4; ++byte) {
          const int shift = 8 * byte;
          const uint32_t sum = ((a(l) >> shift) & 0xff) + ((b(l) >> shift) & 0xff) + ((c(l) >> shift) & 1);
          r |= (sum >> 1) << shift;
        }
        return r;
      });
      break;
    case vop3::kVMaxminU32:
      set32([&](int l) { return std::min(std::max(a(l), b(l)), c(l)); });
      break;
    case vop3::kVMinmaxU32:
      set32([&](int l) { return std::max(std::min(a(l), b(l)), c(l)); });
      break;
    case vop3::kVMaxminI32:
      set32([&](int l) {
        return static_cast<uint32_t>(
            std::min(std::max(static_cast<int32_t>(a(l)), static_cast<int32_t>(b(l))), static_cast<int32_t>(c(l))));
      });
      break;
    case vop3::kVMinmaxI32:
      set32([&](int l) {
        return static_cast<uint32_t>(
            std::max(std::min(static_cast<int32_t>(a(l)), static_cast<int32_t>(b(l))), static_cast<int32_t>(c(l))));
      });
      break;
    case vop3::kVDivFixupF32:
      setf32([&](int l) { return DivFixup(fa(l), fb(l), fc(l)); });
      break;
    case vop3::kVDivFixupF64:
      setf64([&](int l) { return DivFixup(da(l), db(l), dc(l)); });
      break;
    case vop3::kVDivFmasF32:
    case vop3::kVDivFmasF64: {
      const uint64_t vcc = wave.mask_at(operand::kVccLo);
      if (op == vop3::kVDivFmasF32) {
        setf32([&](int l) {
          const float r = std::fma(fa(l), fb(l), fc(l));
          if (!((vcc >> l) & 1)) return r;
          int e = 0;
          std::frexp(fc(l), &e);
          return std::ldexp(r, e - 1 > 126 ? 64 : -64);
        });
      } else {
        setf64([&](int l) {
          const double r = std::fma(da(l), db(l), dc(l));
          if (!((vcc >> l) & 1)) return r;
          int e = 0;
          std::frexp(dc(l), &e);
          return std::ldexp(r, e - 1 > 1022 ? 128 : -128);
        });
      }
      break;
    }
    case vop3::kVDivScaleF32:
    case vop3::kVDivScaleF64: {
      uint64_t vcc = 0;
      if (op == vop3::kVDivScaleF32) {
        each([&](int l) {
          bool flag = false;
          d[l] = out_f32(DivScale(fa(l), fb(l), fc(l), flag));
          if (flag) vcc |= uint64_t{1} << l;
        });
      } else {
        each([&](int l) {
          bool flag = false;
          const uint64_t r = out_f64(DivScale(da(l), db(l), dc(l), flag));
          d[l] = static_cast<uint32_t>(r);
          d_hi[l] = static_cast<uint32_t>(r >> 32);
          if (flag) vcc |= uint64_t{1} << l;
        });
      }
      wave.set_mask_at(inst.sdst, vcc);
      break;
    }
    case vop3::kVXor3B32:
      set32([&](int l) { return a(l) ^ b(l) ^ c(l); });
      break;
    case vop3::kVPermB32:
      set32([&](int l) {
        const uint64_t bytes = uint64_t{a(l)} << 32 | b(l);
        uint32_t r = 0;
        for (int i = 0; i < 4; ++i) {
          const uint32_t sel = (c(l) >> (8 * i)) & 0xff;
          uint32_t byte;
          if (sel < 8) {
            byte = (bytes >> (8 * sel)) & 0xff;
          } else if (sel < 12) {
            // Sign of a 16-bit half replicated.
            const int bit = sel == 8 ? 15 : sel == 9 ? 31 : sel == 10 ? 47 : 63;
            byte = ((bytes >> bit) & 1) ? 0xff : 0;
          } else if (sel == 12) {
            byte = 0;
          } else {
            byte = 0xff;
          }
          r |= byte << (8 * i);
        }
        return r;
      });
      break;
    case vop3::kVXadU32:
      set32([&](int l) { return (a(l) ^ b(l)) + c(l); });
      break;
    case vop3::kVLshlAddU32:
      set32([&](int l) { return (a(l) << (b(l) & 31)) + c(l); });
      break;
    case vop3::kVAddLshlU32:
      set32([&](int l) { return (a(l) + b(l)) << (c(l) & 31); });
      break;
    case vop3::kVAdd3U32:
      set32([&](int l) { return a(l) + b(l) + c(l); });
      break;
    case vop3::kVLshlOrB32:
      set32([&](int l) { return (a(l) << (b(l) & 31)) | c(l); });
      break;
    case vop3::kVAndOrB32:
      set32([&](int l) { return (a(l) & b(l)) | c(l); });
      break;
    case vop3::kVOr3B32:
      set32([&](int l) { return a(l) | b(l) | c(l); });
      break;
    case vop3::kVMadU32U16:
      set32([&](int l) { return uint32_t{u16(0, a(l))} * u16(1, b(l)) + c(l); });
      break;
    case vop3::kVMadI32I16:
      set32([&](int l) {
        return static_cast<uint32_t>(int32_t{static_cast<int16_t>(u16(0, a(l)))} * static_cast<int16_t>(u16(1, b(l)))) +
               c(l);
      });
      break;
    case vop3::kVCndmaskB16: {
      // abs/neg as on halves (bit 15), as for V_CNDMASK_B32.
      const uint64_t sel = wave.mask_at(inst.src[2]);
      auto modified = [&](int i, uint16_t bits) {
        if ((abs >> i) & 1) bits &= static_cast<uint16_t>(~kF16SignBit);
        if ((neg >> i) & 1) bits ^= kF16SignBit;
        return bits;
      };
      set16([&](int l) { return ((sel >> l) & 1) ? modified(1, u16(1, b(l))) : modified(0, u16(0, a(l))); });
      break;
    }
    case vop3::kVMadU64U32:
    case vop3::kVMadI64I32: {
      // { D1, D0 } = the 65-bit S0 * S1 + S2 (RDNA3 ISA pseudocode): D1 (the VOP3SD SDST lane bit) is bit 64, the
      // unsigned carry-out, or for the signed form the sign of the exact sum (which no 64-bit overflow can lose).
      uint64_t high_bit = 0;
      each([&](int l) {
        uint64_t r;
        bool bit64;
        if (op == vop3::kVMadU64U32) {
          const unsigned __int128 sum = static_cast<unsigned __int128>(uint64_t{a(l)} * b(l)) + c64(l);
          r = static_cast<uint64_t>(sum);
          bit64 = (sum >> 64) != 0;
        } else {
          const __int128 sum = static_cast<__int128>(int64_t{static_cast<int32_t>(a(l))} * static_cast<int32_t>(b(l))) +
                               static_cast<int64_t>(c64(l));
          r = static_cast<uint64_t>(sum);
          bit64 = sum < 0;
        }
        d[l] = static_cast<uint32_t>(r);
        d_hi[l] = static_cast<uint32_t>(r >> 32);
        if (bit64) high_bit |= uint64_t{1} << l;
      });
      wave.set_mask_at(inst.sdst, high_bit);
      break;
    }
    case vop3::kVAddCoU32: {
      uint64_t carry = 0;
      each([&](int l) {
        const uint64_t r = uint64_t{a(l)} + b(l);
        if ((r >> 32) != 0) carry |= uint64_t{1} << l;
        d[l] = static_cast<uint32_t>(r);
      });
      wave.set_mask_at(inst.sdst, carry);
      break;
    }
    case vop3::kVSubCoU32:
    case vop3::kVSubrevCoU32: {
      uint64_t borrow = 0;
      each([&](int l) {
        const uint32_t x = op == vop3::kVSubCoU32 ? a(l) : b(l), y = op == vop3::kVSubCoU32 ? b(l) : a(l);
        if (y > x) borrow |= uint64_t{1} << l;
        d[l] = x - y;
      });
      wave.set_mask_at(inst.sdst, borrow);
      break;
    }
    case vop3::kVAddNcU16:
      set16([&](int l) { return u16(0, a(l)) + u16(1, b(l)); });
      break;
    case vop3::kVSubNcU16:
      set16([&](int l) { return u16(0, a(l)) - u16(1, b(l)); });
      break;
    case vop3::kVMulLoU16:
      set16([&](int l) { return u16(0, a(l)) * u16(1, b(l)); });
      break;
    case vop3::kVAddNcI16:
      set16([&](int l) { return u16(0, a(l)) + u16(1, b(l)); });
      break;
    case vop3::kVSubNcI16:
      set16([&](int l) { return u16(0, a(l)) - u16(1, b(l)); });
      break;
    case vop3::kVMaxU16:
      set16([&](int l) { return std::max(u16(0, a(l)), u16(1, b(l))); });
      break;
    case vop3::kVMinU16:
      set16([&](int l) { return std::min(u16(0, a(l)), u16(1, b(l))); });
      break;
    case vop3::kVMaxI16:
      set16([&](int l) { return std::max(static_cast<int16_t>(u16(0, a(l))), static_cast<int16_t>(u16(1, b(l)))); });
      break;
    case vop3::kVMinI16:
      set16([&](int l) { return std::min(static_cast<int16_t>(u16(0, a(l))), static_cast<int16_t>(u16(1, b(l)))); });
      break;
    case vop3::kVLshlrevB16:
      set16([&](int l) { return u16(1, b(l)) << (u16(0, a(l)) & 15); });
      break;
    case vop3::kVLshrrevB16:
      set16([&](int l) { return u16(1, b(l)) >> (u16(0, a(l)) & 15); });
      break;
    case vop3::kVAshrrevI16:
      set16([&](int l) { return static_cast<int16_t>(u16(1, b(l))) >> (u16(0, a(l)) & 15); });
      break;
    case vop3::kVAndB16:
      set16([&](int l) { return u16(0, a(l)) & u16(1, b(l)); });
      break;
    case vop3::kVOrB16:
      set16([&](int l) { return u16(0, a(l)) | u16(1, b(l)); });
      break;
    case vop3::kVXorB16:
      set16([&](int l) { return u16(0, a(l)) ^ u16(1, b(l)); });
      break;
    case vop3::kVPackB32F16:
      set32([&](int l) { return uint32_t{F32ToF16(ha(l))} | uint32_t{F32ToF16(hb(l))} << 16; });
      break;
    case vop3::kVLdexpF32:
      setf32([&](int l) { return std::ldexp(fa(l), static_cast<int32_t>(b(l))); });
      break;
    case vop3::kVLdexpF64:
      setf64([&](int l) { return std::ldexp(da(l), static_cast<int32_t>(b(l))); });
      break;
    case vop3::kVTrigPreopF64:
      setf64([&](int l) { return TrigPreop(da(l), b(l)); });
      break;
    case vop3::kVBfmB32:
      set32([&](int l) { return ((1u << (a(l) & 31)) - 1) << (b(l) & 31); });
      break;
    case vop3::kVBcntU32B32:
      set32([&](int l) { return static_cast<uint32_t>(std::popcount(a(l))) + b(l); });
      break;
    case vop3::kVMbcntLoU32B32:
      set32([&](int l) {
        const uint32_t below = l >= 32 ? ~0u : (l == 0 ? 0u : (~0u >> (32 - l)));
        return static_cast<uint32_t>(std::popcount(a(l) & below)) + b(l);
      });
      break;
    case vop3::kVMbcntHiU32B32:
      set32([&](int l) {
        const int hi = l - 32;
        const uint32_t below = hi <= 0 ? 0u : (~0u >> (32 - hi));
        return static_cast<uint32_t>(std::popcount(a(l) & below)) + b(l);
      });
      break;
    case vop3::kVCvtPkU16U32:
      set32([&](int l) { return std::min(a(l), 0xffffu) | std::min(b(l), 0xffffu) << 16; });
      break;
    case vop3::kVCvtPkI16I32:
      set32([&](int l) {
        auto sat = [](uint32_t v) { return static_cast<uint16_t>(std::clamp(static_cast<int32_t>(v), -32768, 32767)); };
        return uint32_t{sat(a(l))} | uint32_t{sat(b(l))} << 16;
      });
      break;
    case vop3::kVAddNcI32:
      set32([&](int l) { return a(l) + b(l); });
      break;
    case vop3::kVSubNcI32:
      set32([&](int l) { return a(l) - b(l); });
      break;
    case vop3::kVAddF64:
      setf64([&](int l) { return da(l) + db(l); });
      break;
    case vop3::kVMulF64:
      setf64([&](int l) { return da(l) * db(l); });
      break;
    case vop3::kVMinF64:
      setf64([&](int l) { return std::fmin(da(l), db(l)); });
      break;
    case vop3::kVMaxF64:
      setf64([&](int l) { return std::fmax(da(l), db(l)); });
      break;
    case vop3::kVMulLoU32:
      set32([&](int l) { return a(l) * b(l); });
      break;
    case vop3::kVMulHiU32:
      set32([&](int l) { return static_cast<uint32_t>((uint64_t{a(l)} * b(l)) >> 32); });
      break;
    case vop3::kVMulHiI32:
      set32([&](int l) {
        return static_cast<uint32_t>(
            static_cast<uint64_t>(int64_t{static_cast<int32_t>(a(l))} * static_cast<int32_t>(b(l))) >> 32);
      });
      break;
    case vop3::kVLshlrevB64:
      set64([&](int l) { return b64(l) << (a(l) & 63); });
      break;
    case vop3::kVLshrrevB64:
      set64([&](int l) { return b64(l) >> (a(l) & 63); });
      break;
    case vop3::kVAshrrevI64:
      set64([&](int l) { return static_cast<uint64_t>(static_cast<int64_t>(b64(l)) >> (a(l) & 63)); });
      break;
    // Lane swizzles within (permlane16) or across (permlanex16: row r reads row r ^ 1) rows of 16 lanes: destination
    // lane i of a row takes the row's lane named by bits 4i+3:4i of {S2, S1} (RDNA3 ISA pseudocode). op_sel[0] is
    // FI (read a source lane even when EXEC has it off) and op_sel[1] BOUND_CTRL: without FI an inactive source lane
    // leaves the destination as it was, or writes 0 under BOUND_CTRL (LLVM's llvm.amdgcn.permlane16: `old`, fi,
    // bound_ctrl; the same rule as DPP's).
    case vop3::kVPermlane16B32:
    case vop3::kVPermlanex16B32: {
      if (src[0].lo == nullptr) return Illegal(wave, inst, "V_PERMLANE16/X16 reads src0 from other lanes: a VGPR");
      const uint64_t lane_select = uint64_t{c(0)} << 32 | b(0);
      const bool fetch_inactive = (inst.opsel & 1) != 0, bound_ctrl = (inst.opsel & 2) != 0;
      const bool other_row = op == vop3::kVPermlanex16B32;
      uint32_t before[kMaxLanes];  // the sources as they were: D may be S0
      std::copy(src[0].lo, src[0].lo + n, before);
      each([&](int l) {
        const int row = (l >> 4) ^ (other_row ? 1 : 0);
        const int from = row * 16 + static_cast<int>((lane_select >> (4 * (l & 15))) & 0xf);
        if (!fetch_inactive && !((exec >> from) & 1)) {
          if (bound_ctrl) d[l] = 0;
          return;
        }
        d[l] = before[from];
      });
      break;
    }
    case vop3::kVReadlaneB32: {
      const uint32_t lane = b(0) & (n - 1);
      WriteScalar(wave, inst.vdst, src[0].lo != nullptr ? src[0].lo[lane] : a(0));
      break;
    }
    case vop3::kVWritelaneB32: {
      const uint32_t lane = b(0) & (n - 1);
      d[lane] = a(0);  // ignores EXEC
      break;
    }
    case vop3::kVCvtPkNormI16F32:
      set32([&](int l) {
        return uint32_t{static_cast<uint16_t>(ToSnorm16(fa(l)))} | uint32_t{static_cast<uint16_t>(ToSnorm16(fb(l)))}
                                                                       << 16;
      });
      break;
    case vop3::kVCvtPkNormU16F32:
      set32([&](int l) { return uint32_t{ToUnorm16(fa(l))} | uint32_t{ToUnorm16(fb(l))} << 16; });
      break;
    case vop3::kVCvtPkNormI16F16:
      set32([&](int l) {
        return uint32_t{static_cast<uint16_t>(ToSnorm16(ha(l)))} | uint32_t{static_cast<uint16_t>(ToSnorm16(hb(l)))}
                                                                       << 16;
      });
      break;
    case vop3::kVCvtPkNormU16F16:
      set32([&](int l) { return uint32_t{ToUnorm16(ha(l))} | uint32_t{ToUnorm16(hb(l))} << 16; });
      break;
    case vop3::kVCvtNormI16F16:
      set16([&](int l) { return static_cast<uint16_t>(ToSnorm16(ha(l))); });
      break;
    case vop3::kVCvtNormU16F16:
      set16([&](int l) { return ToUnorm16(ha(l)); });
      break;
    case vop3::kVCvtPkI16F32:
      set32([&](int l) { return uint32_t{CvtF32ToI16(fa(l))} | uint32_t{CvtF32ToI16(fb(l))} << 16; });
      break;
    case vop3::kVCvtPkU16F32:
      set32([&](int l) { return uint32_t{CvtF32ToU16(fa(l))} | uint32_t{CvtF32ToU16(fb(l))} << 16; });
      break;
    case vop3::kVSatPkU8I16:
      set16([&](int l) { return Sat8(static_cast<int16_t>(a(l))) | Sat8(static_cast<int16_t>(a(l) >> 16)) << 8; });
      break;
    case vop3::kVDot2F16F16:
    case vop3::kVDot2Bf16Bf16: {
      // S0 and S1 are packed pairs, S2 one 16-bit value (op_sel[2] picks its half) and D one (op_sel[3]). abs/neg
      // act on the sign bit of both halves of a packed source.
      const bool bf16 = op == vop3::kVDot2Bf16Bf16;
      auto packed = [&](int i, uint32_t v) {
        if ((abs >> i) & 1) v &= ~(uint32_t{kF16SignBit} * 0x10001u);
        if ((neg >> i) & 1) v ^= uint32_t{kF16SignBit} * 0x10001u;
        if (!bf16 && flush16_64) v = FlushDenormF16(static_cast<uint16_t>(v)) | uint32_t{FlushDenormF16(v >> 16)} << 16;
        return v;
      };
      auto third = [&](int l) {
        uint16_t v = u16(2, c(l));
        if ((abs >> 2) & 1) v &= ~kF16SignBit;
        if ((neg >> 2) & 1) v ^= kF16SignBit;
        return !bf16 && flush16_64 ? FlushDenormF16(v) : v;
      };
      set16([&](int l) {
        if (bf16) {
          return Dot2Rounded16(packed(0, a(l)), packed(1, b(l)), third(l), RoundToBf16,
                               [](uint16_t v) { return static_cast<double>(Bf16ToF32(v)); });
        }
        const uint16_t r = Dot2Rounded16(
            packed(0, a(l)), packed(1, b(l)), third(l), [](double v) { return Bits16(static_cast<_Float16>(v)); },
            [](uint16_t v) { return static_cast<double>(F16ToF32(v)); });
        return flush16_64 ? FlushDenormF16(r) : r;
      });
      break;
    }
    // V_DOT2ACC_F32_F16 (RDNA3 ISA pseudocode): tmp = D; tmp += S0.lo * S1.lo; tmp += S0.hi * S1.hi, in f32. A
    // product of two halves is exact in f32; each sum rounds.
    case 256 + vop2::kVDot2accF32F16:
      setf32([&](int l) {
        auto half = [](uint32_t v, int h) { return F16ToF32(static_cast<uint16_t>(v >> (16 * h))); };
        float tmp = AsF32(d[l]);
        for (int h = 0; h < 2; ++h) tmp += half(a(l), h) * half(b(l), h);
        return tmp;
      });
      break;
    // V_FMA_DX9_ZERO_F32 / V_FMAC_DX9_ZERO_F32 (RDNA3 ISA pseudocode): DX9's rule that 0 times anything (infinity
    // and NaN included) is 0, so a zero factor gives the addend unchanged.
    case vop3::kVFmaDx9ZeroF32:
      setf32([&](int l) { return (fa(l) == 0.0f || fb(l) == 0.0f) ? fc(l) : std::fma(fa(l), fb(l), fc(l)); });
      break;
    case vop3::kVFmacDx9ZeroF32:
      setf32([&](int l) {
        const float acc = AsF32(flush32 ? FlushDenormF32(d[l]) : d[l]);
        return (fa(l) == 0.0f || fb(l) == 0.0f) ? acc : std::fma(fa(l), fb(l), acc);
      });
      break;
    // V_PK_FMAC_F16 (VOP2; RDNA3 ISA pseudocode): each half of D += S0's half * S1's half, fused, rounded to f16.
    case 256 + vop2::kVPkFmacF16:
      set32([&](int l) {
        uint32_t r = 0;
        for (int h = 0; h < 2; ++h) {
          auto at = [&](uint32_t v) {
            const uint16_t bits = static_cast<uint16_t>(v >> (16 * h));
            return static_cast<double>(F16ToF32(flush16_64 ? FlushDenormF16(bits) : bits));
          };
          // The f16 product is exact in double and the sum too (40-bit exponent span), so one rounding: fused.
          uint16_t bits = Bits16(static_cast<_Float16>(at(a(l)) * at(b(l)) + at(d[l])));
          if (flush16_64) bits = FlushDenormF16(bits);
          r |= uint32_t{bits} << (16 * h);
        }
        return r;
      });
      break;
    // V_SIN_F16 / V_COS_F16 take the angle in revolutions, like the f32 forms; the host's libm in double, rounded
    // once to f16 (the hardware's are approximate).
    case vop3::kVSinF16:
      setf16([&](int l) { return static_cast<float>(std::sin(ha(l) * 2.0 * M_PI)); });
      break;
    case vop3::kVCosF16:
      setf16([&](int l) { return static_cast<float>(std::cos(ha(l) * 2.0 * M_PI)); });
      break;
    // V_FREXP_MANT_F16 / V_FREXP_EXP_I16_F16 (RDNA3 ISA pseudocode): infinities and NaN give themselves (mantissa)
    // and 0 (exponent). Finite values through std::frexp like the f32 and f64 forms, which normalizes a denormal
    // (the pseudocode's exponent(S0) - 15 + 1 read literally would give -14 for every denormal; not checked on
    // hardware).
    case vop3::kVFrexpMantF16:
      setf16([&](int l) {
        int e = 0;
        const float v = ha(l);
        return std::isfinite(v) ? std::frexp(v, &e) : v;
      });
      break;
    case vop3::kVFrexpExpI16F16:
      set16([&](int l) {
        int e = 0;
        const float v = ha(l);
        if (!std::isfinite(v)) return uint16_t{0};
        std::frexp(v, &e);
        return static_cast<uint16_t>(e);
      });
      break;
    case vop3::kVDivFixupF16:
      setf16([&](int l) { return DivFixup(ha(l), hb(l), hc(l)); });
      break;
    // V_CVT_PK_U8_F32 (RDNA3 ISA pseudocode): f32_to_u8(S0) into byte S1[1:0] of S2, the other bytes kept.
    // f32_to_u8 is taken as the ISA's float-to-unsigned conversion (V_CVT_U32_F32: truncation, saturation, NaN 0)
    // narrowed to 0..255.
    case vop3::kVCvtPkU8F32:
      set32([&](int l) {
        const uint32_t shift = (b(l) & 3) * 8;
        const uint32_t byte = std::min<uint32_t>(CvtF32ToU32(fa(l)), 255);
        return (c(l) & ~(0xffu << shift)) | byte << shift;
      });
      break;
    // V_MSAD_U8 (RDNA3 ISA pseudocode): S2 plus the absolute differences of the bytes of S0 and S1, skipping the
    // bytes where S1 (the reference) is 0.
    case vop3::kVMsadU8:
      set32([&](int l) {
        uint32_t sum = c(l);
        for (int i = 0; i < 32; i += 8) {
          const uint32_t x = (a(l) >> i) & 0xff, y = (b(l) >> i) & 0xff;
          if (y != 0) sum += AbsoluteDifference(x, y);
        }
        return sum;
      });
      break;
    // V_CVT_OFF_F32_I4 (RDNA3 ISA): S0[3:0] as a signed 4-bit integer divided by 16 (the interpolation offsets
    // -0.5 .. 0.4375 in steps of 1/16; the ISA's CVT_OFF_TABLE).
    // V_CUBEID/CUBESC/CUBETC/CUBEMA_F32 (RDNA3 ISA pseudocode): the cube-map face of the direction (S0, S1, S2) =
    // (x, y, z), whose major axis is z when |z| >= |x| and |z| >= |y|, else y when |y| >= |x|, else x; the face's S and
    // T coordinates and twice the major axis. A NaN fails every comparison, so it falls through to the x branch.
    case vop3::kVCubeidF32:
    case vop3::kVCubescF32:
    case vop3::kVCubetcF32:
    case vop3::kVCubemaF32:
      setf32([&](int l) {
        const float x = fa(l), y = fb(l), z = fc(l);
        const int axis = (std::fabs(z) >= std::fabs(x) && std::fabs(z) >= std::fabs(y)) ? 2
                         : std::fabs(y) >= std::fabs(x)                                 ? 1
                                                                                        : 0;
        switch (op) {
          case vop3::kVCubeidF32:
            return axis == 2 ? (z < 0 ? 5.0f : 4.0f) : axis == 1 ? (y < 0 ? 3.0f : 2.0f) : (x < 0 ? 1.0f : 0.0f);
          case vop3::kVCubescF32:
            return axis == 2 ? (z < 0 ? -x : x) : axis == 1 ? x : (x < 0 ? z : -z);
          case vop3::kVCubetcF32:
            return axis == 2 ? -y : axis == 1 ? (y < 0 ? -z : z) : -y;
          default:
            return (axis == 2 ? z : axis == 1 ? y : x) * 2.0f;
        }
      });
      break;
    // V_QSAD_PK_U16_U8 / V_MQSAD_PK_U16_U8 / V_MQSAD_U32_U8 (RDNA3 ISA pseudocode): four sums of absolute byte
    // differences between the reference S1 and the 4-byte windows of S0 starting at bytes 0..3, each added to its
    // part of S2 (16 bits of a 64-bit S2, or a dword of a 128-bit one) and truncated to that width. The M forms
    // skip reference bytes that are 0 (V_MSAD_U8).
    case vop3::kVQsadPkU16U8:
    case vop3::kVMqsadPkU16U8:
    case vop3::kVMqsadU32U8: {
      const bool masked = op != vop3::kVQsadPkU16U8, wide = op == vop3::kVMqsadU32U8;
      auto sad = [&](uint32_t window, uint32_t reference, uint32_t sum) {
        for (int i = 0; i < 32; i += 8) {
          const uint32_t x = (window >> i) & 0xff, y = (reference >> i) & 0xff;
          if (!masked || y != 0) sum += AbsoluteDifference(x, y);
        }
        return sum;
      };
      if (wide) {
        if (src[2].lo == nullptr) return Illegal(wave, inst, "V_MQSAD_U32_U8's 128-bit accumulator must be VGPRs");
        const uint32_t* acc[4];
        uint32_t* out[4];
        for (int i = 0; i < 4; ++i) {
          acc[i] = wave.v(inst.src[2] - operand::kVgpr0 + i);
          out[i] = wave.v(inst.vdst + i);
        }
        each([&](int l) {
          uint32_t r[4];  // every source read before D, which may overlap S2
          for (int i = 0; i < 4; ++i) r[i] = sad(static_cast<uint32_t>(a64(l) >> (8 * i)), b(l), acc[i][l]);
          for (int i = 0; i < 4; ++i) out[i][l] = r[i];
        });
      } else {
        set64([&](int l) {
          uint64_t r = 0;
          for (int i = 0; i < 4; ++i) {
            const uint32_t part = static_cast<uint32_t>(c64(l) >> (16 * i)) & 0xffff;
            r |= uint64_t{sad(static_cast<uint32_t>(a64(l) >> (8 * i)), b(l), part) & 0xffff} << (16 * i);
          }
          return r;
        });
      }
      break;
    }
    case vop3::kVCvtOffF32I4:
      setf32([&](int l) { return static_cast<float>(static_cast<int>((a(l) & 0xf) ^ 0x8) - 8) / 16.0f; });
      break;
    // V_SWAP_B32 (VOP1): D and the VGPR S0 exchange their values lane by lane.
    case 384 + vop1::kVSwapB32: {
      if (src[0].lo == nullptr) return Illegal(wave, inst, "V_SWAP_B32's source must be a VGPR");
      uint32_t* other = wave.v(inst.src[0] - operand::kVgpr0);
      each([&](int l) { std::swap(d[l], other[l]); });
      break;
    }
    // V_PERMLANE64_B32 (RDNA3 ISA pseudocode): in wave64 each enabled lane takes S0 from the lane 32 away (the
    // other half), whatever EXEC says of that lane; in wave32 it is a NOP.
    case 384 + vop1::kVPermlane64B32: {
      if (n != 64) break;
      if (src[0].lo == nullptr) return Illegal(wave, inst, "V_PERMLANE64_B32 reads src0 from other lanes: a VGPR");
      uint32_t before[kMaxLanes];  // D may be S0
      std::copy(src[0].lo, src[0].lo + n, before);
      set32([&](int l) { return before[l ^ 32]; });
      break;
    }
    // V_MOVRELS/MOVRELD/MOVRELSD/MOVRELSD_2_B32 and V_SWAPREL_B32 (RDNA3 ISA pseudocode): the source and/or
    // destination VGPR numbers from the instruction plus M0 (all of it, or M0[9:0] for the source and M0[25:16] for
    // the destination in the _2 and SWAPREL forms). An index past the wave's VGPRs is refused rather than wrapped.
    case 384 + vop1::kVMovrelsB32:
    case 384 + vop1::kVMovreldB32:
    case 384 + vop1::kVMovrelsdB32:
    case 384 + vop1::kVMovrelsd2B32:
    case 384 + vop1::kVSwaprelB32: {
      const uint32_t m0 = wave.sgpr[operand::kM0];
      const bool split = op == 384 + vop1::kVMovrelsd2B32 || op == 384 + vop1::kVSwaprelB32;
      const bool relative_source = op != 384 + vop1::kVMovreldB32;
      const bool relative_dest = op != 384 + vop1::kVMovrelsB32;
      if (relative_source && src[0].lo == nullptr) return Illegal(wave, inst, "a relative source must be a VGPR");
      const uint64_t source =
          relative_source ? static_cast<uint64_t>(inst.src[0] - operand::kVgpr0) + (split ? m0 & 0x3ff : m0) : 0;
      const uint64_t dest = uint64_t{inst.vdst} + (relative_dest ? (split ? (m0 >> 16) & 0x3ff : m0) : 0);
      if (source >= kVgprCount || dest >= kVgprCount) {
        return Illegal(wave, inst,
                       absl::StrFormat("M0-relative VGPR v%d / v%d is past v%d", source, dest, kVgprCount - 1));
      }
      uint32_t* from = relative_source ? wave.v(static_cast<uint32_t>(source)) : nullptr;
      uint32_t* to = wave.v(static_cast<uint32_t>(dest));
      if (op == 384 + vop1::kVSwaprelB32) {
        each([&](int l) { std::swap(to[l], from[l]); });
      } else if (relative_source) {
        each([&](int l) { to[l] = from[l]; });
      } else {
        each([&](int l) { to[l] = a(l); });
      }
      break;
    }
    // V_MULLIT_F32 (RDNA3 ISA pseudocode; the legacy lighting multiply): -MAX_FLOAT when S1 is -MAX_FLOAT, -inf or
    // NaN or S2 is not above 0 (NaN included), else S0 * S1.
    case vop3::kVMullitF32:
      setf32([&](int l) {
        const float s1 = fb(l), s2 = fc(l);
        const float lowest = std::numeric_limits<float>::lowest();
        if (s1 == lowest || s1 == -std::numeric_limits<float>::infinity() || std::isnan(s1) || !(s2 > 0.0f)) {
          return lowest;
        }
        return fa(l) * s1;
      });
      break;
    case vop3::kVPipeflush:
      break;  // orders the pipeline on the hardware; the interpreter runs one instruction at a time
    default:
      return Illegal(wave, inst, "VALU operation not implemented by the interpreter");
  }
  return Flow::kNext;
}

WorkgroupRunner::Flow WorkgroupRunner::Vop3p(Wave& wave, const Instruction& inst) {
  if (WmmaFormatOf(inst.opcode).has_value()) return Wmma(wave, inst);  // matrices across the wave, not per lane
  const int n = wave.lanes;
  const uint64_t exec = wave.exec();
  Src src[3];
  for (int i = 0; i < 3; ++i) {
    const uint16_t code = inst.src[i];
    if (operand::IsVgpr(code)) {
      src[i].lo = wave.v(code - operand::kVgpr0);
    } else if (inst.float_bits == 16 && code >= operand::kFloatHalf && code <= operand::kInvTwoPi) {
      src[i].value = kInlineF16[code - operand::kFloatHalf];  // the constant in the low half, 0 above
    } else {
      src[i].value = ScalarValue(wave, inst, code);
    }
  }
  // DPP (v_fma_mix*, v_dot2*): src0 from another lane; lanes that take no value are not written.
  uint32_t dpp_row[kMaxLanes];
  uint64_t active = exec;
  if (inst.dpp != 0) {
    const std::optional<uint64_t> enabled = DppGather(inst, n, exec, src[0].lo, dpp_row);
    if (!enabled.has_value()) return Illegal(wave, inst, "DPP control not implemented by the interpreter");
    active &= *enabled;
    src[0].lo = dpp_row;
  }
  uint32_t* d = wave.v(inst.vdst);
  const uint16_t op = inst.opcode;
  // Half `hi` (0/1) of source i for the packed operations: op_sel picks the half for the low result, op_sel_hi for
  // the high result; neg_lo/neg_hi negate (float) per half.
  auto half = [&](int i, int l, bool hi) -> uint16_t {
    const bool sel = hi ? (inst.opsel_hi >> i) & 1 : (inst.opsel >> i) & 1;
    return static_cast<uint16_t>(sel ? src[i].u32(l) >> 16 : src[i].u32(l));
  };
  auto fhalf = [&](int i, int l, bool hi) {
    float v = F16ToF32(half(i, l, hi));
    if (hi ? (inst.neg_hi >> i) & 1 : (inst.neg >> i) & 1) v = -v;
    return v;
  };
  auto each = [&](auto body) {
    for (uint64_t m = active; m != 0; m &= m - 1) body(std::countr_zero(m));
  };
  auto packed = [&](auto f) {
    each([&](int l) {
      d[l] = uint32_t{static_cast<uint16_t>(f(l, false))} | uint32_t{static_cast<uint16_t>(f(l, true))} << 16;
    });
  };
  auto clamp01 = [&](float v) { return inst.clamp ? (std::isnan(v) ? 0.0f : std::clamp(v, 0.0f, 1.0f)) : v; };
  // fma_mix: a source is f32, or f16 (op_sel picks the half) when its op_sel_hi bit is set.
  auto mix = [&](int i, int l) {
    float v;
    if ((inst.opsel_hi >> i) & 1) {
      v = F16ToF32(static_cast<uint16_t>(((inst.opsel >> i) & 1) ? src[i].u32(l) >> 16 : src[i].u32(l)));
    } else {
      v = AsF32(src[i].u32(l));
    }
    if ((inst.neg_hi >> i) & 1) v = std::fabs(v);  // neg_hi is abs for the mix operations
    if ((inst.neg >> i) & 1) v = -v;
    return v;
  };
  switch (op) {
    case vop3p::kVPkAddF16:
      packed([&](int l, bool hi) { return F32ToF16(clamp01(fhalf(0, l, hi) + fhalf(1, l, hi))); });
      break;
    case vop3p::kVPkMulF16:
      packed([&](int l, bool hi) { return F32ToF16(clamp01(fhalf(0, l, hi) * fhalf(1, l, hi))); });
      break;
    case vop3p::kVPkFmaF16:
      packed([&](int l, bool hi) {
        return F32ToF16(clamp01(std::fma(fhalf(0, l, hi), fhalf(1, l, hi), fhalf(2, l, hi))));
      });
      break;
    case vop3p::kVPkMinF16:
      packed([&](int l, bool hi) { return F32ToF16(MinF(fhalf(0, l, hi), fhalf(1, l, hi))); });
      break;
    case vop3p::kVPkMaxF16:
      packed([&](int l, bool hi) { return F32ToF16(MaxF(fhalf(0, l, hi), fhalf(1, l, hi))); });
      break;
    case vop3p::kVPkAddU16:
    case vop3p::kVPkAddI16:
      packed([&](int l, bool hi) { return half(0, l, hi) + half(1, l, hi); });
      break;
    case vop3p::kVPkSubU16:
    case vop3p::kVPkSubI16:
      packed([&](int l, bool hi) { return half(0, l, hi) - half(1, l, hi); });
      break;
    case vop3p::kVPkMulLoU16:
      packed([&](int l, bool hi) { return half(0, l, hi) * half(1, l, hi); });
      break;
    case vop3p::kVPkLshlrevB16:
      packed([&](int l, bool hi) { return half(1, l, hi) << (half(0, l, hi) & 15); });
      break;
    case vop3p::kVPkLshrrevB16:
      packed([&](int l, bool hi) { return half(1, l, hi) >> (half(0, l, hi) & 15); });
      break;
    case vop3p::kVPkAshrrevI16:
      packed([&](int l, bool hi) { return static_cast<int16_t>(half(1, l, hi)) >> (half(0, l, hi) & 15); });
      break;
    case vop3p::kVPkMaxU16:
      packed([&](int l, bool hi) { return std::max(half(0, l, hi), half(1, l, hi)); });
      break;
    case vop3p::kVPkMinU16:
      packed([&](int l, bool hi) { return std::min(half(0, l, hi), half(1, l, hi)); });
      break;
    case vop3p::kVPkMaxI16:
      packed([&](int l, bool hi) {
        return std::max(static_cast<int16_t>(half(0, l, hi)), static_cast<int16_t>(half(1, l, hi)));
      });
      break;
    case vop3p::kVPkMinI16:
      packed([&](int l, bool hi) {
        return std::min(static_cast<int16_t>(half(0, l, hi)), static_cast<int16_t>(half(1, l, hi)));
      });
      break;
    case vop3p::kVPkMadU16:
      packed([&](int l, bool hi) { return half(0, l, hi) * half(1, l, hi) + half(2, l, hi); });
      break;
    case vop3p::kVFmaMixF32:
      each([&](int l) { d[l] = Bits32(clamp01(std::fma(mix(0, l), mix(1, l), mix(2, l)))); });
      break;
    case vop3p::kVFmaMixloF16:
      each([&](int l) { d[l] = (d[l] & 0xffff0000u) | F32ToF16(clamp01(std::fma(mix(0, l), mix(1, l), mix(2, l)))); });
      break;
    case vop3p::kVFmaMixhiF16:
      each([&](int l) {
        d[l] = (d[l] & 0xffffu) | uint32_t{F32ToF16(clamp01(std::fma(mix(0, l), mix(1, l), mix(2, l))))} << 16;
      });
      break;
    case vop3p::kVDot2F32F16:
      each([&](int l) {
        const float r =
            fhalf(0, l, false) * fhalf(1, l, false) + fhalf(0, l, true) * fhalf(1, l, true) + AsF32(src[2].u32(l));
        d[l] = Bits32(clamp01(r));
      });
      break;
    case vop3p::kVPkMadI16:
      packed([&](int l, bool hi) {
        return static_cast<int16_t>(half(0, l, hi)) * static_cast<int16_t>(half(1, l, hi)) +
               static_cast<int16_t>(half(2, l, hi));
      });
      break;
    // V_DOT2_F32_BF16 (RDNA3 ISA pseudocode): tmp = S2.f32; tmp += bf16 products in order, in f32. A bf16 product is
    // exact in f32 (16 significant bits) unless it leaves f32's exponent range, so each sum is the one rounding.
    case vop3p::kVDot2F32Bf16:
      each([&](int l) {
        float tmp = AsF32(src[2].u32(l));
        for (int h = 0; h < 2; ++h) {
          float x = Bf16ToF32(half(0, l, h != 0)), y = Bf16ToF32(half(1, l, h != 0));
          if ((h ? inst.neg_hi : inst.neg) & 1) x = -x;
          if ((h ? inst.neg_hi : inst.neg) & 2) y = -y;
          tmp += x * y;
        }
        d[l] = Bits32(clamp01(tmp));
      });
      break;
    // Integer dot products (RDNA3 ISA pseudocode): S2 plus the products of the 8-bit (4-bit) fields of S0 and S1.
    // For the IU forms NEG[0] / NEG[1] say that S0's / S1's fields are signed. CLAMP saturates the sum to the
    // result's range instead of wrapping (LLVM's VOP3P dot instructions take clamp; the ISA's integer clamp rule).
    case vop3p::kVDot4I32Iu8:
    case vop3p::kVDot4U32U8:
    case vop3p::kVDot8I32Iu4:
    case vop3p::kVDot8U32U4: {
      const bool nibbles = op == vop3p::kVDot8I32Iu4 || op == vop3p::kVDot8U32U4;
      const bool signed_result = op == vop3p::kVDot4I32Iu8 || op == vop3p::kVDot8I32Iu4;
      const int bits = nibbles ? 4 : 8;
      const bool signed_a = signed_result && (inst.neg & 1), signed_b = signed_result && (inst.neg & 2);
      auto field = [&](uint32_t v, int i, bool is_signed) -> int64_t {
        const uint32_t raw = (v >> (i * bits)) & ((1u << bits) - 1);
        return is_signed && (raw >> (bits - 1)) ? int64_t{raw} - (int64_t{1} << bits) : int64_t{raw};
      };
      each([&](int l) {
        const uint32_t x = src[0].u32(l), y = src[1].u32(l), acc = src[2].u32(l);
        int64_t sum = signed_result ? int64_t{static_cast<int32_t>(acc)} : int64_t{acc};
        for (int i = 0; i < 32 / bits; ++i) sum += field(x, i, signed_a) * field(y, i, signed_b);
        if (inst.clamp) {
          sum =
              signed_result ? std::clamp<int64_t>(sum, INT32_MIN, INT32_MAX) : std::clamp<int64_t>(sum, 0, UINT32_MAX);
        }
        d[l] = static_cast<uint32_t>(sum);
      });
      break;
    }
    default:
      return Illegal(wave, inst, "VOP3P operation not implemented by the interpreter");
  }
  return Flow::kNext;
}

WorkgroupRunner::Flow WorkgroupRunner::RunFastVopd(Wave& wave, const Instruction& inst) {
  // VOPD is a wave32 encoding (llvm-mc-19: "instruction requires wavesize=32"), so the fast path is wave32's alone:
  // a wave64 VOPD word (no assembler makes one, so no test could check a fast copy) takes Vopd.
  if (wave.lanes != 32 || FlushF32(wave.mode) || inst.opx == kDualDot2accF32F16 || inst.opy == kDualDot2accF32F16) {
    return Vopd(wave, inst);
  }
  return FastVopd<32>(wave, inst);
}

template <int N>
WorkgroupRunner::Flow WorkgroupRunner::FastVopd(Wave& wave, const Instruction& inst) {
  const uint64_t exec = wave.exec();
  // Both halves' results over every lane first (the hardware reads all sources before either half writes), then
  // the lanes EXEC enables are written. A lane EXEC leaves out computes on whatever its registers hold, unused.
  uint32_t results[2][N];
  uint32_t splat[2][N];  // a half's scalar src0 (SGPR, constant or literal) as a row
  const uint8_t ops[2] = {inst.opx, inst.opy};
  // FMAAK/FMAMK's constant K as a row; only they read it (filling it for every VOPD word was 2% of tinygrad's matmul).
  uint32_t literal_row[N];
  auto takes_literal = [](uint8_t op) { return op == kDualFmaakF32 || op == kDualFmamkF32; };
  if (takes_literal(ops[0]) || takes_literal(ops[1])) std::fill_n(literal_row, N, inst.literal);
  const uint16_t src0_code[2] = {inst.src[0], inst.y_src0}, src1_code[2] = {inst.src[1], inst.y_vsrc1};
  const uint16_t dst[2] = {inst.vdst, inst.y_vdst};
  const uint64_t vcc = wave.mask_at(operand::kVccLo);
  for (int half = 0; half < 2; ++half) {
    const uint32_t* a;
    if (operand::IsVgpr(src0_code[half])) {
      a = wave.v(src0_code[half] - operand::kVgpr0);
    } else {
      std::fill_n(splat[half], N, ScalarValue(wave, inst, src0_code[half]));
      a = splat[half];
    }
    // VSRC1 is a VGPR in both halves (the encoding has 8 bits for it); Vopd reads it through the same rule.
    const uint32_t* b = operand::IsVgpr(src1_code[half]) ? wave.v(src1_code[half] - operand::kVgpr0) : nullptr;
    if (b == nullptr) return Vopd(wave, inst);
    const uint32_t* acc = wave.v(dst[half]);
    uint32_t* r = results[half];
    auto floats = [&](auto f) {
      BAREGPU_INDEPENDENT_LANES
      for (int l = 0; l < N; ++l) r[l] = Bits32(f(AsF32(a[l]), AsF32(b[l]), l));
    };
    auto ints = [&](auto f) {
      BAREGPU_INDEPENDENT_LANES
      for (int l = 0; l < N; ++l) r[l] = f(a[l], b[l], l);
    };
    const uint32_t* k = literal_row;
    switch (ops[half]) {
      case kDualFmacF32:
        FmaLanes(a, b, acc, r, N);
        break;
      case kDualFmaakF32:
        FmaLanes(a, b, k, r, N);
        break;
      case kDualFmamkF32:
        FmaLanes(a, k, b, r, N);
        break;
      case kDualMulF32:
        floats([](float x, float y, int) { return x * y; });
        break;
      case kDualAddF32:
        floats([](float x, float y, int) { return x + y; });
        break;
      case kDualSubF32:
        floats([](float x, float y, int) { return x - y; });
        break;
      case kDualSubrevF32:
        floats([](float x, float y, int) { return y - x; });
        break;
      case kDualMulDx9ZeroF32:
        floats([](float x, float y, int) { return (x == 0 || y == 0) ? 0.0f : x * y; });
        break;
      case kDualMaxF32:
        floats([](float x, float y, int) { return MaxF(x, y); });
        break;
      case kDualMinF32:
        floats([](float x, float y, int) { return MinF(x, y); });
        break;
      case kDualMovB32:
        ints([](uint32_t x, uint32_t, int) { return x; });
        break;
      case kDualCndmaskB32:
        ints([&](uint32_t x, uint32_t y, int l) { return ((vcc >> l) & 1) != 0 ? y : x; });
        break;
      case kDualAddNcU32:
        ints([](uint32_t x, uint32_t y, int) { return x + y; });
        break;
      case kDualLshlrevB32:
        ints([](uint32_t x, uint32_t y, int) { return y << (x & 31); });
        break;
      case kDualAndB32:
        ints([](uint32_t x, uint32_t y, int) { return x & y; });
        break;
      default:
        return Vopd(wave, inst);  // raises the illegal instruction for an operation neither path has
    }
  }
  for (int half = 0; half < 2; ++half) {
    const uint32_t* r = results[half];
    Apply<N>(wave.v(dst[half]), exec, [&](int l) { return r[l]; });
  }
  return Flow::kNext;
}

WorkgroupRunner::Flow WorkgroupRunner::Vopd(Wave& wave, const Instruction& inst) {
  const int n = wave.lanes;
  const uint64_t exec = wave.exec();
  const bool flush32 = FlushF32(wave.mode);
  auto value = [&](uint16_t code, int l) -> uint32_t {
    return operand::IsVgpr(code) ? wave.v(code - operand::kVgpr0)[l] : ScalarValue(wave, inst, code);
  };
  auto f = [&](uint16_t code, int l) {
    uint32_t bits = value(code, l);
    return AsF32(flush32 ? FlushDenormF32(bits) : bits);
  };
  const uint64_t vcc = wave.mask_at(operand::kVccLo);
  const float literal = AsF32(inst.literal);
  // Both halves read their sources before either writes (the hardware issues them together).
  uint32_t results[2][kMaxLanes];
  const uint8_t ops[2] = {inst.opx, inst.opy};
  const uint16_t src0[2] = {inst.src[0], inst.y_src0}, src1[2] = {inst.src[1], inst.y_vsrc1};
  const uint16_t dst[2] = {inst.vdst, inst.y_vdst};
  for (int half = 0; half < 2; ++half) {
    const uint32_t* acc = wave.v(dst[half]);
    for (uint64_t m = exec; m != 0; m &= m - 1) {
      const int l = std::countr_zero(m);
      const uint16_t s0 = src0[half], s1 = src1[half];
      float r = 0;
      bool is_float = true;
      uint32_t bits = 0;
      switch (ops[half]) {
        case kDualFmacF32:
          r = FmaF32(f(s0, l), f(s1, l), AsF32(flush32 ? FlushDenormF32(acc[l]) : acc[l]));
          break;
        case kDualFmaakF32:
          r = FmaF32(f(s0, l), f(s1, l), literal);
          break;
        case kDualFmamkF32:
          r = FmaF32(f(s0, l), literal, f(s1, l));
          break;
        case kDualMulF32:
          r = f(s0, l) * f(s1, l);
          break;
        case kDualAddF32:
          r = f(s0, l) + f(s1, l);
          break;
        case kDualSubF32:
          r = f(s0, l) - f(s1, l);
          break;
        case kDualSubrevF32:
          r = f(s1, l) - f(s0, l);
          break;
        case kDualMulDx9ZeroF32:
          r = (f(s0, l) == 0 || f(s1, l) == 0) ? 0.0f : f(s0, l) * f(s1, l);
          break;
        case kDualMaxF32:
          r = MaxF(f(s0, l), f(s1, l));
          break;
        case kDualMinF32:
          r = MinF(f(s0, l), f(s1, l));
          break;
        case kDualDot2accF32F16: {  // V_DOT2ACC_F32_F16's pseudocode: D += lo products, then hi, in f32
          auto half = [&](uint16_t code, int h) { return F16ToF32(static_cast<uint16_t>(value(code, l) >> (16 * h))); };
          r = AsF32(acc[l]);
          for (int h = 0; h < 2; ++h) r += half(s0, h) * half(s1, h);
          break;
        }
        case kDualMovB32:
          is_float = false, bits = value(s0, l);
          break;
        case kDualCndmaskB32:
          is_float = false, bits = ((vcc >> l) & 1) ? value(s1, l) : value(s0, l);
          break;
        case kDualAddNcU32:
          is_float = false, bits = value(s0, l) + value(s1, l);
          break;
        case kDualLshlrevB32:
          is_float = false, bits = value(s1, l) << (value(s0, l) & 31);
          break;
        case kDualAndB32:
          is_float = false, bits = value(s0, l) & value(s1, l);
          break;
        default:
          return Illegal(wave, inst, "VOPD operation not implemented by the interpreter");
      }
      if (is_float) bits = flush32 ? FlushDenormF32(Bits32(r)) : Bits32(r);
      results[half][l] = bits;
    }
  }
  for (int half = 0; half < 2; ++half) {
    uint32_t* d = wave.v(dst[half]);
    for (uint64_t m = exec; m != 0; m &= m - 1) {
      const int l = std::countr_zero(m);
      d[l] = results[half][l];
    }
  }
  (void)n;
  return Flow::kNext;
}

}  // namespace am::sim::isa
