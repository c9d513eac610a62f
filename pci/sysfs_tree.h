// Reading a PCI function's sysfs directory (/sys/bus/pci/devices/BDF): identity, bound driver, IOMMU group,
// NUMA node, link, BARs. The one place that knows sysfs formats; VFIO diagnostics, the sysfs backend and
// enumeration all read through it, so tests point it at fake trees (SystemPaths).
#ifndef BAREGPU_PCI_SYSFS_TREE_H_
#define BAREGPU_PCI_SYSFS_TREE_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "pci/address.h"
#include "pci/device.h"
#include "pci/system_paths.h"

namespace pci {

// Resource flags as the kernel prints them in the third column of the `resource` file. The kernel does not export
// them to user space; values from the Linux kernel's include/linux/ioport.h.
inline constexpr uint64_t kIoresourceIo = 0x00000100;        // IORESOURCE_IO
inline constexpr uint64_t kIoresourceMem = 0x00000200;       // IORESOURCE_MEM
inline constexpr uint64_t kIoresourcePrefetch = 0x00002000;  // IORESOURCE_PREFETCH
inline constexpr uint64_t kIoresourceMem64 = 0x00100000;     // IORESOURCE_MEM_64

// One line of the `resource` file: "0x<start> 0x<end> 0x<flags>" (drivers/pci/pci-sysfs.c, resource_show).
struct ResourceLine {
  uint64_t start = 0;
  uint64_t end = 0;  // inclusive
  uint64_t flags = 0;
};

// Parses a whole `resource` file. `path` only names the file in errors ("...: line 3: ...").
absl::StatusOr<std::vector<ResourceLine>> ParseResourceFile(absl::string_view text, absl::string_view path);
// The implemented BARs (lines 0..5 with a non-empty range and an I/O or memory type).
std::vector<BarInfo> BarsFromResources(const std::vector<ResourceLine>& lines);

// The sysfs view of one PCI function under `paths`.
class SysfsPciFunction {
 public:
  SysfsPciFunction(const SystemPaths& paths, const Address& address)
      : paths_(paths), address_(address), dir_(paths.PciDevice(address)) {}

  const std::string& dir() const { return dir_; }
  std::string Attribute(absl::string_view name) const { return dir_ + "/" + std::string(name); }
  bool Exists() const;

  absl::StatusOr<uint16_t> VendorId() const;
  absl::StatusOr<uint16_t> DeviceId() const;
  absl::StatusOr<uint32_t> ClassCode() const;  // 24 bits
  // The bound kernel driver ("vfio-pci", "amdgpu"); nullopt when none is bound.
  absl::StatusOr<std::optional<std::string>> Driver() const;
  // The IOMMU group number; nullopt when the device has none (IOMMU off or not covering it).
  absl::StatusOr<std::optional<std::string>> IommuGroup() const;
  // The group's domain type (/sys/kernel/iommu_groups/N/type): "identity", "DMA", "DMA-FQ", ...
  absl::StatusOr<std::string> IommuGroupType(const std::string& group) const;
  // The functions in an IOMMU group, sorted (this one included).
  absl::StatusOr<std::vector<Address>> IommuGroupMembers(const std::string& group) const;
  // The NUMA node the kernel reports; nullopt for -1 (no affinity) or a missing attribute.
  std::optional<int> NumaNode() const;
  // current_link_speed ("16.0 GT/s PCIe") and current_link_width (lanes); empty / nullopt when absent.
  std::string LinkSpeed() const;
  std::optional<int> LinkWidth() const;
  absl::StatusOr<std::vector<ResourceLine>> Resources() const;
  absl::StatusOr<std::vector<BarInfo>> Bars() const;

 private:
  SystemPaths paths_;
  Address address_;
  std::string dir_;
};

}  // namespace pci

#endif  // BAREGPU_PCI_SYSFS_TREE_H_
