// nv::Device on the virtual AD102 (sim:ad102) with Debian's real GSP-RM 535.113.01 files: the steps up to
// FWSEC-FRTS, which must bring WPR2 up where nouveau's r535 layout puts FRTS, a second open that finds WPR2 up, and
// the errors a user gets for what is missing.
#include "nv/device.h"

#include <cstdlib>
#include <optional>
#include <string>

#include "absl/strings/match.h"
#include "gtest/gtest.h"
#include "nv/regs/ad102.h"
#include "pci/open.h"
#include "pci/sim/persistent_state.h"
#include "tests/firmware/nv/nv_firmware.h"

namespace nv {
namespace {

namespace r = regs::ad102;

class ScopedEnv {
 public:
  ScopedEnv(const char* name, const std::string& value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    ::setenv(name, value.c_str(), 1);
  }
  ~ScopedEnv() {
    if (old_) {
      ::setenv(name_, old_->c_str(), 1);
    } else {
      ::unsetenv(name_);
    }
  }

 private:
  const char* name_;
  std::optional<std::string> old_;
};

// FRTS on the virtual AD102 (24 GiB, no display engine answering NV_PDISP_VGA_WORKSPACE_BASE), from nouveau's
// r535_gsp_oneinit: the VGA workspace is the last MiB, 0x600000000 - 0x100000 = 0x5fff00000; gspFwWprEnd is that,
// aligned down to 128 KiB (already aligned); FRTS is the 1 MiB below it: 0x5ffe00000. FWSEC-FRTS programs WPR2's
// low bound in 4 KiB units (fwsec.c: frtsOffset >> 12).
constexpr uint64_t kExpectedFrtsOffset = 0x5ffe00000;

std::unique_ptr<Device> OpenFresh(const std::string& name) {
  EXPECT_TRUE(pci::sim::PersistentState::PowerCycle(name).ok());
  absl::StatusOr<std::unique_ptr<Device>> device = Device::Open(name);
  EXPECT_TRUE(device.ok()) << device.status();
  return device.ok() ? std::move(*device) : nullptr;
}

const BootStep* FindStep(const Device& device, const std::string& name) {
  for (const BootStep& step : device.steps()) {
    if (step.name == name) return &step;
  }
  return nullptr;
}

TEST(NvDeviceTest, BootsThroughFwsecFrtsWithWpr2WhereNouveauPutsFrts) {
  REQUIRE_NVIDIA_FIRMWARE(root);
  ScopedEnv firmware("BAREGPU_FIRMWARE_PATH", root);
  std::unique_ptr<Device> device = OpenFresh("sim:ad102:nvdevice-boot");
  ASSERT_NE(device, nullptr);
  const absl::Status booted = device->Boot();
  // The steps after FWSEC-FRTS are not driven yet: Boot says so instead of claiming a boot.
  EXPECT_EQ(booted.code(), absl::StatusCode::kUnimplemented) << booted;
  EXPECT_TRUE(absl::StrContains(booted.message(), "booter load")) << booted;
  const char* kSteps[] = {"identify", "gfw-boot", "wpr2", "fb", "firmware", "layout", "fwsec-frts"};
  ASSERT_EQ(device->steps().size(), std::size(kSteps));
  for (size_t i = 0; i < std::size(kSteps); ++i) {
    EXPECT_EQ(device->steps()[i].name, kSteps[i]);
    EXPECT_TRUE(device->steps()[i].status.ok()) << kSteps[i] << ": " << device->steps()[i].status;
  }
  EXPECT_EQ(device->chip(), "AD102");
  EXPECT_EQ(device->fb_size(), uint64_t{24} << 30);
  EXPECT_EQ(FindStep(*device, "wpr2")->detail, "WPR2 is down");
  EXPECT_EQ(device->layout().frtsOffset, kExpectedFrtsOffset);
  EXPECT_EQ(r::NV_PFB_PRI_MMU_WPR2_ADDR_LO::FromRaw(device->wpr2().lo).val(), kExpectedFrtsOffset >> 12);
  EXPECT_NE(r::NV_PFB_PRI_MMU_WPR2_ADDR_HI::FromRaw(device->wpr2().hi).val(), 0u);
  // What the driver read back is what the chip holds.
  EXPECT_EQ(device->bar0().Read32(r::NV_PFB_PRI_MMU_WPR2_ADDR_LO::kOffset), device->wpr2().lo);
}

// A process that left WPR2 up (GSP-RM running, no unload) leaves the next one a chip it must reset first.
TEST(NvDeviceTest, ASecondOpenFindsWpr2UpAndResetsTheChip) {
  REQUIRE_NVIDIA_FIRMWARE(root);
  ScopedEnv firmware("BAREGPU_FIRMWARE_PATH", root);
  const std::string name = "sim:ad102:nvdevice-warm";
  {
    std::unique_ptr<Device> first = OpenFresh(name);
    ASSERT_NE(first, nullptr);
    ASSERT_EQ(first->Boot().code(), absl::StatusCode::kUnimplemented);
  }
  absl::StatusOr<std::unique_ptr<Device>> second = Device::Open(name);
  ASSERT_TRUE(second.ok()) << second.status();
  EXPECT_EQ((*second)->Boot().code(), absl::StatusCode::kUnimplemented);
  const BootStep* wpr2 = FindStep(**second, "wpr2");
  ASSERT_NE(wpr2, nullptr);
  EXPECT_TRUE(absl::StrContains(wpr2->detail, "WPR2 was up")) << wpr2->detail;
  const BootStep* frts = FindStep(**second, "fwsec-frts");
  ASSERT_NE(frts, nullptr);
  EXPECT_TRUE(frts->status.ok()) << frts->status;
}

// Without the GSP-RM files the boot stops at the firmware step and says where they come from.
TEST(NvDeviceTest, MissingFirmwareNamesTheFileAndWhereToGetIt) {
  ScopedEnv firmware("BAREGPU_FIRMWARE_PATH", "/nonexistent-baregpu-firmware");
  std::unique_ptr<Device> device = OpenFresh("sim:ad102:nvdevice-nofw");
  ASSERT_NE(device, nullptr);
  const absl::Status booted = device->Boot();
  EXPECT_FALSE(booted.ok());
  EXPECT_TRUE(absl::StrContains(booted.message(), "firmware:")) << booted;
  EXPECT_TRUE(absl::StrContains(booted.message(), "nvidia/ad102/gsp/")) << booted;
  EXPECT_TRUE(absl::StrContains(booted.message(), "tools/fetch_firmware.sh")) << booted;
  ASSERT_FALSE(device->steps().empty());
  EXPECT_EQ(device->steps().back().name, "firmware");
}

TEST(NvDeviceTest, AnAmdGpuIsRefused) {
  absl::StatusOr<std::unique_ptr<Device>> device = Device::Open("sim:navi31:nvdevice");
  ASSERT_FALSE(device.ok());
  EXPECT_TRUE(absl::StrContains(device.status().message(), "is not an NVIDIA GPU")) << device.status();
}

}  // namespace
}  // namespace nv
