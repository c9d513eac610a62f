#include "tests/pci/fake_system.h"

#include <stdlib.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>

#include "absl/strings/str_format.h"
#include "gtest/gtest.h"

namespace pci::testing {

namespace fs = std::filesystem;

std::string ResourceLine(uint64_t start, uint64_t size, uint64_t flags) {
  return absl::StrFormat("0x%016x 0x%016x 0x%016x\n", start, size ? start + size - 1 : 0, flags);
}

FakeSystem::FakeSystem() {
  char pattern[] = "/tmp/baregpu-fake-system-XXXXXX";
  const char* dir = ::mkdtemp(pattern);
  EXPECT_NE(dir, nullptr) << "mkdtemp failed";
  root_ = dir ? dir : "/nonexistent";
  paths_.sys = root_ + "/sys";
  paths_.dev = root_ + "/dev";
  paths_.proc = root_ + "/proc";
  for (const char* sub : {"sys/bus/pci/devices", "sys/bus/pci/drivers", "sys/kernel/iommu_groups", "dev", "proc"}) {
    fs::create_directories(root_ + "/" + sub);
  }
}

FakeSystem::~FakeSystem() {
  std::error_code ignored;
  fs::remove_all(root_, ignored);
}

void FakeSystem::WriteFile(const std::string& relative, const std::string& contents) {
  const fs::path path = fs::path(root_) / relative;
  fs::create_directories(path.parent_path());
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << contents;
  EXPECT_TRUE(out.good()) << "writing " << path;
}

void FakeSystem::AddDevice(const std::string& bdf, uint16_t vendor, uint16_t device, uint32_t class_code,
                           const std::string& resource) {
  const std::string dir = "sys/bus/pci/devices/" + bdf;
  WriteFile(dir + "/vendor", absl::StrFormat("0x%04x\n", vendor));
  WriteFile(dir + "/device", absl::StrFormat("0x%04x\n", device));
  WriteFile(dir + "/class", absl::StrFormat("0x%06x\n", class_code));
  WriteFile(dir + "/numa_node", "-1\n");
  std::string config(4096, '\0');
  config[0] = static_cast<char>(vendor & 0xff);
  config[1] = static_cast<char>(vendor >> 8);
  config[2] = static_cast<char>(device & 0xff);
  config[3] = static_cast<char>(device >> 8);
  WriteFile(dir + "/config", config);
  std::string lines = resource;
  if (lines.empty()) {
    for (int i = 0; i < 7; ++i) lines += ResourceLine(0, 0, 0);
  }
  WriteFile(dir + "/resource", lines);
}

void FakeSystem::LoadDriver(const std::string& driver) { fs::create_directories(paths_.PciDriver(driver)); }

void FakeSystem::Bind(const std::string& bdf, const std::string& driver) {
  LoadDriver(driver);
  fs::create_directory_symlink("../../../bus/pci/drivers/" + driver, DevicePath(bdf) + "/driver");
}

void FakeSystem::AddToIommuGroup(const std::string& bdf, const std::string& group, const std::string& type) {
  const std::string dir = paths_.IommuGroup(group);
  fs::create_directories(dir + "/devices");
  WriteFile("sys/kernel/iommu_groups/" + group + "/type", type + "\n");
  fs::create_directory_symlink("../../../../bus/pci/devices/" + bdf, dir + "/devices/" + bdf);
  fs::create_directory_symlink("../../../kernel/iommu_groups/" + group, DevicePath(bdf) + "/iommu_group");
}

void FakeSystem::AddDevNode(const std::string& name, mode_t mode) {
  WriteFile("dev/" + name, "");
  ::chmod((paths_.dev + "/" + name).c_str(), mode);
}

}  // namespace pci::testing
