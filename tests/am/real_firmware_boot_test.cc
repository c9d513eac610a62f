// The virtual Navi31 booted with Debian's real amdgpu firmware (both releases tools/fetch_firmware.sh unpacks): full
// boot, a partial boot by the next session, a mode1 reset with a full boot, and a compute dispatch, with the
// versions the images state recorded and reported; and a real image handed over as another type is refused.
#include <atomic>
#include <filesystem>
#include <string>

#include "absl/time/clock.h"
#include "am/device.h"
#include "am/gfx.h"
#include "am/psp.h"
#include "am/regs/pm4_packets.h"
#include "am/regs/psp_constants.h"
#include "am/sim/navi31.h"
#include "am/smu.h"
#include "base/file.h"
#include "firmware/container.h"
#include "firmware/store.h"
#include "gtest/gtest.h"
#include "pci/open.h"
#include "pci/sim/persistent_state.h"
#include "tests/am/sim/sim_state_dir.h"
#include "tests/firmware/debian_firmware.h"

namespace am {
namespace {

auto* const kStateDir = sim::testing::RegisterSimStateDir();
constexpr char kDevice[] = "sim:navi31:realfw";

// Every error the model reported, one per line.
std::string Errors(sim::Navi31& sim) {
  std::string all;
  for (const sim::DeviceError& error : sim.errors().errors()) all += error.model + ": " + error.message + "\n";
  return all;
}

uint32_t UcodeVersion(const std::string& dir, const std::string& file) {
  absl::StatusOr<std::string> data = base::ReadFile(dir + "/" + file);
  EXPECT_TRUE(data.ok()) << data.status();
  absl::StatusOr<firmware::Container> container = firmware::ParseContainer(file, *data);
  EXPECT_TRUE(container.ok()) << container.status();
  return container->header.ucode_version;
}

class RealFirmwareBootTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    dir_ = firmware::testing::DebianFirmwareDir(GetParam());
    ASSERT_FALSE(dir_.empty()) << "Debian's firmware-amd-graphics " << GetParam()
                               << " is not in .cache/firmware/debian (run tools/setup.sh)";
    ASSERT_TRUE(pci::sim::PersistentState::PowerCycle(kDevice).ok());
  }
  // Opens the device with only the real release as its firmware (the store root holds amdgpu/).
  std::unique_ptr<Device> Open(const std::string& root) {
    auto pci = pci::Open(kDevice);
    EXPECT_TRUE(pci.ok()) << pci.status();
    if (!pci.ok()) return nullptr;
    sim_ = static_cast<sim::Navi31*>(pci->get());
    auto device = Device::Open(std::move(*pci), {.firmware = firmware::Store({root})});
    EXPECT_TRUE(device.ok()) << device.status();
    return device.ok() ? std::move(*device) : nullptr;
  }
  std::string Root() const { return std::filesystem::path(dir_).parent_path().string(); }

  std::string dir_;
  sim::Navi31* sim_ = nullptr;
};

void RunFence(Device& device) {
  auto fence = device.memory().AllocBoot(4096);
  ASSERT_TRUE(fence.ok());
  namespace pm4 = regs::pm4;
  const auto packet = pm4::ReleaseMem::Encode(device.McAddress(*fence), pm4::ReleaseData::kLow32, 42,
                                              pm4::ReleaseInterrupt::kAfterWriteConfirm);
  ASSERT_TRUE(device.gfx().ring().Write(packet, Gfx::kTimeout).ok());
  std::span<uint8_t> view = *device.memory().CpuView(*fence, 4);
  const absl::Time deadline = absl::Now() + absl::Seconds(5);
  while (std::atomic_ref<uint32_t>(*reinterpret_cast<uint32_t*>(view.data())).load() != 42) {
    ASSERT_LT(absl::Now(), deadline) << "the MEC running the real firmware's start address never wrote the fence";
  }
}

