// hcq::ArgsState: one launch's kernel-argument memory (carved from the device's kernel-argument area) and its
// layout as tinygrad's HCQ lays it out: the buffers' 64-bit addresses first, then 32-bit values. A value may be a
// variable, patched when the queue it was passed to is submitted; so may the fields a backend writes beyond them
// (the launch dimensions among a kernel's hidden arguments), which can be 16 bits wide and scaled. The memory is valid
// until that queue has been submitted (the area is reused in order afterwards); a graph keeps its own.
#ifndef BAREGPU_HCQ_ARGS_STATE_H_
#define BAREGPU_HCQ_ARGS_STATE_H_

#include <cstdint>
#include <cstring>
#include <span>
#include <vector>

#include "base/bits.h"
#include "hcq/buffer.h"
#include "hcq/variable.h"

namespace hcq {

class ArgsState {
 public:
  struct Slot {
    uint32_t variable;
    uint32_t scale;   // the field holds (the variable's value + addend) times this
    uint64_t addend;  // Value::addend()
    uint8_t* at;
    uint32_t bytes;  // 2 or 4
  };

  ArgsState() = default;
  ArgsState(uint8_t* cpu, uint64_t va, uint64_t size, uint32_t buffers)
      : cpu_(cpu), va_(va), size_(size), buffers_(buffers) {}

  uint64_t va() const { return va_; }
  uint64_t size() const { return size_; }
  uint8_t* cpu() const { return cpu_; }

  void set_buffer(uint32_t index, uint64_t address) { std::memcpy(cpu_ + 8 * index, &address, 8); }
  void set_buffer(uint32_t index, const Buffer& buffer) { set_buffer(index, buffer.va()); }
  void set_value(uint32_t index, Value value) { set_field(8 * buffers_ + 4 * index, 4, value); }
  // A little-endian field of `bytes` (2 or 4) at `offset`: `value` times `scale`, truncated to the field (a
  // variable's value is var_vals[variable] + its addend).
  void set_field(uint64_t offset, uint32_t bytes, Value value, uint32_t scale = 1) {
    if (value.is_variable()) {
      slots_.push_back({value.variable(), scale, value.addend(), cpu_ + offset, bytes});
    } else {
      base::StoreField(cpu_ + offset, bytes, static_cast<uint32_t>(value.constant()) * scale);
    }
  }
  // Writes the variables' values; false when var_vals lacks one (the caller reports it).
  bool Apply(VarVals var_vals) const {
    for (const Slot& slot : slots_) {
      if (slot.variable >= var_vals.size()) return false;
      base::StoreField(slot.at, slot.bytes, static_cast<uint32_t>(var_vals[slot.variable] + slot.addend) * slot.scale);
    }
    return true;
  }
  const std::vector<Slot>& slots() const { return slots_; }

 private:
  uint8_t* cpu_ = nullptr;
  uint64_t va_ = 0, size_ = 0;
  uint32_t buffers_ = 0;
  std::vector<Slot> slots_;
};

}  // namespace hcq

#endif  // BAREGPU_HCQ_ARGS_STATE_H_
