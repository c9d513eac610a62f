// The driver's first blocks (SOC, GMC, IH) booting the virtual Navi31, and what they do with its faults.
#include "am/device.h"

#include <fcntl.h>
#include <linux/pci_regs.h>
#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <initializer_list>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "am/completion_interrupts.h"
#include "am/gfx.h"
#include "am/gmc.h"
#include "am/ih.h"
#include "am/memory_manager.h"
#include "am/page_table.h"
#include "am/psp.h"
#include "am/regs/gc.h"
#include "am/regs/gfx_srcid_constants.h"
#include "am/regs/hw_id_constants.h"
#include "am/regs/ih_constants.h"
#include "am/regs/mmhub.h"
#include "am/regs/mp0.h"
#include "am/regs/mtype_constants.h"
#include "am/regs/nbio.h"
#include "am/regs/osssys.h"
#include "am/regs/pm4_constants.h"
#include "am/regs/pm4_event_constants.h"
#include "am/regs/pm4_packets.h"
#include "am/regs/psp_constants.h"
#include "am/regs/psp_driver_constants.h"
#include "am/regs/smu_driver_if_constants.h"
#include "am/regs/vm.h"
#include "am/sdma.h"
#include "am/sim/navi31.h"
#include "am/smu.h"
#include "am/soc.h"
#include "firmware/container.h"
#include "firmware/store.h"
#include "gtest/gtest.h"
#include "pci/open.h"
#include "pci/sim/persistent_state.h"
#include "tests/am/sim/sim_state_dir.h"

namespace am {
namespace {

auto* const kStateDir = sim::testing::RegisterSimStateDir();

class DeviceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(pci::sim::PersistentState::PowerCycle("sim:navi31:driver").ok());
    ASSERT_NO_FATAL_FAILURE(Reopen());
  }
  // A new session: the process's driver goes away without fini (as a crashed or killed one would) and the next
  // opens the same device.
  void Reopen() {
    device_.reset();
    auto pci = pci::Open("sim:navi31:driver");
    ASSERT_TRUE(pci.ok()) << pci.status();
    sim_ = static_cast<sim::Navi31*>(pci->get());
    auto device = Device::Open(std::move(*pci));
    ASSERT_TRUE(device.ok()) << device.status();
    device_ = std::move(*device);
  }

  sim::Navi31* sim_ = nullptr;  // owned by device_
  std::unique_ptr<Device> device_;
};

TEST_F(DeviceTest, BootRunsEveryStepInOrder) {
  ASSERT_TRUE(device_->Boot().ok());
  std::vector<std::string> order;
  for (const BootStep& step : device_->steps()) {
    EXPECT_TRUE(step.status.ok()) << step.block << " " << step.phase << ": " << step.status;
    order.push_back(step.block + "." + step.phase);
  }
  EXPECT_EQ(order, (std::vector<std::string>{"soc.init_sw", "gmc.init_sw", "ih.init_sw", "psp.init_sw", "smu.init_sw",
                                             "gfx.init_sw", "sdma.init_sw", "soc.init_hw", "gmc.init_hw", "ih.init_hw",
                                             "psp.init_hw", "smu.init_hw", "gfx.init_hw", "sdma.init_hw"}));
  EXPECT_EQ(device_->fb_start(), sim::GmcModel::kFbStart);
  EXPECT_TRUE(sim_->nbio().doorbell_aperture_enabled());
  // The GC hub is programmed once GC is powered (gfx init_hw after the autoload), never before (B2).
  for (const sim::DeviceError& error : sim_->errors().errors()) {
    EXPECT_EQ(error.message.find("written while GC is not powered"), std::string::npos) << error.message;
  }
}

// The IH's interrupt moderation as ih_v6_0_irq_init programs it (B15): the VMC client is a storm client, flood
// control is on, the MSI storm delay is 3; RPTR_REARM is off (no MSI).
TEST_F(DeviceTest, TheIhIsModeratedAsIhV60Does) {
  ASSERT_TRUE(device_->Boot().ok());
  auto oss = device_->Regs<regs::Ip::kOsssys>();
  EXPECT_EQ(oss.Read<regs::osssys::IH_STORM_CLIENT_LIST_CNTL>().client18_is_storm_client(), 1u);
  EXPECT_EQ(oss.Read<regs::osssys::IH_INT_FLOOD_CNTL>().flood_cntl_enable(), 1u);
  EXPECT_EQ(oss.Read<regs::osssys::IH_MSI_STORM_CTRL>().delay(), 3u);
  EXPECT_EQ(oss.Read<regs::osssys::IH_RB_CNTL>().rptr_rearm(), 0u);
}

TEST_F(DeviceTest, PspLoadsAllFirmwareAndTheSmuAnswers) {
  ASSERT_TRUE(device_->Boot().ok());
  EXPECT_TRUE(sim_->firmware().rlc_autoloaded());
  EXPECT_TRUE(sim_->smu().alive());
  EXPECT_NE(device_->smu().firmware_version(), 0u);
  EXPECT_EQ(sim_->smu().enabled_features(), ~uint64_t{0});
  EXPECT_EQ(sim_->smu().driver_table_address().has_value(), true);
  auto metrics = device_->smu().Metrics();
  ASSERT_TRUE(metrics.ok()) << metrics.status();
  EXPECT_EQ(metrics->MetricsCounter, 1u);
  EXPECT_EQ(device_->psp().log().front().rfind("bootloader: 8 components", 0), 0u) << device_->psp().log().front();
}

std::vector<std::string> InitHwBlocks(const Device& device) {
  std::vector<std::string> blocks;
  for (const BootStep& step : device.steps()) {
    if (step.phase == "init_hw") blocks.push_back(step.block);
  }
  return blocks;
}

