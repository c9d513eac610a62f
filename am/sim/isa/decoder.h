// Decodes gfx1100 machine code into Instructions and prints them in LLVM's assembly syntax (the text
// llvm-objdump-19 --mcpu=gfx1100 prints, so that the decoder can be checked against it instruction by instruction).
#ifndef BAREGPU_AM_SIM_ISA_DECODER_H_
#define BAREGPU_AM_SIM_ISA_DECODER_H_

#include <cstdint>
#include <span>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "am/sim/isa/instruction.h"

namespace am::sim::isa {

// The longest encoding: a 64-bit format with a DPP word or a literal.
inline constexpr size_t kMaxInstructionDwords = 3;

// Decodes the instruction at the start of `words`. An encoding or opcode gfx1100 does not define, or an
// instruction cut off by the end of `words`, is an InvalidArgument error naming the words.
absl::StatusOr<Instruction> Decode(std::span<const uint32_t> words);
// Decode into `inst` (a program's table decodes in place: two copies of an Instruction per decoded instruction were a
// fifth of a program's load). On error `inst` holds whatever was decoded before the error was found.
absl::Status DecodeInto(std::span<const uint32_t> words, Instruction& inst);

// LLVM syntax: mnemonic (with _e32/_e64 where LLVM prints it) and operands, without the encoding comment. A
// branch target is printed as LLVM does, as the signed dword offset. Lane masks (VCC, compare results) print as
// register pairs for wave64 code.
std::string Disassemble(const Instruction& inst, bool wave64 = false);

}  // namespace am::sim::isa

#endif  // BAREGPU_AM_SIM_ISA_DECODER_H_
