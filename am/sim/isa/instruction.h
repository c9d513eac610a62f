// One decoded gfx1100 (RDNA3) instruction. Field positions are those of AMD's "RDNA3 Instruction Set
// Architecture" microcode formats chapter; the decoder fills them once per code object so that the executor never
// looks at encoding bits again.
#ifndef BAREGPU_AM_SIM_ISA_INSTRUCTION_H_
#define BAREGPU_AM_SIM_ISA_INSTRUCTION_H_

#include <cstdint>

namespace am::sim::isa {

enum class Encoding : uint8_t {
  kSop2,
  kSopk,
  kSop1,
  kSopc,
  kSopp,
  kSmem,
  kVop1,
  kVop2,
  kVop3,
  kVop3p,
  kVopc,
  kVopd,
  kDs,
  kFlat,
  kGlobal,
  kScratch,
  kMubuf,
};

// Scalar/vector source operand codes (the 9-bit SRC fields; an 8-bit SGPR field uses the same values < 256).
namespace operand {
inline constexpr uint16_t kVccLo = 106;
inline constexpr uint16_t kVccHi = 107;
inline constexpr uint16_t kNull = 124;
inline constexpr uint16_t kM0 = 125;
inline constexpr uint16_t kExecLo = 126;
inline constexpr uint16_t kExecHi = 127;
inline constexpr uint16_t kIntZero = 128;      // 128..192: integers 0..64
inline constexpr uint16_t kIntMinusOne = 193;  // 193..208: integers -1..-16
inline constexpr uint16_t kIntMinusSixteen = 208;
inline constexpr uint16_t kFloatHalf = 240;  // 240..247: 0.5, -0.5, 1, -1, 2, -2, 4, -4
inline constexpr uint16_t kInvTwoPi = 248;
inline constexpr uint16_t kDpp8 = 233;
inline constexpr uint16_t kDpp8Fi = 234;
inline constexpr uint16_t kSharedBase = 235;  // 235..238: the FLAT apertures (SH_MEM_BASES)
inline constexpr uint16_t kSharedLimit = 236;
inline constexpr uint16_t kPrivateBase = 237;
inline constexpr uint16_t kPrivateLimit = 238;
inline constexpr uint16_t kDpp16 = 250;
inline constexpr uint16_t kVccz = 251;
inline constexpr uint16_t kExecz = 252;
inline constexpr uint16_t kScc = 253;
inline constexpr uint16_t kLdsDirect = 254;
inline constexpr uint16_t kLiteral = 255;
inline constexpr uint16_t kVgpr0 = 256;
inline constexpr bool IsVgpr(uint16_t code) { return code >= kVgpr0; }
}  // namespace operand

// VOPD's component opcodes (the OPX/OPY fields).
enum VopdOp : uint8_t {
  kDualFmacF32 = 0,
  kDualFmaakF32 = 1,
  kDualFmamkF32 = 2,
  kDualMulF32 = 3,
  kDualAddF32 = 4,
  kDualSubF32 = 5,
  kDualSubrevF32 = 6,
  kDualMulDx9ZeroF32 = 7,
  kDualMovB32 = 8,
  kDualCndmaskB32 = 9,
  kDualMaxF32 = 10,
  kDualMinF32 = 11,
  kDualDot2accF32F16 = 12,
  kDualDot2accF32Bf16 = 13,
  kDualAddNcU32 = 16,
  kDualLshlrevB32 = 17,
  kDualAndB32 = 18,
};

// The VALU operations the executor runs through its fast path (vector.cc, WorkgroupRunner::FastValu): every lane's
// result is computed in one plain loop the compiler can vectorize, then written to the lanes EXEC enables. The
// decoder picks one (FastValuOf) only for an instruction that has nothing that path leaves out (DPP, abs/neg,
// op_sel, clamp, omod); the general path (WorkgroupRunner::Valu) runs every other one, and runs these too when MODE
// asks for a directed rounding. The fma forms share one function with Valu (FmaF32, which pins the NaN a result
// with NaN operands takes), so the two paths agree bit for bit there too.
enum class FastValu : uint8_t {
  kNone,
  kMovB32,
  kAddNcU32,
  kSubNcU32,
  kSubrevNcU32,
  kAndB32,
  kOrB32,
  kXorB32,
  kLshlrevB32,
  kLshrrevB32,
  kAshrrevI32,
  kMinU32,
  kMaxU32,
  kMinI32,
  kMaxI32,
  kMulLoU32,
  kMulU32U24,
  kLshlOrB32,
  kLshlAddU32,
  kAddLshlU32,
  kAdd3U32,
  kAndOrB32,
  kOr3B32,
  kAddF32,
  kSubF32,
  kSubrevF32,
  kMulF32,
  kFmaF32,
  kFmacF32,
  kFmamkF32,
  kFmaakF32,
  kCndmaskB32,
  kAddCoU32,
  kSubCoU32,
  kSubrevCoU32,
  kAddCoCiU32,
  kSubCoCiU32,
  kSubrevCoCiU32,
  kLshlrevB64,
  kCompare,  // VOPC (and its VOP3 form) on i32, u32 or f32 operands, any condition but class
};
inline constexpr int kFastValuCount = static_cast<int>(FastValu::kCompare) + 1;

struct Instruction;
// The fast path for `inst` (kNone: the general one). Defined in vector.cc, beside the loops it selects.
FastValu FastValuOf(const Instruction& inst);

// Fields are ordered and the flags packed so that an instruction and its slot in a program's table (program.h,
// DecodedSlot) fit one 64-byte cache line: a first dispatch allocates a slot per instruction (issue 24), and a wave
// reads one per instruction it runs. The raw words and the decoder's message are the program's (Program::WordsAt,
// Program::ErrorAt), not the instruction's.
struct Instruction {
  Encoding encoding = Encoding::kSopp;
  uint8_t dwords = 1;   // length including the literal / second dword
  uint16_t opcode = 0;  // the encoding's own opcode field
  // VALU (VOP1/VOP2/VOPC/VOP3): the opcode in VOP3's numbering (VOPC 0..255, VOP2 256.., VOP1 384..), so that the
  // short and the VOP3 forms of an operation execute through one path.
  uint16_t valu_op = 0;
  uint16_t src[3] = {0, 0, 0};     // source operand codes (>= 256: VGPR); memory: addr, data, saddr
  uint16_t vdst = 0;               // VGPR number (VALU, loads) or SGPR destination (SALU, SMEM, VOPC in VOP3)
  uint16_t sdst = operand::kNull;  // VOP3SD's scalar carry-out / mask destination; VOPC e32: VCC
  uint32_t literal = 0;
  // VOP3/VOP3P modifiers.
  uint8_t abs = 0, neg = 0, neg_hi = 0, opsel = 0, opsel_hi = 0, clamp = 0, omod = 0;
  // DPP (VOP1/VOP2/VOPC/VOP3 with src0 = DPP8/DPP16; src[0] then holds the VGPR from the control word).
  uint8_t dpp = 0;  // 0 none, 8, 16
  bool has_literal : 1 = false;
  bool dpp_fi : 1 = false;  // DPP8 with FI (src0 code 234)
  bool glc : 1 = false;
  bool slc : 1 = false;
  bool dlc : 1 = false;
  bool gds : 1 = false;
  // MUBUF: OFFEN/IDXEN; SMEM: soffset (src[2]).
  bool offen : 1 = false;
  bool idxen : 1 = false;
  // DS offset1 (below: offset, offset0).
  uint8_t offset1 = 0;
  // VOPD's second operation.
  uint8_t opx = 0, opy = 0;
  uint32_t dpp_word = 0;
  // SOPK/SOPP immediate, SMEM/FLAT/MUBUF offsets (sign-extended where the field is signed), DS offset0.
  int32_t imm = 0;
  int32_t offset = 0;
  uint16_t y_src0 = 0, y_vsrc1 = 0, y_vdst = 0;
  // Operand widths in dwords and the sources' float width (16/32/64; 0: integer), from the mnemonic
  // (operand_shape.h), so that the executor reads 64-bit and half-precision operands without looking at names.
  uint8_t dst_dwords = 1;
  uint8_t src_dwords[3] = {1, 1, 1};
  uint8_t float_bits = 0;
  // Where the MODE.FP_ROUND field that rounds the result starts: 0 for single precision (MODE[1:0]), 2 for double
  // and half precision (MODE[3:2]); from the result type (v_cvt_f16_f32 rounds with the half field).
  uint8_t round_shift = 0;
  // Set by the decoder (FastValuOf) once the fields above are.
  FastValu fast_valu = FastValu::kNone;

  // The mnemonic from the opcode table (opcode_names.cc; "" for an opcode gfx1100 does not define). Meaningful for
  // an instruction the decoder made: a default-constructed one reads as s_nop.
  const char* name() const;
};

}  // namespace am::sim::isa

#endif  // BAREGPU_AM_SIM_ISA_INSTRUCTION_H_
