#include "am/sim/isa/decoder.h"

#include <array>
#include <cstring>
#include <string>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "am/sim/isa/opcode_names.h"
#include "am/sim/isa/operand_shape.h"
#include "base/status_macros.h"

namespace am::sim::isa {
namespace {

uint32_t Bits(uint64_t word, int high, int low) {
  return static_cast<uint32_t>((word >> low) & ((1ull << (high - low + 1)) - 1));
}
int32_t SignExtend(uint32_t value, int bits) { return static_cast<int32_t>(value << (32 - bits)) >> (32 - bits); }

absl::Status Truncated(std::span<const uint32_t> words, size_t need) {
  return absl::InvalidArgumentError(
      absl::StrFormat("instruction %#010x needs %d dwords but the code ends after %d", words[0], need, words.size()));
}

// VOP2 opcodes whose encoding always carries a literal (v_fmamk/v_fmaak f32 and f16).
bool Vop2TakesLiteral(uint32_t op) { return op == 44 || op == 45 || op == 55 || op == 56; }

// ShapeOf reads the mnemonic's type suffixes and exceptions from its name, which cost about as much as the rest of
// decoding (issue 24: a kernel's first dispatch). Its answer depends only on the encoding, the opcode and the VALU
// opcode (the name follows from them), so each thread keeps the answers it has worked out: in a small direct-mapped
// table in front of a hash map (the hash map's lookup alone was a third of decoding; a kernel uses a few dozen
// distinct opcodes).
OperandShape CachedShapeOf(const Instruction& inst) {
  struct Recent {
    uint64_t key = ~uint64_t{0};
    OperandShape shape;
  };
  constexpr int kRecentBits = 8;
  thread_local std::array<Recent, size_t{1} << kRecentBits> recent;
  thread_local absl::flat_hash_map<uint64_t, OperandShape> shapes;
  const uint64_t key = uint64_t{static_cast<uint8_t>(inst.encoding)} << 32 | uint64_t{inst.valu_op} << 16 | inst.opcode;
  // Fibonacci hashing: the top bits of the product mix the encoding, VALU opcode and opcode.
  Recent& slot = recent[(key * 0x9e3779b97f4a7c15ull) >> (64 - kRecentBits)];
  if (slot.key == key) return slot.shape;
  auto [it, inserted] = shapes.try_emplace(key);
  if (inserted) it->second = ShapeOf(inst);
  slot = {key, it->second};
  return it->second;
}

}  // namespace

const char* Instruction::name() const {
  const char* found = OpcodeName(encoding, encoding == Encoding::kVopd ? opx : opcode);
  return found != nullptr ? found : "";
}

absl::StatusOr<Instruction> Decode(std::span<const uint32_t> words) {
  Instruction inst;
  BAREGPU_RETURN_IF_ERROR(DecodeInto(words, inst));
  return inst;
}

absl::Status DecodeInto(std::span<const uint32_t> words, Instruction& inst) {
  // Copied from a constant, not assigned from a temporary: GCC builds `Instruction()` on the stack with stores of
  // mixed widths (the bit-fields) and reads it back across them, and the failed store forwarding was two thirds of
  // the decoder's time (issue 24: a kernel's first dispatch).
  static const Instruction kBlank;
  std::memcpy(&inst, &kBlank, sizeof(Instruction));
  if (words.empty()) return absl::InvalidArgumentError("no instruction: the code ends here");
  const uint32_t w0 = words[0];
  auto second = [&]() -> absl::StatusOr<uint32_t> {
    if (words.size() < 2) return Truncated(words, 2);
    return words[1];
  };
  // Appends the literal dword after `base` dwords when any source is the literal code.
  auto take_literal = [&](size_t base, bool needed) -> absl::Status {
    if (!needed) return absl::OkStatus();
    if (words.size() < base + 1) return Truncated(words, base + 1);
    inst.literal = words[base];
    inst.has_literal = true;
    inst.dwords = static_cast<uint8_t>(base + 1);
    return absl::OkStatus();
  };
  auto is_literal = [](uint16_t code) { return code == operand::kLiteral; };

  if (Bits(w0, 31, 23) == 0x17d) {  // SOP1
    inst.encoding = Encoding::kSop1;
    inst.opcode = Bits(w0, 15, 8);
    inst.vdst = Bits(w0, 22, 16);
    inst.src[0] = Bits(w0, 7, 0);
    if (absl::Status s = take_literal(1, is_literal(inst.src[0])); !s.ok()) return s;
  } else if (Bits(w0, 31, 23) == 0x17e) {  // SOPC
    inst.encoding = Encoding::kSopc;
    inst.opcode = Bits(w0, 22, 16);
    inst.src[0] = Bits(w0, 7, 0);
    inst.src[1] = Bits(w0, 15, 8);
    if (absl::Status s = take_literal(1, is_literal(inst.src[0]) || is_literal(inst.src[1])); !s.ok()) return s;
  } else if (Bits(w0, 31, 23) == 0x17f) {  // SOPP
    inst.encoding = Encoding::kSopp;
    inst.opcode = Bits(w0, 22, 16);
    inst.imm = SignExtend(Bits(w0, 15, 0), 16);
  } else if (Bits(w0, 31, 28) == 0xb) {  // SOPK
    inst.encoding = Encoding::kSopk;
    inst.opcode = Bits(w0, 27, 23);
    inst.vdst = Bits(w0, 22, 16);
    inst.imm = SignExtend(Bits(w0, 15, 0), 16);
    if (absl::Status s = take_literal(1, inst.opcode == 19 /* s_setreg_imm32_b32 */); !s.ok()) return s;
  } else if (Bits(w0, 31, 30) == 0x2) {  // SOP2
    inst.encoding = Encoding::kSop2;
    inst.opcode = Bits(w0, 29, 23);
    inst.vdst = Bits(w0, 22, 16);
    inst.src[0] = Bits(w0, 7, 0);
    inst.src[1] = Bits(w0, 15, 8);
    if (absl::Status s = take_literal(1, is_literal(inst.src[0]) || is_literal(inst.src[1])); !s.ok()) return s;
  } else if (Bits(w0, 31, 26) == 0x3d) {  // SMEM
    inst.encoding = Encoding::kSmem;
    absl::StatusOr<uint32_t> w1 = second();
    if (!w1.ok()) return w1.status();
    inst.dwords = 2;
    inst.opcode = Bits(w0, 25, 18);
    inst.vdst = Bits(w0, 12, 6);
    inst.src[0] = static_cast<uint16_t>(Bits(w0, 5, 0) * 2);
    inst.glc = Bits(w0, 14, 14);
    inst.dlc = Bits(w0, 13, 13);
    inst.offset = SignExtend(Bits(*w1, 20, 0), 21);
    inst.src[2] = Bits(*w1, 31, 25);
  } else if (Bits(w0, 31, 25) == 0x3f) {  // VOP1
    inst.encoding = Encoding::kVop1;
    inst.opcode = Bits(w0, 16, 9);
    inst.valu_op = static_cast<uint16_t>(384 + inst.opcode);
    inst.vdst = Bits(w0, 24, 17);
    inst.src[0] = Bits(w0, 8, 0);
    if (absl::Status s = take_literal(1, is_literal(inst.src[0])); !s.ok()) return s;
  } else if (Bits(w0, 31, 25) == 0x3e) {  // VOPC
    inst.encoding = Encoding::kVopc;
    inst.opcode = Bits(w0, 24, 17);
    inst.valu_op = inst.opcode;
    inst.src[0] = Bits(w0, 8, 0);
    inst.src[1] = static_cast<uint16_t>(operand::kVgpr0 + Bits(w0, 16, 9));
    inst.sdst = operand::kVccLo;
    if (absl::Status s = take_literal(1, is_literal(inst.src[0])); !s.ok()) return s;
  } else if (Bits(w0, 31, 31) == 0) {  // VOP2
    inst.encoding = Encoding::kVop2;
    inst.opcode = Bits(w0, 30, 25);
    inst.valu_op = static_cast<uint16_t>(256 + inst.opcode);
    inst.vdst = Bits(w0, 24, 17);
    inst.src[0] = Bits(w0, 8, 0);
    inst.src[1] = static_cast<uint16_t>(operand::kVgpr0 + Bits(w0, 16, 9));
    // The carry-in/-out and the select mask of the short forms are VCC.
    inst.src[2] = operand::kVccLo;
    inst.sdst = operand::kVccLo;
    if (absl::Status s = take_literal(1, is_literal(inst.src[0]) || Vop2TakesLiteral(inst.opcode)); !s.ok()) {
      return s;
    }
  } else if (Bits(w0, 31, 26) == 0x35 || Bits(w0, 31, 24) == 0xcc) {  // VOP3, VOP3SD, VOP3P
    const bool packed = Bits(w0, 31, 24) == 0xcc;
    absl::StatusOr<uint32_t> w1 = second();
    if (!w1.ok()) return w1.status();
    inst.dwords = 2;
    inst.encoding = packed ? Encoding::kVop3p : Encoding::kVop3;
    inst.opcode = packed ? Bits(w0, 22, 16) : Bits(w0, 25, 16);
    inst.valu_op = inst.opcode;
    inst.vdst = Bits(w0, 7, 0);
    inst.clamp = Bits(w0, 15, 15);
    inst.src[0] = Bits(*w1, 8, 0);
    inst.src[1] = Bits(*w1, 17, 9);
    inst.src[2] = Bits(*w1, 26, 18);
    inst.neg = Bits(*w1, 31, 29);
    if (packed) {
      inst.opsel = Bits(w0, 13, 11);
      inst.neg_hi = Bits(w0, 10, 8);
      inst.opsel_hi = static_cast<uint8_t>(Bits(*w1, 28, 27) | (Bits(w0, 14, 14) << 2));
    } else {
      inst.omod = Bits(*w1, 28, 27);
      if (HasScalarDestination(inst.opcode)) {
        inst.sdst = Bits(w0, 14, 8);
      } else {
        inst.abs = Bits(w0, 10, 8);
        inst.opsel = Bits(w0, 14, 11);
      }
      // VOPC in VOP3 writes its mask to the SGPR in the VDST field.
      if (inst.opcode < 256) inst.sdst = inst.vdst;
    }
    if (inst.src[0] == operand::kDpp16 || inst.src[0] == operand::kDpp8 || inst.src[0] == operand::kDpp8Fi) {
      // VOP3/VOP3P DPP16 / DPP8: the DPP control word is the third dword (src0's VGPR in its bits 7:0). The VOP3
      // words keep their modifiers; the control word's own neg/abs bits are DPP16-on-VOP1/2/C only.
      if (is_literal(inst.src[1]) || is_literal(inst.src[2])) {
        return absl::InvalidArgumentError(
            absl::StrFormat("VOP3 DPP instruction %#010x %#010x has a literal, which DPP cannot carry", w0, *w1));
      }
      if (words.size() < 3) return Truncated(words, 3);
      inst.dpp = inst.src[0] == operand::kDpp16 ? 16 : 8;
      inst.dpp_fi = inst.src[0] == operand::kDpp8Fi;
      inst.dpp_word = words[2];
      inst.dwords = 3;
      inst.src[0] = static_cast<uint16_t>(operand::kVgpr0 + Bits(words[2], 7, 0));
    } else if (absl::Status s =
                   take_literal(2, is_literal(inst.src[0]) || is_literal(inst.src[1]) || is_literal(inst.src[2]));
               !s.ok()) {
      return s;
    }
  } else if (Bits(w0, 31, 26) == 0x32) {  // VOPD
    absl::StatusOr<uint32_t> w1 = second();
    if (!w1.ok()) return w1.status();
    inst.dwords = 2;
    inst.encoding = Encoding::kVopd;
    inst.opx = Bits(w0, 25, 22);
    inst.opy = Bits(w0, 21, 17);
    inst.opcode = inst.opx;
    inst.src[0] = Bits(w0, 8, 0);
    inst.src[1] = static_cast<uint16_t>(operand::kVgpr0 + Bits(w0, 16, 9));
    inst.vdst = Bits(*w1, 31, 24);
    inst.y_vdst = static_cast<uint16_t>((Bits(*w1, 23, 17) << 1) | ((inst.vdst & 1) ^ 1));
    inst.y_src0 = Bits(*w1, 8, 0);
    inst.y_vsrc1 = static_cast<uint16_t>(operand::kVgpr0 + Bits(*w1, 16, 9));
    const bool literal = is_literal(inst.src[0]) || is_literal(inst.y_src0) || inst.opx == kDualFmaakF32 ||
                         inst.opx == kDualFmamkF32 || inst.opy == kDualFmaakF32 || inst.opy == kDualFmamkF32;
    if (absl::Status s = take_literal(2, literal); !s.ok()) return s;
    if (OpcodeName(Encoding::kVopd, inst.opx) == nullptr || OpcodeName(Encoding::kVopd, inst.opy) == nullptr) {
      return absl::InvalidArgumentError(
          absl::StrFormat("VOPD %#010x %#010x: opx %d / opy %d is not a gfx1100 VOPD "
                          "operation",
                          w0, *w1, inst.opx, inst.opy));
    }
  } else if (Bits(w0, 31, 26) == 0x36) {  // DS
    absl::StatusOr<uint32_t> w1 = second();
    if (!w1.ok()) return w1.status();
    inst.dwords = 2;
    inst.encoding = Encoding::kDs;
    inst.opcode = Bits(w0, 25, 18);
    inst.offset = static_cast<int32_t>(Bits(w0, 7, 0));
    inst.offset1 = static_cast<uint8_t>(Bits(w0, 15, 8));
    inst.gds = Bits(w0, 17, 17);
    inst.src[0] = static_cast<uint16_t>(operand::kVgpr0 + Bits(*w1, 7, 0));
    inst.src[1] = static_cast<uint16_t>(operand::kVgpr0 + Bits(*w1, 15, 8));
    inst.src[2] = static_cast<uint16_t>(operand::kVgpr0 + Bits(*w1, 23, 16));
    inst.vdst = Bits(*w1, 31, 24);
  } else if (Bits(w0, 31, 26) == 0x37) {  // FLAT, GLOBAL, SCRATCH
    absl::StatusOr<uint32_t> w1 = second();
    if (!w1.ok()) return w1.status();
    inst.dwords = 2;
    const uint32_t segment = Bits(w0, 17, 16);
    if (segment == 3) {
      return absl::InvalidArgumentError(
          absl::StrFormat("FLAT-family instruction %#010x %#010x: segment 3 is reserved", w0, *w1));
    }
    inst.encoding = segment == 0 ? Encoding::kFlat : segment == 1 ? Encoding::kScratch : Encoding::kGlobal;
    inst.opcode = Bits(w0, 24, 18);
    inst.offset = SignExtend(Bits(w0, 12, 0), 13);
    inst.dlc = Bits(w0, 13, 13);
    inst.glc = Bits(w0, 14, 14);
    inst.slc = Bits(w0, 15, 15);
    inst.src[0] = static_cast<uint16_t>(operand::kVgpr0 + Bits(*w1, 7, 0));
    inst.src[1] = static_cast<uint16_t>(operand::kVgpr0 + Bits(*w1, 15, 8));
    inst.src[2] = Bits(*w1, 22, 16);
    inst.offen = Bits(*w1, 23, 23);  // SVE: scratch uses VADDR
    inst.vdst = Bits(*w1, 31, 24);
  } else if (Bits(w0, 31, 26) == 0x38) {  // MUBUF
    absl::StatusOr<uint32_t> w1 = second();
    if (!w1.ok()) return w1.status();
    inst.dwords = 2;
    inst.encoding = Encoding::kMubuf;
    inst.opcode = Bits(w0, 25, 18);
    inst.offset = static_cast<int32_t>(Bits(w0, 11, 0));
    inst.slc = Bits(w0, 12, 12);
    inst.dlc = Bits(w0, 13, 13);
    inst.glc = Bits(w0, 14, 14);
    inst.src[0] = static_cast<uint16_t>(operand::kVgpr0 + Bits(*w1, 7, 0));
    inst.src[1] = static_cast<uint16_t>(operand::kVgpr0 + Bits(*w1, 15, 8));
    inst.src[2] = static_cast<uint16_t>(Bits(*w1, 20, 16) * 4);  // SRSRC: four aligned SGPRs
    inst.vdst = Bits(*w1, 31, 24);                               // SOFFSET
    inst.offen = Bits(*w1, 22, 22);
    inst.idxen = Bits(*w1, 23, 23);
  } else {
    return absl::InvalidArgumentError(
        absl::StrFormat("%#010x is not a gfx1100 compute encoding (or one this decoder does not know)", w0));
  }

  // DPP on the 32-bit VALU encodings: the control word follows.
  if ((inst.encoding == Encoding::kVop1 || inst.encoding == Encoding::kVop2 || inst.encoding == Encoding::kVopc) &&
      (inst.src[0] == operand::kDpp16 || inst.src[0] == operand::kDpp8 || inst.src[0] == operand::kDpp8Fi)) {
    if (words.size() < 2) return Truncated(words, 2);
    inst.dpp = inst.src[0] == operand::kDpp16 ? 16 : 8;
    inst.dpp_fi = inst.src[0] == operand::kDpp8Fi;
    inst.dpp_word = words[1];
    inst.dwords = 2;
    inst.src[0] = static_cast<uint16_t>(operand::kVgpr0 + Bits(words[1], 7, 0));
    if (inst.dpp == 16) {
      // DPP16 carries src0/src1 neg/abs in the control word.
      inst.neg = static_cast<uint8_t>(Bits(words[1], 20, 20) | (Bits(words[1], 22, 22) << 1));
      inst.abs = static_cast<uint8_t>(Bits(words[1], 21, 21) | (Bits(words[1], 23, 23) << 1));
    }
  }

  const char* name = OpcodeName(inst.encoding, inst.encoding == Encoding::kVopd ? inst.opx : inst.opcode);
  if (name == nullptr) {
    return absl::InvalidArgumentError(absl::StrFormat("%s opcode %d (instruction %#010x) is not defined on gfx1100",
                                                      EncodingName(inst.encoding), inst.opcode, w0));
  }
  const OperandShape shape = CachedShapeOf(inst);
  inst.dst_dwords = shape.dst_dwords;
  for (int i = 0; i < 3; ++i) inst.src_dwords[i] = shape.src_dwords[i];
  inst.float_bits = shape.float_bits;
  inst.round_shift = (shape.result_float_bits == 16 || shape.result_float_bits == 64) ? 2 : 0;
  inst.fast_valu = FastValuOf(inst);
  return absl::OkStatus();
}

}  // namespace am::sim::isa
