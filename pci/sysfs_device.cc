#include "pci/sysfs_device.h"

namespace pci {

absl::StatusOr<std::unique_ptr<Device>> OpenSysfs(const Address& address, const SystemPaths&) {
  return absl::UnimplementedError("sysfs backend under construction: " + address.ToString());
}

}  // namespace pci