TEST_F(DeviceTest, ASecondSessionBootsPartiallyAndAResetBootsFully) {
  ASSERT_TRUE(device_->Boot().ok());
  EXPECT_EQ(device_->boot_kind(), BootKind::kFull);
  device_.reset();  // the process's driver goes away without fini, as a crashed or killed one would
  auto reopen = [] {
    auto pci = pci::Open("sim:navi31:driver");
    EXPECT_TRUE(pci.ok()) << pci.status();
    return std::move(*Device::Open(std::move(*pci)));
  };
  std::unique_ptr<Device> second = reopen();
  ASSERT_TRUE(second->Boot().ok());
  EXPECT_EQ(second->boot_kind(), BootKind::kPartial);
  EXPECT_EQ(InitHwBlocks(*second), (std::vector<std::string>{"soc", "gmc", "ih", "gfx", "sdma"}));
  second.reset();

  std::unique_ptr<Device> third = reopen();
  ASSERT_TRUE(third->Boot({.full_reset = true}).ok());
  EXPECT_EQ(third->boot_kind(), BootKind::kFullAfterReset);
  EXPECT_EQ(third->steps().front().phase, "mode1_reset");
  EXPECT_EQ(third->psp().log().front().rfind("bootloader: 8 components", 0), 0u) << third->psp().log().front();
}

// The mode1 reset returns the PCI command register to 0; the driver writes back what it had (as
// amdgpu_device_mode1_reset's amdgpu_device_load_pci_state does), so the GPU can master the bus and interrupt again.
TEST_F(DeviceTest, ADeviceAnotherDriverInitialisedIsResetFirst) {
  // Another driver booted the firmware and left no baregpu flag: what it left is not trusted.
  ASSERT_TRUE(device_->Boot().ok());
  device_->Regs<regs::Ip::kGc>().Write(regs::gc::SCRATCH_REG7{}.set_raw(0));
  ASSERT_TRUE(device_->Boot().ok());
  EXPECT_EQ(device_->boot_kind(), BootKind::kFullAfterReset);
}

// smu_v13_0_get_dpm_freq_by_index masks bit 31 (the fine-grained flag) off every answer. Unmasked, the virtual
// GFXCLK's count reads 0x80000002 and the driver asks for levels the SMU does not have (PPSMC_Result_Failed).
TEST_F(DeviceTest, DpmLevelsOfAFineGrainedClockAreRead) {
  ASSERT_TRUE(device_->Boot().ok());
  absl::StatusOr<std::vector<uint32_t>> gfx = device_->smu().DpmLevels(regs::smu::PPCLK_GFXCLK);
  ASSERT_TRUE(gfx.ok()) << gfx.status();
  EXPECT_EQ(*gfx, sim::SmuModel::DpmLevels()[regs::smu::PPCLK_GFXCLK]);
  absl::StatusOr<std::vector<uint32_t>> uclk = device_->smu().DpmLevels(regs::smu::PPCLK_UCLK);
  ASSERT_TRUE(uclk.ok()) << uclk.status();
  EXPECT_EQ(*uclk, sim::SmuModel::DpmLevels()[regs::smu::PPCLK_UCLK]);
}

// The PSP's fence word stays in VRAM across sessions, holding the last value the sOS wrote; each session counts
// from 1 again. A session that stopped after one answered command (here: its PMFW load hangs) leaves 1 there and
// the sOS running; the next session's PSP block takes over that sOS, and its first command (LOAD_TOC) waits for 1:
// without clearing the word first, that wait ends at once, before the sOS answered.
TEST_F(DeviceTest, AFenceLeftByAnEarlierSessionDoesNotEndAWait) {
  sim_->psp().InjectCommandStall(regs::psp::GFX_CMD_ID_LOAD_IP_FW);
  EXPECT_EQ(device_->Boot().code(), absl::StatusCode::kDeadlineExceeded);
  ASSERT_NO_FATAL_FAILURE(Reopen());
  sim_->psp().InjectCommandStall(regs::psp::GFX_CMD_ID_LOAD_TOC);
  // The SMU never got its firmware, so no mode1 reset: the blocks up to the PSP run as Boot runs them (init_sw in
  // boot order puts the PSP's buffers where the first session had them).
  ASSERT_TRUE(device_->pci().SetBusMaster(true).ok());
  for (IpBlock* block :
       std::initializer_list<IpBlock*>{&device_->soc(), &device_->gmc(), &device_->ih(), &device_->psp()}) {
    ASSERT_TRUE(block->InitSw().ok()) << block->name();
  }
  for (IpBlock* block : std::initializer_list<IpBlock*>{&device_->soc(), &device_->gmc(), &device_->ih()}) {
    ASSERT_TRUE(block->InitHw().ok()) << block->name();
  }
  ASSERT_TRUE(device_->psp().sos_alive());
  absl::Status started = device_->psp().InitHw();
  EXPECT_EQ(started.code(), absl::StatusCode::kDeadlineExceeded) << started;
  EXPECT_NE(started.message().find("did not fence LOAD_TOC"), std::string::npos) << started;
}

// amdgpu_device_mode1_reset: bus mastering off while the chip resets, the PCI state put back after, then the wait
// for RCC_CONFIG_MEMSIZE; the SMU's answer comes before the reset and the reset takes SMU13_MODE1_RESET_WAIT.
TEST_F(DeviceTest, Mode1ResetRunsWithBusMasteringOffAndPutsThePciStateBack) {
  ASSERT_TRUE(device_->Boot().ok());
  ASSERT_TRUE(device_->Boot({.full_reset = true}).ok());
  EXPECT_EQ(device_->boot_kind(), BootKind::kFullAfterReset);
  for (const sim::DeviceError& error : sim_->errors().errors()) {
    EXPECT_EQ(error.message.find("bus mastering enabled"), std::string::npos) << error.model << ": " << error.message;
  }
  absl::StatusOr<uint16_t> command = device_->pci().ReadConfig16(PCI_COMMAND);
  ASSERT_TRUE(command.ok()) << command.status();
  EXPECT_NE(*command & PCI_COMMAND_MASTER, 0) << "bus mastering restored after the reset";
  EXPECT_TRUE(sim_->dma_space().bus_master());
  ASSERT_FALSE(device_->steps().empty());
  EXPECT_EQ(device_->steps().front().phase, "mode1_reset");
  EXPECT_GE(device_->steps().front().duration, Smu::kMode1ResetWait);
}

