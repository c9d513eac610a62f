// Mnemonics of the gfx1100 opcodes per encoding, in LLVM's spelling (lower case, without _e32/_e64 suffixes).
#ifndef BAREGPU_AM_SIM_ISA_OPCODE_NAMES_H_
#define BAREGPU_AM_SIM_ISA_OPCODE_NAMES_H_

#include <array>
#include <cstdint>

#include "am/sim/isa/instruction.h"

namespace am::sim::isa {

// Null for an opcode the encoding does not define on gfx1100.
const char* OpcodeName(Encoding encoding, uint32_t opcode);

}  // namespace am::sim::isa

#endif  // BAREGPU_AM_SIM_ISA_OPCODE_NAMES_H_
