#include "pci/virtual_registry.h"

#include "gtest/gtest.h"
#include "pci/open.h"

namespace pci {
namespace {

TEST(VirtualRegistryTest, KnowsTheEduTestDevice) {
  bool found = false;
  for (const VirtualDeviceKind* kind : VirtualDeviceKinds()) {
    if (kind->kind == "edu") found = kind->vendor_id == 0x1234 && kind->device_id == 0x11e8;
  }
  EXPECT_TRUE(found);
}

TEST(VirtualRegistryTest, OpenGoesThroughOneCallForVirtualNames) {
  auto device = Open("sim:edu:7");
  ASSERT_TRUE(device.ok()) << device.status();
  EXPECT_EQ((*device)->name(), "sim:edu:7");
}

TEST(VirtualRegistryTest, UnknownKindsListTheKnownOnes) {
  auto device = Open("sim:navi99");
  ASSERT_FALSE(device.ok());
  EXPECT_EQ(device.status().code(), absl::StatusCode::kNotFound);
  EXPECT_NE(std::string(device.status().message()).find("sim:edu"), std::string::npos);
}

TEST(VirtualRegistryTest, MalformedNamesAreRejected) {
  for (const char* bad : {"sim:", "sim::0", "sim:edu:", "sim:edu:a:b", "sim:ed u", "sim:../etc"}) {
    auto device = Open(bad);
    ASSERT_FALSE(device.ok()) << bad;
    EXPECT_EQ(device.status().code(), absl::StatusCode::kInvalidArgument) << bad;
  }
}

TEST(VirtualRegistryTest, DuplicateRegistrationIsRefused) {
  EXPECT_FALSE(RegisterVirtualDevice(VirtualDeviceKind{"edu", "again", 0, 0, nullptr}));
}

TEST(OpenTest, NamesThatAreNeitherAddressesNorVirtualExplainTheForms) {
  auto device = Open("gpu0");
  ASSERT_FALSE(device.ok());
  EXPECT_NE(std::string(device.status().message()).find("baregpu list"), std::string::npos);
}

}  // namespace
}  // namespace pci