// Issue 23: a driver stopped after the PSP started but before it loaded the SMU's firmware leaves an sOS running
// and no SMU to ask for a mode1 reset (the next boot waited a second for the SMU and failed). The driver sees the
// PMFW is not running (MP1_FIRMWARE_FLAGS) and resets the chip through PCI instead (soc21_asic_reset's
// AMD_RESET_METHOD_PCI), then boots.
TEST_F(DeviceTest, AnSosWithoutSmuFirmwareIsResetThroughPci) {
  sim_->psp().RejectFirmwareType(regs::psp::GFX_FW_TYPE_SMU);
  ASSERT_FALSE(device_->Boot().ok());
  ASSERT_NO_FATAL_FAILURE(Reopen());  // the injection went with the stopped session
  ASSERT_TRUE(device_->psp().sos_alive());
  ASSERT_FALSE(device_->smu().FirmwareRunning());

  absl::Status booted = device_->Boot();
  ASSERT_TRUE(booted.ok()) << booted;
  EXPECT_EQ(device_->boot_kind(), BootKind::kFullAfterReset);
  ASSERT_FALSE(device_->steps().empty());
  EXPECT_EQ(device_->steps().front().block, "pci");
  EXPECT_EQ(device_->steps().front().phase, "function_reset");
  EXPECT_TRUE(device_->smu().FirmwareRunning());
  absl::StatusOr<uint16_t> command = device_->pci().ReadConfig16(PCI_COMMAND);
  ASSERT_TRUE(command.ok()) << command.status();
  EXPECT_NE(*command & PCI_COMMAND_MASTER, 0) << "bus mastering restored after the reset";
}

// A running SMU is still reset by its mode1 reset, not through PCI.
TEST_F(DeviceTest, ARunningSmuResetsTheChipItself) {
  ASSERT_TRUE(device_->Boot().ok());
  ASSERT_TRUE(device_->smu().FirmwareRunning());
  ASSERT_TRUE(device_->Boot({.full_reset = true}).ok());
  EXPECT_EQ(device_->steps().front().block, "smu");
  EXPECT_EQ(device_->steps().front().phase, "mode1_reset");
}

class BootloaderTest : public DeviceTest {
 protected:
  // What a driver stopped part-way through the bootloader sequence did: the blocks before the PSP, then `count`
  // sOS components handed over as psp_v13_0_bootloader_load_component does, each waited for.
  void HandOverComponents(int count) {
    ASSERT_TRUE(device_->pci().SetBusMaster(true).ok());
    for (IpBlock* block : std::initializer_list<IpBlock*>{&device_->soc(), &device_->gmc(), &device_->ih()}) {
      ASSERT_TRUE(block->InitSw().ok()) << block->name();
      ASSERT_TRUE(block->InitHw().ok()) << block->name();
    }
    firmware::Store store = firmware::StoreForDevice(/*is_virtual=*/true);
    auto sos_file = store.Load("psp_13_0_0_sos.bin");
    ASSERT_TRUE(sos_file.ok()) << sos_file.status();
    auto sos = firmware::ParseContainer(sos_file->path, sos_file->data);
    ASSERT_TRUE(sos.ok()) << sos.status();
    auto staging = device_->memory().AllocVram(Psp::kStagingBytes, Psp::kStagingBytes);
    ASSERT_TRUE(staging.ok()) << staging.status();
    const std::pair<const char*, uint32_t> steps[] = {{"kdb", regs::psp::PSP_BL__LOAD_KEY_DATABASE},
                                                      {"spl", regs::psp::PSP_BL__LOAD_TOS_SPL_TABLE},
                                                      {"sys_drv", regs::psp::PSP_BL__LOAD_SYSDRV}};
    ASSERT_LE(count, static_cast<int>(std::size(steps)));
    auto mp0 = device_->Regs<regs::Ip::kMp0>();
    for (int i = 0; i < count; ++i) {
      const firmware::Component* component = sos->FindByName(steps[i].first);
      ASSERT_NE(component, nullptr) << steps[i].first;
      const absl::string_view bytes = firmware::ComponentBytes(sos_file->data, *component);
      auto view = device_->memory().CpuView(*staging, bytes.size());
      ASSERT_TRUE(view.ok()) << view.status();
      std::memcpy(view->data(), bytes.data(), bytes.size());
      device_->soc().FlushHdp();
      // psp_v13_0_bootloader_load_component: the staging buffer's MC address in 1 MiB units.
      mp0.Write(regs::mp0::MP0_SMN_C2PMSG_36{}.set_raw(static_cast<uint32_t>(device_->McAddress(*staging) >> 20)));
      mp0.Write(regs::mp0::MP0_SMN_C2PMSG_35{}.set_raw(steps[i].second));
      EXPECT_EQ(BootloaderAnswer(), kBootloaderReady) << steps[i].first;
    }
  }
  // psp_v13_0_wait_for_bootloader: bit 31 alone is ready with no error.
  static constexpr uint32_t kBootloaderReady = 0x80000000;
  // C2PMSG_35 once the bootloader is no longer busy (bit 31 set); 0 when it stays busy.
  uint32_t BootloaderAnswer() {
    auto mp0 = device_->Regs<regs::Ip::kMp0>();
    const absl::Time deadline = absl::Now() + Psp::kTimeout;
    for (uint32_t value = mp0.Read<regs::mp0::MP0_SMN_C2PMSG_35>().raw(); absl::Now() < deadline;
         value = mp0.Read<regs::mp0::MP0_SMN_C2PMSG_35>().raw()) {
      if ((value & kBootloaderReady) != 0) return value;
    }
    return 0;
  }
};

// A driver stopped after handing the bootloader some of its components leaves it waiting for the next one: nothing
// tells the next driver beforehand (no sOS sign of life, C2PMSG_35 shows ready), and the bootloader refuses the
// sequence from its start. The boot resets the chip (PCI: no PMFW runs) and runs again. Before issue 23's fix this
// ended in an error naming `baregpu sim reset`.
TEST_F(BootloaderTest, ABootloaderLeftPartWayIsResetAndTheBootRunsAgain) {
  ASSERT_NO_FATAL_FAILURE(HandOverComponents(3));
  ASSERT_NO_FATAL_FAILURE(Reopen());
  ASSERT_FALSE(device_->psp().sos_alive());
  ASSERT_FALSE(device_->psp().bootloader_stopped());

  absl::Status booted = device_->Boot();
  ASSERT_TRUE(booted.ok()) << booted;
  EXPECT_EQ(device_->boot_kind(), BootKind::kFullAfterReset);
  std::vector<std::string> steps;
  for (const BootStep& step : device_->steps()) {
    steps.push_back(absl::StrCat(step.block, " ", step.phase, step.status.ok() ? "" : " failed"));
  }
  auto failed_psp = std::find(steps.begin(), steps.end(), "psp init_hw failed");
  ASSERT_NE(failed_psp, steps.end()) << absl::StrJoin(steps, ", ");
  auto reset = std::find(failed_psp, steps.end(), "pci function_reset");
  ASSERT_NE(reset, steps.end()) << absl::StrJoin(steps, ", ");
  EXPECT_NE(std::find(reset, steps.end(), "psp init_hw"), steps.end()) << absl::StrJoin(steps, ", ");
  EXPECT_TRUE(device_->psp().sos_alive());
}

