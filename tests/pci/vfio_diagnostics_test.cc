#include "pci/vfio_diagnostics.h"

#include <unistd.h>

#include <cerrno>

#include "absl/strings/match.h"
#include "gtest/gtest.h"
#include "pci/open.h"
#include "tests/pci/fake_system.h"

namespace pci {
namespace {

using ::pci::testing::FakeSystem;

constexpr char kGpu[] = "0000:03:00.0";
constexpr char kAudio[] = "0000:03:00.1";

// An ordinary user, so that permission checks mean something when the tests run as root.
Credentials User() { return Credentials{1000, 1000, {}}; }

// A GPU ready for VFIO: IOMMU group 14, bound to vfio-pci, /dev/vfio nodes open to everyone.
class VfioDiagnosticsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    fake_.AddDevice(kGpu, 0x1002, 0x744c, 0x030000);
    fake_.AddToIommuGroup(kGpu, "14");
    fake_.Bind(kGpu, "vfio-pci");
    fake_.AddDevNode("vfio/vfio");
    fake_.AddDevNode("vfio/14");
  }
  absl::StatusOr<VfioTarget> Check(const Credentials& who = User()) {
    return CheckVfioPreconditions(*Address::Parse(kGpu), fake_.paths(), who);
  }
  // The check fails with `code` and a message holding every one of `parts`.
  void ExpectFailure(absl::StatusCode code, std::initializer_list<const char*> parts) {
    auto target = Check();
    ASSERT_FALSE(target.ok());
    EXPECT_EQ(target.status().code(), code) << target.status();
    for (const char* part : parts) EXPECT_TRUE(absl::StrContains(target.status().message(), part)) << part;
  }
  std::string Sys(const std::string& rest) { return fake_.paths().sys + rest; }

  FakeSystem fake_;
};

TEST_F(VfioDiagnosticsTest, ReadyDeviceYieldsGroupAndNodes) {
  auto target = Check();
  ASSERT_TRUE(target.ok()) << target.status();
  EXPECT_EQ(target->group, "14");
  EXPECT_EQ(target->group_node, fake_.paths().dev + "/vfio/14");
  EXPECT_EQ(target->container_node, fake_.paths().dev + "/vfio/vfio");
}

TEST_F(VfioDiagnosticsTest, NoSuchDevice) {
  auto target = CheckVfioPreconditions(*Address::Parse("0000:09:00.0"), fake_.paths(), User());
  ASSERT_FALSE(target.ok());
  EXPECT_EQ(target.status().code(), absl::StatusCode::kNotFound);
  EXPECT_TRUE(absl::StrContains(target.status().message(), "no PCI device 0000:09:00.0")) << target.status();
  EXPECT_TRUE(absl::StrContains(target.status().message(), "baregpu list")) << target.status();
}

TEST(VfioDiagnosticsIommuOffTest, NoGroupLinkExplainsKernelParametersAndSysfs) {
  FakeSystem fake;
  fake.AddDevice(kGpu, 0x1002, 0x744c, 0x030000);
  fake.Bind(kGpu, "amdgpu");
  auto target = CheckVfioPreconditions(*Address::Parse(kGpu), fake.paths(), User());
  ASSERT_FALSE(target.ok());
  EXPECT_EQ(target.status().code(), absl::StatusCode::kFailedPrecondition);
  for (const char* part :
       {"no IOMMU group", "intel_iommu=on iommu=pt", "amd_iommu=on iommu=pt", "sysfs:0000:03:00.0"}) {
    EXPECT_TRUE(absl::StrContains(target.status().message(), part)) << part << ": " << target.status();
  }
}

