// Finds the GPUs on this machine: PCI display and 3D controllers of AMD (0x1002) and NVIDIA (0x10de), through
// hwloc (I/O objects enabled), completed from sysfs with what hwloc does not say (bound driver, IOMMU group, BARs).
#ifndef BAREGPU_PCI_ENUMERATE_H_
#define BAREGPU_PCI_ENUMERATE_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "pci/address.h"
#include "pci/device.h"
#include "pci/system_paths.h"

namespace pci {

inline constexpr uint16_t kVendorAmd = 0x1002;
inline constexpr uint16_t kVendorNvidia = 0x10de;

struct GpuInfo {
  Address address;
  uint16_t vendor_id = 0;
  uint16_t device_id = 0;
  uint32_t class_code = 0;           // 24 bits
  std::string name;                  // hwloc's PCI name database, when it knows the device
  std::optional<int> numa_node;      // nullopt on single-node machines or when unknown
  std::string link_speed;            // sysfs current_link_speed, e.g. "16.0 GT/s PCIe"; empty when unknown
  std::optional<int> link_width;     // lanes
  std::optional<std::string> driver;        // bound kernel driver; nullopt when none
  std::optional<std::string> iommu_group;   // nullopt when the IOMMU is off
  std::vector<BarInfo> bars;         // implemented BARs, from sysfs resource
};

// All GPUs hwloc finds, sorted by address, each completed from sysfs under `paths`.
absl::StatusOr<std::vector<GpuInfo>> EnumerateGpus(const SystemPaths& paths = {});

}  // namespace pci

#endif  // BAREGPU_PCI_ENUMERATE_H_
