// How many registers each operand of an instruction spans and how many sources it reads, derived from the
// mnemonic's type suffixes (v_cvt_f64_i32: 64-bit result from a 32-bit source) plus the ISA's exceptions (64-bit
// shifts take a 32-bit shift count, v_mad_u64_u32 adds a 64-bit addend, ...). The disassembler prints register
// ranges with it; the executor reads 64-bit operands with it.
#ifndef BAREGPU_AM_SIM_ISA_OPERAND_SHAPE_H_
#define BAREGPU_AM_SIM_ISA_OPERAND_SHAPE_H_

#include <cstdint>

#include "am/sim/isa/instruction.h"

namespace am::sim::isa {

struct OperandShape {
  uint8_t dst_dwords = 1;
  uint8_t src_dwords[3] = {1, 1, 1};
  uint8_t num_srcs = 0;
  bool has_dst = true;
  bool float_sources = false;     // abs/neg modifiers apply (the sources are floating point)
  uint8_t float_bits = 0;         // the sources' float width: 16, 32 or 64 (0: integer sources)
  uint8_t result_float_bits = 0;  // the result's float width (the mnemonic's first type): 16, 32, 64 or 0
};

// `wave64` matters only where a count depends on the wave size (WMMA's C and D: wmma.h).
OperandShape ShapeOf(const Instruction& inst, bool wave64 = false);

// VOP3 opcodes in the VOP3SD layout (a scalar carry-out or mask destination in bits 14:8).
bool HasScalarDestination(uint16_t vop3_opcode);

const char* EncodingName(Encoding encoding);

}  // namespace am::sim::isa

#endif  // BAREGPU_AM_SIM_ISA_OPERAND_SHAPE_H_
