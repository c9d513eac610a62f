#include "am/register_io.h"


#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "am/poll_backoff.h"
#include "am/regs/database.h"
#include "am/regs/nbio.h"

namespace am {
namespace {

template <typename R>
uint64_t AddressOf(const regs::IpBases& bases) {
  auto address = bases.Resolve(R::kIp, 0, R::kSegment, R::kOffset);
  return address.ok() ? *address : UINT64_MAX;
}

}  // namespace

RegisterIo::RegisterIo(pci::Mmio bar5, const regs::IpBases& bases)
    : bar5_(bar5),
      bases_(bases),
      rsmu_index_(AddressOf<regs::nbio::BIF_BX_PF0_RSMU_INDEX>(bases)),
      rsmu_data_(AddressOf<regs::nbio::BIF_BX_PF0_RSMU_DATA>(bases)) {}

uint32_t RegisterIo::ReadDword(uint64_t address) {
  uint32_t value;
  if (address * 4 < bar5_.size()) {
    value = bar5_.Read32(address * 4);
  } else {
    bar5_.Write32(rsmu_index_ * 4, static_cast<uint32_t>(address * 4));
    value = bar5_.Read32(rsmu_data_ * 4);
  }
  if (tracer_) tracer_(false, address, value);
  return value;
}

void RegisterIo::WriteDword(uint64_t address, uint32_t value) {
  if (address * 4 < bar5_.size()) {
    bar5_.Write32(address * 4, value);
  } else {
    bar5_.Write32(rsmu_index_ * 4, static_cast<uint32_t>(address * 4));
    bar5_.Write32(rsmu_data_ * 4, value);
  }
  if (tracer_) tracer_(true, address, value);
}

std::string RegisterIo::Describe(bool write, uint64_t address, uint32_t value) const {
  const std::vector<regs::AddressMatch> matches = regs::FindByAddress(bases_, address);
  std::string text = absl::StrFormat("%s %s = 0x%08x", write ? "W" : "R", NameOf(address), value);
  if (matches.empty()) return text;
  const regs::RegisterInfo& reg = matches.front().reg;
  if (reg.field_count() <= 1) return text;
  // Fields follow on the same line while it stays within kTraceColumns, then on indented continuation lines.
  constexpr absl::string_view kContinuation = "\n    ";
  size_t line_start = 0;
  for (const regs::DecodedField& field : regs::Decode(reg, value)) {
    const std::string item = absl::StrFormat("%s=%#x", field.field.name, field.value);
    if (text.size() - line_start + 1 + item.size() > kTraceColumns) {
      absl::StrAppend(&text, kContinuation);
      line_start = text.size() - (kContinuation.size() - 1);
      text += item;
    } else {
      absl::StrAppend(&text, " ", item);
    }
  }
  return text;
}

std::string RegisterIo::NameOf(uint64_t address) const {
  if (auto it = names_.find(address); it != names_.end()) return it->second;
  if (auto matches = regs::FindByAddress(bases_, address); !matches.empty()) {
    return std::string(matches.front().reg.name());
  }
  if (std::optional<regs::SegmentLocation> at = bases_.Locate(address)) {
    return absl::StrFormat("%s%d seg%d+%#x (dword %#x)", absl::AsciiStrToUpper(regs::IpName(at->ip)), at->instance,
                           at->segment, at->offset, address);
  }
  return absl::StrFormat("dword %#x (below every IP block's base)", address);
}

absl::Status RegisterIo::WaitFor(uint64_t address, uint32_t mask, uint32_t expected, absl::Duration timeout,
                                 absl::string_view what) {
  PollBackoff backoff(absl::Now() + timeout);
  uint32_t value = 0;
  do {
    value = ReadDword(address);
    if ((value & mask) == expected) return absl::OkStatus();
  } while (backoff.Wait());
  return absl::DeadlineExceededError(
      absl::StrFormat("timed out after %s waiting for %s: %s & %#x == %#x, last read %#x",
                      absl::FormatDuration(timeout), what, NameOf(address), mask, expected, value));
}

absl::Status RegisterIo::WaitForChange(uint64_t address, uint32_t from, absl::Duration timeout,
                                       absl::string_view what) {
  PollBackoff backoff(absl::Now() + timeout);
  do {
    if (ReadDword(address) != from) return absl::OkStatus();
  } while (backoff.Wait());
  return absl::DeadlineExceededError(absl::StrFormat("timed out after %s waiting for %s: %s stays %#x",
                                                     absl::FormatDuration(timeout), what, NameOf(address), from));
}

}  // namespace am
