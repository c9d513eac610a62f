// Symbolic values in queues. A command argument (a signal value, a kernel argument, a launch dimension) is either
// a constant or a variable; a queue remembers where each variable's value goes (a dword of its command buffer or
// of kernel-argument memory) and `submit(device, var_vals)` writes the values there without rebuilding anything.
// Variables are indexes into the var_vals array a submit receives; device values are 32 bits wide.
#ifndef BAREGPU_HCQ_VARIABLE_H_
#define BAREGPU_HCQ_VARIABLE_H_

#include <cstdint>
#include <span>

namespace hcq {

struct Variable {
  uint32_t index = 0;  // position in var_vals
};

// What a command takes: a constant or a variable (implicitly from either).
class Value {
 public:
  Value(uint64_t constant) : constant_(constant) {}                    // NOLINT: a plain number is a constant value
  Value(int constant) : constant_(static_cast<uint64_t>(constant)) {}  // NOLINT
  Value(uint32_t constant) : constant_(constant) {}                    // NOLINT
  Value(Variable variable) : variable_(variable.index), is_variable_(true) {}  // NOLINT

  bool is_variable() const { return is_variable_; }
  uint32_t variable() const { return variable_; }
  uint64_t constant() const { return constant_; }

 private:
  uint64_t constant_ = 0;
  uint32_t variable_ = 0;
  bool is_variable_ = false;
};

// The values of a submission's variables, indexed by Variable::index.
using VarVals = std::span<const uint64_t>;

// Where one variable lands in a queue: the dword at `offset` of its command buffer.
struct Patch {
  uint32_t variable;
  uint32_t offset;
};

}  // namespace hcq

#endif  // BAREGPU_HCQ_VARIABLE_H_
