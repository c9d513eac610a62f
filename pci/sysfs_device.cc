#include "pci/sysfs_device.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <memory>
#include <span>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/fd.h"
#include "base/file.h"
#include "base/mutex.h"
#include "base/status_macros.h"
#include "pci/dma_registry.h"
#include "pci/host_memory.h"
#include "pci/pagemap.h"
#include "pci/sysfs_tree.h"
#include "pci/vfio_diagnostics.h"

namespace pci {
namespace {

// Host memory on hugepages with the physical address of every 4 KiB page. Nothing to unmap from the device:
// without an IOMMU the device reaches all memory anyway, so the driver must stop DMA before freeing.
class PhysicalBuffer : public DmaBuffer {
 public:
  // Each hugepage is physically contiguous; they go into `registry` one by one, for a debugger's reads.
  PhysicalBuffer(HostMemory memory, std::vector<uint64_t> pages, std::shared_ptr<DmaRegistry> registry)
      : DmaBuffer(std::move(memory), std::move(pages)), registry_(std::move(registry)) {
    for (size_t offset = 0; offset < size(); offset += kHugePageSize) {
      registry_->Add(device_address(offset),
                     std::span<const uint8_t>(cpu() + offset, std::min<size_t>(kHugePageSize, size() - offset)));
    }
  }
  ~PhysicalBuffer() override {
    for (size_t offset = 0; offset < size(); offset += kHugePageSize) registry_->Remove(device_address(offset));
  }

 private:
  std::shared_ptr<DmaRegistry> registry_;
};

struct Mapping {
  void* host = nullptr;
  uint64_t size = 0;
};

class SysfsDevice : public Device {
 public:
  SysfsDevice(const Address& address, const SystemPaths& paths)
      : Device(absl::StrCat("sysfs:", address.ToString())),
        address_(address),
        function_(paths, address),
        paths_(paths) {}
  ~SysfsDevice() override;
  absl::Status Init();

  absl::string_view backend() const override { return "sysfs"; }
  absl::Status ReadConfig(uint32_t offset, std::span<uint8_t> data) override;
  absl::Status WriteConfig(uint32_t offset, std::span<const uint8_t> data) override;
  absl::StatusOr<BarInfo> GetBarInfo(int bar) override;
  absl::StatusOr<Mmio> MapMmio(int bar) override;
  absl::StatusOr<std::span<uint8_t>> MapMemory(int bar) override;
  using Device::AllocDma;
  absl::StatusOr<std::unique_ptr<DmaBuffer>> AllocDma(size_t size, const DmaOptions& options) override;
  // The resource file MapMemory maps (whoever holds the descriptor maps the same BAR), and this process's DMA memory.
  absl::StatusOr<SharedMemory> ShareMemory(int bar) override;
  absl::Status ReadDmaMemory(uint64_t address, std::span<uint8_t> out) override {
    return dma_->Read(name(), address, out);
  }
  absl::Status ResetFunction() override;
  absl::StatusOr<std::vector<int>> EnableInterrupts(int count) override;
  absl::Status DisableInterrupts() override { return absl::OkStatus(); }

 private:
  absl::Status CheckConfigRange(uint32_t offset, size_t size, absl::string_view what) const;
  // Whether MapMemory maps resourceN_wc rather than resourceN.
  bool HasWriteCombinedFile(int bar) const;
  // Maps resourceN (or resourceN_wc) once; `wc` selects the write-combined file.
  absl::StatusOr<Mapping> Map(int bar, bool wc);

