#include "pci/enumerate.h"

#include "absl/strings/match.h"
#include "base/file.h"
#include "gtest/gtest.h"
#include "pci/sysfs_tree.h"
#include "tests/pci/fake_system.h"

namespace pci {
namespace {

using ::pci::testing::FakeSystem;
using ::pci::testing::ResourceLine;

PciFunctionInfo Function(const char* bdf, uint16_t vendor, uint16_t device, uint16_t class_id) {
  PciFunctionInfo f;
  f.address = *Address::Parse(bdf);
  f.vendor_id = vendor;
  f.device_id = device;
  f.class_id = class_id;
  f.name = "name of " + std::string(bdf);
  return f;
}

TEST(SelectGpusTest, KeepsAmdAndNvidiaDisplayControllersSorted) {
  std::vector<PciFunctionInfo> functions = {
      Function("0000:c1:00.0", kVendorNvidia, 0x2335, 0x0302),  // 3D controller (H200)
      Function("0000:03:00.1", kVendorAmd, 0xab30, 0x0403),     // the GPU's HDMI audio
      Function("0000:00:02.0", 0x8086, 0x4680, 0x0300),         // Intel integrated graphics
      Function("0000:03:00.0", kVendorAmd, 0x744c, 0x0300),     // VGA controller (Navi31)
      Function("0000:04:00.0", kVendorAmd, 0x1478, 0x0604),     // AMD PCIe switch port
      Function("0000:05:00.0", kVendorNvidia, 0x1eb8, 0x0380),  // display controller, other
  };
  functions[3].numa_node = 1;
  functions[3].link_gbytes_per_s = 31.5f;
  std::vector<GpuInfo> gpus = SelectGpus(functions);
  ASSERT_EQ(gpus.size(), 3u);
  EXPECT_EQ(gpus[0].address.ToString(), "0000:03:00.0");
  EXPECT_EQ(gpus[0].device_id, 0x744c);
  EXPECT_EQ(gpus[0].class_code, 0x030000u);
  EXPECT_EQ(gpus[0].name, "name of 0000:03:00.0");
  EXPECT_EQ(gpus[0].numa_node, 1);
  EXPECT_FLOAT_EQ(gpus[0].link_gbytes_per_s, 31.5f);
  EXPECT_EQ(gpus[1].address.ToString(), "0000:05:00.0");
  EXPECT_EQ(gpus[2].address.ToString(), "0000:c1:00.0");
  EXPECT_EQ(gpus[2].class_code, 0x030200u);
}

TEST(CompleteFromSysfsTest, AddsDriverGroupBarsLinkAndClass) {
  FakeSystem fake;
  const std::string resource = ResourceLine(0x7000000000, uint64_t{24} << 30, 0x14220c) + ResourceLine(0, 0, 0) +
                               ResourceLine(0x7800000000, 2 << 20, 0x14220c) + ResourceLine(0, 0, 0) +
                               ResourceLine(0xe000, 0x100, 0x40101) + ResourceLine(0xfcc00000, 1 << 20, 0x40200);
  fake.AddDevice("0000:03:00.0", kVendorAmd, 0x744c, 0x030001, resource);
  fake.Bind("0000:03:00.0", "vfio-pci");
  fake.AddToIommuGroup("0000:03:00.0", "14");
  fake.WriteFile("sys/bus/pci/devices/0000:03:00.0/current_link_speed", "16.0 GT/s PCIe\n");
  fake.WriteFile("sys/bus/pci/devices/0000:03:00.0/current_link_width", "16\n");

  std::vector<GpuInfo> gpus = SelectGpus({Function("0000:03:00.0", kVendorAmd, 0x744c, 0x0300)});
  ASSERT_EQ(gpus.size(), 1u);
  ASSERT_TRUE(CompleteFromSysfs(gpus[0], fake.paths()).ok());
  const GpuInfo& gpu = gpus[0];
  EXPECT_EQ(gpu.class_code, 0x030001u);  // the programming interface comes from sysfs
  EXPECT_EQ(gpu.driver, "vfio-pci");
  EXPECT_EQ(gpu.iommu_group, "14");
  EXPECT_EQ(gpu.link_speed, "16.0 GT/s PCIe");
  EXPECT_EQ(gpu.link_width, 16);
  ASSERT_EQ(gpu.bars.size(), 4u);
  EXPECT_EQ(gpu.bars[0].size, uint64_t{24} << 30);
  EXPECT_EQ(gpu.bars[1].index, 2);
  EXPECT_TRUE(gpu.bars[2].is_io);
  EXPECT_EQ(gpu.bars[3].index, 5);
}

TEST(CompleteFromSysfsTest, UnboundDeviceWithoutIommuAndAFunctionSysfsLacks) {
  FakeSystem fake;
  fake.AddDevice("0000:03:00.0", kVendorAmd, 0x744c, 0x030000);
  std::vector<GpuInfo> gpus = SelectGpus(
      {Function("0000:03:00.0", kVendorAmd, 0x744c, 0x0300), Function("0000:07:00.0", kVendorAmd, 0x73bf, 0x0300)});
  ASSERT_TRUE(CompleteFromSysfs(gpus[0], fake.paths()).ok());
  EXPECT_EQ(gpus[0].driver, std::nullopt);
  EXPECT_EQ(gpus[0].iommu_group, std::nullopt);
  EXPECT_TRUE(gpus[0].bars.empty());
  ASSERT_TRUE(CompleteFromSysfs(gpus[1], fake.paths()).ok());  // hwloc saw it, the tree has not: keep hwloc's view
  EXPECT_EQ(gpus[1].device_id, 0x73bf);
  EXPECT_EQ(gpus[1].class_code, 0x030000u);
}

TEST(CompleteFromSysfsTest, MalformedResourceFileIsAnError) {
  FakeSystem fake;
  fake.AddDevice("0000:03:00.0", kVendorAmd, 0x744c, 0x030000, "0x0 0x0\n");
  std::vector<GpuInfo> gpus = SelectGpus({Function("0000:03:00.0", kVendorAmd, 0x744c, 0x0300)});
  absl::Status status = CompleteFromSysfs(gpus[0], fake.paths());
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StrContains(status.message(), "resource: line 1")) << status;
}

// hwloc's view agrees with sysfs's for every function it reports (and it sees at least one on a machine that has
// PCI devices in sysfs with a class hwloc keeps, e.g. storage or network).
TEST(ScanPciFunctionsTest, AgreesWithSysfsOnThisMachine) {
  auto functions = ScanPciFunctions();
  ASSERT_TRUE(functions.ok()) << functions.status();
  SystemPaths real;
  for (const PciFunctionInfo& f : *functions) {
    SysfsPciFunction sysfs(real, f.address);
    if (!sysfs.Exists()) continue;  // hwloc may report functions from its own sources; sysfs is the reference
    EXPECT_EQ(*sysfs.VendorId(), f.vendor_id) << f.address.ToString();
    EXPECT_EQ(*sysfs.DeviceId(), f.device_id) << f.address.ToString();
    EXPECT_EQ(*sysfs.ClassCode() >> 8, f.class_id) << f.address.ToString();
  }
  std::cout << functions->size() << " PCI functions kept by hwloc\n";
}

// Runs on this machine. The oracle is sysfs itself: every AMD/NVIDIA display-class function listed there (and
// nothing else) must come back from hwloc, completed.
TEST(EnumerateGpusTest, FindsWhatSysfsListsOnThisMachine) {
  auto gpus = EnumerateGpus();
  ASSERT_TRUE(gpus.ok()) << gpus.status();
  std::vector<std::string> expected;
  SystemPaths real;
  auto names = base::ListDirectory(real.sys + "/bus/pci/devices");
  if (names.ok()) {
    for (const std::string& name : *names) {
      SysfsPciFunction f(real, *Address::Parse(name));
      auto vendor = f.VendorId();
      auto class_code = f.ClassCode();
      if (vendor.ok() && class_code.ok() && (*vendor == kVendorAmd || *vendor == kVendorNvidia) &&
          (*class_code >> 16) == kPciBaseClassDisplay) {
        expected.push_back(name);
      }
    }
  }
  std::vector<std::string> found;
  for (const GpuInfo& gpu : *gpus) {
    found.push_back(gpu.address.ToString());
    EXPECT_TRUE(gpu.vendor_id == kVendorAmd || gpu.vendor_id == kVendorNvidia);
    EXPECT_EQ(gpu.class_code >> 16, kPciBaseClassDisplay);
    EXPECT_FALSE(gpu.bars.empty()) << gpu.address.ToString() << ": a GPU has BARs";
    std::cout << "GPU " << found.back() << " " << gpu.name << " driver " << gpu.driver.value_or("none") << "\n";
  }
  EXPECT_EQ(found, expected);
  if (found.empty()) std::cout << "no AMD or NVIDIA GPU on this machine\n";
}

}  // namespace
}  // namespace pci
