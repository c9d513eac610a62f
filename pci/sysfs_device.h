// SysfsDevice: a real PCI function through /sys/bus/pci/devices/BDF/{config,resourceN}, root only, IOMMU off.
#ifndef BAREGPU_PCI_SYSFS_DEVICE_H_
#define BAREGPU_PCI_SYSFS_DEVICE_H_

#include <memory>

#include "absl/status/statusor.h"
#include "pci/address.h"
#include "pci/device.h"
#include "pci/system_paths.h"

namespace pci {

absl::StatusOr<std::unique_ptr<Device>> OpenSysfs(const Address& address, const SystemPaths& paths = {});

}  // namespace pci

#endif  // BAREGPU_PCI_SYSFS_DEVICE_H_
