// VfioDevice: a real PCI function bound to vfio-pci, through the VFIO container/group API and the type1 IOMMU.
//
// Opening checks every precondition first (pci/vfio_diagnostics.h) and explains the fix, then: container
// (API version, type1 IOMMU), group (viable, attached), the IOMMU's valid IOVA ranges, the device fd and its
// regions. BARs are mmapped where the region allows it and trapped to pread/pwrite on the device fd elsewhere;
// configuration space goes through the config region; DMA memory is mapped with VFIO_IOMMU_MAP_DMA at IOVAs from
// the device's own allocator (below its DMA mask, inside the valid ranges); interrupts are MSI-X (else MSI)
// vectors wired to eventfds. Destroying the device unmaps and closes everything; a DMA buffer unmaps itself and
// keeps the container alive while it lives.
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
