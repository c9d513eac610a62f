#include "pci/vfio_region.h"

#include <fcntl.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstring>

#include "base/fd.h"
#include "gtest/gtest.h"

namespace pci {
namespace {

constexpr uint64_t kRegionOffset = 0x10000;  // where the region starts in the "device fd"
constexpr uint64_t kRegionSize = 0x3000;

// A regular file stands in for the device fd: pread/pwrite at the region's offset behave as vfio-pci's do. The
// mapped area is a private mapping, so writes through it stay out of the file and show which path was taken.
class VfioRegionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/baregpu-vfio-region-XXXXXX";
    fd_.Reset(::mkstemp(pattern));
    ASSERT_TRUE(fd_.valid());
    ::unlink(pattern);
    ASSERT_EQ(::ftruncate(fd_.get(), kRegionOffset + kRegionSize), 0);
    PutFile(0x0, 0x11111111);
    PutFile(0x1000, 0x22222222);
    PutFile(0x2ffc, 0x33333333);
    void* host = ::mmap(nullptr, 0x1000, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd_.get(), kRegionOffset + 0x1000);
    ASSERT_NE(host, MAP_FAILED);
    mapping_ = static_cast<uint8_t*>(host);
    handler_.emplace(fd_.get(), kRegionOffset, std::vector<MappedArea>{{0x1000, 0x1000, mapping_}});
  }
  void TearDown() override {
    if (mapping_ != nullptr) ::munmap(mapping_, 0x1000);
  }
  void PutFile(uint64_t offset, uint32_t value) {
    ASSERT_EQ(::pwrite(fd_.get(), &value, 4, kRegionOffset + offset), 4);
  }
  uint32_t FromFile(uint64_t offset) {
    uint32_t value = 0;
    EXPECT_EQ(::pread(fd_.get(), &value, 4, kRegionOffset + offset), 4);
    return value;
  }

  base::ScopedFd fd_;
  uint8_t* mapping_ = nullptr;
  std::optional<VfioRegionHandler> handler_;
};

TEST_F(VfioRegionTest, ReadsBothPaths) {
  Mmio window = Mmio::Trapped(&*handler_, kRegionSize);
  EXPECT_EQ(window.Read32(0x0), 0x11111111u);     // pread
  EXPECT_EQ(window.Read32(0x1000), 0x22222222u);  // the mapping
  EXPECT_EQ(window.Read32(0x2ffc), 0x33333333u);  // pread, last dword
  EXPECT_EQ(window.Read64(0x2ff8), uint64_t{0x33333333} << 32);
}

TEST_F(VfioRegionTest, WritesGoThroughTheMappingInsideAndPwriteOutside) {
  Mmio window = Mmio::Trapped(&*handler_, kRegionSize);
  window.Write32(0x1004, 0xabcdef01);
  EXPECT_EQ(window.Read32(0x1004), 0xabcdef01u);
  EXPECT_EQ(FromFile(0x1004), 0u);  // a private mapping: the write never reached the fd
  window.Write32(0x0ffc, 0x12345678);
  EXPECT_EQ(FromFile(0x0ffc), 0x12345678u);
  window.Write64(0x2000, 0x1122334455667788);
  EXPECT_EQ(FromFile(0x2000), 0x55667788u);
  EXPECT_EQ(FromFile(0x2004), 0x11223344u);
}

TEST_F(VfioRegionTest, AnAccessStraddlingTheMappedAreaUsesPread) {
  PutFile(0x1ffc, 0x0badf00d);
  std::memset(mapping_ + 0xff8, 0xee, 8);  // the mapped copy differs from the file
  EXPECT_EQ(handler_->Read64(0x1ffc) & 0xffffffff, 0x0badf00du);
}

TEST_F(VfioRegionTest, FailedReadsReturnAllOnes) {
  VfioRegionHandler closed(-1, kRegionOffset, {});
  EXPECT_EQ(closed.Read32(0), 0xffffffffu);
  EXPECT_EQ(closed.Read64(0), ~uint64_t{0});
  closed.Write32(0, 1);  // no crash, nothing to write to
}

}  // namespace
}  // namespace pci
