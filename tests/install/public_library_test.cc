// libbaregpu.so as an application links it: this test sees the public symbols only (baregpu.map), and its
// program contains no virtual GPU, so sim:navi31 must come from libbaregpu-sim.so, which the core loads by name
// on first use (pci/virtual_registry.cc).
#include <dlfcn.h>
#include <stdlib.h>

#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "base/version.h"
#include "gtest/gtest.h"
#include "hcq/device.h"
#include "hcq/hcq.h"
#include "tests/am/sim/sim_state_dir.h"

namespace {

auto* const kStateDir = am::sim::testing::RegisterSimStateDir();

// Whether this process has the virtual GPU library mapped (RTLD_NOLOAD: look, do not load).
bool SimLibraryLoaded() {
  void* handle = dlopen("libbaregpu-sim.so." BAREGPU_SOVERSION, RTLD_NOW | RTLD_NOLOAD);
  if (handle != nullptr) dlclose(handle);
  return handle != nullptr;
}

// One test, because the order matters: the library loads once per process, and a failed load must not stop a
// later one.
TEST(PublicLibraryTest, TheVirtualGpuLoadsOnFirstUseAndAMissingLibraryIsExplained) {
  EXPECT_FALSE(SimLibraryLoaded()) << "the virtual GPU library was loaded before any sim: device was opened";

  const std::string missing = "/nonexistent/libbaregpu-sim.so";
  ASSERT_EQ(setenv("BAREGPU_SIM_LIBRARY", missing.c_str(), 1), 0);
  auto refused = hcq::Device::Open("sim:navi31:public");
  ASSERT_FALSE(refused.ok());
  const std::string message(refused.status().message());
  EXPECT_TRUE(absl::StrContains(message, "sim:navi31:public")) << message;    // what was being opened
  EXPECT_TRUE(absl::StrContains(message, missing)) << message;                // where it looked
  EXPECT_TRUE(absl::StrContains(message, "BAREGPU_SIM_LIBRARY")) << message;  // how to fix it
  EXPECT_TRUE(absl::StrContains(message, "LD_LIBRARY_PATH")) << message;
  EXPECT_FALSE(SimLibraryLoaded());

  // The same through the C API.
  hcq_device* c_device = nullptr;
  EXPECT_EQ(hcq_device_open("sim:navi31:public", &c_device), HCQ_ERROR_NOT_FOUND);
  EXPECT_TRUE(absl::StrContains(hcq_last_error(), missing)) << hcq_last_error();

  // Found beside libbaregpu.so (the build tree's, here), the device opens and works.
  ASSERT_EQ(unsetenv("BAREGPU_SIM_LIBRARY"), 0);
  auto device = hcq::Device::Open("sim:navi31:public");
  ASSERT_TRUE(device.ok()) << device.status();
  EXPECT_TRUE(SimLibraryLoaded());
  constexpr uint64_t kBytes = 64 << 10;  // sixteen pages
  auto buffer = (*device)->allocator().alloc(kBytes);
  ASSERT_TRUE(buffer.ok()) << buffer.status();
  std::vector<uint8_t> in(kBytes), out(kBytes);
  for (uint64_t i = 0; i < kBytes; ++i) in[i] = static_cast<uint8_t>(i * 31 + 1);
  ASSERT_TRUE((*device)->allocator().copyin(*buffer, in).ok());
  ASSERT_TRUE((*device)->allocator().copyout(out, *buffer).ok());
  EXPECT_EQ(in, out);
}

TEST(PublicLibraryTest, UnknownKindsStillListTheKnownOnes) {
  auto device = hcq::Device::Open("sim:navi99");
  ASSERT_FALSE(device.ok());
  EXPECT_TRUE(absl::StrContains(device.status().message(), "sim:navi31")) << device.status();
}

}  // namespace
