#include "pci/register_sequence.h"

#include <algorithm>
#include <array>
#include <utility>

#include "absl/status/statusor.h"
#include "absl/strings/str_format.h"

namespace pci {

absl::StatusOr<size_t> CheckRegisterSequence(std::span<const RegisterStep> steps, uint64_t bar_size) {
  if (steps.size() > kMaxRegisterSteps) {
    return absl::InvalidArgumentError(
        absl::StrFormat("a register sequence of %d steps; at most %d", steps.size(), kMaxRegisterSteps));
  }
  size_t reads = 0;
  std::array<uint32_t, kMaxSelectedRegisters> selected{};
  size_t selected_count = 0;
  for (size_t i = 0; i < steps.size(); ++i) {
    const RegisterStep& step = steps[i];
    if (step.kind != RegisterStep::Kind::kSelect && step.kind != RegisterStep::Kind::kRead) {
      return absl::InvalidArgumentError(
          absl::StrFormat("register sequence step %d has kind %d; the kinds are 0 (select) and 1 (read)", i,
                          static_cast<uint32_t>(step.kind)));
    }
    if (step.offset % 4 != 0 || uint64_t{step.offset} + 4 > bar_size) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "register sequence step %d: offset %#x is not a dword inside the BAR (%#x bytes)", i, step.offset, bar_size));
    }
    if (step.kind == RegisterStep::Kind::kRead) {
      if (step.value == 0 || step.value > kMaxRegisterSequenceReads - reads) {
        return absl::InvalidArgumentError(absl::StrFormat(
            "register sequence step %d reads %#x %d times: each read step reads at least once, and a sequence at most "
            "%d times in all",
            i, step.offset, step.value, kMaxRegisterSequenceReads));
      }
      reads += step.value;
      continue;
    }
    const auto end = selected.begin() + selected_count;
    if (std::find(selected.begin(), end, step.offset) != end) continue;
    if (selected_count == kMaxSelectedRegisters) {
      return absl::InvalidArgumentError(
          absl::StrFormat("register sequence step %d selects a %dth register (%#x); at most %d", i, selected_count + 1,
                          step.offset, kMaxSelectedRegisters));
    }
    selected[selected_count++] = step.offset;
  }
  return reads;
}

void RunRegisterSequence(const Mmio& mmio, std::span<const RegisterStep> steps, std::span<uint32_t> out) {
  // What each selected register held before the sequence first wrote it, in the order of those first writes.
  std::array<std::pair<uint32_t, uint32_t>, kMaxSelectedRegisters> saved{};
  size_t saved_count = 0;
  size_t next = 0;
  for (const RegisterStep& step : steps) {
    if (step.kind == RegisterStep::Kind::kRead) {
      for (uint32_t n = 0; n < step.value && next < out.size(); ++n) out[next++] = mmio.Read32(step.offset);
      continue;
    }
    const auto end = saved.begin() + saved_count;
    if (saved_count < saved.size() &&
        std::find_if(saved.begin(), end, [&](const auto& s) { return s.first == step.offset; }) == end) {
      saved[saved_count++] = {step.offset, mmio.Read32(step.offset)};
    }
    mmio.Write32(step.offset, step.value);
  }
  // In the reverse order of their first writes, so the last write puts back the first selection the sequence changed
  // (typically the bank selection the indexed registers below it depend on).
  for (size_t i = saved_count; i-- > 0;) mmio.Write32(saved[i].first, saved[i].second);
}

}  // namespace pci