// A bootloader that refused a command shows it (a status beside its ready bit) and takes nothing until a reset:
// the boot resets first, and no PSP step fails.
TEST_F(BootloaderTest, ABootloaderStoppedOnAnErrorIsResetBeforeTheBoot) {
  ASSERT_NO_FATAL_FAILURE(HandOverComponents(0));
  auto mp0 = device_->Regs<regs::Ip::kMp0>();
  mp0.Write(regs::mp0::MP0_SMN_C2PMSG_35{}.set_raw(regs::psp::PSP_BL__LOAD_SOSDRV));  // SOS before SYS_DRV: refused
  const uint32_t answer = BootloaderAnswer();
  ASSERT_NE(answer & kBootloaderReady, 0u) << "the bootloader stays busy";
  ASSERT_NE(answer, kBootloaderReady) << "the bootloader took SOS before SYS_DRV";
  ASSERT_NO_FATAL_FAILURE(Reopen());
  ASSERT_TRUE(device_->psp().bootloader_stopped());

  absl::Status booted = device_->Boot();
  ASSERT_TRUE(booted.ok()) << booted;
  ASSERT_FALSE(device_->steps().empty());
  EXPECT_EQ(device_->steps().front().block, "pci");
  for (const BootStep& step : device_->steps()) EXPECT_TRUE(step.status.ok()) << step.block << " " << step.phase;
}

TEST_F(DeviceTest, PspCommandFailureIsReportedWithItsDecodedStatus) {
  sim_->psp().InjectCommandFailure(regs::psp::GFX_CMD_ID_AUTOLOAD_RLC, regs::psp::TEE_ERROR_NOT_SUPPORTED);
  absl::Status booted = device_->Boot();
  EXPECT_FALSE(booted.ok());
  EXPECT_NE(booted.message().find("AUTOLOAD_RLC with TEE_ERROR_NOT_SUPPORTED (0xffff000a)"), std::string::npos)
      << booted;
  EXPECT_FALSE(device_->steps().back().status.ok());
  EXPECT_EQ(device_->steps().back().block, "psp");
}

TEST_F(DeviceTest, RejectedFirmwareNamesTheFile) {
  sim_->psp().RejectFirmwareType(regs::psp::GFX_FW_TYPE_SMU);
  absl::Status booted = device_->Boot();
  EXPECT_FALSE(booted.ok());
  EXPECT_NE(booted.message().find("smu_13_0_0.bin"), std::string::npos) << booted;
}

TEST_F(DeviceTest, SilentSmuIsATimeout) {
  sim_->smu().InjectNoResponse(true);
  absl::Status booted = device_->Boot();
  EXPECT_EQ(booted.code(), absl::StatusCode::kDeadlineExceeded) << booted;
  EXPECT_NE(booted.message().find("C2PMSG_90 stays 0"), std::string::npos) << booted;
}

// What the eventfd of the device's interrupt counted since the last look (the test is its only reader).
uint64_t TakeMsiCount(int fd) {
  uint64_t count = 0;
  return ::read(fd, &count, sizeof(count)) == sizeof(count) ? count : 0;  // EAGAIN: 0
}

TEST_F(DeviceTest, ComputeQueueRunsPm4AndTheEopInterruptArrivesWhileHeld) {
  ASSERT_TRUE(device_->Boot().ok());
  EXPECT_TRUE(sim_->gfx().QueueRunning(0, 0));
  auto fence = device_->memory().AllocBoot(4096);
  ASSERT_TRUE(fence.ok());
  absl::StatusOr<int> msi = device_->completion_interrupts().EventFd();
  ASSERT_TRUE(msi.ok()) << msi.status();
  const uint64_t fence_mc = device_->McAddress(*fence);
  std::span<uint8_t> view = *device_->memory().CpuView(*fence, 4);
  const absl::Time deadline = absl::Now() + absl::Seconds(5);
  namespace pm4 = regs::pm4;
  // A fence that asks for the EOP interrupt (INT_SEL 2); returns once the MEC has run it.
  const auto run_fence = [&](uint32_t value) {
    const auto packet =
        pm4::ReleaseMem::Encode(fence_mc, pm4::ReleaseData::kLow32, value, pm4::ReleaseInterrupt::kAfterWriteConfirm);
    ASSERT_TRUE(device_->gfx().ring().Write(packet, Gfx::kTimeout).ok());
    while (std::atomic_ref<uint32_t>(*reinterpret_cast<uint32_t*>(view.data())).load() != value) {
      ASSERT_LT(absl::Now(), deadline) << "fence never landed";
    }
    while (!device_->gfx().idle()) ASSERT_LT(absl::Now(), deadline) << "rptr never caught up";
  };
  const auto time_stamp_int_enable = [&] {
    return device_->Regs<regs::Ip::kGc>().Read<regs::gc::CP_ME1_PIPE0_INT_CNTL>().time_stamp_int_enable();
  };

  // Nobody holds the completion interrupts: the pipe's EOP interrupt is off, the fence raises nothing.
  EXPECT_EQ(time_stamp_int_enable(), 0u);
  ASSERT_NO_FATAL_FAILURE(run_fence(42));
  EXPECT_TRUE(device_->ih().Drain().empty());
  EXPECT_EQ(TakeMsiCount(*msi), 0u);

  // Held, the same packet raises CP_EOP_INTERRUPT in the IH ring, and the IH the MSI.
  ASSERT_TRUE(device_->completion_interrupts().Hold().ok());
  EXPECT_EQ(time_stamp_int_enable(), 1u);
  ASSERT_NO_FATAL_FAILURE(run_fence(43));
  std::vector<IhEvent> events;
  while (events.empty()) {
    ASSERT_LT(absl::Now(), deadline) << "no EOP interrupt";
    events = device_->ih().Drain();
  }
  EXPECT_EQ(events[0].client_id, regs::ih::SOC21_IH_CLIENTID_GRBM_CP);
  EXPECT_EQ(events[0].source_id, regs::ih::GFX_11_0_0__SRCID__CP_EOP_INTERRUPT);
  pollfd pfd{*msi, POLLIN, 0};
  EXPECT_EQ(::poll(&pfd, 1, 5000), 1) << "MSI for the EOP interrupt";
  EXPECT_GE(TakeMsiCount(*msi), 1u);

  // A second holder keeps it on; the last one's release turns it off.
  ASSERT_TRUE(device_->completion_interrupts().Hold().ok());
  EXPECT_EQ(device_->completion_interrupts().holders(), 2);
  device_->completion_interrupts().Release();
  EXPECT_EQ(time_stamp_int_enable(), 1u);
  device_->completion_interrupts().Release();
  EXPECT_EQ(device_->completion_interrupts().holders(), 0);
  EXPECT_EQ(time_stamp_int_enable(), 0u);
  ASSERT_NO_FATAL_FAILURE(run_fence(44));
  EXPECT_TRUE(device_->ih().Drain().empty());
  ASSERT_TRUE(device_->Fini().ok());
  EXPECT_FALSE(sim_->gfx().QueueRunning(0, 0));
}

