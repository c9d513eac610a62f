// VfioDevice: a real PCI function bound to vfio-pci, through the VFIO container/group API and the type1 IOMMU.
#ifndef BAREGPU_PCI_VFIO_DEVICE_H_
#define BAREGPU_PCI_VFIO_DEVICE_H_

#include <memory>

#include "absl/status/statusor.h"
#include "pci/address.h"
#include "pci/device.h"
#include "pci/system_paths.h"

namespace pci {

absl::StatusOr<std::unique_ptr<Device>> OpenVfio(const Address& address, const SystemPaths& paths = {});

}  // namespace pci

#endif  // BAREGPU_PCI_VFIO_DEVICE_H_
