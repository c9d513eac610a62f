// The virtual edu device, driven only through pci::Open and pci::Device, as a driver would.
#include "pci/sim/edu_device.h"

#include <linux/pci_regs.h>
#include <sys/mman.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include "gtest/gtest.h"
#include "pci/open.h"
#include "tests/pci/edu_driver.h"

namespace pci::sim {
namespace {

using ::pci::testing::EduDriver;
using ::pci::testing::WaitForInterrupt;

// QEMU's edu refuses transfers that reach the last byte of its 4 KiB buffer (see EduDevice::RunDma).
constexpr uint32_t kTransfer = 2048;

std::unique_ptr<Device> OpenEdu() {
  auto device = pci::Open("sim:edu");
  EXPECT_TRUE(device.ok()) << device.status();
  return device.ok() ? std::move(*device) : nullptr;
}

TEST(EduDeviceTest, ConfigSpaceHasTheIdentityOfQemusEdu) {
  auto device = OpenEdu();
  EXPECT_EQ(*device->ReadConfig16(PCI_VENDOR_ID), 0x1234);
  EXPECT_EQ(*device->ReadConfig16(PCI_DEVICE_ID), 0x11e8);
  EXPECT_EQ(*device->ReadConfig8(PCI_REVISION_ID), 0x10);
  EXPECT_EQ(*device->ReadConfig16(PCI_CLASS_DEVICE), 0x00ff);
  EXPECT_EQ(device->backend(), "virtual");
  auto msi = device->FindCapability(PCI_CAP_ID_MSI);
  ASSERT_TRUE(msi.ok());
  ASSERT_TRUE(msi->has_value());
  EXPECT_GE(**msi, PCI_STD_HEADER_SIZEOF);
  EXPECT_FALSE(device->FindCapability(PCI_CAP_ID_MSIX)->has_value());
}

TEST(EduDeviceTest, IdentityRegistersAreReadOnly) {
  auto device = OpenEdu();
  ASSERT_TRUE(device->WriteConfig16(PCI_VENDOR_ID, 0xdead).ok());
  EXPECT_EQ(*device->ReadConfig16(PCI_VENDOR_ID), 0x1234);
}

TEST(EduDeviceTest, BarSizingRevealsTheOneMibRegisterBar) {
  auto device = OpenEdu();
  const uint32_t original = *device->ReadConfig32(PCI_BASE_ADDRESS_0);
  EXPECT_EQ(original & PCI_BASE_ADDRESS_SPACE, PCI_BASE_ADDRESS_SPACE_MEMORY);
  ASSERT_TRUE(device->WriteConfig32(PCI_BASE_ADDRESS_0, 0xffffffff).ok());
  const uint32_t sized = *device->ReadConfig32(PCI_BASE_ADDRESS_0);
  const uint32_t size_mask = sized & static_cast<uint32_t>(PCI_BASE_ADDRESS_MEM_MASK);
  EXPECT_EQ(~size_mask + 1, 1u << 20);
  ASSERT_TRUE(device->WriteConfig32(PCI_BASE_ADDRESS_0, original).ok());
  EXPECT_EQ(*device->ReadConfig32(PCI_BASE_ADDRESS_0), original);
  auto info = device->GetBarInfo(0);
  ASSERT_TRUE(info.ok());
  EXPECT_EQ(info->size, 1u << 20);
  EXPECT_FALSE(info->is_64bit);
  EXPECT_FALSE(device->GetBarInfo(1)->present());
  EXPECT_FALSE(device->GetBarInfo(6).ok());
  EXPECT_FALSE(device->MapMmio(1).ok());
  EXPECT_FALSE(device->MapMemory(0).ok());  // a register BAR is not memory
}

TEST(EduDeviceTest, RegistersBehaveAsDocumented) {
  auto device = OpenEdu();
  auto edu = EduDriver::Attach(*device);
  ASSERT_TRUE(edu.ok()) << edu.status();
  EXPECT_EQ(edu->Identification(), 0x010000edu);
  EXPECT_EQ(edu->Liveness(0x12345678), ~0x12345678u);
  EXPECT_EQ(edu->Factorial(5), 120u);
  EXPECT_EQ(edu->Factorial(12), 479001600u);
  EXPECT_EQ(edu->Factorial(13), 1932053504u);  // 13! wraps at 32 bits: 6227020800 mod 2^32
}

TEST(EduDeviceTest, DmaRoundTripThroughTheDeviceBuffer) {
  auto device = OpenEdu();
  auto edu = EduDriver::Attach(*device);
  ASSERT_TRUE(edu.ok());
  auto source = device->AllocDma(4096);
  auto destination = device->AllocDma(4096);
  ASSERT_TRUE(source.ok() && destination.ok());
  for (int i = 0; i < 4096; ++i) (*source)->cpu()[i] = static_cast<uint8_t>(i * 7 + 3);
  // The 28-bit DMA mask is honoured by the allocator.
  EXPECT_LT((*source)->device_address(4095), uint64_t{1} << 28);
  ASSERT_TRUE(edu->DmaToDevice((*source)->device_address(), 0, kTransfer).ok());
  ASSERT_TRUE(edu->DmaFromDevice(0, (*destination)->device_address(), kTransfer).ok());
  EXPECT_EQ(std::memcmp((*source)->cpu(), (*destination)->cpu(), kTransfer), 0);
  EXPECT_EQ((*destination)->cpu()[kTransfer], 0);  // nothing beyond the transfer
  EXPECT_TRUE(static_cast<EduDevice&>(*device).violations().empty());
}

TEST(EduDeviceTest, DmaToAnUnmappedAddressFaultsAndTouchesNoHostMemory) {
  auto device = OpenEdu();
  auto edu = EduDriver::Attach(*device);
  ASSERT_TRUE(edu.ok());
  auto buffer = device->AllocDma(4096);
  ASSERT_TRUE(buffer.ok());
  std::memset((*buffer)->cpu(), 0x5a, 4096);
  auto& model = static_cast<VirtualDevice&>(*device);
  // Fill the device buffer, then aim its write-back one page past the only buffer we own.
  ASSERT_TRUE(edu->DmaToDevice((*buffer)->device_address(), 0, kTransfer).ok());
  const uint64_t unmapped = (*buffer)->device_address() + 4096;
  const uint64_t faults_before = model.dma_space().fault_count();
  ASSERT_TRUE(edu->DmaFromDevice(0, unmapped, kTransfer).ok());  // the device completes; the IOMMU drops the write
  EXPECT_EQ(model.dma_space().fault_count(), faults_before + 1);
  auto fault = model.dma_space().last_fault();
  ASSERT_TRUE(fault.has_value());
  EXPECT_EQ(fault->address, unmapped);
  EXPECT_TRUE(fault->write);
  // A range that straddles the end of the buffer moves nothing at all, not even the mapped half.
  std::memset((*buffer)->cpu(), 0, 4096);
  ASSERT_TRUE(edu->DmaFromDevice(0, (*buffer)->device_address() + 3072, kTransfer).ok());
  EXPECT_EQ(model.dma_space().fault_count(), faults_before + 2);
  for (int i = 0; i < 4096; ++i) ASSERT_EQ((*buffer)->cpu()[i], 0) << i;
}

TEST(EduDeviceTest, FreedBuffersAreNoLongerReachable) {
  auto device = OpenEdu();
  auto edu = EduDriver::Attach(*device);
  ASSERT_TRUE(edu.ok());
  auto buffer = device->AllocDma(4096);
  ASSERT_TRUE(buffer.ok());
  const uint64_t address = (*buffer)->device_address();
  buffer->reset();
  auto& model = static_cast<VirtualDevice&>(*device);
  const uint64_t faults_before = model.dma_space().fault_count();
  ASSERT_TRUE(edu->DmaFromDevice(0, address, 64).ok());
  EXPECT_EQ(model.dma_space().fault_count(), faults_before + 1);
}

TEST(EduDeviceTest, WithoutBusMasteringNoDmaHappens) {
  auto device = OpenEdu();
  auto edu = EduDriver::Attach(*device);
  ASSERT_TRUE(edu.ok());
  auto buffer = device->AllocDma(4096);
  ASSERT_TRUE(buffer.ok());
  ASSERT_TRUE(device->SetBusMaster(false).ok());
  EXPECT_EQ(*device->ReadConfig16(PCI_COMMAND) & PCI_COMMAND_MASTER, 0);
  std::memset((*buffer)->cpu(), 0x11, 4096);
  ASSERT_TRUE(edu->DmaFromDevice(0, (*buffer)->device_address(), kTransfer).ok());
  auto& model = static_cast<VirtualDevice&>(*device);
  ASSERT_TRUE(model.dma_space().last_fault().has_value());
  EXPECT_TRUE(model.dma_space().last_fault()->bus_master_disabled);
  for (int i = 0; i < 4096; ++i) ASSERT_EQ((*buffer)->cpu()[i], 0x11) << i;
}

TEST(EduDeviceTest, InterruptsArriveOnTheEventfdAndAreAcknowledged) {
  auto device = OpenEdu();
  auto edu = EduDriver::Attach(*device);
  ASSERT_TRUE(edu.ok());
  auto fds = device->EnableInterrupts(1);
  ASSERT_TRUE(fds.ok()) << fds.status();
  ASSERT_EQ(fds->size(), 1u);
  EXPECT_FALSE(WaitForInterrupt((*fds)[0], absl::Milliseconds(1)).ok());  // nothing pending yet

  edu->RaiseInterrupt(0x42);
  auto count = WaitForInterrupt((*fds)[0], absl::Seconds(5));
  ASSERT_TRUE(count.ok()) << count.status();
  EXPECT_EQ(*count, 1u);
  EXPECT_EQ(edu->InterruptStatus(), 0x42u);
  edu->AckInterrupt(0x42);
  EXPECT_EQ(edu->InterruptStatus(), 0u);

  // A DMA that asks for it raises interrupt status 0x100 when done.
  auto buffer = device->AllocDma(4096);
  ASSERT_TRUE(buffer.ok());
  ASSERT_TRUE(edu->DmaToDevice((*buffer)->device_address(), 0, 64, /*interrupt=*/true).ok());
  ASSERT_TRUE(WaitForInterrupt((*fds)[0], absl::Seconds(5)).ok());
  EXPECT_EQ(edu->InterruptStatus(), 0x100u);

  EXPECT_FALSE(device->EnableInterrupts(2).ok());  // MSI with a single vector
  EXPECT_FALSE(device->EnableInterrupts(0).ok());
}

TEST(EduDeviceTest, FunctionResetClearsStateAndBusMastering) {
  auto device = OpenEdu();
  auto edu = EduDriver::Attach(*device);
  ASSERT_TRUE(edu.ok());
  edu->Factorial(5);
  ASSERT_TRUE(device->ResetFunction().ok());
  EXPECT_EQ(*device->ReadConfig16(PCI_COMMAND) & PCI_COMMAND_MASTER, 0);
  Mmio bar0 = *device->MapMmio(0);
  EXPECT_EQ(bar0.Read32(edu::kFactorial), 0u);
  EXPECT_EQ(bar0.Read32(edu::kIdentification), edu::kIdentificationValue);
}

TEST(EduDeviceTest, WrongAccessWidthsAndOutOfWindowDmaAreRecordedViolations) {
  auto device = OpenEdu();
  auto edu = EduDriver::Attach(*device);
  ASSERT_TRUE(edu.ok());
  Mmio bar0 = *device->MapMmio(0);
  EXPECT_EQ(bar0.Read64(edu::kIdentification), ~uint64_t{0});
  auto buffer = device->AllocDma(8192);
  ASSERT_TRUE(buffer.ok());
  EXPECT_TRUE(edu->DmaToDevice((*buffer)->device_address(), 0, 8192).ok());  // larger than the 4 KiB buffer
  // As QEMU 7.2 does, a transfer that reaches the buffer's last byte is refused, one byte less is accepted.
  EXPECT_TRUE(edu->DmaToDevice((*buffer)->device_address(), 0, edu::kDmaBufferSize).ok());
  EXPECT_TRUE(edu->DmaToDevice((*buffer)->device_address(), 0, edu::kMaxDmaTransfer).ok());
  auto violations = static_cast<EduDevice&>(*device).violations();
  ASSERT_EQ(violations.size(), 3u);
  EXPECT_NE(violations[0].find("32-bit accesses only"), std::string::npos);
  EXPECT_NE(violations[1].find("outside the buffer"), std::string::npos);
  EXPECT_NE(violations[2].find("outside the buffer"), std::string::npos);
}

TEST(EduDeviceTest, InstancesAreIndependentDevices) {
  auto a = pci::Open("sim:edu:0");
  auto b = pci::Open("sim:edu:1");
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ((*a)->name(), "sim:edu:0");
  Mmio bar_a = *(*a)->MapMmio(0);
  Mmio bar_b = *(*b)->MapMmio(0);
  bar_a.Write32(edu::kLiveness, 1);
  bar_b.Write32(edu::kLiveness, 2);
  EXPECT_EQ(bar_a.Read32(edu::kLiveness), ~1u);
  EXPECT_EQ(bar_b.Read32(edu::kLiveness), ~2u);
}

// A freed buffer's memory goes back to the host at once when no engine thread of the device can still hold a pointer
// into it (pci/sim/dma_space.h; the edu device's DMA copies run inside DmaSpace's lock).
TEST(EduDeviceTest, AFreedDmaBufferGoesBackToTheHost) {
  auto device = OpenEdu();
  auto buffer = device->AllocDma(4096);
  ASSERT_TRUE(buffer.ok());
  void* host = (*buffer)->cpu();
  buffer->reset();
  auto& model = static_cast<VirtualDevice&>(*device);
  EXPECT_EQ(model.dma_space().retired_count(), 0u);
  unsigned char resident = 0;
  EXPECT_NE(::mincore(host, 4096, &resident), 0);
  EXPECT_EQ(errno, ENOMEM);
}

}  // namespace
}  // namespace pci::sim
