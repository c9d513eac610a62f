// Finds the GPUs on this machine: PCI display and 3D controllers of AMD (0x1002) and NVIDIA (0x10de), through
// hwloc (I/O objects enabled), completed from sysfs with what hwloc does not say (bound driver, IOMMU group, BARs).
//
// Three steps, each testable alone: ScanPciFunctions (hwloc, this machine), SelectGpus (a filter over plain
// data) and CompleteFromSysfs (reads a sysfs tree under SystemPaths, fake in tests).
#ifndef BAREGPU_PCI_ENUMERATE_H_
#define BAREGPU_PCI_ENUMERATE_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "pci/address.h"
#include "pci/device.h"
#include "pci/system_paths.h"

namespace pci {

inline constexpr uint16_t kVendorAmd = 0x1002;
inline constexpr uint16_t kVendorNvidia = 0x10de;
// PCI_BASE_CLASS_DISPLAY from the Linux kernel's include/linux/pci_ids.h (VGA 0x0300, 3D 0x0302, other 0x0380).
inline constexpr uint8_t kPciBaseClassDisplay = 0x03;

struct GpuInfo {
  Address address;
  uint16_t vendor_id = 0;
  uint16_t device_id = 0;
  uint32_t class_code = 0;                 // 24 bits
  std::string name;                        // hwloc's PCI name database, when it knows the device
  std::optional<int> numa_node;            // nullopt on single-node machines or when unknown
  std::string link_speed;                  // sysfs current_link_speed, e.g. "16.0 GT/s PCIe"; empty when unknown
  std::optional<int> link_width;           // lanes
  float link_gbytes_per_s = 0;             // hwloc's link bandwidth (all lanes); 0 when unknown
  std::optional<std::string> driver;       // bound kernel driver; nullopt when none
  std::optional<std::string> iommu_group;  // nullopt when the IOMMU is off
  std::vector<BarInfo> bars;               // implemented BARs, from sysfs resource
};

// One PCI function as hwloc reports it.
struct PciFunctionInfo {
  Address address;
  uint16_t vendor_id = 0;
  uint16_t device_id = 0;
  uint16_t class_id = 0;         // base class << 8 | subclass (hwloc has no programming interface)
  std::string name;              // "Vendor Device" from hwloc's PCIVendor/PCIDevice info, else the object's name
  std::optional<int> numa_node;  // only when the machine has more than one node and the device sits under one
  float link_gbytes_per_s = 0;
};

// Every PCI function hwloc finds on this machine (I/O discovery on, important devices kept).
absl::StatusOr<std::vector<PciFunctionInfo>> ScanPciFunctions();

// AMD and NVIDIA display-class functions, as GpuInfo without the sysfs fields, sorted by address.
std::vector<GpuInfo> SelectGpus(const std::vector<PciFunctionInfo>& functions);

// Fills driver, IOMMU group, BARs, link speed/width, the full class code (and the NUMA node when hwloc had none
// and the machine has several) from sysfs. A function missing from sysfs keeps its hwloc fields; a malformed
// attribute is an error naming the file.
absl::Status CompleteFromSysfs(GpuInfo& gpu, const SystemPaths& paths);

// All GPUs hwloc finds, sorted by address, each completed from sysfs under `paths`.
absl::StatusOr<std::vector<GpuInfo>> EnumerateGpus(const SystemPaths& paths = {});

}  // namespace pci

#endif  // BAREGPU_PCI_ENUMERATE_H_
