#include "pci/sysfs_device.h"

#include <linux/pci_regs.h>
#include <unistd.h>

#include <fstream>
#include <iostream>
#include <vector>

#include "absl/strings/match.h"
#include "base/file.h"
#include "gtest/gtest.h"
#include "pci/open.h"
#include "tests/pci/fake_system.h"

namespace pci {
namespace {

using ::pci::testing::FakeSystem;
using ::pci::testing::ResourceLine;

constexpr char kGpu[] = "0000:03:00.0";
constexpr uint64_t kBar0Size = 64 << 10;
constexpr uint64_t kBar5Size = 16 << 10;

// A fake GPU whose resource files are plain files: mmap works on them as on the kernel's, so the backend's real
// code paths run (config by pread/pwrite, BARs by mmap, reset by writing the attribute).
class SysfsDeviceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string resource = ResourceLine(0x7000000000, kBar0Size, 0x14220c) + ResourceLine(0, 0, 0) +
                           ResourceLine(0, 0, 0) + ResourceLine(0, 0, 0) + ResourceLine(0xe000, 0x100, 0x40101) +
                           ResourceLine(0xfcc00000, kBar5Size, 0x40200) + ResourceLine(0, 0, 0);
    fake_.AddDevice(kGpu, 0x1002, 0x744c, 0x030000, resource);
    const std::string dir = "sys/bus/pci/devices/" + std::string(kGpu);
    std::string bar0(kBar0Size, '\0');
    bar0[8] = 0x11;
    fake_.WriteFile(dir + "/resource0", bar0);
    fake_.WriteFile(dir + "/resource0_wc", std::string(kBar0Size, '\x77'));
    std::string bar5(kBar5Size, '\0');
    bar5[0x100] = 0x78;  // a register reading 0x12345678 at 0x100
    bar5[0x101] = 0x56;
    bar5[0x102] = 0x34;
    bar5[0x103] = 0x12;
    fake_.WriteFile(dir + "/resource5", bar5);
    fake_.WriteFile(dir + "/reset", "");
  }
  Address gpu() const { return *Address::Parse(kGpu); }
  std::string Attribute(const std::string& name) const { return fake_.DevicePath(kGpu) + "/" + name; }

  FakeSystem fake_;
};

TEST_F(SysfsDeviceTest, RefusesOrdinaryUsers) {
  absl::Status status = CheckSysfsPreconditions(gpu(), fake_.paths(), 1000);
  EXPECT_EQ(status.code(), absl::StatusCode::kPermissionDenied);
  EXPECT_TRUE(absl::StrContains(status.message(), "needs root")) << status;
  EXPECT_TRUE(absl::StrContains(status.message(), "VFIO")) << status;
}

TEST_F(SysfsDeviceTest, RefusesWhenTheIommuTranslates) {
  fake_.AddToIommuGroup(kGpu, "14", "DMA-FQ");
  absl::Status status = CheckSysfsPreconditions(gpu(), fake_.paths(), 0);
  EXPECT_EQ(status.code(), absl::StatusCode::kFailedPrecondition);
  for (const char* part : {"IOMMU group 14", "domain type DMA-FQ", "through VFIO", "iommu=pt"}) {
    EXPECT_TRUE(absl::StrContains(status.message(), part)) << part << ": " << status;
  }
}

TEST_F(SysfsDeviceTest, AcceptsIommuPassthrough) {
  fake_.AddToIommuGroup(kGpu, "14", "identity");
  EXPECT_TRUE(CheckSysfsPreconditions(gpu(), fake_.paths(), 0).ok());
}

