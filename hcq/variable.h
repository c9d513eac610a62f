// Symbolic values in queues. A command argument (a signal value, a kernel argument, a launch dimension) is either
// a constant or a variable; a queue remembers where each variable's value goes (a dword of its command buffer or
// of kernel-argument memory) and `submit(device, var_vals)` writes the values there without rebuilding anything.
// Variables are indexes into the var_vals array a submit receives; device values are 32 bits wide. A 64-bit address
// given by a variable lands in two dwords (two patches: the low and the high half of its value plus an addend).
#ifndef BAREGPU_HCQ_VARIABLE_H_
#define BAREGPU_HCQ_VARIABLE_H_

#include <cstdint>
#include <span>

namespace hcq {

struct Variable {
  uint32_t index = 0;  // position in var_vals
};

// What a command takes: a constant or a variable (implicitly from either), a variable's value at submit being
// var_vals[variable] + addend (an address inside a buffer given by a variable, a copy's later packets).
class Value {
 public:
  Value(uint64_t constant) : constant_(constant) {}                    // NOLINT: a plain number is a constant value
  Value(int constant) : constant_(static_cast<uint64_t>(constant)) {}  // NOLINT
  Value(uint32_t constant) : constant_(constant) {}                    // NOLINT
  Value(Variable variable) : variable_(variable.index), is_variable_(true) {}  // NOLINT
  Value(Variable variable, uint64_t addend) : addend_(addend), variable_(variable.index), is_variable_(true) {}

  bool is_variable() const { return is_variable_; }
  uint32_t variable() const { return variable_; }
  uint64_t constant() const { return constant_; }
  uint64_t addend() const { return addend_; }  // 0 for constants
  // This value plus `n` (wrapping modulo 2^64, as the sum at submit does).
  Value plus(uint64_t n) const { return is_variable_ ? Value(Variable{variable_}, addend_ + n) : Value(constant_ + n); }

 private:
  uint64_t constant_ = 0;
  uint64_t addend_ = 0;
  uint32_t variable_ = 0;
  bool is_variable_ = false;
};

// The values of a submission's variables, indexed by Variable::index.
using VarVals = std::span<const uint64_t>;

// Where one variable lands in a queue: the dword at `offset` of its command buffer takes
// (var_vals[variable] + addend) >> shift, truncated to 32 bits. shift is 0 for a value or an address's low dword, 32
// for its high dword. A low address dword also says the alignment the engine needs (align_mask: the address bits
// that must be 0; the packets keep other fields in them, so a misaligned address is refused at submit).
struct Patch {
  uint32_t variable;
  uint32_t offset;
  uint32_t shift = 0;
  uint64_t addend = 0;
  uint64_t align_mask = 0;
};

}  // namespace hcq

#endif  // BAREGPU_HCQ_VARIABLE_H_
