// One call to open any device by name:
//   "sim:KIND[:INSTANCE]"  a virtual device (pci/virtual_registry.h)
//   "0000:03:00.0"         a real device through vfio-pci (the normal way)
//   "vfio:0000:03:00.0"    the same, explicitly
//   "sysfs:0000:03:00.0"   a real device through sysfs resource files (root, IOMMU off or passthrough)
#ifndef BAREGPU_PCI_OPEN_H_
#define BAREGPU_PCI_OPEN_H_

#include <memory>
#include <string_view>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "pci/device.h"
#include "pci/system_paths.h"

namespace pci {

struct OpenOptions {
  SystemPaths paths;
};

absl::StatusOr<std::unique_ptr<Device>> Open(absl::string_view name, const OpenOptions& options = {});

}  // namespace pci

#endif  // BAREGPU_PCI_OPEN_H_