TEST_F(SysfsDeviceTest, RefusesADeviceAKernelDriverOwns) {
  fake_.Bind(kGpu, "amdgpu");
  absl::Status status = CheckSysfsPreconditions(gpu(), fake_.paths(), 0);
  EXPECT_EQ(status.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_TRUE(absl::StrContains(status.message(), "kernel's amdgpu driver")) << status;
  EXPECT_TRUE(absl::StrContains(status.message(), "/driver/unbind")) << status;
}

TEST_F(SysfsDeviceTest, RefusesAMissingDevice) {
  absl::Status status = CheckSysfsPreconditions(*Address::Parse("0000:09:00.0"), fake_.paths(), 0);
  EXPECT_EQ(status.code(), absl::StatusCode::kNotFound);
  EXPECT_TRUE(absl::StrContains(status.message(), "no PCI device 0000:09:00.0")) << status;
}

class OpenedSysfsDeviceTest : public SysfsDeviceTest {
 protected:
  void SetUp() override {
    SysfsDeviceTest::SetUp();
    if (::geteuid() != 0) GTEST_SKIP() << "the sysfs backend opens only as root (refusal tested above)";
    auto device = Open(std::string("sysfs:") + kGpu, OpenOptions{fake_.paths()});
    ASSERT_TRUE(device.ok()) << device.status();
    device_ = std::move(*device);
  }
  std::unique_ptr<Device> device_;
};

TEST_F(OpenedSysfsDeviceTest, ConfigSpaceThroughTheConfigFile) {
  EXPECT_EQ(device_->backend(), "sysfs");
  EXPECT_EQ(device_->name(), "sysfs:0000:03:00.0");
  EXPECT_EQ(*device_->ReadConfig16(PCI_VENDOR_ID), 0x1002);
  EXPECT_EQ(*device_->ReadConfig16(PCI_DEVICE_ID), 0x744c);
  ASSERT_TRUE(device_->SetBusMaster(true).ok());
  auto config = base::ReadFile(Attribute("config"));
  ASSERT_TRUE(config.ok());
  EXPECT_EQ(static_cast<uint8_t>((*config)[PCI_COMMAND]) & PCI_COMMAND_MASTER, PCI_COMMAND_MASTER);
  auto beyond = device_->ReadConfig32(4094);
  EXPECT_EQ(beyond.status().code(), absl::StatusCode::kOutOfRange);
}

TEST_F(OpenedSysfsDeviceTest, BarsFromTheResourceFile) {
  auto bar0 = device_->GetBarInfo(0);
  ASSERT_TRUE(bar0.ok());
  EXPECT_EQ(bar0->size, kBar0Size);
  EXPECT_TRUE(bar0->is_64bit && bar0->prefetchable);
  EXPECT_FALSE(device_->GetBarInfo(1)->present());
  EXPECT_TRUE(device_->GetBarInfo(4)->is_io);
  EXPECT_EQ(device_->GetBarInfo(6).status().code(), absl::StatusCode::kInvalidArgument);
}

TEST_F(OpenedSysfsDeviceTest, MmioMapsTheResourceFile) {
  auto regs = device_->MapMmio(5);
  ASSERT_TRUE(regs.ok()) << regs.status();
  EXPECT_EQ(regs->size(), kBar5Size);
  EXPECT_EQ(regs->Read32(0x100), 0x12345678u);
  regs->Write32(0x200, 0xcafef00d);
  auto file = base::ReadFile(Attribute("resource5"));
  ASSERT_TRUE(file.ok());
  uint32_t written;
  std::memcpy(&written, file->data() + 0x200, 4);
  EXPECT_EQ(written, 0xcafef00du);  // a shared mapping: the write reached the file
  EXPECT_FALSE(device_->MapMmio(1).ok());
  auto io = device_->MapMmio(4);
  ASSERT_FALSE(io.ok());
  EXPECT_TRUE(absl::StrContains(io.status().message(), "I/O-port BAR")) << io.status();
}

TEST_F(OpenedSysfsDeviceTest, MemoryPrefersTheWriteCombinedFile) {
  auto vram = device_->MapMemory(0);
  ASSERT_TRUE(vram.ok()) << vram.status();
  EXPECT_EQ(vram->size(), kBar0Size);
  EXPECT_EQ((*vram)[8], 0x77);  // resource0_wc, not resource0 (which holds 0x11 there)
  auto regs = device_->MapMmio(0);
  ASSERT_TRUE(regs.ok());
  EXPECT_EQ(regs->Read32(8), 0x11u);
}

// The resource file MapMemory maps, shared as a descriptor (a debugger attached through the debug endpoint maps it).
TEST_F(OpenedSysfsDeviceTest, ShareMemoryHandsOutTheMappedResourceFile) {
  auto shared = device_->ShareMemory(0);
  ASSERT_TRUE(shared.ok()) << shared.status();
  EXPECT_EQ(shared->offset, 0u);
  EXPECT_EQ(shared->size, kBar0Size);
  uint8_t byte = 0;
  ASSERT_EQ(::pread(shared->fd, &byte, 1, 8), 1);
  EXPECT_EQ(byte, 0x77);  // resource0_wc, the file MapMemory maps
  std::vector<uint8_t> out(8);
  EXPECT_EQ(device_->ReadDmaMemory(0x1000, out).code(), absl::StatusCode::kNotFound);  // no DMA memory yet
}

TEST_F(OpenedSysfsDeviceTest, ResetWritesTheAttribute) {
  ASSERT_TRUE(device_->ResetFunction().ok());
  EXPECT_EQ(*base::ReadFile(Attribute("reset")), "1");
  std::remove(Attribute("reset").c_str());
  absl::Status status = device_->ResetFunction();
  EXPECT_EQ(status.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_TRUE(absl::StrContains(status.message(), "no reset method")) << status;
}

TEST_F(OpenedSysfsDeviceTest, InterruptsAreUnimplementedWithAnExplanation) {
  auto fds = device_->EnableInterrupts(1);
  ASSERT_FALSE(fds.ok());
  EXPECT_EQ(fds.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_TRUE(absl::StrContains(fds.status().message(), "poll")) << fds.status();
  EXPECT_TRUE(absl::StrContains(fds.status().message(), "VFIO")) << fds.status();
  EXPECT_TRUE(device_->DisableInterrupts().ok());
}

// Hugepages depend on the machine: with none reserved the error must say how to reserve them; with some, every
// page must get a physical address (or, without CAP_SYS_ADMIN, the explanation for the zero PFNs).
TEST_F(OpenedSysfsDeviceTest, DmaMemoryComesFromHugepagesWithPhysicalAddresses) {
  auto real = Open(std::string("sysfs:") + kGpu, OpenOptions{SystemPaths{fake_.paths().sys, "/dev", "/proc"}});
  ASSERT_TRUE(real.ok()) << real.status();
  ASSERT_TRUE((*real)->SetDmaMaskBits(64).ok());
  auto buffer = (*real)->AllocDma(4096);
  if (!buffer.ok()) {
    const auto code = buffer.status().code();
    EXPECT_TRUE(code == absl::StatusCode::kResourceExhausted || code == absl::StatusCode::kPermissionDenied)
        << buffer.status();
    EXPECT_TRUE(absl::StrContains(buffer.status().message(), "nr_hugepages") ||
                absl::StrContains(buffer.status().message(), "CAP_SYS_ADMIN"))
        << buffer.status();
    std::cout << "no hugepage DMA here (the explanation was checked): " << buffer.status().message() << "\n";
    return;
  }
  std::cout << "hugepage DMA memory at physical address 0x" << std::hex << (*buffer)->device_address() << std::dec
            << "\n";
  EXPECT_EQ((*buffer)->size(), kHugePageSize);
  EXPECT_NE((*buffer)->device_address(), 0u);
  EXPECT_TRUE((*buffer)->contiguous());  // one hugepage is physically contiguous
  // A debugger reads it by physical address (what the GPU's page tables hold for it), and nothing past it.
  for (size_t i = 0; i < 4096; ++i) (*buffer)->cpu()[i] = static_cast<uint8_t>(i * 5);
  std::vector<uint8_t> out(64);
  ASSERT_TRUE((*real)->ReadDmaMemory((*buffer)->device_address(100), out).ok());
  for (size_t i = 0; i < out.size(); ++i) EXPECT_EQ(out[i], static_cast<uint8_t>((100 + i) * 5)) << i;
  EXPECT_EQ((*real)->ReadDmaMemory((*buffer)->device_address() + kHugePageSize - 8, out).code(),
            absl::StatusCode::kNotFound);
  const uint64_t freed = (*buffer)->device_address();
  buffer->reset();
  EXPECT_EQ((*real)->ReadDmaMemory(freed, out).code(), absl::StatusCode::kNotFound);
}

}  // namespace
}  // namespace pci
