// A fake machine for PCI tests: /sys, /dev and /proc trees in a temporary directory, laid out like the kernel's
// (device directories, driver and iommu_group symlinks, /sys/kernel/iommu_groups, /dev/vfio nodes), so that
// sysfs parsing, VFIO diagnostics and the sysfs backend run against them through pci::SystemPaths.
#ifndef BAREGPU_TESTS_PCI_FAKE_SYSTEM_H_
#define BAREGPU_TESTS_PCI_FAKE_SYSTEM_H_

#include <sys/types.h>

#include <cstdint>
#include <string>

#include "pci/system_paths.h"

namespace pci::testing {

// The kernel's `resource` line for a 64-bit prefetchable memory BAR (flags as on a real GPU's VRAM BAR).
std::string ResourceLine(uint64_t start, uint64_t size, uint64_t flags);

class FakeSystem {
 public:
  FakeSystem();
  ~FakeSystem();
  FakeSystem(const FakeSystem&) = delete;
  FakeSystem& operator=(const FakeSystem&) = delete;

  const SystemPaths& paths() const { return paths_; }
  const std::string& root() const { return root_; }

  // A PCI function directory with vendor, device, class, numa_node, a 4 KiB config file and a resource file
  // (seven lines: BARs 0..5 and the ROM; `resource` replaces it when not empty).
  void AddDevice(const std::string& bdf, uint16_t vendor, uint16_t device, uint32_t class_code,
                 const std::string& resource = "");
  // Creates /sys/bus/pci/drivers/DRIVER (a loaded driver).
  void LoadDriver(const std::string& driver);
  // Loads the driver and links the device to it, as binding does.
  void Bind(const std::string& bdf, const std::string& driver);
  // Puts the device in IOMMU group `group` whose domain has `type` ("DMA-FQ", "identity").
  void AddToIommuGroup(const std::string& bdf, const std::string& group, const std::string& type = "DMA-FQ");
  // A node under /dev ("vfio/vfio", "vfio/7") with `mode`.
  void AddDevNode(const std::string& name, mode_t mode = 0666);
  // Writes a file relative to the root ("sys/bus/pci/devices/0000:03:00.0/current_link_width"), making its parents.
  void WriteFile(const std::string& relative, const std::string& contents);
  std::string DevicePath(const std::string& bdf) const { return root_ + "/sys/bus/pci/devices/" + bdf; }

 private:
  std::string root_;
  SystemPaths paths_;
};

}  // namespace pci::testing

#endif  // BAREGPU_TESTS_PCI_FAKE_SYSTEM_H_
