#include "pci/sysfs_tree.h"

#include "absl/strings/match.h"
#include "base/file.h"
#include "gtest/gtest.h"
#include "tests/pci/fake_system.h"

namespace pci {
namespace {

using ::pci::testing::FakeSystem;
using ::pci::testing::ResourceLine;

// Lines as a Navi31 prints them: BAR0 VRAM (64-bit prefetchable), BAR2 doorbells (64-bit prefetchable), BAR4 I/O
// ports, BAR5 registers (32-bit), ROM. Flags are real kernel values (IORESOURCE_* | PCI bus bits).
constexpr char kNavi31Resource[] =
    "0x0000007000000000 0x00000077ffffffff 0x000000000014220c\n"
    "0x0000000000000000 0x0000000000000000 0x0000000000000000\n"
    "0x0000007800000000 0x00000078001fffff 0x000000000014220c\n"
    "0x0000000000000000 0x0000000000000000 0x0000000000000000\n"
    "0x000000000000e000 0x000000000000e0ff 0x0000000000040101\n"
    "0x00000000fcc00000 0x00000000fccfffff 0x0000000000040200\n"
    "0x00000000fcd00000 0x00000000fcd1ffff 0x0000000000046200\n";

TEST(ParseResourceFileTest, ReadsTheKernelsFormat) {
  auto lines = ParseResourceFile(kNavi31Resource, "resource");
  ASSERT_TRUE(lines.ok()) << lines.status();
  ASSERT_EQ(lines->size(), 7u);
  EXPECT_EQ((*lines)[0].start, 0x7000000000u);
  EXPECT_EQ((*lines)[0].end, 0x77ffffffffu);
  EXPECT_EQ((*lines)[0].flags, 0x14220cu);
  EXPECT_EQ((*lines)[4].flags, 0x40101u);
}

TEST(ParseResourceFileTest, BarsCarrySizeAndType) {
  auto lines = ParseResourceFile(kNavi31Resource, "resource");
  ASSERT_TRUE(lines.ok()) << lines.status();
  std::vector<BarInfo> bars = BarsFromResources(*lines);
  ASSERT_EQ(bars.size(), 4u);  // 0, 2, 4, 5; the ROM (line 6) is not a BAR
  EXPECT_EQ(bars[0].index, 0);
  EXPECT_EQ(bars[0].size, uint64_t{32} << 30);
  EXPECT_TRUE(bars[0].is_64bit);
  EXPECT_TRUE(bars[0].prefetchable);
  EXPECT_FALSE(bars[0].is_io);
  EXPECT_EQ(bars[1].index, 2);
  EXPECT_EQ(bars[1].size, uint64_t{2} << 20);
  EXPECT_EQ(bars[2].index, 4);
  EXPECT_TRUE(bars[2].is_io);
  EXPECT_EQ(bars[2].size, 256u);
  EXPECT_EQ(bars[3].index, 5);
  EXPECT_EQ(bars[3].size, uint64_t{1} << 20);
  EXPECT_FALSE(bars[3].is_64bit);
  EXPECT_FALSE(bars[3].prefetchable);
}

TEST(ParseResourceFileTest, BadLinesNameFileLineFieldAndValue) {
  struct Case {
    const char* text;
    const char* expected;
  } cases[] = {
      {"0x0 0x0\n", "line 1: '0x0 0x0' has 2 fields"},
      {"0x0 0x0 0x0\n0x10 0xzz 0x200\n", "line 2: end '0xzz'"},
      {"0x0 0x0 0x0\n0x0 0x0 0x0\n1000 0x1fff 0x200\n", "line 3: start '1000'"},
      {"0x2000 0x1fff 0x200\n", "line 1: end 0x1fff is below start 0x2000"},
      {"0x0 0x0 0x11111111111111111\n", "line 1: flags '0x11111111111111111'"},
  };
  for (const Case& c : cases) {
    auto lines = ParseResourceFile(c.text, "/sys/x/resource");
    ASSERT_FALSE(lines.ok()) << c.text;
    EXPECT_EQ(lines.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_TRUE(absl::StrContains(lines.status().message(), "/sys/x/resource: ")) << lines.status();
    EXPECT_TRUE(absl::StrContains(lines.status().message(), c.expected)) << lines.status() << " / " << c.expected;
  }
}

TEST(ParseResourceFileTest, RefusesEndlessFiles) {
  std::string text;
  for (int i = 0; i < 100; ++i) text += "0x0 0x0 0x0\n";
  auto lines = ParseResourceFile(text, "resource");
  ASSERT_FALSE(lines.ok());
  EXPECT_TRUE(absl::StrContains(lines.status().message(), "more than 64 lines")) << lines.status();
}

TEST(SysfsPciFunctionTest, ReadsIdentityDriverGroupLinkAndBars) {
  FakeSystem fake;
  fake.AddDevice("0000:03:00.0", 0x1002, 0x744c, 0x030000, kNavi31Resource);
  fake.Bind("0000:03:00.0", "amdgpu");
  fake.AddToIommuGroup("0000:03:00.0", "14");
  fake.AddDevice("0000:03:00.1", 0x1002, 0xab30, 0x040300);
  fake.AddToIommuGroup("0000:03:00.1", "14");
  fake.WriteFile("sys/bus/pci/devices/0000:03:00.0/current_link_speed", "16.0 GT/s PCIe\n");
  fake.WriteFile("sys/bus/pci/devices/0000:03:00.0/current_link_width", "16\n");
  fake.WriteFile("sys/bus/pci/devices/0000:03:00.0/numa_node", "1\n");

  SysfsPciFunction gpu(fake.paths(), *Address::Parse("0000:03:00.0"));
  ASSERT_TRUE(gpu.Exists());
  EXPECT_EQ(*gpu.VendorId(), 0x1002);
  EXPECT_EQ(*gpu.DeviceId(), 0x744c);
  EXPECT_EQ(*gpu.ClassCode(), 0x030000u);
  EXPECT_EQ(gpu.Driver()->value_or(""), "amdgpu");
  EXPECT_EQ(gpu.IommuGroup()->value_or(""), "14");
  EXPECT_EQ(*gpu.IommuGroupType("14"), "DMA-FQ");
  auto members = gpu.IommuGroupMembers("14");
  ASSERT_TRUE(members.ok()) << members.status();
  ASSERT_EQ(members->size(), 2u);
  EXPECT_EQ((*members)[1].ToString(), "0000:03:00.1");
  EXPECT_EQ(gpu.LinkSpeed(), "16.0 GT/s PCIe");
  EXPECT_EQ(gpu.LinkWidth(), 16);
  EXPECT_EQ(gpu.NumaNode(), 1);
  auto bars = gpu.Bars();
  ASSERT_TRUE(bars.ok()) << bars.status();
  EXPECT_EQ(bars->size(), 4u);

  SysfsPciFunction audio(fake.paths(), *Address::Parse("0000:03:00.1"));
  EXPECT_FALSE(audio.Driver()->has_value());  // no driver link: bound to nothing
  EXPECT_EQ(audio.NumaNode(), std::nullopt);  // "-1"
  EXPECT_EQ(audio.LinkSpeed(), "");
  EXPECT_EQ(audio.LinkWidth(), std::nullopt);
  EXPECT_TRUE(audio.Bars()->empty());
}

TEST(SysfsPciFunctionTest, NoIommuGroupLinkMeansNone) {
  FakeSystem fake;
  fake.AddDevice("0000:03:00.0", 0x1002, 0x744c, 0x030000);
  SysfsPciFunction gpu(fake.paths(), *Address::Parse("0000:03:00.0"));
  auto group = gpu.IommuGroup();
  ASSERT_TRUE(group.ok()) << group.status();
  EXPECT_FALSE(group->has_value());
  SysfsPciFunction missing(fake.paths(), *Address::Parse("0000:04:00.0"));
  EXPECT_FALSE(missing.Exists());
  EXPECT_EQ(missing.VendorId().status().code(), absl::StatusCode::kNotFound);
}

TEST(SysfsPciFunctionTest, MalformedAttributesAreErrorsNamingTheFile) {
  FakeSystem fake;
  fake.AddDevice("0000:03:00.0", 0x1002, 0x744c, 0x030000, "garbage\n");
  fake.WriteFile("sys/bus/pci/devices/0000:03:00.0/vendor", "0x123456\n");
  SysfsPciFunction gpu(fake.paths(), *Address::Parse("0000:03:00.0"));
  EXPECT_TRUE(absl::StrContains(gpu.VendorId().status().message(), "not a 16-bit id")) << gpu.VendorId().status();
  auto bars = gpu.Bars();
  ASSERT_FALSE(bars.ok());
  EXPECT_TRUE(absl::StrContains(bars.status().message(), "0000:03:00.0/resource: line 1")) << bars.status();
}

TEST(SysfsPciFunctionTest, ReadsThisMachinesDevices) {
  SystemPaths real;
  auto names = base::ListDirectory("/sys/bus/pci/devices");
  if (!names.ok() || names->empty()) GTEST_SKIP() << "no PCI devices in /sys on this machine";
  SysfsPciFunction first(real, *Address::Parse((*names)[0]));
  EXPECT_TRUE(first.VendorId().ok()) << first.VendorId().status();
  auto bars = first.Bars();
  EXPECT_TRUE(bars.ok()) << bars.status();
}

}  // namespace
}  // namespace pci
