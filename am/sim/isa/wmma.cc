// V_WMMA_*_16X16X16_* (gfx11 wave matrix multiply-accumulate): D = A x B + C over the whole wave. The operand
// layout is wmma.h's; this file reads A, B and C into plain 16 x 16 matrices, multiplies, and writes D back.
//
// Sources of the rules checked here:
//  - src0/src1 are VGPRs, src2 a VGPR or an inline constant: AMD's machine-readable RDNA3 ISA (operand types
//    OPR_SRC_VGPR and OPR_SRC_VGPR_OR_INLINE, as generated into tinygrad's runtime/autogen/amd/rdna3/operands.py);
//    llvm-mc-19 refuses SGPRs and literals there too.
//  - Modifiers (AMD Matrix Instruction Calculator, matrix_calculator.py: the RDNA3 NEG/NEG_HI handling and the
//    instruction table's cd_opsel): for float inputs NEG[0]/NEG[1] negate the low halves of A's/B's VGPRs and
//    NEG_HI[0]/NEG_HI[1] the high halves, NEG[2] subtracts C and NEG_HI[2] takes |C|; for IU8/IU4 NEG[0]/NEG[1]
//    make A/B signed, and NEG[2] and NEG_HI must be 0. OPSEL[2] (16-bit results only) picks the half of C and D;
//    OPSEL[1:0] is not supported. CLAMP is accepted by llvm-mc-19 for the integer WMMAs only (saturating the i32
//    result); OP_SEL_HI is always [1,1,1] in LLVM's encoding and has no documented meaning.
//  - The A/B copies in lanes 16-31 (32-63) must equal lanes 0-15: the calculator's InstCalcGfx11 ("multiple lanes
//    must store the same value"), GPUOpen's WMMA sample, tinygrad's emulator (asserts it).
//  - EXEC: the model requires all lanes; whether the part needs that or ignores EXEC is open (docs/fidelity.md).
#include "am/sim/isa/wmma.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>

#include "absl/strings/str_format.h"
#include "am/sim/isa/float_bits.h"
#include "am/sim/isa/workgroup_runner.h"