// A fence that asks for the EOP interrupt (the interrupts held) raises the MSI on `msi`.
void ExpectMsiForAFence(Device& device, int msi) {
  auto fence = device.memory().AllocBoot(4096);
  ASSERT_TRUE(fence.ok());
  namespace pm4 = regs::pm4;
  ASSERT_TRUE(device.gfx()
                  .ring()
                  .Write(pm4::ReleaseMem::Encode(device.McAddress(*fence), pm4::ReleaseData::kLow32, 1,
                                                 pm4::ReleaseInterrupt::kAfterWriteConfirm),
                         Gfx::kTimeout)
                  .ok());
  pollfd pfd{msi, POLLIN, 0};
  EXPECT_EQ(::poll(&pfd, 1, 5000), 1) << "no MSI on the eventfd";
}

// A full boot turns the sources off in init_hw: held, they come back on.
TEST_F(DeviceTest, HeldCompletionInterruptsComeBackAfterAFullBoot) {
  ASSERT_TRUE(device_->Boot().ok());
  absl::StatusOr<int> before = device_->completion_interrupts().EventFd();
  ASSERT_TRUE(before.ok()) << before.status();
  ASSERT_TRUE(device_->completion_interrupts().Hold().ok());
  ASSERT_TRUE(device_->Boot({.full_reset = true}).ok());
  EXPECT_NE(device_->boot_kind(), BootKind::kPartial);
  EXPECT_EQ(device_->Regs<regs::Ip::kGc>().Read<regs::gc::CP_ME1_PIPE0_INT_CNTL>().time_stamp_int_enable(), 1u);
  absl::StatusOr<int> after = device_->completion_interrupts().EventFd();
  ASSERT_TRUE(after.ok()) << after.status();
  EXPECT_NE(::fcntl(*before, F_GETFD), -1) << "the retired eventfd was closed";
  ASSERT_NO_FATAL_FAILURE(ExpectMsiForAFence(*device_, *after));
  device_->completion_interrupts().Release();
  EXPECT_TRUE(device_->Fini().ok());
}

// A boot that resets the function drops its interrupts (pci::Device::ResetFunction): the boot enables them again on a
// new eventfd, and the old number stays open, naming the old (now silent) eventfd.
TEST_F(DeviceTest, TheInterruptComesBackAfterAFunctionReset) {
  sim_->psp().RejectFirmwareType(regs::psp::GFX_FW_TYPE_SMU);
  ASSERT_FALSE(device_->Boot().ok());
  ASSERT_NO_FATAL_FAILURE(Reopen());  // an sOS without SMU firmware: the next boot resets through PCI
  absl::StatusOr<int> before = device_->completion_interrupts().EventFd();
  ASSERT_TRUE(before.ok()) << before.status();
  ASSERT_TRUE(device_->Boot().ok());
  ASSERT_FALSE(device_->steps().empty());
  EXPECT_EQ(device_->steps().front().phase, "function_reset");
  absl::StatusOr<int> after = device_->completion_interrupts().EventFd();
  ASSERT_TRUE(after.ok()) << after.status();
  EXPECT_NE(::fcntl(*before, F_GETFD), -1) << "the retired eventfd was closed";
  ASSERT_TRUE(device_->completion_interrupts().Hold().ok());
  ASSERT_NO_FATAL_FAILURE(ExpectMsiForAFence(*device_, *after));
  device_->completion_interrupts().Release();
  EXPECT_TRUE(device_->Fini().ok());
}

TEST_F(DeviceTest, SdmaCopiesFencesAndTrapsWhileHeld) {
  ASSERT_TRUE(device_->Boot().ok());
  auto source = device_->memory().AllocVram(base::MiB(1));
  auto destination = device_->memory().AllocVram(base::MiB(1));
  auto fence = device_->memory().AllocBoot(4096);
  ASSERT_TRUE(source.ok() && destination.ok() && fence.ok());
  absl::StatusOr<int> msi = device_->completion_interrupts().EventFd();
  ASSERT_TRUE(msi.ok()) << msi.status();
  std::span<uint8_t> src = *device_->memory().CpuView(*source, base::MiB(1));
  for (size_t i = 0; i < src.size(); ++i) src[i] = static_cast<uint8_t>(i * 7);
  std::span<uint8_t> fence_view = *device_->memory().CpuView(*fence, 4);
  const absl::Time deadline = absl::Now() + absl::Seconds(5);
  const auto fence_and_trap = [&](uint32_t value) {
    ASSERT_TRUE(device_->sdma().Fence(device_->McAddress(*fence), value).ok());
    ASSERT_TRUE(device_->sdma().Trap(5).ok());
    while (std::atomic_ref<uint32_t>(*reinterpret_cast<uint32_t*>(fence_view.data())).load() != value) {
      ASSERT_LT(absl::Now(), deadline) << "SDMA fence never landed";
    }
    while (!device_->sdma().idle()) ASSERT_LT(absl::Now(), deadline) << "rptr never caught up";
  };
  ASSERT_TRUE(device_->sdma().Copy(device_->McAddress(*destination), device_->McAddress(*source), base::MiB(1)).ok());
  // Nobody holds the completion interrupts: TRAP_ENABLE is off, the trap raises nothing.
  ASSERT_NO_FATAL_FAILURE(fence_and_trap(7));
  std::span<uint8_t> dst = *device_->memory().CpuView(*destination, base::MiB(1));
  EXPECT_EQ(std::memcmp(dst.data(), src.data(), src.size()), 0);
  EXPECT_TRUE(device_->ih().Drain().empty());
  EXPECT_EQ(TakeMsiCount(*msi), 0u);
  // Held: SDMA_TRAP with the packet's context, and the MSI.
  ASSERT_TRUE(device_->completion_interrupts().Hold().ok());
  EXPECT_EQ(device_->Regs<regs::Ip::kGc>().Read<regs::gc::SDMA0_CNTL>().trap_enable(), 1u);
  ASSERT_NO_FATAL_FAILURE(fence_and_trap(8));
  std::vector<IhEvent> events;
  while (events.empty()) {
    ASSERT_LT(absl::Now(), deadline) << "no SDMA trap interrupt";
    events = device_->ih().Drain();
  }
  EXPECT_EQ(events[0].source_id, regs::ih::GFX_11_0_0__SRCID__SDMA_TRAP);
  EXPECT_EQ(events[0].src_data[0], 5u);
  pollfd pfd{*msi, POLLIN, 0};
  EXPECT_EQ(::poll(&pfd, 1, 5000), 1) << "MSI for the SDMA trap";
  device_->completion_interrupts().Release();
  EXPECT_EQ(device_->Regs<regs::Ip::kGc>().Read<regs::gc::SDMA0_CNTL>().trap_enable(), 0u);
  EXPECT_TRUE(device_->Fini().ok());
}