  Address address_;
  SysfsPciFunction function_;
  SystemPaths paths_;
  base::ScopedFd config_;
  uint32_t config_size_ = 0;
  std::array<BarInfo, kBarCount> bars_{};
  std::optional<int> numa_node_;
  base::Mutex mu_;
  std::array<std::array<Mapping, 2>, kBarCount> maps_ ABSL_GUARDED_BY(mu_){};        // [bar][wc]
  std::array<std::array<base::ScopedFd, 2>, kBarCount> files_ ABSL_GUARDED_BY(mu_);  // the mapped resource files
  std::shared_ptr<DmaRegistry> dma_ = std::make_shared<DmaRegistry>();
};

absl::Status SysfsDevice::Init() {
  const std::string path = function_.Attribute("config");
  config_.Reset(::open(path.c_str(), O_RDWR | O_CLOEXEC));
  if (!config_.valid()) return base::ErrnoError(errno, absl::StrCat("open ", path));
  struct stat st;
  if (::fstat(config_.get(), &st) != 0) return base::ErrnoError(errno, absl::StrCat("stat ", path));
  // sysfs sizes `config` to what the kernel can reach: 256 bytes, or 4096 with extended space.
  config_size_ = static_cast<uint32_t>(std::min<off_t>(st.st_size, kConfigSpaceSize));
  if (config_size_ < 64) {
    return absl::FailedPreconditionError(
        absl::StrFormat("%s is %d bytes; a PCI configuration header needs 64", path, st.st_size));
  }
  BAREGPU_ASSIGN_OR_RETURN(std::vector<BarInfo> bars, function_.Bars());
  for (int i = 0; i < kBarCount; ++i) bars_[i].index = i;
  for (const BarInfo& bar : bars) bars_[bar.index] = bar;
  if (NumaNodeCount() > 1) numa_node_ = function_.NumaNode();
  return absl::OkStatus();
}

SysfsDevice::~SysfsDevice() {
  base::MutexLock lock(&mu_);
  for (auto& pair : maps_) {
    for (Mapping& m : pair) {
      if (m.host != nullptr) ::munmap(m.host, m.size);
    }
  }
}

absl::Status SysfsDevice::CheckConfigRange(uint32_t offset, size_t size, absl::string_view what) const {
  if (offset > config_size_ || size > config_size_ - offset) {
    return absl::OutOfRangeError(absl::StrFormat("%s: config %s of %d bytes at %#x is outside the %#x-byte space",
                                                 name(), what, size, offset, config_size_));
  }
  return absl::OkStatus();
}

absl::Status SysfsDevice::ReadConfig(uint32_t offset, std::span<uint8_t> data) {
  BAREGPU_RETURN_IF_ERROR(CheckConfigRange(offset, data.size(), "read"));
  const ssize_t n = ::pread(config_.get(), data.data(), data.size(), offset);
  if (n < 0) return base::ErrnoError(errno, absl::StrFormat("%s: config read at %#x", name(), offset));
  if (static_cast<size_t>(n) != data.size()) {
    return absl::DataLossError(
        absl::StrFormat("%s: config read at %#x returned %d of %d bytes", name(), offset, n, data.size()));
  }
  return absl::OkStatus();
}

absl::Status SysfsDevice::WriteConfig(uint32_t offset, std::span<const uint8_t> data) {
  BAREGPU_RETURN_IF_ERROR(CheckConfigRange(offset, data.size(), "write"));
  const ssize_t n = ::pwrite(config_.get(), data.data(), data.size(), offset);
  if (n < 0) return base::ErrnoError(errno, absl::StrFormat("%s: config write at %#x", name(), offset));
  if (static_cast<size_t>(n) != data.size()) {
    return absl::DataLossError(
        absl::StrFormat("%s: config write at %#x took %d of %d bytes", name(), offset, n, data.size()));
  }
  return absl::OkStatus();
}

absl::StatusOr<BarInfo> SysfsDevice::GetBarInfo(int bar) {
  if (bar < 0 || bar >= kBarCount) {
    return absl::InvalidArgumentError(absl::StrFormat("%s: BAR %d does not exist (0..5)", name(), bar));
  }
  return bars_[bar];
}

absl::StatusOr<Mapping> SysfsDevice::Map(int bar, bool wc) {
  BAREGPU_ASSIGN_OR_RETURN(BarInfo info, GetBarInfo(bar));
  if (!info.present()) return absl::NotFoundError(absl::StrFormat("%s: BAR %d is not implemented", name(), bar));
  if (info.is_io) {
    return absl::FailedPreconditionError(
        absl::StrFormat("%s: BAR %d is an I/O-port BAR, which sysfs cannot mmap", name(), bar));
  }
  base::MutexLock lock(&mu_);
  Mapping& m = maps_[bar][wc ? 1 : 0];
  if (m.host != nullptr) return m;
  const std::string path = function_.Attribute(absl::StrFormat("resource%d%s", bar, wc ? "_wc" : ""));
  // O_SYNC: the kernel maps resource files uncached either way; it keeps the intent explicit for readers.
  base::ScopedFd fd(::open(path.c_str(), O_RDWR | O_SYNC | O_CLOEXEC));
  if (!fd.valid()) return base::ErrnoError(errno, absl::StrCat("open ", path));
  void* host = ::mmap(nullptr, info.size, PROT_READ | PROT_WRITE, MAP_SHARED, fd.get(), 0);
  if (host == MAP_FAILED) return base::ErrnoError(errno, absl::StrFormat("mmap of %#x bytes of %s", info.size, path));
  m = Mapping{host, info.size};
  files_[bar][wc ? 1 : 0] = std::move(fd);  // kept for ShareMemory
  return m;
}

absl::StatusOr<Mmio> SysfsDevice::MapMmio(int bar) {
  BAREGPU_ASSIGN_OR_RETURN(Mapping m, Map(bar, /*wc=*/false));
  return Mmio::Direct(m.host, m.size);
}

bool SysfsDevice::HasWriteCombinedFile(int bar) const {
  // The kernel creates resourceN_wc only for prefetchable memory BARs: VRAM, where write-combining pays off.
  return base::PathExists(function_.Attribute(absl::StrFormat("resource%d_wc", bar)));
}

absl::StatusOr<std::span<uint8_t>> SysfsDevice::MapMemory(int bar) {
  BAREGPU_ASSIGN_OR_RETURN(Mapping m, Map(bar, HasWriteCombinedFile(bar)));
  return std::span<uint8_t>(static_cast<uint8_t*>(m.host), m.size);
}

absl::StatusOr<Device::SharedMemory> SysfsDevice::ShareMemory(int bar) {
  const bool wc = HasWriteCombinedFile(bar);  // the file MapMemory maps
  BAREGPU_ASSIGN_OR_RETURN(Mapping m, Map(bar, wc));
  base::MutexLock lock(&mu_);
  return SharedMemory{files_[bar][wc ? 1 : 0].get(), 0, m.size};
}

absl::StatusOr<std::unique_ptr<DmaBuffer>> SysfsDevice::AllocDma(size_t size, const DmaOptions& dma_options) {
  HostMemoryOptions options;
  options.shareable = dma_options.shareable;  // a hugetlbfs memfd: still 2 MiB physically contiguous pages
  options.hugepages = true;                   // physically contiguous 2 MiB at a time, and never moved
  options.locked = true;                      // resident before pagemap is read, and stays where it is
  options.numa_node = numa_node_;
  BAREGPU_ASSIGN_OR_RETURN(HostMemory memory, HostMemory::Allocate(size, options));
  const std::string pagemap = paths_.proc + "/self/pagemap";
  std::vector<uint64_t> pages(memory.size() / kPageSize);
  uint64_t physical = 0;
  for (size_t i = 0; i < pages.size(); ++i) {
    const size_t offset = i * kPageSize;
    if (offset % kHugePageSize == 0) {
      // Fault the page in by writing to it: mlock does, but some runtimes (AddressSanitizer) make mlock a no-op.
      *reinterpret_cast<volatile uint8_t*>(memory.data() + offset) = 0;
      BAREGPU_ASSIGN_OR_RETURN(physical, PhysicalAddress(pagemap, reinterpret_cast<uintptr_t>(memory.data() + offset)));
    }
    pages[i] = physical + offset % kHugePageSize;
    if (pages[i] + kPageSize - 1 > dma_mask()) {
      return absl::ResourceExhaustedError(absl::StrFormat(
          "%s: DMA memory landed at physical address %#x, above the device's DMA mask %#x; the sysfs backend "
          "cannot choose physical addresses: use VFIO, which maps IOVAs below the mask",
          name(), pages[i], dma_mask()));
    }
  }
  return std::make_unique<PhysicalBuffer>(std::move(memory), std::move(pages), dma_);
}

absl::Status SysfsDevice::ResetFunction() {
  const std::string path = function_.Attribute("reset");
  if (!base::PathExists(path)) {
    return absl::FailedPreconditionError(absl::StrFormat(
        "%s: %s does not exist: the kernel knows no reset method for this device (no FLR, PM or bus reset)", name(),
        path));
  }
  return base::WriteFile(path, "1");
}

absl::StatusOr<std::vector<int>> SysfsDevice::EnableInterrupts(int) {
  return absl::UnimplementedError(absl::StrFormat(
      "%s: the sysfs backend cannot deliver interrupts (sysfs exposes no MSI); poll for completion, or open the "
      "device through VFIO (%s without the sysfs: prefix) for MSI/MSI-X on eventfds",
      name(), address_.ToString()));
}

}  // namespace

absl::Status CheckSysfsPreconditions(const Address& address, const SystemPaths& paths, uid_t euid) {
  const std::string bdf = address.ToString();
  SysfsPciFunction function(paths, address);
  if (!function.Exists()) {
    return absl::NotFoundError(
        absl::StrFormat("no PCI device %s (%s does not exist); `baregpu list` shows the GPUs", bdf, function.dir()));
  }
  if (euid != 0) {
    return absl::PermissionDeniedError(absl::StrFormat(
        "sysfs:%s needs root: resource files are root-only and physical addresses come from /proc/self/pagemap; "
        "run as root, or open %s through VFIO, which works for an ordinary user with access to /dev/vfio",
        bdf, bdf));
  }
  BAREGPU_ASSIGN_OR_RETURN(std::optional<std::string> group, function.IommuGroup());
  if (group.has_value()) {
    BAREGPU_ASSIGN_OR_RETURN(std::string type, function.IommuGroupType(*group));
    if (type != "identity") {
      return absl::FailedPreconditionError(absl::StrFormat(
          "sysfs:%s: the IOMMU translates this device's DMA (IOMMU group %s, domain type %s), so physical addresses "
          "are not bus addresses and DMA would miss; open %s through VFIO instead, or put the IOMMU in passthrough "
          "(iommu=pt on the kernel command line)",
          bdf, *group, type, bdf));
    }
  }
  BAREGPU_ASSIGN_OR_RETURN(std::optional<std::string> driver, function.Driver());
  if (driver.has_value() && !DriverKeepsGroupViable(*driver)) {
    return absl::FailedPreconditionError(absl::StrFormat(
        "sysfs:%s is driven by the kernel's %s driver, which would fight over the device; unbind it first (as "
        "root): echo %s > %s/driver/unbind",
        bdf, *driver, bdf, function.dir()));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<Device>> OpenSysfs(const Address& address, const SystemPaths& paths) {
  BAREGPU_RETURN_IF_ERROR(CheckSysfsPreconditions(address, paths, ::geteuid()));
  auto device = std::make_unique<SysfsDevice>(address, paths);
  BAREGPU_RETURN_IF_ERROR(device->Init());
  return std::unique_ptr<Device>(std::move(device));
}

}  // namespace pci
