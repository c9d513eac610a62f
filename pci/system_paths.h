// Where the kernel's interfaces live. Tests point these at fake trees built in a temporary directory.
#ifndef BAREGPU_PCI_SYSTEM_PATHS_H_
#define BAREGPU_PCI_SYSTEM_PATHS_H_

#include <string>

#include "pci/address.h"

namespace pci {

struct SystemPaths {
  std::string sys = "/sys";
  std::string dev = "/dev";
  std::string proc = "/proc";

  // /sys/bus/pci/devices/0000:03:00.0
  std::string PciDevice(const Address& address) const { return sys + "/bus/pci/devices/" + address.ToString(); }
  std::string PciDriver(const std::string& driver) const { return sys + "/bus/pci/drivers/" + driver; }
  std::string IommuGroup(const std::string& group) const { return sys + "/kernel/iommu_groups/" + group; }
  std::string VfioGroup(const std::string& group) const { return dev + "/vfio/" + group; }
  std::string VfioContainer() const { return dev + "/vfio/vfio"; }
};

}  // namespace pci

#endif  // BAREGPU_PCI_SYSTEM_PATHS_H_
