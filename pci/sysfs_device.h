// SysfsDevice: a real PCI function through /sys/bus/pci/devices/BDF/{config,resourceN[_wc],reset}.
//
// Configuration space by pread/pwrite on `config`, BARs by mmap of `resourceN` (`resourceN_wc`, write-combined,
// for memory such as VRAM when the kernel offers it), DMA memory on locked 2 MiB hugepages whose physical
// addresses come from /proc/self/pagemap. That is only sound when the device's bus addresses are physical
// addresses, so it works only as root with the IOMMU off or in passthrough (group type "identity"); otherwise it
// refuses and points to VFIO. No interrupts (poll, or use VFIO); reset through the `reset` attribute.
#ifndef BAREGPU_PCI_SYSFS_DEVICE_H_
#define BAREGPU_PCI_SYSFS_DEVICE_H_

#include <sys/types.h>

#include <memory>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "pci/address.h"
#include "pci/device.h"
#include "pci/system_paths.h"

namespace pci {

// Why the sysfs backend may not drive `address` for a process with effective uid `euid`, or OK.
absl::Status CheckSysfsPreconditions(const Address& address, const SystemPaths& paths, uid_t euid);

absl::StatusOr<std::unique_ptr<Device>> OpenSysfs(const Address& address, const SystemPaths& paths = {});

}  // namespace pci

#endif  // BAREGPU_PCI_SYSFS_DEVICE_H_