TEST_P(RealFirmwareBootTest, BootsFullyPartiallyAndAfterAMode1Reset) {
  std::unique_ptr<Device> device = Open(Root());
  ASSERT_NE(device, nullptr);
  absl::Status booted = device->Boot();
  ASSERT_TRUE(booted.ok()) << booted << "\n" << Errors(*sim_);
  EXPECT_EQ(device->boot_kind(), BootKind::kFull);
  // The real sOS package has KDB, SPL, SYS_DRV and SOS; the sOS states its version, which C2PMSG_58 reports.
  const std::string first = device->psp().log().front();
  EXPECT_EQ(first.rfind("bootloader: 4 components of " + dir_ + "/psp_13_0_0_sos.bin", 0), 0u) << first;
  absl::StatusOr<std::string> sos = base::ReadFile(dir_ + "/psp_13_0_0_sos.bin");
  ASSERT_TRUE(sos.ok());
  absl::StatusOr<firmware::Container> package = firmware::ParseContainer("psp_13_0_0_sos.bin", *sos);
  ASSERT_TRUE(package.ok());
  EXPECT_EQ(device->psp().sos_version(), package->FindByName("sos")->version.value());
  // The PMFW answers GetSmuVersion with the version its image states, the container's.
  EXPECT_EQ(device->smu().firmware_version(), UcodeVersion(dir_, "smu_13_0_0.bin"));
  EXPECT_EQ(sim_->firmware().Version(regs::psp::GFX_FW_TYPE_RS64_MEC), UcodeVersion(dir_, "gc_11_0_0_mec.bin"));
  EXPECT_TRUE(sim_->firmware().rlc_autoloaded());
  // psp_rl_load: the package's register list goes last, after the RLC autoload.
  const std::vector<std::string>& log = device->psp().log();
  ASSERT_GE(log.size(), 2u);
  EXPECT_EQ(log[log.size() - 2], "AUTOLOAD_RLC");
  EXPECT_EQ(log.back(), "LOAD_IP_FW GFX_FW_TYPE_REG_LIST from psp_13_0_0_sos.bin");
  EXPECT_TRUE(sim_->firmware().Has(regs::psp::GFX_FW_TYPE_REG_LIST));
  ASSERT_NO_FATAL_FAILURE(RunFence(*device));
  device.reset();

  device = Open(Root());
  ASSERT_NE(device, nullptr);
  ASSERT_TRUE(device->Boot().ok());
  EXPECT_EQ(device->boot_kind(), BootKind::kPartial);
  ASSERT_NO_FATAL_FAILURE(RunFence(*device));
  device.reset();

  device = Open(Root());
  ASSERT_NE(device, nullptr);
  booted = device->Boot({.full_reset = true});
  ASSERT_TRUE(booted.ok()) << booted << "\n" << Errors(*sim_);
  EXPECT_EQ(device->boot_kind(), BootKind::kFullAfterReset);
  ASSERT_NO_FATAL_FAILURE(RunFence(*device));
}

// A real image handed over as a type it is not (the ME's container installed as the MEC's) is refused by the PSP,
// which names what the image is.
TEST_P(RealFirmwareBootTest, AnImageLoadedAsAnotherTypeIsRefused) {
  const std::string root = std::string(kStateDir->dir()) + "/swapped";
  std::filesystem::create_directories(root + "/amdgpu");
  for (const auto& entry : std::filesystem::directory_iterator(dir_)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind("gc_11_0_0", 0) != 0 && name.rfind("psp_13_0_0", 0) != 0 && name.rfind("smu_13_0_0", 0) != 0 &&
        name.rfind("sdma_6_0_0", 0) != 0) {
      continue;
    }
    const std::string source = name == "gc_11_0_0_mec.bin" ? dir_ + "/gc_11_0_0_me.bin" : entry.path().string();
    std::filesystem::copy_file(source, root + "/amdgpu/" + name, std::filesystem::copy_options::overwrite_existing);
  }
  std::unique_ptr<Device> device = Open(root);
  ASSERT_NE(device, nullptr);
  const absl::Status booted = device->Boot();
  ASSERT_FALSE(booted.ok());
  EXPECT_NE(booted.message().find("gc_11_0_0_mec.bin"), std::string::npos) << booted;
  EXPECT_NE(Errors(*sim_).find("the image is GFX_FW_TYPE_RS64_ME (image kind 0x46), not "
                               "GFX_FW_TYPE_RS64_MEC"),
            std::string::npos)
      << Errors(*sim_);
}

INSTANTIATE_TEST_SUITE_P(Versions, RealFirmwareBootTest,
                         ::testing::ValuesIn(firmware::testing::DebianFirmwareVersions()),
                         [](const auto& info) { return info.param.substr(0, 8); });

}  // namespace
}  // namespace am
