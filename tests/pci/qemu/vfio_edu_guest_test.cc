// Runs inside a QEMU guest (tests/pci/qemu/run_vfio_edu_test.sh boots it): pci::VfioDevice against the real Linux
// vfio-pci driver, a real IOMMU (QEMU's intel-iommu) and QEMU's edu device. The guest's init runs this binary at
// three moments: before vfio-pci is loaded (NotLoaded), with vfio-pci loaded but edu bound to no driver
// (NotBound), and with edu bound to vfio-pci (everything else). BAREGPU_EDU_ADDRESS names the device.
#include <linux/pci_regs.h>
#include <sys/mman.h>

#include <cstdlib>
#include <cstring>
#include <vector>

#include "absl/strings/match.h"
#include "gtest/gtest.h"
#include "pci/open.h"
#include "pci/sim/edu_device.h"
#include "serve/attached_device.h"
#include "serve/debug_endpoint.h"
#include "tests/pci/edu_driver.h"

namespace pci {
namespace {

namespace edu = ::pci::sim::edu;
using ::pci::testing::EduDriver;
using ::pci::testing::WaitForInterrupt;

// QEMU 7.2's edu stops the whole machine on a transfer reaching the last byte of its buffer.
constexpr uint32_t kTransfer = 2048;

std::string EduName() {
  const char* address = std::getenv("BAREGPU_EDU_ADDRESS");
  return std::string("vfio:") + (address ? address : "0000:00:03.0");
}

TEST(VfioNotLoaded, OpenExplainsHowToLoadVfioPci) {
  auto device = Open(EduName());
  ASSERT_FALSE(device.ok());
  std::cout << "diagnostic: " << device.status().message() << "\n";
  EXPECT_TRUE(absl::StrContains(device.status().message(), "modprobe vfio-pci")) << device.status();
}

TEST(VfioNotBound, OpenExplainsHowToBindTheDevice) {
  auto device = Open(EduName());
  ASSERT_FALSE(device.ok());
  std::cout << "diagnostic: " << device.status().message() << "\n";
  EXPECT_TRUE(absl::StrContains(device.status().message(), "bound to no driver")) << device.status();
  EXPECT_TRUE(absl::StrContains(device.status().message(), "vfio-pci")) << device.status();
}

class VfioEduTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto device = Open(EduName());
    ASSERT_TRUE(device.ok()) << device.status();
    device_ = std::move(*device);
    auto driver = EduDriver::Attach(*device_);
    ASSERT_TRUE(driver.ok()) << driver.status();
    edu_.emplace(*driver);
  }
  std::unique_ptr<Device> device_;
  std::optional<EduDriver> edu_;
};

TEST_F(VfioEduTest, ConfigSpaceIdentifiesTheEduDevice) {
  EXPECT_EQ(device_->backend(), "vfio");
  EXPECT_EQ(*device_->ReadConfig16(PCI_VENDOR_ID), edu::kVendorId);
  EXPECT_EQ(*device_->ReadConfig16(PCI_DEVICE_ID), edu::kDeviceId);
  auto bar = device_->GetBarInfo(0);
  ASSERT_TRUE(bar.ok()) << bar.status();
  EXPECT_EQ(bar->size, edu::kBarSize);
  auto msi = device_->FindCapability(PCI_CAP_ID_MSI);
  ASSERT_TRUE(msi.ok());
  EXPECT_TRUE(msi->has_value());
}

TEST_F(VfioEduTest, Bar0RegistersIdentityLivenessFactorial) {
  EXPECT_EQ(edu_->Identification(), edu::kIdentificationValue);
  EXPECT_EQ(edu_->Liveness(0x12345678), ~0x12345678u);
  EXPECT_EQ(edu_->Factorial(5), 120u);
}

TEST_F(VfioEduTest, DmaRoundTripBelowTheDmaMask) {
  auto source = device_->AllocDma(edu::kDmaBufferSize);
  auto destination = device_->AllocDma(edu::kDmaBufferSize);
  ASSERT_TRUE(source.ok()) << source.status();
  ASSERT_TRUE(destination.ok()) << destination.status();
  EXPECT_LE((*source)->device_address(edu::kDmaBufferSize - 1), device_->dma_mask());
  EXPECT_LE((*destination)->device_address(edu::kDmaBufferSize - 1), device_->dma_mask());
  for (size_t i = 0; i < edu::kDmaBufferSize; ++i) (*source)->cpu()[i] = static_cast<uint8_t>(i * 13 + 1);
  ASSERT_TRUE(edu_->DmaToDevice((*source)->device_address(), 0, kTransfer).ok());
  ASSERT_TRUE(edu_->DmaFromDevice(0, (*destination)->device_address(), kTransfer).ok());
  EXPECT_EQ(std::memcmp((*source)->cpu(), (*destination)->cpu(), kTransfer), 0);
  EXPECT_EQ((*destination)->cpu()[kTransfer], 0);
}

