// A register sequence: accesses through index/data ports and bank selections (an indirect register file behind an
// index register, per-queue registers behind a bank-select register) that must run with no other selection in
// between, the way amdgpu holds its grbm_idx_mutex or srbm_mutex around soc21_grbm_select and the reads under it.
//
// A sequence is a list of steps on one register BAR: kSelect writes a selection register, kRead reads a register one
// or more times (an auto-incrementing data port gives successive values). Every register a kSelect wrote is written
// back afterwards to the value it held before the sequence's first write to it, last written first, so a sequence
// leaves every selection as it found it. That makes a sequence of selections and reads safe to run beside the driver
// that owns the device: pci::Device::RunRegisterSequence runs it under the device's register-sequence lock, which the
// driver takes around its own selections, and a debug endpoint runs a debugger's sequence in its holder's process.
#ifndef BAREGPU_PCI_REGISTER_SEQUENCE_H_
#define BAREGPU_PCI_REGISTER_SEQUENCE_H_

#include <cstddef>
#include <cstdint>
#include <span>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "pci/mmio.h"

namespace pci {

struct RegisterStep {
  enum class Kind : uint32_t { kSelect = 0, kRead = 1 };
  Kind kind = Kind::kRead;
  uint32_t offset = 0;  // byte offset in the BAR, a multiple of 4
  uint32_t value = 0;   // kSelect: the value written; kRead: how many times the register is read (at least 1)

  static RegisterStep Select(uint32_t offset, uint32_t value) { return {Kind::kSelect, offset, value}; }
  static RegisterStep Read(uint32_t offset, uint32_t count = 1) { return {Kind::kRead, offset, count}; }
};

// Bounds that keep a sequence (and a debug endpoint's reply to one) small: a wave's 256 VGPRs for all 64 lanes are
// 16384 reads, so 65536 reads cover several waves per request.
inline constexpr size_t kMaxRegisterSteps = 4096;
inline constexpr size_t kMaxRegisterSequenceReads = 65536;
// The registers one sequence may select (each is restored at the end).
inline constexpr size_t kMaxSelectedRegisters = 16;

// The number of dwords the sequence's reads produce, or InvalidArgument naming the first bad step: too many steps or
// reads, an offset that is not dword-aligned or lies past `bar_size`, a read count of 0, an unknown kind, more than
// kMaxSelectedRegisters distinct registers selected.
absl::StatusOr<size_t> CheckRegisterSequence(std::span<const RegisterStep> steps, uint64_t bar_size);

// Runs a sequence CheckRegisterSequence accepted on `mmio` (no lock taken here): the reads' values go to `out` in
// order (`out` holds exactly the checked number of dwords), and the selected registers are put back at the end.
void RunRegisterSequence(const Mmio& mmio, std::span<const RegisterStep> steps, std::span<uint32_t> out);

}  // namespace pci

#endif  // BAREGPU_PCI_REGISTER_SEQUENCE_H_
