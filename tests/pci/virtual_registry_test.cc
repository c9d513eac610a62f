#include "pci/virtual_registry.h"

#include <algorithm>
#include <string>
#include <vector>

#include "base/version.h"
#include "gtest/gtest.h"
#include "pci/open.h"
#include "pci/sim/sim_library.h"

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

// The entry point libbaregpu-sim.so exports (linked statically here): it hands every registered kind over, and
// nothing when the caller is another build.
std::vector<std::string> handed_over;  // what the entry point gave the callback

bool CollectKind(const VirtualDeviceKind* kind) {
  handed_over.push_back(kind->kind);
  return true;
}

TEST(VirtualRegistryTest, TheSimLibraryEntryPointHandsOverEveryKind) {
  handed_over.clear();
  const int count = baregpu_sim_register_kinds(BAREGPU_VERSION_STRING, sizeof(VirtualDeviceKind), &CollectKind);
  std::vector<std::string> registered;
  for (const VirtualDeviceKind* kind : VirtualDeviceKinds()) registered.push_back(kind->kind);
  EXPECT_EQ(count, static_cast<int>(registered.size()));
  EXPECT_EQ(handed_over, registered);
  EXPECT_NE(std::find(handed_over.begin(), handed_over.end(), "navi31"), handed_over.end());
}

TEST(VirtualRegistryTest, TheSimLibraryEntryPointRefusesAnotherBuild) {
  handed_over.clear();
  EXPECT_EQ(baregpu_sim_register_kinds("0.0.0-another", sizeof(VirtualDeviceKind), &CollectKind), -1);
  EXPECT_EQ(baregpu_sim_register_kinds(BAREGPU_VERSION_STRING, sizeof(VirtualDeviceKind) + 8, &CollectKind), -1);
  EXPECT_EQ(baregpu_sim_register_kinds(nullptr, sizeof(VirtualDeviceKind), &CollectKind), -1);
  EXPECT_TRUE(handed_over.empty());
}

}  // namespace
}  // namespace pci