// The SOC block programs NBIO's S2A doorbell entries as nbio_v4_3 does: GC's with amdgpu's literal values, SDMA's
// over both engines' doorbells.
TEST_F(DeviceTest, BootRoutesDoorbellsThroughTheS2aEntriesAsNbioV43) {
  ASSERT_TRUE(device_->Boot().ok());
  auto nbio = *regs::IpRegisters<regs::Ip::kNbio, sim::RegisterFile>::Create(sim_->registers(), sim_->bases());
  EXPECT_EQ(nbio.Read<regs::nbio::S2A_DOORBELL_ENTRY_0_CTRL>().raw(), 0x30000007u);  // nbio_v4_3_gc_doorbell_init
  EXPECT_EQ(nbio.Read<regs::nbio::S2A_DOORBELL_ENTRY_3_CTRL>().raw(), 0x3000000du);
  const auto sdma = nbio.Read<regs::nbio::S2A_DOORBELL_ENTRY_2_CTRL>();
  EXPECT_EQ(sdma.s2a_doorbell_port2_enable(), 1u);
  EXPECT_EQ(sdma.s2a_doorbell_port2_range_offset(), Sdma::kDoorbell64 * 2);
  EXPECT_EQ(sdma.s2a_doorbell_port2_range_size(), 40u);
  EXPECT_EQ(sim_->nbio().RouteDoorbell(Sdma::kDoorbell64 * 2), sim::DoorbellPort::kSdma);
  EXPECT_EQ(sim_->nbio().RouteDoorbell(Gfx::kDoorbell64 * 2), sim::DoorbellPort::kGc);
}

// Without the S2A entries (as the driver before issue 16 left them) the SDMA doorbell is lost: the fence never
// lands, the wait times out, and the device error log says why.
TEST_F(DeviceTest, SdmaDoorbellWithoutS2aEntriesIsLost) {
  ASSERT_TRUE(device_->Boot().ok());
  auto nbio = *regs::IpRegisters<regs::Ip::kNbio, sim::RegisterFile>::Create(sim_->registers(), sim_->bases());
  nbio.Write(regs::nbio::S2A_DOORBELL_ENTRY_0_CTRL{});
  nbio.Write(regs::nbio::S2A_DOORBELL_ENTRY_2_CTRL{});
  nbio.Write(regs::nbio::S2A_DOORBELL_ENTRY_3_CTRL{});
  auto fence = device_->memory().AllocBoot(4096);
  ASSERT_TRUE(fence.ok());
  ASSERT_TRUE(device_->sdma().Fence(device_->McAddress(*fence), 7).ok());
  const absl::Status idle = device_->sdma().WaitIdle(absl::Milliseconds(100));
  EXPECT_FALSE(idle.ok());
  bool reported = false;
  for (const sim::DeviceError& error : sim_->errors().errors()) {
    reported |=
        error.model == "nbio" && error.message.find("no enabled S2A doorbell entry covers it") != std::string::npos;
  }
  EXPECT_TRUE(reported) << idle;
}

TEST_F(DeviceTest, ContextZeroTranslatesTheDriversMappingsOnBothHubs) {
  ASSERT_TRUE(device_->Boot().ok());
  auto vram = device_->memory().AllocVram(base::MiB(2), base::MiB(2));
  ASSERT_TRUE(vram.ok());
  auto va = device_->memory().MapVram(*vram, base::MiB(2));
  ASSERT_TRUE(va.ok());
  ASSERT_TRUE(device_->memory().Flush().ok());
  for (sim::Hub hub : {sim::Hub::kGc, sim::Hub::kMm}) {
    auto view = sim_->gmc().Map({hub, 0, 0, "test"}, *va + 64, 4, sim::Access::kWrite);
    ASSERT_TRUE(view.ok()) << view.status();
    EXPECT_EQ(view->data(), sim_->vram().data() + *vram + 64);
  }
  // MC addresses of VRAM go through the system aperture.
  auto mc = sim_->gmc().Map({sim::Hub::kMm, 0, 0, "test"}, device_->McAddress(*vram), 4, sim::Access::kRead);
  ASSERT_TRUE(mc.ok()) << mc.status();
  EXPECT_EQ(mc->data(), sim_->vram().data() + *vram);
}

