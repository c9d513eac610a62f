#include "tools/cli/amdgpu_ids.h"

#include <array>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "base/file.h"

namespace cli {
namespace {

struct IdEntry {
  uint16_t device_id;
  uint8_t revision;
  absl::string_view name;
};

// The Navi31 (device 0x744C) lines of libdrm 2.4.124's data/amdgpu.ids (Debian 13's libdrm-common), copied as data.
constexpr absl::string_view kBuiltInSource = "built-in (libdrm 2.4.124 data/amdgpu.ids)";
constexpr std::array<IdEntry, 4> kBuiltIn{{
    {0x744C, 0xC8, "AMD Radeon RX 7900 XTX"},
    {0x744C, 0xCC, "AMD Radeon RX 7900 XT"},
    {0x744C, 0xCE, "AMD Radeon RX 7900 GRE"},
    {0x744C, 0xCF, "AMD Radeon RX 7900M"},
}};

// One line of amdgpu.ids: "device_id,\trevision_id,\tproduct_name" in hex; '#' starts a comment, and the first
// other line is the file's version ("1.0.0"), which has no commas.
std::optional<IdEntry> ParseLine(absl::string_view line) {
  if (absl::StartsWith(line, "#")) return std::nullopt;
  std::vector<absl::string_view> parts = absl::StrSplit(line, absl::MaxSplits(',', 2));
  if (parts.size() != 3) return std::nullopt;
  uint32_t device = 0, revision = 0;
  constexpr uint32_t kMaxDeviceId = 0xffff, kMaxRevision = 0xff;
  if (!absl::SimpleHexAtoi(absl::StripAsciiWhitespace(parts[0]), &device) || device > kMaxDeviceId ||
      !absl::SimpleHexAtoi(absl::StripAsciiWhitespace(parts[1]), &revision) || revision > kMaxRevision) {
    return std::nullopt;
  }
  return IdEntry{static_cast<uint16_t>(device), static_cast<uint8_t>(revision), absl::StripAsciiWhitespace(parts[2])};
}

}  // namespace

std::optional<ProductName> LookupProductName(uint16_t device_id, uint8_t revision, absl::string_view ids_file) {
  if (absl::StatusOr<std::string> text = base::ReadFile(std::string(ids_file)); text.ok()) {
    for (absl::string_view line : absl::StrSplit(*text, '\n')) {
      std::optional<IdEntry> entry = ParseLine(line);
      if (entry && entry->device_id == device_id && entry->revision == revision) {
        return ProductName{std::string(entry->name), std::string(ids_file)};
      }
    }
  }
  for (const IdEntry& entry : kBuiltIn) {
    if (entry.device_id == device_id && entry.revision == revision) {
      return ProductName{std::string(entry.name), std::string(kBuiltInSource)};
    }
  }
  return std::nullopt;
}

std::string HumanBytes(uint64_t bytes) {
  constexpr std::array<absl::string_view, 5> kUnits = {"bytes", "KiB", "MiB", "GiB", "TiB"};
  constexpr uint64_t kStep = 1024;
  size_t unit = 0;
  uint64_t scale = 1;
  while (unit + 1 < kUnits.size() && bytes >= scale * kStep) {
    scale *= kStep;
    ++unit;
  }
  if (bytes % scale == 0) return absl::StrFormat("%d %s", bytes / scale, kUnits[unit]);
  return absl::StrFormat("%.1f %s", static_cast<double>(bytes) / static_cast<double>(scale), kUnits[unit]);
}

}  // namespace cli
