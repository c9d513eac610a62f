// A PCI function address in the Linux "domain:bus:device.function" form, e.g. 0000:03:00.0.
#ifndef BAREGPU_PCI_ADDRESS_H_
#define BAREGPU_PCI_ADDRESS_H_

#include <compare>
#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace pci {

struct Address {
  uint32_t domain = 0;  // 16 bits on most systems, up to 32 with VMD
  uint8_t bus = 0;
  uint8_t device = 0;    // 5 bits
  uint8_t function = 0;  // 3 bits

  // Accepts "0000:03:00.0" and the short "03:00.0" (domain 0).
  static absl::StatusOr<Address> Parse(absl::string_view text);
  // Always the long form with a 4-digit domain, as sysfs names devices.
  std::string ToString() const;

  auto operator<=>(const Address&) const = default;
};

}  // namespace pci

#endif  // BAREGPU_PCI_ADDRESS_H_