TEST_F(VfioEduTest, MsiArrivesOnTheEventfd) {
  auto fds = device_->EnableInterrupts(1);
  ASSERT_TRUE(fds.ok()) << fds.status();
  edu_->RaiseInterrupt(0x42);
  auto count = WaitForInterrupt((*fds)[0], absl::Seconds(20));
  ASSERT_TRUE(count.ok()) << count.status();
  EXPECT_GE(*count, 1u);
  EXPECT_EQ(edu_->InterruptStatus(), 0x42u);
  edu_->AckInterrupt(0x42);
  EXPECT_EQ(edu_->InterruptStatus(), 0u);
  // And the DMA-done interrupt.
  auto buffer = device_->AllocDma(edu::kDmaBufferSize);
  ASSERT_TRUE(buffer.ok());
  ASSERT_TRUE(edu_->DmaToDevice((*buffer)->device_address(), 0, 64, /*interrupt=*/true).ok());
  ASSERT_TRUE(WaitForInterrupt((*fds)[0], absl::Seconds(20)).ok());
  EXPECT_EQ(edu_->InterruptStatus() & edu::kDmaIrqValue, edu::kDmaIrqValue);
  edu_->AckInterrupt(edu::kDmaIrqValue);
  EXPECT_TRUE(device_->DisableInterrupts().ok());
}

TEST_F(VfioEduTest, DmaToAnUnmappedIovaIsRefusedByTheIommu) {
  auto buffer = device_->AllocDma(edu::kDmaBufferSize);
  ASSERT_TRUE(buffer.ok());
  std::memset((*buffer)->cpu(), 0x5a, edu::kDmaBufferSize);
  ASSERT_TRUE(edu_->DmaToDevice((*buffer)->device_address(), 0, kTransfer).ok());
  // Change the device's copy, then send it to an IOVA that was never mapped (well above anything allocated but
  // below the 28-bit mask): the IOMMU must drop it, and our buffer must keep its old contents.
  std::memset((*buffer)->cpu(), 0x00, edu::kDmaBufferSize);
  const uint64_t unmapped = device_->dma_mask() & ~uint64_t{0xfffff};
  ASSERT_TRUE(edu_->DmaFromDevice(0, unmapped, kTransfer).ok());
  for (size_t i = 0; i < edu::kDmaBufferSize; ++i) ASSERT_EQ((*buffer)->cpu()[i], 0) << i;
  std::cout << "unmapped IOVA used: 0x" << std::hex << unmapped << std::dec << "\n";
}

// What a debugger attached to this process's debug endpoint gets from a real VFIO device: the BAR as the device
// file's region (mapped by whoever holds the descriptor; edu's BAR0 registers read through that mapping), and the
// bytes of this process's DMA buffers by IOVA, directly and over the endpoint's DMA_READ.
TEST_F(VfioEduTest, ADebuggerReadsTheBarMappingAndDmaMemory) {
  auto shared = device_->ShareMemory(0);
  ASSERT_TRUE(shared.ok()) << shared.status();
  EXPECT_EQ(shared->size, edu::kBarSize);
  void* view = ::mmap(nullptr, shared->size, PROT_READ, MAP_SHARED, shared->fd, static_cast<off_t>(shared->offset));
  ASSERT_NE(view, MAP_FAILED);
  EXPECT_EQ(*static_cast<volatile const uint32_t*>(view), edu::kIdentificationValue);
  ::munmap(view, shared->size);

  auto buffer = device_->AllocDma(2 * 4096);
  ASSERT_TRUE(buffer.ok()) << buffer.status();
  for (size_t i = 0; i < (*buffer)->size(); ++i) (*buffer)->cpu()[i] = static_cast<uint8_t>(i * 7 + 3);
  std::vector<uint8_t> bytes(100);
  const uint64_t iova = (*buffer)->device_address(4090);  // across the page boundary
  ASSERT_TRUE(device_->ReadDmaMemory(iova, bytes).ok());
  for (size_t i = 0; i < bytes.size(); ++i) EXPECT_EQ(bytes[i], static_cast<uint8_t>((4090 + i) * 7 + 3)) << i;
  EXPECT_EQ(device_->ReadDmaMemory((*buffer)->device_address((*buffer)->size() - 10), bytes).code(),
            absl::StatusCode::kNotFound);  // runs past the buffer's end

  char pattern[] = "/tmp/baregpu-runtime-XXXXXX";
  ASSERT_NE(::mkdtemp(pattern), nullptr);
  ::setenv(serve::kRuntimeDirEnv, pattern, 1);
  auto endpoint = serve::DebugEndpoint::Start(*device_);
  ASSERT_TRUE(endpoint.ok()) << endpoint.status();
  auto client = serve::AttachedDevice::Connect(device_->name(), (*endpoint)->path());
  ASSERT_TRUE(client.ok()) << client.status();
  std::vector<uint8_t> remote(100);
  ASSERT_TRUE((*client)->ReadDmaMemory(iova, remote).ok());
  EXPECT_EQ(remote, bytes);
  EXPECT_EQ(*(*client)->ReadConfig16(PCI_VENDOR_ID), edu::kVendorId);

  const uint64_t freed = (*buffer)->device_address();
  buffer->reset();
  EXPECT_EQ(device_->ReadDmaMemory(freed, bytes).code(), absl::StatusCode::kNotFound);
  EXPECT_FALSE((*client)->ReadDmaMemory(freed, remote).ok());
}

TEST_F(VfioEduTest, CloseAndReopen) {
  device_.reset();
  auto again = Open(EduName());
  ASSERT_TRUE(again.ok()) << again.status();
  auto driver = EduDriver::Attach(**again);
  ASSERT_TRUE(driver.ok()) << driver.status();
  EXPECT_EQ(driver->Identification(), edu::kIdentificationValue);
}

}  // namespace
}  // namespace pci