namespace am::sim::isa {
namespace {

constexpr int kSrcA = 0, kSrcB = 1, kSrcC = 2;
constexpr uint8_t kOpselHalfResult = 1u << kSrcC;  // OPSEL[2]: C and D in the high halves
constexpr uint8_t kOpselAll = 0b111;               // op_sel_hi as LLVM always encodes it
constexpr int kHalfBits = 16;
constexpr uint32_t kLowHalf = 0xffffu;
constexpr int kLaneGroup = kWmmaDim;  // A/B rows repeat every 16 lanes; C/D rows advance every 16 lanes
// The largest VGPR block a WMMA matrix takes: C/D in wave32, A/B of a 16-bit type (wmma.h).
constexpr int kMaxBlockVgprs = WmmaAccumulatorDwords(/*lanes=*/32);
using Block = std::array<const uint32_t*, kMaxBlockVgprs>;

bool IsFloatInlineConstant(uint16_t code) { return code >= operand::kFloatHalf && code <= operand::kInvTwoPi; }
bool IsInlineConstant(uint16_t code) {
  return (code >= operand::kIntZero && code <= operand::kIntMinusSixteen) || IsFloatInlineConstant(code);
}

// Element k (0..15) of one lane's A row or B column: bits [k * bits, (k + 1) * bits) of the lane's VGPR block.
uint32_t Field(const Block& block, int lane, int k, int bits) {
  const int per_vgpr = kBitsPerVgpr / bits;
  const uint32_t mask = (bits == kBitsPerVgpr) ? ~0u : (1u << bits) - 1;
  return (block[k / per_vgpr][lane] >> ((k % per_vgpr) * bits)) & mask;
}

int32_t SignExtend(uint32_t value, int bits) {
  const uint32_t sign = 1u << (bits - 1);
  return static_cast<int32_t>((value ^ sign) - sign);
}

}  // namespace

WorkgroupRunner::Flow WorkgroupRunner::Wmma(Wave& wave, const Instruction& inst) {
  const WmmaFormat format = *WmmaFormatOf(inst.opcode);
  const int lanes = wave.lanes;
  const int cd_dwords = WmmaAccumulatorDwords(lanes);
  const int rows_per_vgpr = lanes / kLaneGroup;

  // The rules (file comment), each refused with the illegal-instruction interrupt rather than guessed at.
  if (wave.exec() != wave.all_lanes()) {
    return Illegal(wave, inst,
                   absl::StrFormat("WMMA needs every lane of the wave%d enabled (EXEC all ones), but EXEC is %#x",
                                   lanes, wave.exec()));
  }
  if (inst.dpp != 0) return Illegal(wave, inst, "WMMA takes no DPP");
  if (!operand::IsVgpr(inst.src[kSrcA]) || !operand::IsVgpr(inst.src[kSrcB])) {
    return Illegal(wave, inst, "WMMA's A and B (src0, src1) must be VGPRs");
  }
  if (!operand::IsVgpr(inst.src[kSrcC]) && !IsInlineConstant(inst.src[kSrcC])) {
    return Illegal(wave, inst, "WMMA's C (src2) must be VGPRs or an inline constant");
  }
  auto past_last_vgpr = [](uint32_t first, int dwords) { return first + dwords > static_cast<uint32_t>(kVgprCount); };
  if (past_last_vgpr(inst.src[kSrcA] - operand::kVgpr0, format.input_dwords()) ||
      past_last_vgpr(inst.src[kSrcB] - operand::kVgpr0, format.input_dwords()) ||
      (operand::IsVgpr(inst.src[kSrcC]) && past_last_vgpr(inst.src[kSrcC] - operand::kVgpr0, cd_dwords)) ||
      past_last_vgpr(inst.vdst, cd_dwords)) {
    return Illegal(wave, inst, "a WMMA matrix runs past v255");
  }
  if ((inst.opsel & ~kOpselHalfResult) != 0 || (!format.half_result() && inst.opsel != 0)) {
    return Illegal(wave, inst, "WMMA's OPSEL may only set bit 2, and only for a 16-bit result");
  }
  if (inst.opsel_hi != kOpselAll) return Illegal(wave, inst, "WMMA's OP_SEL_HI must be [1,1,1]");
  if (inst.clamp && !format.integer()) return Illegal(wave, inst, "CLAMP applies to the integer WMMAs only");
  if (format.integer() && (((inst.neg >> kSrcC) & 1) != 0 || inst.neg_hi != 0)) {
    return Illegal(wave, inst, "an integer WMMA takes only NEG[0] and NEG[1] (A and B signed)");
  }
  if (format.result == WmmaResult::kBf16 && IsFloatInlineConstant(inst.src[kSrcC])) {
    return Illegal(wave, inst, "which BF16 value a float inline constant gives C is not documented for gfx11");
  }

  Block a_block{}, b_block{};
  for (int r = 0; r < format.input_dwords(); ++r) {
    a_block[r] = wave.v(inst.src[kSrcA] - operand::kVgpr0 + r);
    b_block[r] = wave.v(inst.src[kSrcB] - operand::kVgpr0 + r);
  }
  // Every copy of A and B must match lanes 0-15's.
  auto first_stray_copy = [&](const Block& block) -> std::optional<std::pair<int, int>> {
    for (int r = 0; r < format.input_dwords(); ++r) {
      for (int lane = kLaneGroup; lane < lanes; ++lane) {
        if (block[r][lane] != block[r][lane % kLaneGroup]) return std::pair{r, lane};
      }
    }
    return std::nullopt;
  };
  for (const auto& [name, block] : {std::pair{"A", &a_block}, std::pair{"B", &b_block}}) {
    if (const auto stray = first_stray_copy(*block); stray.has_value()) {
      const auto [r, lane] = *stray;
      return Illegal(wave, inst,
                     absl::StrFormat("WMMA's %s in lane %d (VGPR %d of its block) differs from lane %d's, which it "
                                     "must repeat",
                                     name, lane, r, lane % kLaneGroup));
    }
  }

  // C as a matrix: element (row, column) of a VGPR block, or the inline constant for every element.
  const bool half_high = (inst.opsel & kOpselHalfResult) != 0;
  const int half_shift = half_high ? kHalfBits : 0;
  uint32_t constant = 0;
  if (!operand::IsVgpr(inst.src[kSrcC])) {
    constant = ScalarValue(wave, inst, inst.src[kSrcC]);
    // A 16-bit C takes a float constant's half-precision encoding in both halves (RDNA3 ISA, WMMA section, as
    // quoted by third-party notes; not verified against the guide here); integer constants keep their 32 bits.
    if (format.result == WmmaResult::kF16 && IsFloatInlineConstant(inst.src[kSrcC])) {
      const uint32_t half = kInlineF16[inst.src[kSrcC] - operand::kFloatHalf];
      constant = half | half << kHalfBits;
    }
  }
  Block c_block{};
  for (int r = 0; r < cd_dwords && operand::IsVgpr(inst.src[kSrcC]); ++r) {
    c_block[r] = wave.v(inst.src[kSrcC] - operand::kVgpr0 + r);
  }
  auto c_bits = [&](int row, int column) -> uint32_t {
    if (!operand::IsVgpr(inst.src[kSrcC])) return constant;
    return c_block[row / rows_per_vgpr][(row % rows_per_vgpr) * kLaneGroup + column];
  };

  std::array<std::array<uint32_t, kWmmaDim>, kWmmaDim> d{};  // D's bits, row by column
  if (format.integer()) {
    const bool a_signed = (inst.neg >> kSrcA) & 1, b_signed = (inst.neg >> kSrcB) & 1;
    auto element = [&](const Block& block, int lane, int k, bool is_signed) -> int64_t {
      const uint32_t raw = Field(block, lane, k, format.input_bits);
      return is_signed ? SignExtend(raw, format.input_bits) : static_cast<int64_t>(raw);
    };
    for (int row = 0; row < kWmmaDim; ++row) {
      for (int column = 0; column < kWmmaDim; ++column) {
        int64_t sum = static_cast<int32_t>(c_bits(row, column));
        for (int k = 0; k < kWmmaDim; ++k) {
          sum += element(a_block, row, k, a_signed) * element(b_block, column, k, b_signed);
        }
        if (inst.clamp) sum = std::clamp<int64_t>(sum, INT32_MIN, INT32_MAX);
        d[row][column] = static_cast<uint32_t>(sum);  // without CLAMP the i32 wraps
      }
    }
  } else {
    const bool bf16 = format.input == WmmaInput::kBf16;
    // A 16-bit element and its NEG: an even k is in the VGPR's low half (NEG), an odd k in the high half (NEG_HI).
    auto element = [&](const Block& block, int src, int lane, int k) {
      const uint16_t raw = static_cast<uint16_t>(Field(block, lane, k, format.input_bits));
      const float value = bf16 ? Bf16ToF32(raw) : F16ToF32(raw);
      const uint8_t neg = (k % 2 == 0) ? inst.neg : inst.neg_hi;
      return ((neg >> src) & 1) ? -value : value;
    };
    auto c_value = [&](int row, int column) {
      const uint32_t bits = c_bits(row, column);
      const uint16_t half = static_cast<uint16_t>(bits >> half_shift);
      float value = format.result == WmmaResult::kF32   ? AsF32(bits)
                    : format.result == WmmaResult::kF16 ? F16ToF32(half)
                                                        : Bf16ToF32(half);
      if ((inst.neg_hi >> kSrcC) & 1) value = std::fabs(value);
      if ((inst.neg >> kSrcC) & 1) value = -value;
      return value;
    };
    // Each product of two 16-bit floats is exact in f32; the sum is taken in f32 in K order, then C is added. The
    // hardware's internal summation order (and whether it rounds between steps) is not documented, so results may
    // differ from a real part in the last bits. Rounding is to nearest even whatever MODE.FP_ROUND says (the RDNA3
    // ISA guide's WMMA section as third-party notes quote it; Execute does not switch the host's rounding mode for
    // WMMA), and 16-bit results are rounded a second time from that f32.
    for (int row = 0; row < kWmmaDim; ++row) {
      for (int column = 0; column < kWmmaDim; ++column) {
        float sum = element(a_block, kSrcA, row, 0) * element(b_block, kSrcB, column, 0);
        for (int k = 1; k < kWmmaDim; ++k) {
          sum += element(a_block, kSrcA, row, k) * element(b_block, kSrcB, column, k);
        }
        const float result = sum + c_value(row, column);
        switch (format.result) {
          case WmmaResult::kF32:
            d[row][column] = Bits32(result);
            break;
          case WmmaResult::kF16:
            d[row][column] = F32ToF16(result);
            break;
          default:
            d[row][column] = F32ToBf16(result);
            break;
        }
      }
    }
  }

  // Every source has been read: D may now overwrite C (the usual in-place accumulation) or anything else.
  const uint32_t keep = format.half_result() ? (half_high ? kLowHalf : kLowHalf << kHalfBits) : 0;
  for (int r = 0; r < cd_dwords; ++r) {
    uint32_t* out = wave.v(inst.vdst + r);
    for (int lane = 0; lane < lanes; ++lane) {
      const uint32_t value = d[r * rows_per_vgpr + lane / kLaneGroup][lane % kLaneGroup];
      out[lane] = format.half_result() ? (out[lane] & keep) | value << half_shift : value;
    }
  }
  return Flow::kNext;
}

}  // namespace am::sim::isa
