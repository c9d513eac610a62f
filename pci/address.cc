#include "pci/address.h"

#include "absl/strings/numbers.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"

namespace pci {
namespace {

bool ParseHexField(absl::string_view text, size_t max_digits, uint32_t max_value, uint32_t* out) {
  if (text.empty() || text.size() > max_digits) return false;
  for (char c : text) {
    if (!absl::ascii_isxdigit(static_cast<unsigned char>(c))) return false;
  }
  uint32_t value = 0;
  if (!absl::SimpleHexAtoi(text, &value) || value > max_value) return false;
  *out = value;
  return true;
}

}  // namespace

absl::StatusOr<Address> Address::Parse(absl::string_view text) {
  auto bad = [&] {
    return absl::InvalidArgumentError(absl::StrFormat(
        "'%s' is not a PCI address; expected domain:bus:device.function in hex, e.g. 0000:03:00.0", text));
  };
  std::vector<absl::string_view> parts = absl::StrSplit(text, ':');
  if (parts.size() == 2) parts.insert(parts.begin(), "0000");
  if (parts.size() != 3) return bad();
  std::vector<absl::string_view> dev_fn = absl::StrSplit(parts[2], '.');
  if (dev_fn.size() != 2) return bad();
  uint32_t domain, bus, device, function;
  if (!ParseHexField(parts[0], 8, UINT32_MAX, &domain) || !ParseHexField(parts[1], 2, 0xff, &bus) ||
      !ParseHexField(dev_fn[0], 2, 0x1f, &device) || !ParseHexField(dev_fn[1], 1, 0x7, &function)) {
    return bad();
  }
  return Address{domain, static_cast<uint8_t>(bus), static_cast<uint8_t>(device), static_cast<uint8_t>(function)};
}

std::string Address::ToString() const { return absl::StrFormat("%04x:%02x:%02x.%x", domain, bus, device, function); }

}  // namespace pci
