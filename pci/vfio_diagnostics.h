// Why VFIO cannot open a device, and the command that fixes it.
//
// CheckVfioPreconditions walks what vfio-pci needs, in the order a user has to fix it: the device exists, the
// IOMMU is on (an iommu_group link), vfio-pci is loaded, the device is bound to it, the rest of its IOMMU group
// is harmless (viable), and /dev/vfio nodes exist and can be opened. It reads only sysfs and /dev under
// SystemPaths, so tests run it against fake trees. VfioDevice runs it before any ioctl.
#ifndef BAREGPU_PCI_VFIO_DIAGNOSTICS_H_
#define BAREGPU_PCI_VFIO_DIAGNOSTICS_H_

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "pci/address.h"
#include "pci/system_paths.h"

namespace pci {

// Who opens the nodes. Tests pass a non-root user so that permission checks work when they run as root.
struct Credentials {
  uid_t uid = 0;
  gid_t gid = 0;
  std::vector<gid_t> groups;  // supplementary groups
  static Credentials Current();
};

// Everything VFIO needs, found in order.
struct VfioTarget {
  std::string group;           // IOMMU group number, "7"
  std::string group_node;      // /dev/vfio/7
  std::string container_node;  // /dev/vfio/vfio
};

absl::StatusOr<VfioTarget> CheckVfioPreconditions(const Address& address, const SystemPaths& paths,
                                                  const Credentials& who = Credentials::Current());

// Refuses a function that is not an AMD or NVIDIA display controller (PCI base class 0x03) in plain words, before
// any advice that would move it from its driver; one already bound to vfio-pci passes (whoever bound it meant it),
// and so does QEMU's edu device, the PCI layer's test device.
absl::Status CheckIsGpu(const Address& address, const SystemPaths& paths);

// Whether `who` may open `node` read-write, judged from its owner and mode (root may open anything): an error
// that names the owner, the mode and the chown / udev rule that fixes it. NotFound when the node is missing.
absl::Status CheckNodeAccess(const std::string& node, const Credentials& who);

// The error for a failed VFIO_IOMMU_MAP_DMA (errno `err`); ENOMEM explains RLIMIT_MEMLOCK and how to raise it.
absl::Status MapDmaError(int err, uint64_t size, uint64_t iova);

// Drivers that may share an IOMMU group with a device VFIO owns: vfio-pci and its variants, pci-stub, pcieport.
// Mirrors the kernel's driver_managed_dma drivers (drivers/pci/pci-stub.c, drivers/pci/pcie/portdrv.c).
bool DriverKeepsGroupViable(absl::string_view driver);

}  // namespace pci

#endif  // BAREGPU_PCI_VFIO_DIAGNOSTICS_H_