// B12: both hubs as *hub_v3_0_gart_enable leave them. The negative side: with baregpu's old set-up (context 0 only,
// the L1 TLB's MTYPE NC, L2 fragment processing left on) a VMID 1 access was a range fault on a disabled context;
// now a VM bound to VMID 1 (its page-table base, as amdgpu's vm_flush writes it) translates.
TEST_F(DeviceTest, TheHubsAreSetUpAsGfxhubAndMmhubV30Do) {
  namespace gc = regs::gc;
  namespace mm = regs::mmhub;
  ASSERT_TRUE(device_->Boot().ok());
  auto g = device_->Regs<regs::Ip::kGc>();
  auto m = device_->Regs<regs::Ip::kMmhub>();
  const auto l1 = g.Read<gc::GCMC_VM_MX_L1_TLB_CNTL>();
  EXPECT_EQ(l1.enable_l1_tlb(), 1u);
  EXPECT_EQ(l1.system_access_mode(), 3u);
  EXPECT_EQ(l1.enable_advanced_driver_model(), 1u);
  EXPECT_EQ(l1.mtype(), regs::vm::MTYPE_UC);
  EXPECT_EQ(m.Read<mm::MMMC_VM_MX_L1_TLB_CNTL>().mtype(), regs::vm::MTYPE_UC);
  const auto l2 = g.Read<gc::GCVM_L2_CNTL>();
  EXPECT_EQ(l2.enable_l2_cache(), 1u);
  EXPECT_EQ(l2.enable_l2_fragment_processing(), 0u);
  EXPECT_EQ(l2.enable_default_page_out_to_system_memory(), 1u);
  EXPECT_EQ(l2.context1_identity_access_mode(), 1u);
  EXPECT_EQ(g.Read<gc::GCVM_L2_CNTL3>().bank_select(), 9u);
  EXPECT_EQ(g.Read<gc::GCVM_L2_CNTL3>().l2_cache_bigk_fragment_size(), 6u);
  // mmhub_v3_0.c's regMMVM_L2_CNTL3_DEFAULT (the MMHUB has no default header), bank 9, BIGK fragment 6.
  EXPECT_EQ(m.Read<mm::MMVM_L2_CNTL3>().raw(),
            mm::MMVM_L2_CNTL3::FromRaw(0x80100007).bank_select(9).l2_cache_bigk_fragment_size(6).raw());
  EXPECT_EQ(g.Read<gc::GCVM_L2_CNTL4>().vmc_tap_pte_request_physical(), 0u);
  EXPECT_EQ(g.Read<gc::GCVM_L2_CNTL5>().l2_cache_smallk_fragment_size(), 0u);
  const uint64_t dummy = device_->gmc().dummy_page();
  EXPECT_EQ(g.Read<gc::GCVM_L2_PROTECTION_FAULT_DEFAULT_ADDR_LO32>().raw(), static_cast<uint32_t>(dummy >> 12));
  EXPECT_EQ(m.Read<mm::MMVM_L2_PROTECTION_FAULT_DEFAULT_ADDR_LO32>().raw(), static_cast<uint32_t>(dummy >> 12));
  EXPECT_EQ(g.Read<gc::GCVM_L2_PROTECTION_FAULT_CNTL2>().active_page_migration_pte_read_retry(), 1u);
  EXPECT_EQ(g.Read<gc::GCVM_L2_PROTECTION_FAULT_CNTL>().valid_protection_fault_enable_default(), 1u);
  EXPECT_EQ(g.Read<gc::CP_DEBUG>().cpg_utcl1_error_halt_disable(), 1u);
  EXPECT_EQ(g.Read<gc::GCVM_L2_CONTEXT1_IDENTITY_APERTURE_LOW_ADDR_HI32>().raw(), 0xfu);
  const auto c15 = g.Read<gc::GCVM_CONTEXT15_CNTL>();
  EXPECT_EQ(c15.enable_context(), 1u);
  EXPECT_EQ(c15.page_table_depth(), 3u);
  EXPECT_EQ(c15.page_table_block_size(), 0u);
  EXPECT_EQ(c15.retry_permission_or_invalid_page_fault(), 0u);
  EXPECT_EQ(c15.write_protection_fault_enable_default(), 1u);
  EXPECT_EQ(c15.write_protection_fault_enable_interrupt(), 1u);
  EXPECT_EQ(g.Read<gc::GCVM_CONTEXT15_PAGE_TABLE_END_ADDR_LO32>().raw(), 0xffffffffu);
  EXPECT_EQ(g.Read<gc::GCVM_CONTEXT15_PAGE_TABLE_END_ADDR_HI32>().raw(), 0xfu);
  EXPECT_EQ(g.Read<gc::GCVM_INVALIDATE_ENG0_ADDR_RANGE_HI32>().raw(), 0x1fu);
  EXPECT_EQ(m.Read<mm::MMVM_INVALIDATE_ENG16_ADDR_RANGE_LO32>().raw(), 0xffffffffu);
  EXPECT_EQ(m.Read<mm::MMVM_L2_BANK_SELECT_RESERVED_CID2>().reserved_cache_private_invalidation(), 1u)
      << "gmc_v11_0_flush_gpu_tlb's private MMHUB invalidation";

  auto vram = device_->memory().AllocVram(base::MiB(2), base::MiB(2));
  ASSERT_TRUE(vram.ok());
  auto va = device_->memory().MapVram(*vram, base::MiB(2));
  ASSERT_TRUE(va.ok());
  ASSERT_TRUE(device_->memory().Flush().ok());
  const uint64_t root = device_->memory().page_table().root() | regs::vm::AMDGPU_PTE_VALID;
  g.Write(gc::GCVM_CONTEXT1_PAGE_TABLE_BASE_ADDR_LO32{}.set_raw(static_cast<uint32_t>(root)));
  g.Write(gc::GCVM_CONTEXT1_PAGE_TABLE_BASE_ADDR_HI32{}.set_raw(static_cast<uint32_t>(root >> 32)));
  auto view = sim_->gmc().Map({sim::Hub::kGc, 1, 0, "test"}, *va + 64, 4, sim::Access::kRead);
  ASSERT_TRUE(view.ok()) << view.status();
  EXPECT_EQ(view->data(), sim_->vram().data() + *vram + 64);
}