TEST(VfioDiagnosticsNotLoadedTest, MissingVfioPciDriverSaysModprobe) {
  FakeSystem fake;
  fake.AddDevice(kGpu, 0x1002, 0x744c, 0x030000);
  fake.AddToIommuGroup(kGpu, "14");
  fake.Bind(kGpu, "amdgpu");
  auto target = CheckVfioPreconditions(*Address::Parse(kGpu), fake.paths(), User());
  ASSERT_FALSE(target.ok());
  EXPECT_EQ(target.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_TRUE(absl::StrContains(target.status().message(), "modprobe vfio-pci")) << target.status();
}

TEST(VfioDiagnosticsBindingTest, BoundToAmdgpuGivesUnbindOverrideAndProbeCommands) {
  FakeSystem fake;
  fake.AddDevice(kGpu, 0x1002, 0x744c, 0x030000);
  fake.AddToIommuGroup(kGpu, "14");
  fake.Bind(kGpu, "amdgpu");
  fake.LoadDriver("vfio-pci");
  auto target = CheckVfioPreconditions(*Address::Parse(kGpu), fake.paths(), User());
  ASSERT_FALSE(target.ok());
  const std::string dir = fake.DevicePath(kGpu);
  const std::string message(target.status().message());
  EXPECT_TRUE(absl::StrContains(message, "bound to amdgpu")) << message;
  EXPECT_TRUE(absl::StrContains(message, "stop everything using the GPU")) << message;
  EXPECT_TRUE(absl::StrContains(message, "echo 0000:03:00.0 > " + dir + "/driver/unbind")) << message;
  EXPECT_TRUE(absl::StrContains(message, "echo vfio-pci > " + dir + "/driver_override")) << message;
  EXPECT_TRUE(absl::StrContains(message, "echo 0000:03:00.0 > " + fake.paths().sys + "/bus/pci/drivers_probe"))
      << message;
}

TEST(VfioDiagnosticsBindingTest, UnboundDeviceGetsBindCommandsWithoutUnbind) {
  FakeSystem fake;
  fake.AddDevice(kGpu, 0x1002, 0x744c, 0x030000);
  fake.AddToIommuGroup(kGpu, "14");
  fake.LoadDriver("vfio-pci");
  auto target = CheckVfioPreconditions(*Address::Parse(kGpu), fake.paths(), User());
  ASSERT_FALSE(target.ok());
  const std::string message(target.status().message());
  EXPECT_TRUE(absl::StrContains(message, "bound to no driver")) << message;
  EXPECT_TRUE(absl::StrContains(message, "driver_override")) << message;
  EXPECT_FALSE(absl::StrContains(message, "unbind")) << message;
}

TEST_F(VfioDiagnosticsTest, GroupWithAnotherDriverIsNotViableAndNamesTheDevice) {
  fake_.AddDevice(kAudio, 0x1002, 0xab30, 0x040300);
  fake_.AddToIommuGroup(kAudio, "14");
  fake_.Bind(kAudio, "snd_hda_intel");
  ExpectFailure(absl::StatusCode::kFailedPrecondition,
                {"IOMMU group 14 of 0000:03:00.0 is not viable", "0000:03:00.1 (bound to snd_hda_intel)",
                 "echo 0000:03:00.1 > "});
}

TEST_F(VfioDiagnosticsTest, GroupMembersWithoutDriverOrWithPortDriverAreHarmless) {
  fake_.AddDevice(kAudio, 0x1002, 0xab30, 0x040300);  // no driver
  fake_.AddToIommuGroup(kAudio, "14");
  fake_.AddDevice("0000:02:00.0", 0x1002, 0x1478, 0x060400);  // the switch's downstream port
  fake_.AddToIommuGroup("0000:02:00.0", "14");
  fake_.Bind("0000:02:00.0", "pcieport");
  auto target = Check();
  EXPECT_TRUE(target.ok()) << target.status();
}

TEST_F(VfioDiagnosticsTest, MissingContainerNode) {
  std::remove((fake_.paths().dev + "/vfio/vfio").c_str());
  ExpectFailure(absl::StatusCode::kFailedPrecondition, {"/dev/vfio/vfio does not exist", "modprobe vfio-pci"});
}

TEST_F(VfioDiagnosticsTest, MissingGroupNode) {
  std::remove((fake_.paths().dev + "/vfio/14").c_str());
  ExpectFailure(absl::StatusCode::kFailedPrecondition, {"/dev/vfio/14 does not exist", "IOMMU group 14"});
}

TEST_F(VfioDiagnosticsTest, GroupNodeWithMode000IsExplainedWithChownAndUdev) {
  ::chmod((fake_.paths().dev + "/vfio/14").c_str(), 0);
  ExpectFailure(absl::StatusCode::kPermissionDenied,
                {"/dev/vfio/14 is owned by", "mode 0000", "cannot open it read-write", "chown ", "udev rule",
                 "SUBSYSTEM==\"vfio\""});
}

TEST_F(VfioDiagnosticsTest, GroupMembershipGrantsAccess) {
  const std::string node = fake_.paths().dev + "/vfio/14";
  ASSERT_EQ(::chmod(node.c_str(), 0660), 0);
  struct stat st;
  ASSERT_EQ(::stat(node.c_str(), &st), 0);
  EXPECT_FALSE(Check(Credentials{st.st_uid + 1000, st.st_gid + 1000, {}}).ok());
  EXPECT_TRUE(Check(Credentials{st.st_uid + 1000, st.st_gid + 1000, {st.st_gid}}).ok());
  EXPECT_TRUE(Check(Credentials{st.st_uid, st.st_gid + 1000, {}}).ok());  // the owner
}

TEST_F(VfioDiagnosticsTest, RootMayOpenAnything) {
  ::chmod((fake_.paths().dev + "/vfio/14").c_str(), 0);
  EXPECT_TRUE(Check(Credentials{0, 0, {}}).ok());
}

// The same case with this process's own credentials: only meaningful when not running as root.
TEST_F(VfioDiagnosticsTest, Mode000WithThisProcessesCredentials) {
  if (::geteuid() == 0) GTEST_SKIP() << "running as root: permissions never deny root (covered with uid 1000 above)";
  ::chmod((fake_.paths().dev + "/vfio/14").c_str(), 0);
  auto target = CheckVfioPreconditions(*Address::Parse(kGpu), fake_.paths());
  ASSERT_FALSE(target.ok());
  EXPECT_EQ(target.status().code(), absl::StatusCode::kPermissionDenied) << target.status();
}

TEST_F(VfioDiagnosticsTest, OpenByAddressRunsTheChecks) {
  std::remove((fake_.paths().dev + "/vfio/14").c_str());
  auto device = Open(kGpu, OpenOptions{fake_.paths()});
  ASSERT_FALSE(device.ok());
  EXPECT_TRUE(absl::StrContains(device.status().message(), "/dev/vfio/14 does not exist")) << device.status();
}

TEST(MapDmaErrorTest, EnomemExplainsMemlock) {
  absl::Status status = MapDmaError(ENOMEM, 0x200000, 0x100000);
  EXPECT_EQ(status.code(), absl::StatusCode::kResourceExhausted);
  for (const char* part : {"VFIO_IOMMU_MAP_DMA of 0x200000 bytes at IOVA 0x100000", "RLIMIT_MEMLOCK", "ulimit -l",
                           "/etc/security/limits.conf", "memlock unlimited"}) {
    EXPECT_TRUE(absl::StrContains(status.message(), part)) << part << ": " << status;
  }
}

TEST(MapDmaErrorTest, OtherErrorsNameTheErrno) {
  absl::Status status = MapDmaError(EEXIST, 0x1000, 0x200000);
  EXPECT_TRUE(absl::StrContains(status.message(), "EEXIST")) << status;
  EXPECT_FALSE(absl::StrContains(status.message(), "memlock")) << status;
}

// A disk or a network card named by mistake is refused plainly, never told to leave its driver; whichever backend.
TEST(VfioNotAGpuTest, StorageAndNetworkDevicesAreRefusedWithoutRebindAdvice) {
  FakeSystem fake;
  fake.AddDevice("0000:01:00.0", 0x144d, 0xa808, 0x010802);  // an NVMe SSD (class 0x0108 NVM, prog-if 02 NVMe)
  fake.AddToIommuGroup("0000:01:00.0", "3");
  fake.Bind("0000:01:00.0", "nvme");
  fake.AddDevice("0000:02:00.0", 0x8086, 0x15f3, 0x020000);  // an Ethernet controller, bound to no driver
  fake.AddToIommuGroup("0000:02:00.0", "4");
  fake.AddDevice("0000:00:02.0", 0x8086, 0x4680, 0x030000);  // an Intel integrated GPU: display, not AMD or NVIDIA
  fake.Bind("0000:00:02.0", "i915");
  for (const char* bdf : {"0000:01:00.0", "0000:02:00.0", "0000:00:02.0"}) {
    for (const std::string& name : {std::string(bdf), std::string("sysfs:") + bdf}) {
      auto opened = pci::Open(name, {.paths = fake.paths()});
      ASSERT_FALSE(opened.ok()) << name;
      const std::string message(opened.status().message());
      EXPECT_TRUE(absl::StrContains(message, "not an AMD or NVIDIA GPU")) << message;
      EXPECT_FALSE(absl::StrContains(message, "unbind")) << message;
      EXPECT_FALSE(absl::StrContains(message, "driver_override")) << message;
    }
  }
  auto nvme = CheckVfioPreconditions(*Address::Parse("0000:01:00.0"), fake.paths(), User());
  ASSERT_FALSE(nvme.ok());
  EXPECT_TRUE(absl::StrContains(nvme.status().message(),
                                "0000:01:00.0 is a storage controller (vendor 144d, class "
                                "010802, driven by nvme)"))
      << nvme.status();
  auto nic = CheckVfioPreconditions(*Address::Parse("0000:02:00.0"), fake.paths(), User());
  EXPECT_TRUE(absl::StrContains(nic.status().message(), "is a network controller")) << nic.status();
}

// A non-GPU someone bound to vfio-pci is theirs to use; QEMU's edu device (tests/pci/qemu) gets a GPU's guidance
// whatever its driver, so that the guest test still sees the bind advice.
TEST(VfioNotAGpuTest, ANonGpuBoundToVfioPciAndQemusEduPass) {
  FakeSystem fake;
  fake.AddDevice("0000:05:00.0", 0x8086, 0x15f3, 0x020000);
  fake.Bind("0000:05:00.0", "vfio-pci");
  EXPECT_TRUE(CheckIsGpu(*Address::Parse("0000:05:00.0"), fake.paths()).ok());
  fake.AddDevice("0000:00:03.0", 0x1234, 0x11e8, 0x00ff00);
  fake.AddToIommuGroup("0000:00:03.0", "2");
  fake.AddDevNode("vfio/vfio");
  auto edu = CheckVfioPreconditions(*Address::Parse("0000:00:03.0"), fake.paths(), User());
  ASSERT_FALSE(edu.ok());
  EXPECT_TRUE(absl::StrContains(edu.status().message(), "bound to no driver")) << edu.status();
}

}  // namespace
}  // namespace pci
