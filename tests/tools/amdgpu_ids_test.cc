// Product names from libdrm's amdgpu.ids format, and sizes in binary units.
#include "tools/cli/amdgpu_ids.h"

#include <fstream>
#include <string>

#include "gtest/gtest.h"

namespace cli {
namespace {

TEST(AmdgpuIdsTest, ReadsTheSystemTableFormat) {
  const std::string path = ::testing::TempDir() + "/amdgpu.ids";
  std::ofstream(path) << "# List of AMDGPU IDs\n#\n\n1.0.0\n1309,\t00,\tAMD Radeon R7 Graphics\n"
                      << "744C,\tC8,\tA Board From The File\n";
  std::optional<ProductName> name = LookupProductName(0x744c, 0xc8, path);
  ASSERT_TRUE(name.has_value());
  EXPECT_EQ(name->name, "A Board From The File");
  EXPECT_EQ(name->source, path);
  EXPECT_EQ(LookupProductName(0x1309, 0x00, path)->name, "AMD Radeon R7 Graphics");
}

TEST(AmdgpuIdsTest, FallsBackToTheBuiltInNavi31Entries) {
  const std::string missing = ::testing::TempDir() + "/no-such-amdgpu.ids";
  std::optional<ProductName> xtx = LookupProductName(0x744c, 0xc8, missing);
  ASSERT_TRUE(xtx.has_value());
  EXPECT_EQ(xtx->name, "AMD Radeon RX 7900 XTX");
  EXPECT_EQ(LookupProductName(0x744c, 0xcc, missing)->name, "AMD Radeon RX 7900 XT");
  EXPECT_FALSE(LookupProductName(0x744c, 0x01, missing).has_value());
  EXPECT_FALSE(LookupProductName(0x1234, 0xc8, missing).has_value());
}

TEST(AmdgpuIdsTest, HumanBytes) {
  EXPECT_EQ(HumanBytes(uint64_t{24} << 30), "24 GiB");
  EXPECT_EQ(HumanBytes(uint64_t{256} << 20), "256 MiB");
  EXPECT_EQ(HumanBytes(uint64_t{3} << 29), "1.5 GiB");
  EXPECT_EQ(HumanBytes(512), "512 bytes");
  EXPECT_EQ(HumanBytes(0), "0 bytes");
}

}  // namespace
}  // namespace cli
