#include "pci/sysfs_tree.h"

#include <algorithm>
#include <cerrno>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "base/file.h"
#include "base/status_macros.h"

namespace pci {
namespace {

// The kernel prints DEVICE_COUNT_RESOURCE lines (under 20); anything far beyond that is not a resource file.
constexpr size_t kMaxResourceLines = 64;

absl::StatusOr<uint64_t> ParseResourceField(absl::string_view field, absl::string_view path, size_t line,
                                            absl::string_view name) {
  const bool hex_prefix = field.size() >= 3 && field.size() <= 18 && field[0] == '0' && field[1] == 'x';
  auto value = hex_prefix ? base::ParseNumber(field) : absl::InvalidArgumentError("no 0x prefix");
  if (!value.ok()) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s: line %d: %s '%s' is not a 0x-prefixed hex number of at most 16 digits", path, line, name, field));
  }
  return *value;
}

// Follows `link` when it exists; nullopt when it does not.
absl::StatusOr<std::optional<std::string>> OptionalLinkBasename(const std::string& link) {
  auto name = base::ReadLinkBasename(link);
  if (name.ok()) return std::optional<std::string>(*name);
  if (absl::IsNotFound(name.status())) return std::optional<std::string>();
  return name.status();
}

}  // namespace

absl::StatusOr<std::vector<ResourceLine>> ParseResourceFile(absl::string_view text, absl::string_view path) {
  std::vector<ResourceLine> lines;
  size_t number = 0;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    ++number;
    line = absl::StripAsciiWhitespace(line);
    if (line.empty()) continue;
    if (lines.size() == kMaxResourceLines) {
      return absl::InvalidArgumentError(
          absl::StrFormat("%s: more than %d lines; not a PCI resource file", path, kMaxResourceLines));
    }
    std::vector<absl::string_view> fields = absl::StrSplit(line, ' ', absl::SkipEmpty());
    if (fields.size() != 3) {
      return absl::InvalidArgumentError(
          absl::StrFormat("%s: line %d: '%s' has %d fields; expected 3 (start end flags, in 0x hex)", path, number,
                          line, fields.size()));
    }
    ResourceLine entry;
    BAREGPU_ASSIGN_OR_RETURN(entry.start, ParseResourceField(fields[0], path, number, "start"));
    BAREGPU_ASSIGN_OR_RETURN(entry.end, ParseResourceField(fields[1], path, number, "end"));
    BAREGPU_ASSIGN_OR_RETURN(entry.flags, ParseResourceField(fields[2], path, number, "flags"));
    if (entry.end < entry.start) {
      return absl::InvalidArgumentError(
          absl::StrFormat("%s: line %d: end %#x is below start %#x", path, number, entry.end, entry.start));
    }
    lines.push_back(entry);
  }
  return lines;
}

std::vector<BarInfo> BarsFromResources(const std::vector<ResourceLine>& lines) {
  std::vector<BarInfo> bars;
  for (size_t i = 0; i < lines.size() && i < static_cast<size_t>(kBarCount); ++i) {
    const ResourceLine& r = lines[i];
    const bool is_io = (r.flags & kIoresourceIo) != 0;
    if ((!is_io && (r.flags & kIoresourceMem) == 0) || r.end == r.start) continue;
    bars.push_back(BarInfo{static_cast<int>(i), r.end - r.start + 1, is_io, (r.flags & kIoresourceMem64) != 0,
                           (r.flags & kIoresourcePrefetch) != 0});
  }
  return bars;
}

bool SysfsPciFunction::Exists() const { return base::PathExists(dir_); }

absl::StatusOr<uint16_t> SysfsPciFunction::VendorId() const {
  BAREGPU_ASSIGN_OR_RETURN(uint64_t value, base::ReadNumberAttribute(Attribute("vendor")));
  if (value > 0xffff) return absl::InvalidArgumentError(absl::StrFormat("%s: %#x is not a 16-bit id", dir_, value));
  return static_cast<uint16_t>(value);
}

absl::StatusOr<uint16_t> SysfsPciFunction::DeviceId() const {
  BAREGPU_ASSIGN_OR_RETURN(uint64_t value, base::ReadNumberAttribute(Attribute("device")));
  if (value > 0xffff) return absl::InvalidArgumentError(absl::StrFormat("%s: %#x is not a 16-bit id", dir_, value));
  return static_cast<uint16_t>(value);
}

absl::StatusOr<uint32_t> SysfsPciFunction::ClassCode() const {
  BAREGPU_ASSIGN_OR_RETURN(uint64_t value, base::ReadNumberAttribute(Attribute("class")));
  if (value > 0xffffff) {
    return absl::InvalidArgumentError(absl::StrFormat("%s/class: %#x is not a 24-bit class code", dir_, value));
  }
  return static_cast<uint32_t>(value);
}

absl::StatusOr<std::optional<std::string>> SysfsPciFunction::Driver() const {
  return OptionalLinkBasename(Attribute("driver"));
}

absl::StatusOr<std::optional<std::string>> SysfsPciFunction::IommuGroup() const {
  return OptionalLinkBasename(Attribute("iommu_group"));
}

absl::StatusOr<std::string> SysfsPciFunction::IommuGroupType(const std::string& group) const {
  return base::ReadAttribute(paths_.IommuGroup(group) + "/type");
}

absl::StatusOr<std::vector<Address>> SysfsPciFunction::IommuGroupMembers(const std::string& group) const {
  const std::string dir = paths_.IommuGroup(group) + "/devices";
  BAREGPU_ASSIGN_OR_RETURN(std::vector<std::string> names, base::ListDirectory(dir));
  std::vector<Address> members;
  for (const std::string& name : names) {
    auto address = Address::Parse(name);
    if (!address.ok()) {
      return absl::InvalidArgumentError(absl::StrCat(dir, ": entry '", name, "' is not a PCI address"));
    }
    members.push_back(*address);
  }
  std::sort(members.begin(), members.end());
  return members;
}

std::optional<int> SysfsPciFunction::NumaNode() const {
  auto text = base::ReadAttribute(Attribute("numa_node"));
  if (!text.ok() || *text == "-1") return std::nullopt;
  auto value = base::ParseNumber(*text);
  if (!value.ok() || *value > 4096) return std::nullopt;  // hwloc and the kernel cap nodes far below this
  return static_cast<int>(*value);
}

std::string SysfsPciFunction::LinkSpeed() const {
  auto text = base::ReadAttribute(Attribute("current_link_speed"));
  if (!text.ok() || *text == "Unknown") return "";
  return *text;
}

std::optional<int> SysfsPciFunction::LinkWidth() const {
  auto value = base::ReadNumberAttribute(Attribute("current_link_width"));
  if (!value.ok() || *value == 0 || *value > 32) return std::nullopt;  // PCIe links have 1..32 lanes
  return static_cast<int>(*value);
}

absl::StatusOr<std::vector<ResourceLine>> SysfsPciFunction::Resources() const {
  const std::string path = Attribute("resource");
  BAREGPU_ASSIGN_OR_RETURN(std::string text, base::ReadFile(path, 1 << 16));
  return ParseResourceFile(text, path);
}

absl::StatusOr<std::vector<BarInfo>> SysfsPciFunction::Bars() const {
  BAREGPU_ASSIGN_OR_RETURN(std::vector<ResourceLine> lines, Resources());
  return BarsFromResources(lines);
}

}  // namespace pci
