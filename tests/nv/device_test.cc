// nv::Device on the virtual AD102 (sim:ad102) with Debian's real GSP-RM 535.113.01 files: the boot through FWSEC-FRTS,
// booter_load and GSP-RM to its static information, the shutdown that leaves WPR2 down, the next process after a clean
// shutdown and after a death with GSP-RM running, and the errors a user gets for what is missing.
#include "nv/device.h"

#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <optional>
#include <string>

#include "absl/strings/match.h"
#include "gtest/gtest.h"
#include "nv/regs/ad102.h"
#include "nv/regs/rpc_constants.h"
#include "nv/regs/status_constants.h"
#include "nv/sim/ad102.h"
#include "nv/sim/gsp_rm_model.h"
#include "pci/open.h"
#include "pci/sim/persistent_state.h"
#include "tests/base/scoped_env.h"
#include "tests/firmware/nv/nv_firmware.h"

namespace nv {
namespace {

namespace r = regs::ad102;

using ::base::testing::ScopedEnv;

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

// The whole boot, then the shutdown. WPR2 as FWSEC-FRTS leaves it covers FRTS alone; booter_load extends it from
// gspFwWprStart, which nouveau's layout puts at 0x5f5900000 for this FB (nv/gsp/fb_layout_test works it out), up to
// gspFwWprEnd = 0x5fff00000; the booter and FWSEC write the registers in 4 KiB units.
TEST(NvDeviceTest, BootsThroughGspRmToStaticInfoAndShutsDown) {
  REQUIRE_NVIDIA_FIRMWARE(root);
  ScopedEnv firmware("BAREGPU_FIRMWARE_PATH", root);
  std::unique_ptr<Device> device = OpenFresh("sim:ad102:nvdevice-boot");
  ASSERT_NE(device, nullptr);
  const absl::Status booted = device->Boot();
  ASSERT_TRUE(booted.ok()) << booted;
  const char* kSteps[] = {"identify",   "gfw-boot",   "firmware",    "wpr2",      "fb",          "layout",
                          "fwsec-frts", "gsp-memory", "booter-load", "init-done", "static-info", "rm-objects"};
  ASSERT_EQ(device->steps().size(), std::size(kSteps));
  for (size_t i = 0; i < std::size(kSteps); ++i) {
    EXPECT_EQ(device->steps()[i].name, kSteps[i]);
    EXPECT_TRUE(device->steps()[i].status.ok()) << kSteps[i] << ": " << device->steps()[i].status;
  }
  EXPECT_EQ(device->chip(), "AD102");
  EXPECT_EQ(device->fb_size(), uint64_t{24} << 30);
  EXPECT_EQ(FindStep(*device, "wpr2")->detail, "WPR2 is down");
  EXPECT_EQ(device->layout().frtsOffset, kExpectedFrtsOffset);
  // What FWSEC-FRTS left: WPR2 over FRTS.
  EXPECT_EQ(r::NV_PFB_PRI_MMU_WPR2_ADDR_LO::FromRaw(device->wpr2().lo).val(), kExpectedFrtsOffset >> 12);
  // What booter_load left: WPR2 from gspFwWprStart.
  EXPECT_EQ(device->layout().gspFwWprStart, 0x5f5900000u);
  EXPECT_EQ(
      r::NV_PFB_PRI_MMU_WPR2_ADDR_LO::FromRaw(device->bar0().Read32(r::NV_PFB_PRI_MMU_WPR2_ADDR_LO::kOffset)).val(),
      0x5f5900000u >> 12);
  EXPECT_TRUE(device->gsp_running());
  // GSP-RM's static information as the virtual GPU reports it: an RTX 4090 with 11 of AD102's 12 GPCs.
  const std::string name(reinterpret_cast<const char*>(device->static_info().gpuNameString));
  EXPECT_EQ(name, "NVIDIA GeForce RTX 4090");
  EXPECT_EQ(device->static_info().gpcInfo.gpcMask, 0x7ffu);
  // The RM objects the HCQ backend will need, allocated through the RM client and GSP-RM's object database, then
  // freed: nine under the root client.
  EXPECT_TRUE(absl::StrContains(FindStep(*device, "rm-objects")->detail, "(9 objects) allocated and freed"))
      << FindStep(*device, "rm-objects")->detail;
  EXPECT_TRUE(absl::StrContains(FindStep(*device, "init-done")->detail, "CPU sequencer"))
      << FindStep(*device, "init-done")->detail;

  const absl::Status shut_down = device->Shutdown();
  ASSERT_TRUE(shut_down.ok()) << shut_down;
  for (const char* step : {"unload", "fwsec-sb", "booter-unload"}) {
    const BootStep* found = FindStep(*device, step);
    ASSERT_NE(found, nullptr) << step;
    EXPECT_TRUE(found->status.ok()) << step << ": " << found->status;
  }
  EXPECT_FALSE(device->gsp_running());
  EXPECT_EQ(
      r::NV_PFB_PRI_MMU_WPR2_ADDR_HI::FromRaw(device->bar0().Read32(r::NV_PFB_PRI_MMU_WPR2_ADDR_HI::kOffset)).val(),
      0u);
  EXPECT_TRUE(device->Shutdown().ok()) << "a second shutdown has nothing to do";
}

// A clean shutdown leaves WPR2 down: the next process boots the same way, without a reset.
TEST(NvDeviceTest, ASecondProcessAfterAShutdownBootsWithoutAReset) {
  REQUIRE_NVIDIA_FIRMWARE(root);
  ScopedEnv firmware("BAREGPU_FIRMWARE_PATH", root);
  const std::string name = "sim:ad102:nvdevice-warm";
  {
    std::unique_ptr<Device> first = OpenFresh(name);
    ASSERT_NE(first, nullptr);
    ASSERT_TRUE(first->Boot().ok());
  }  // the destructor shuts down
  absl::StatusOr<std::unique_ptr<Device>> second = Device::Open(name);
  ASSERT_TRUE(second.ok()) << second.status();
  const absl::Status booted = (*second)->Boot();
  EXPECT_TRUE(booted.ok()) << booted;
  EXPECT_EQ(FindStep(**second, "wpr2")->detail, "WPR2 is down");
}

// A process that died with GSP-RM running leaves WPR2 up; the next one unloads it as nouveau's fini would (without
// the RPC, whose queues died with the process) instead of resetting the chip, and boots.
TEST(NvDeviceTest, AProcessThatDiedWithGspRmRunningLeavesAChipTheNextUnloads) {
  REQUIRE_NVIDIA_FIRMWARE(root);
  ScopedEnv firmware("BAREGPU_FIRMWARE_PATH", root);
  const std::string name = "sim:ad102:nvdevice-died";
  ASSERT_TRUE(pci::sim::PersistentState::PowerCycle(name).ok());
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    absl::StatusOr<std::unique_ptr<Device>> device = Device::Open(name);
    if (!device.ok() || !(*device)->Boot().ok()) ::_exit(1);
    ::_exit(0);  // dies with GSP-RM running: no shutdown
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
  absl::StatusOr<std::unique_ptr<Device>> next = Device::Open(name);
  ASSERT_TRUE(next.ok()) << next.status();
  const absl::Status booted = (*next)->Boot();
  EXPECT_TRUE(booted.ok()) << booted;
  const BootStep* wpr2 = FindStep(**next, "wpr2");
  ASSERT_NE(wpr2, nullptr);
  EXPECT_TRUE(absl::StrContains(wpr2->detail, "WPR2 was up")) << wpr2->detail;
  EXPECT_TRUE(absl::StrContains(wpr2->detail, "FWSEC-SB and booter_unload took it down")) << wpr2->detail;
  EXPECT_FALSE(absl::StrContains(wpr2->detail, "function reset")) << wpr2->detail;
}

nv::sim::Ad102& AsAd102(Device& device) { return static_cast<nv::sim::Ad102&>(device.pci()); }

// Opens a power-cycled device with short bounds, so that an injected fault ends in a bounded wait.
std::unique_ptr<Device> OpenFreshForFaults(const std::string& name) {
  EXPECT_TRUE(pci::sim::PersistentState::PowerCycle(name).ok());
  absl::StatusOr<std::unique_ptr<Device>> device =
      Device::Open(name, {.rpc_timeout = absl::Milliseconds(200), .falcon_halt_timeout = absl::Milliseconds(100)});
  EXPECT_TRUE(device.ok()) << device.status();
  return device.ok() ? std::move(*device) : nullptr;
}

// The virtual GPU's fault injection, seen by the driver: each fault stops the boot at the step it hits, with an error
// that says what happened.
TEST(NvDeviceTest, AFalconThatNeverHaltsIsATimeoutNamingTheFalcon) {
  REQUIRE_NVIDIA_FIRMWARE(root);
  ScopedEnv firmware("BAREGPU_FIRMWARE_PATH", root);
  std::unique_ptr<Device> device = OpenFreshForFaults("sim:ad102:nvdevice-hang");
  ASSERT_NE(device, nullptr);
  AsAd102(*device).gsp().InjectNeverHalt(true);
  const absl::Status booted = device->Boot();
  EXPECT_EQ(booted.code(), absl::StatusCode::kDeadlineExceeded) << booted;
  EXPECT_EQ(device->steps().back().name, "fwsec-frts");
  EXPECT_TRUE(absl::StrContains(booted.message(), "GSP")) << booted;
  EXPECT_TRUE(absl::StrContains(booted.message(), "NV_PFALCON_FALCON_CPUCTL")) << booted;
}

TEST(NvDeviceTest, ABadChecksumFromGspRmIsDataLoss) {
  REQUIRE_NVIDIA_FIRMWARE(root);
  ScopedEnv firmware("BAREGPU_FIRMWARE_PATH", root);
  std::unique_ptr<Device> device = OpenFreshForFaults("sim:ad102:nvdevice-checksum");
  ASSERT_NE(device, nullptr);
  AsAd102(*device).InjectIntoNextGspRm([](nv::sim::GspRmModel& gsp_rm) { gsp_rm.CorruptNextChecksum(); });
  const absl::Status booted = device->Boot();
  EXPECT_EQ(booted.code(), absl::StatusCode::kDataLoss) << booted;
  EXPECT_EQ(device->steps().back().name, "init-done");
  EXPECT_TRUE(absl::StrContains(booted.message(), "checksum")) << booted;
}

TEST(NvDeviceTest, AnRpcErrorFromGspRmIsNamed) {
  REQUIRE_NVIDIA_FIRMWARE(root);
  ScopedEnv firmware("BAREGPU_FIRMWARE_PATH", root);
  std::unique_ptr<Device> device = OpenFreshForFaults("sim:ad102:nvdevice-rpc-error");
  ASSERT_NE(device, nullptr);
  AsAd102(*device).InjectIntoNextGspRm([](nv::sim::GspRmModel& gsp_rm) {
    gsp_rm.FailNextReply(regs::rpc::NV_VGPU_MSG_FUNCTION_GET_GSP_STATIC_INFO, regs::status::NV_ERR_INVALID_STATE);
  });
  const absl::Status booted = device->Boot();
  EXPECT_FALSE(booted.ok());
  EXPECT_EQ(device->steps().back().name, "static-info");
  EXPECT_TRUE(absl::StrContains(booted.message(), "NV_ERR_INVALID_STATE")) << booted;
}

// The doorbell that ends the CPU sequencer is lost: GSP-RM never sees the sequence done, and INIT_DONE never comes.
TEST(NvDeviceTest, ALostDoorbellLeavesInitDoneATimeout) {
  REQUIRE_NVIDIA_FIRMWARE(root);
  ScopedEnv firmware("BAREGPU_FIRMWARE_PATH", root);
  std::unique_ptr<Device> device = OpenFreshForFaults("sim:ad102:nvdevice-doorbell");
  ASSERT_NE(device, nullptr);
  AsAd102(*device).InjectIntoNextGspRm([](nv::sim::GspRmModel& gsp_rm) { gsp_rm.LoseNextDoorbell(); });
  const absl::Status booted = device->Boot();
  EXPECT_EQ(booted.code(), absl::StatusCode::kDeadlineExceeded) << booted;
  EXPECT_EQ(device->steps().back().name, "init-done");
  EXPECT_TRUE(absl::StrContains(booted.message(), "NV_VGPU_MSG_EVENT_GSP_INIT_DONE")) << booted;
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