// B13: the fault is reported in the hardware's own fields (L2_PROTECTION_FAULT_STATUS as
// *hub_v3_0_print_l2_protection_fault_status prints it), and the access, redirected as amdgpu sets the hubs up,
// lands in the driver's dummy page.
TEST_F(DeviceTest, PageFaultsArriveDecodedThroughTheInterruptRing) {
  ASSERT_TRUE(device_->Boot().ok());
  const uint64_t unmapped = VaAllocator::kStart + base::GiB(1000);
  auto view = sim_->gmc().Map({sim::Hub::kGc, 0, 0x21, "test"}, unmapped + 0x10, 4, sim::Access::kWrite);
  ASSERT_TRUE(view.ok()) << view.status();
  EXPECT_EQ(view->data(), device_->gmc().dummy_page_memory().data() + 0x10);
  std::vector<IhEvent> events = device_->ih().Drain();
  ASSERT_EQ(events.size(), 1u);
  const std::string& d = events[0].description;
  EXPECT_NE(d.find(absl::StrFormat("gfxhub fault at %#x", unmapped)), std::string::npos) << d;
  EXPECT_NE(d.find("STATUS 0x00044250"), std::string::npos) << d;  // VMID 0, CID 0x21, RW 1, PERMISSION 0x5
  EXPECT_NE(d.find("CID 0x21"), std::string::npos) << d;
  EXPECT_NE(d.find("RW write"), std::string::npos) << d;
  EXPECT_NE(d.find("PERMISSION_FAULTS 0x5 (valid, write)"), std::string::npos) << d;
  EXPECT_NE(d.find("WALKER_ERROR 0"), std::string::npos) << d;
  EXPECT_TRUE(device_->ih().Drain().empty());
  EXPECT_FALSE(device_->gmc().TakeFault(Hub::kGc).ok());  // the drain cleared the latch
}

TEST_F(DeviceTest, LostInvalidationAckIsATimeoutNamingTheRegister) {
  ASSERT_TRUE(device_->Boot().ok());
  sim_->gmc().InjectLostInvalidateAck(sim::Hub::kGc, true);
  absl::Status flushed = device_->memory().Flush();
  EXPECT_EQ(flushed.code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_NE(flushed.message().find("GCVM_INVALIDATE_ENG17_ACK"), std::string::npos) << flushed;
  sim_->gmc().InjectLostInvalidateAck(sim::Hub::kGc, false);
  EXPECT_TRUE(device_->memory().Flush().ok());  // recovers once the ack comes again
}

TEST_F(DeviceTest, RegisterTraceIsDecodedWithTheDatabase) {
  std::vector<std::string> trace;
  device_->io().set_tracer([&](bool write, uint64_t address, uint32_t value) {
    trace.push_back(device_->io().Describe(write, address, value));
  });
  ASSERT_TRUE(device_->Boot().ok());
  bool found = false;
  for (const std::string& line : trace) found |= line.rfind("W GCVM_CONTEXT0_CNTL = ", 0) == 0;
  EXPECT_TRUE(found);
  EXPECT_NE(device_->io()
                .Describe(true, *device_->bases().Resolve(regs::Ip::kGc, 0, 0, 0x1688), 7)
                .find("PAGE_TABLE_DEPTH=0x3"),
            std::string::npos);
}

// A 256 MiB BAR0: discovery through MM_INDEX/MM_DATA, the boot and page-table regions inside the visible part,
// and VRAM beyond it reached by the GPU only (an SDMA copy there and back).
TEST(DeviceSmallBarTest, BootsAndReachesInvisibleVramThroughTheGpu) {
  ASSERT_TRUE(pci::sim::PersistentState::PowerCycle("sim:navi31:smallbar-driver").ok());
  ::setenv("BAREGPU_SIM_SMALL_BAR", "1", 1);
  auto pci = pci::Open("sim:navi31:smallbar-driver");
  ::unsetenv("BAREGPU_SIM_SMALL_BAR");
  ASSERT_TRUE(pci.ok()) << pci.status();
  auto opened = Device::Open(std::move(*pci));
  ASSERT_TRUE(opened.ok()) << opened.status();
  Device& device = **opened;
  EXPECT_TRUE(device.discovery().through_mm_index);
  ASSERT_TRUE(device.Boot().ok());
  MemoryManager& memory = device.memory();
  auto visible = memory.AllocVram(base::MiB(1));
  auto back = memory.AllocVram(base::MiB(1));
  auto far = memory.AllocVram(base::GiB(1));  // reaches past the 256 MiB BAR
  auto fence = memory.AllocBoot(4096);
  ASSERT_TRUE(visible.ok() && far.ok() && back.ok() && fence.ok());
  const uint64_t hidden = *far + base::GiB(1) - base::MiB(1);
  EXPECT_FALSE(memory.CpuView(hidden, base::MiB(1)).ok());
  std::span<uint8_t> source = *memory.CpuView(*visible, base::MiB(1));
  for (size_t i = 0; i < source.size(); ++i) source[i] = static_cast<uint8_t>(i * 13);
  ASSERT_TRUE(device.sdma().Copy(device.McAddress(hidden), device.McAddress(*visible), base::MiB(1)).ok());
  ASSERT_TRUE(device.sdma().Copy(device.McAddress(*back), device.McAddress(hidden), base::MiB(1)).ok());
  ASSERT_TRUE(device.sdma().Fence(device.McAddress(*fence), 1).ok());
  std::span<uint8_t> fence_view = *memory.CpuView(*fence, 4);
  const absl::Time deadline = absl::Now() + absl::Seconds(5);
  while (std::atomic_ref<uint32_t>(*reinterpret_cast<uint32_t*>(fence_view.data())).load() != 1) {
    ASSERT_LT(absl::Now(), deadline) << "SDMA fence never landed";
  }
  EXPECT_EQ(std::memcmp(memory.CpuView(*back, base::MiB(1))->data(), source.data(), source.size()), 0);
}

TEST(DeviceVersionsTest, UnsupportedVersionsAreNamed) {
  Discovery discovery;
  EXPECT_FALSE(CheckSupportedVersions(discovery).ok());
  for (uint16_t hw_id :
       {regs::discovery::GC_HWID, regs::discovery::MMHUB_HWID, regs::discovery::OSSSYS_HWID, regs::discovery::NBIF_HWID,
        regs::discovery::MP0_HWID, regs::discovery::MP1_HWID, regs::discovery::SDMA0_HWID, regs::discovery::HDP_HWID}) {
    discovery.ips.push_back({hw_id, 0, {0, 0, 0}, 0, {}});
  }
  absl::Status status = CheckSupportedVersions(discovery);
  EXPECT_EQ(status.code(), absl::StatusCode::kUnimplemented);
  EXPECT_NE(status.message().find("GC 0.0.0 (baregpu supports 11.0.x)"), std::string::npos) << status;
}

}  // namespace
}  // namespace am
