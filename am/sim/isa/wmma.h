// The gfx11 wave matrix multiply-accumulate operations, V_WMMA_<D>_16X16X16_<A/B> (D = A x B + C on 16 x 16
// matrices, K = 16): which types each one takes and how many VGPRs each matrix spans. The decoder, the
// disassembler (operand_shape.cc) and the executor (wmma.cc) share these numbers.
//
// Where the matrices live (AMD Matrix Instruction Calculator, github.com/ROCm/amd_matrix_instruction_calculator,
// `matrix_calculator.py -a rdna3 -i <instruction> -d`, wave32 and wave64; the same wave32 mapping in GPUOpen's "How to
// accelerate AI applications on RDNA 3 using WMMA" sample and in tinygrad's emulator, runtime/ops_python.py):
//  - A (src0) and B (src1): lane l holds row l % 16 of A and column l % 16 of B, all K = 16 elements, packed from
//    bit 0 of the block's first VGPR up (element k of a 16-bit type in VGPR k / 2, k even in the low half). Lanes
//    16-31 (and 32-63 in wave64) hold copies: A[i][k] is in lanes i, i + 16 (, i + 32, i + 48).
//  - C (src2) and D (vdst): VGPR j of lane l holds element (row = (lanes / 16) * j + l / 16, column = l % 16), so
//    wave32 takes 8 VGPRs (2 rows each) and wave64 4 (4 rows each). A 16-bit result takes one half of each of those
//    VGPRs, OPSEL[2] choosing which.
// LLVM agrees on every count (llvm-mc-19 -mcpu=gfx1100 accepts v_wmma_f32_16x16x16_f16 v[0:7], v[8:15], v[16:23],
// v[0:7], v_wmma_i32_16x16x16_iu8 with v[8:11] sources, _iu4 with v[8:9], and with +wavefrontsize64 v[0:3] for C/D).
#ifndef BAREGPU_AM_SIM_ISA_WMMA_H_
#define BAREGPU_AM_SIM_ISA_WMMA_H_

#include <cstdint>
#include <optional>

#include "am/sim/isa/opcodes.h"

namespace am::sim::isa {

// M = N = K = 16 for every gfx11 WMMA.
inline constexpr int kWmmaDim = 16;
inline constexpr int kWmmaElements = kWmmaDim * kWmmaDim;
inline constexpr int kBitsPerVgpr = 32;

enum class WmmaInput : uint8_t { kF16, kBf16, kIu8, kIu4 };
enum class WmmaResult : uint8_t { kF32, kF16, kBf16, kI32 };

struct WmmaFormat {
  WmmaInput input;
  WmmaResult result;
  int input_bits;  // one A or B element

  bool integer() const { return input == WmmaInput::kIu8 || input == WmmaInput::kIu4; }
  bool half_result() const { return result == WmmaResult::kF16 || result == WmmaResult::kBf16; }
  // VGPRs of A or of B: a lane's 16 K elements.
  int input_dwords() const { return kWmmaDim * input_bits / kBitsPerVgpr; }
};

// The WMMA a VOP3P opcode names, or nothing for the other VOP3P operations.
inline std::optional<WmmaFormat> WmmaFormatOf(uint16_t vop3p_opcode) {
  switch (vop3p_opcode) {
    case vop3p::kVWmmaF3216x16x16F16:
      return WmmaFormat{WmmaInput::kF16, WmmaResult::kF32, 16};
    case vop3p::kVWmmaF3216x16x16Bf16:
      return WmmaFormat{WmmaInput::kBf16, WmmaResult::kF32, 16};
    case vop3p::kVWmmaF1616x16x16F16:
      return WmmaFormat{WmmaInput::kF16, WmmaResult::kF16, 16};
    case vop3p::kVWmmaBf1616x16x16Bf16:
      return WmmaFormat{WmmaInput::kBf16, WmmaResult::kBf16, 16};
    case vop3p::kVWmmaI3216x16x16Iu8:
      return WmmaFormat{WmmaInput::kIu8, WmmaResult::kI32, 8};
    case vop3p::kVWmmaI3216x16x16Iu4:
      return WmmaFormat{WmmaInput::kIu4, WmmaResult::kI32, 4};
    default:
      return std::nullopt;
  }
}

// VGPRs of C or of D: one element per lane per VGPR, whatever the result type (8 in wave32, 4 in wave64).
inline constexpr int WmmaAccumulatorDwords(int lanes) { return kWmmaElements / lanes; }

}  // namespace am::sim::isa

#endif  // BAREGPU_AM_SIM_ISA_WMMA_H_
