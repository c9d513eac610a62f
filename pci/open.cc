#include "pci/open.h"

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "base/printable.h"
#include "base/status_macros.h"
#include "pci/sysfs_device.h"
#include "pci/sysfs_tree.h"
#include "pci/vfio_device.h"
#include "pci/vfio_diagnostics.h"
#include "pci/virtual_registry.h"

namespace pci {

absl::StatusOr<std::unique_ptr<Device>> Open(absl::string_view name, const OpenOptions& options) {
  if (absl::StartsWith(name, kVirtualPrefix)) return OpenVirtual(name);
  absl::string_view address_text = name;
  bool sysfs = false;
  if (absl::ConsumePrefix(&address_text, "sysfs:")) {
    sysfs = true;
  } else {
    absl::ConsumePrefix(&address_text, "vfio:");
  }
  auto address = Address::Parse(address_text);
  if (!address.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("'", base::Printable(name),
                     "' names no device: use a PCI address (0000:03:00.0, optionally prefixed vfio: or sysfs:) or a "
                     "virtual device (sim:navi31); `baregpu list` shows what is there"));
  }
  if (sysfs) {
    // The sysfs backend would advise unbinding the device's driver: not for a disk or a network card.
    if (SysfsPciFunction(options.paths, *address).Exists())
      BAREGPU_RETURN_IF_ERROR(CheckIsGpu(*address, options.paths));
    return OpenSysfs(*address, options.paths);
  }
  return OpenVfio(*address, options.paths);
}

}  // namespace pci
