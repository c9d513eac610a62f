#include "pci/vfio_device.h"

#include <fcntl.h>
#include <linux/pci_regs.h>
#include <linux/vfio.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstring>
#include <span>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/bits.h"
#include "base/fd.h"
#include "base/file.h"
#include "base/mutex.h"
#include "base/status_macros.h"
#include "pci/dma_registry.h"
#include "pci/host_memory.h"
#include "pci/iova_allocator.h"
#include "pci/sysfs_tree.h"
#include "pci/vfio_diagnostics.h"
#include "pci/vfio_info.h"
#include "pci/vfio_region.h"

namespace pci {
namespace {

absl::Status Ioctl(int fd, unsigned long request, void* arg, absl::string_view what) {
  while (::ioctl(fd, request, arg) < 0) {
    if (errno != EINTR) return base::ErrnoError(errno, what);
  }
  return absl::OkStatus();
}

absl::StatusOr<base::ScopedFd> OpenNode(const std::string& node, const Credentials& who) {
  base::ScopedFd fd(::open(node.c_str(), O_RDWR | O_CLOEXEC));
  if (fd.valid()) return fd;
  const int err = errno;
  if (err == EACCES || err == EPERM) {
    BAREGPU_RETURN_IF_ERROR(CheckNodeAccess(node, who));  // explains owner and mode when they are the reason
  }
  if (err == EBUSY) {
    return absl::UnavailableError(absl::StrFormat(
        "open %s: EBUSY: another process (baregpu, QEMU, DPDK) holds this IOMMU group; close it first", node));
  }
  return base::ErrnoError(err, absl::StrCat("open ", node));
}

// The container and group: shared by the device and its DMA buffers, so that a buffer outliving the device can
// still unmap itself. Members close in reverse order: the group leaves the container, then the container goes.
struct IommuContext {
  base::ScopedFd container;
  base::ScopedFd group;
  std::unique_ptr<IovaAllocator> iova;
  DmaRegistry buffers;  // the live DMA buffers by IOVA, for a debugger's reads (Device::ReadDmaMemory)
};

class VfioBuffer : public DmaBuffer {
 public:
  VfioBuffer(HostMemory memory, std::vector<uint64_t> pages, std::shared_ptr<IommuContext> iommu)
      : DmaBuffer(std::move(memory), std::move(pages)), iommu_(std::move(iommu)) {
    iommu_->buffers.Add(device_address(), std::span<const uint8_t>(cpu(), size()));
  }
  ~VfioBuffer() override {
    iommu_->buffers.Remove(device_address());
    vfio_iommu_type1_dma_unmap unmap{};
    unmap.argsz = sizeof(unmap);
    unmap.iova = device_address();
    unmap.size = size();
    // The IOVA is reused only when the IOMMU no longer maps it; a failed unmap leaks the range instead.
    if (::ioctl(iommu_->container.get(), VFIO_IOMMU_UNMAP_DMA, &unmap) == 0) (void)iommu_->iova->Free(unmap.iova);
  }

 private:
  std::shared_ptr<IommuContext> iommu_;
};

// Peer memory (another device's BAR mmap) in the IOMMU domain. Type1 maps VM_PFNMAP areas such as a vfio-pci BAR
// mmap by their PFNs, which is what peer-to-peer DMA through the IOMMU needs.
class VfioPeerMapping : public DmaMapping {
 public:
  VfioPeerMapping(uint64_t iova, uint64_t size, std::shared_ptr<IommuContext> iommu)
      : DmaMapping(iova, size), iommu_(std::move(iommu)) {}
  ~VfioPeerMapping() override {
    vfio_iommu_type1_dma_unmap unmap{};
    unmap.argsz = sizeof(unmap);
    unmap.iova = device_address();
    unmap.size = size();
    if (::ioctl(iommu_->container.get(), VFIO_IOMMU_UNMAP_DMA, &unmap) == 0) (void)iommu_->iova->Free(unmap.iova);
  }

 private:
  std::shared_ptr<IommuContext> iommu_;
};

struct Region {
  vfio_region_info info{};
  std::vector<Range> mmap_areas;  // where mmap is allowed (end inclusive); empty: nowhere
};

class VfioDevice : public Device {
 public:
  static absl::StatusOr<std::unique_ptr<Device>> Open(const Address& address, const SystemPaths& paths);
  ~VfioDevice() override;

  absl::string_view backend() const override { return "vfio"; }
  absl::Status ReadConfig(uint32_t offset, std::span<uint8_t> data) override;
  absl::Status WriteConfig(uint32_t offset, std::span<const uint8_t> data) override;
  absl::StatusOr<BarInfo> GetBarInfo(int bar) override;
  absl::StatusOr<Mmio> MapMmio(int bar) override;
  absl::StatusOr<std::span<uint8_t>> MapMemory(int bar) override;
  using Device::AllocDma;
  absl::StatusOr<std::unique_ptr<DmaBuffer>> AllocDma(size_t size, const DmaOptions& options) override;
  absl::StatusOr<std::unique_ptr<DmaMapping>> MapPeerMemory(std::span<uint8_t> memory) override;
  absl::StatusOr<SharedMemory> ShareMemory(int bar) override;
  absl::Status ReadDmaMemory(uint64_t address, std::span<uint8_t> out) override;
  absl::Status ResetFunction() override;
  absl::StatusOr<std::vector<int>> EnableInterrupts(int count) override;
  absl::Status DisableInterrupts() override;

 private:
  explicit VfioDevice(const Address& address) : Device(address.ToString()) {}
  absl::Status AttachContainer(const VfioTarget& target);
  absl::Status ReadIovaRanges();
  absl::StatusOr<Region> GetRegion(uint32_t index);
  absl::Status CheckBar(int bar) const;
  // mmaps the BAR's mappable areas once; later calls return the same areas.
  absl::StatusOr<const std::vector<MappedArea>*> MapAreas(int bar) ABSL_EXCLUSIVE_LOCKS_REQUIRED(map_mu_);
  absl::Status DisableInterruptsLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(irq_mu_);

  std::shared_ptr<IommuContext> iommu_ = std::make_shared<IommuContext>();
  base::ScopedFd device_;
  vfio_device_info info_{};
  Region config_;
  std::array<Region, kBarCount> bars_;
  std::optional<int> numa_node_;

  base::Mutex map_mu_;
  std::array<std::optional<std::vector<MappedArea>>, kBarCount> mapped_ ABSL_GUARDED_BY(map_mu_);
  std::array<std::unique_ptr<VfioRegionHandler>, kBarCount> handlers_ ABSL_GUARDED_BY(map_mu_);

  base::Mutex irq_mu_;
  int irq_index_ ABSL_GUARDED_BY(irq_mu_) = -1;  // VFIO_PCI_MSI(X)_IRQ_INDEX while enabled
  std::vector<base::ScopedFd> irq_fds_ ABSL_GUARDED_BY(irq_mu_);
};

absl::StatusOr<std::unique_ptr<Device>> VfioDevice::Open(const Address& address, const SystemPaths& paths) {
  BAREGPU_ASSIGN_OR_RETURN(VfioTarget target, CheckVfioPreconditions(address, paths));
  std::unique_ptr<VfioDevice> dev(new VfioDevice(address));
  BAREGPU_RETURN_IF_ERROR(base::Annotate(dev->AttachContainer(target), dev->name()));
  BAREGPU_RETURN_IF_ERROR(base::Annotate(dev->ReadIovaRanges(), dev->name()));

  const std::string bdf = address.ToString();
  const int fd = ::ioctl(dev->iommu_->group.get(), VFIO_GROUP_GET_DEVICE_FD, bdf.c_str());
  if (fd < 0) return base::ErrnoError(errno, absl::StrFormat("%s: VFIO_GROUP_GET_DEVICE_FD", bdf));
  dev->device_.Reset(fd);
  dev->info_.argsz = sizeof(dev->info_);
  BAREGPU_RETURN_IF_ERROR(Ioctl(fd, VFIO_DEVICE_GET_INFO, &dev->info_, bdf + ": VFIO_DEVICE_GET_INFO"));
  if ((dev->info_.flags & VFIO_DEVICE_FLAGS_PCI) == 0 || dev->info_.num_regions <= VFIO_PCI_CONFIG_REGION_INDEX) {
    return absl::FailedPreconditionError(
        absl::StrFormat("%s: VFIO device is not a vfio-pci device (flags %#x, %d regions)", bdf, dev->info_.flags,
                        dev->info_.num_regions));
  }
  BAREGPU_ASSIGN_OR_RETURN(dev->config_, dev->GetRegion(VFIO_PCI_CONFIG_REGION_INDEX));
  for (int i = 0; i < kBarCount; ++i) {
    BAREGPU_ASSIGN_OR_RETURN(dev->bars_[i], dev->GetRegion(VFIO_PCI_BAR0_REGION_INDEX + i));
  }
  if (NumaNodeCount() > 1) dev->numa_node_ = SysfsPciFunction(paths, address).NumaNode();
  return std::unique_ptr<Device>(std::move(dev));
}

absl::Status VfioDevice::AttachContainer(const VfioTarget& target) {
  const Credentials who = Credentials::Current();
  BAREGPU_ASSIGN_OR_RETURN(iommu_->container, OpenNode(target.container_node, who));
  const int container = iommu_->container.get();
  const int version = ::ioctl(container, VFIO_GET_API_VERSION);
  if (version != VFIO_API_VERSION) {
    return absl::FailedPreconditionError(absl::StrFormat("%s speaks VFIO API version %d; baregpu needs %d",
                                                         target.container_node, version, VFIO_API_VERSION));
  }
  int iommu_type = VFIO_TYPE1v2_IOMMU;
  if (::ioctl(container, VFIO_CHECK_EXTENSION, VFIO_TYPE1v2_IOMMU) <= 0) {
    iommu_type = VFIO_TYPE1_IOMMU;
    if (::ioctl(container, VFIO_CHECK_EXTENSION, VFIO_TYPE1_IOMMU) <= 0) {
      return absl::FailedPreconditionError(absl::StrFormat(
          "%s offers no type1 IOMMU: load it with `modprobe vfio_iommu_type1` (as root)", target.container_node));
    }
  }
  BAREGPU_ASSIGN_OR_RETURN(iommu_->group, OpenNode(target.group_node, who));
  vfio_group_status status{};
  status.argsz = sizeof(status);
  BAREGPU_RETURN_IF_ERROR(Ioctl(iommu_->group.get(), VFIO_GROUP_GET_STATUS, &status, "VFIO_GROUP_GET_STATUS"));
  if ((status.flags & VFIO_GROUP_FLAGS_VIABLE) == 0) {
    return absl::FailedPreconditionError(absl::StrFormat(
        "IOMMU group %s is not viable: a device in it is bound to a driver other than vfio-pci (see the devices in "
        "/sys/kernel/iommu_groups/%s/devices and bind each to vfio-pci)",
        target.group, target.group));
  }
  int container_fd = container;
  BAREGPU_RETURN_IF_ERROR(
      Ioctl(iommu_->group.get(), VFIO_GROUP_SET_CONTAINER, &container_fd, "VFIO_GROUP_SET_CONTAINER"));
  return Ioctl(container, VFIO_SET_IOMMU, reinterpret_cast<void*>(static_cast<intptr_t>(iommu_type)), "VFIO_SET_IOMMU");
}

absl::Status VfioDevice::ReadIovaRanges() {
  // First call learns the size with capabilities (argsz grows), the second fetches them.
  std::vector<uint8_t> buffer(sizeof(vfio_iommu_type1_info));
  for (int attempt = 0; attempt < 2; ++attempt) {
    auto* info = reinterpret_cast<vfio_iommu_type1_info*>(buffer.data());
    const uint32_t offered = static_cast<uint32_t>(buffer.size());
    info->argsz = offered;
    BAREGPU_RETURN_IF_ERROR(Ioctl(iommu_->container.get(), VFIO_IOMMU_GET_INFO, info, "VFIO_IOMMU_GET_INFO"));
    if (info->argsz > offered && info->argsz <= (1u << 20)) {
      buffer.assign(info->argsz, 0);
      continue;
    }
    std::vector<Range> ranges;
    if ((info->flags & VFIO_IOMMU_INFO_CAPS) != 0 && info->cap_offset != 0) {
      std::span<const uint8_t> reply(buffer.data(), std::min<size_t>(buffer.size(), info->argsz));
      BAREGPU_ASSIGN_OR_RETURN(
          std::optional<uint32_t> cap,
          FindVfioCapability(reply, info->cap_offset, VFIO_IOMMU_TYPE1_INFO_CAP_IOVA_RANGE, "VFIO_IOMMU_GET_INFO"));
      if (cap.has_value()) {
        BAREGPU_ASSIGN_OR_RETURN(ranges, ParseIovaRanges(reply, *cap));
      }
    }
    iommu_->iova = MakeIovaAllocator(ranges);
    return absl::OkStatus();
  }
  return absl::InternalError("VFIO_IOMMU_GET_INFO kept asking for a larger buffer");
}

absl::StatusOr<Region> VfioDevice::GetRegion(uint32_t index) {
  std::vector<uint8_t> buffer(sizeof(vfio_region_info));
  const std::string what = absl::StrFormat("%s: VFIO_DEVICE_GET_REGION_INFO for region %d", name(), index);
  for (int attempt = 0; attempt < 2; ++attempt) {
    auto* info = reinterpret_cast<vfio_region_info*>(buffer.data());
    const uint32_t offered = static_cast<uint32_t>(buffer.size());
    info->argsz = offered;
    info->index = index;
    BAREGPU_RETURN_IF_ERROR(Ioctl(device_.get(), VFIO_DEVICE_GET_REGION_INFO, info, what));
    if (info->argsz > offered && info->argsz <= (1u << 20)) {
      buffer.assign(info->argsz, 0);
      continue;
    }
    Region region;
    region.info = *info;
    if ((info->flags & VFIO_REGION_INFO_FLAG_MMAP) == 0 || info->size == 0) return region;
    std::optional<uint32_t> sparse;
    std::span<const uint8_t> reply(buffer.data(), std::min<size_t>(buffer.size(), info->argsz));
    if ((info->flags & VFIO_REGION_INFO_FLAG_CAPS) != 0 && info->cap_offset != 0) {
      BAREGPU_ASSIGN_OR_RETURN(sparse,
                               FindVfioCapability(reply, info->cap_offset, VFIO_REGION_INFO_CAP_SPARSE_MMAP, what));
    }
    if (sparse.has_value()) {
      BAREGPU_ASSIGN_OR_RETURN(std::vector<Range> areas, ParseSparseMmapAreas(reply, *sparse));
      for (const Range& a : areas) {
        if (a.end < info->size) region.mmap_areas.push_back(a);  // an area past the region is ignored, not trusted
      }
    } else {
      region.mmap_areas.push_back(Range{0, info->size - 1});
    }
    return region;
  }
  return absl::InternalError(what + " kept asking for a larger buffer");
}

VfioDevice::~VfioDevice() {
  {
    base::MutexLock lock(&irq_mu_);
    (void)DisableInterruptsLocked();
  }
  base::MutexLock lock(&map_mu_);
  for (auto& areas : mapped_) {
    if (!areas.has_value()) continue;
    for (const MappedArea& a : *areas) ::munmap(a.host, a.size);
  }
  device_.Reset();  // before the group and container, which may live on in DMA buffers
}

absl::Status VfioDevice::ReadConfig(uint32_t offset, std::span<uint8_t> data) {
  if (offset > config_.info.size || data.size() > config_.info.size - offset) {
    return absl::OutOfRangeError(absl::StrFormat("%s: config read of %d bytes at %#x is outside the %#x-byte space",
                                                 name(), data.size(), offset, config_.info.size));
  }
  const ssize_t n = ::pread(device_.get(), data.data(), data.size(), static_cast<off_t>(config_.info.offset + offset));
  if (n < 0) return base::ErrnoError(errno, absl::StrFormat("%s: config read at %#x", name(), offset));
  if (static_cast<size_t>(n) != data.size()) {
    return absl::DataLossError(
        absl::StrFormat("%s: config read at %#x returned %d of %d bytes", name(), offset, n, data.size()));
  }
  return absl::OkStatus();
}

absl::Status VfioDevice::WriteConfig(uint32_t offset, std::span<const uint8_t> data) {
  if (offset > config_.info.size || data.size() > config_.info.size - offset) {
    return absl::OutOfRangeError(absl::StrFormat("%s: config write of %d bytes at %#x is outside the %#x-byte space",
                                                 name(), data.size(), offset, config_.info.size));
  }
  const ssize_t n = ::pwrite(device_.get(), data.data(), data.size(), static_cast<off_t>(config_.info.offset + offset));
  if (n < 0) return base::ErrnoError(errno, absl::StrFormat("%s: config write at %#x", name(), offset));
  if (static_cast<size_t>(n) != data.size()) {
    return absl::DataLossError(
        absl::StrFormat("%s: config write at %#x took %d of %d bytes", name(), offset, n, data.size()));
  }
  return absl::OkStatus();
}

absl::Status VfioDevice::CheckBar(int bar) const {
  if (bar < 0 || bar >= kBarCount) {
    return absl::InvalidArgumentError(absl::StrFormat("%s: BAR %d does not exist (0..5)", name(), bar));
  }
  if (bars_[bar].info.size == 0) {
    return absl::NotFoundError(absl::StrFormat("%s: BAR %d is not implemented", name(), bar));
  }
  return absl::OkStatus();
}

absl::StatusOr<BarInfo> VfioDevice::GetBarInfo(int bar) {
  if (bar < 0 || bar >= kBarCount) return CheckBar(bar);
  BarInfo info{bar, bars_[bar].info.size, false, false, false};
  if (!info.present()) return info;
  // vfio-pci keeps the type bits of the BAR register real (drivers/vfio/pci/vfio_pci_config.c).
  BAREGPU_ASSIGN_OR_RETURN(uint32_t reg, ReadConfig32(PCI_BASE_ADDRESS_0 + 4 * bar));
  info.is_io = (reg & PCI_BASE_ADDRESS_SPACE) == PCI_BASE_ADDRESS_SPACE_IO;
  info.is_64bit = !info.is_io && (reg & PCI_BASE_ADDRESS_MEM_TYPE_MASK) == PCI_BASE_ADDRESS_MEM_TYPE_64;
  info.prefetchable = !info.is_io && (reg & PCI_BASE_ADDRESS_MEM_PREFETCH) != 0;
  return info;
}

absl::StatusOr<const std::vector<MappedArea>*> VfioDevice::MapAreas(int bar) {
  if (mapped_[bar].has_value()) return &*mapped_[bar];
  const Region& region = bars_[bar];
  std::vector<MappedArea> areas;
  for (const Range& r : region.mmap_areas) {
    const uint64_t size = r.end - r.start + 1;
    int prot = 0;
    if (region.info.flags & VFIO_REGION_INFO_FLAG_READ) prot |= PROT_READ;
    if (region.info.flags & VFIO_REGION_INFO_FLAG_WRITE) prot |= PROT_WRITE;
    void* host =
        ::mmap(nullptr, size, prot, MAP_SHARED, device_.get(), static_cast<off_t>(region.info.offset + r.start));
    if (host == MAP_FAILED) {
      const int err = errno;
      for (const MappedArea& a : areas) ::munmap(a.host, a.size);
      return base::ErrnoError(err, absl::StrFormat("%s: mmap of BAR %d bytes %#x..%#x", name(), bar, r.start, r.end));
    }
    areas.push_back(MappedArea{r.start, size, static_cast<uint8_t*>(host)});
  }
  mapped_[bar] = std::move(areas);
  return &*mapped_[bar];
}

absl::StatusOr<Mmio> VfioDevice::MapMmio(int bar) {
  BAREGPU_RETURN_IF_ERROR(CheckBar(bar));
  const vfio_region_info& info = bars_[bar].info;
  if ((info.flags & (VFIO_REGION_INFO_FLAG_READ | VFIO_REGION_INFO_FLAG_WRITE)) !=
      (VFIO_REGION_INFO_FLAG_READ | VFIO_REGION_INFO_FLAG_WRITE)) {
    return absl::FailedPreconditionError(
        absl::StrFormat("%s: BAR %d is not readable and writable through VFIO (flags %#x)", name(), bar, info.flags));
  }
  base::MutexLock lock(&map_mu_);
  BAREGPU_ASSIGN_OR_RETURN(const std::vector<MappedArea>* areas, MapAreas(bar));
  if (areas->size() == 1 && areas->front().start == 0 && areas->front().size == info.size) {
    return Mmio::Direct(areas->front().host, info.size);
  }
  if (handlers_[bar] == nullptr)
    handlers_[bar] = std::make_unique<VfioRegionHandler>(device_.get(), info.offset, *areas);
  return Mmio::Trapped(handlers_[bar].get(), info.size);
}

absl::StatusOr<std::span<uint8_t>> VfioDevice::MapMemory(int bar) {
  BAREGPU_RETURN_IF_ERROR(CheckBar(bar));
  const vfio_region_info& info = bars_[bar].info;
  base::MutexLock lock(&map_mu_);
  BAREGPU_ASSIGN_OR_RETURN(const std::vector<MappedArea>* areas, MapAreas(bar));
  if (areas->size() != 1 || areas->front().start != 0 || areas->front().size != info.size) {
    return absl::FailedPreconditionError(absl::StrFormat(
        "%s: vfio-pci allows mmap of only parts of BAR %d (%d areas), so it cannot be used as memory; use MapMmio",
        name(), bar, areas->size()));
  }
  return std::span<uint8_t>(areas->front().host, info.size);
}

// The BAR as the device file's region: another process holding the descriptor maps the same pages (vfio-pci's mmap
// serves any holder of the device fd), which is what a debugger attached through a debug endpoint gets. The whole BAR
// must be mmap-able, as for MapMemory.
absl::StatusOr<Device::SharedMemory> VfioDevice::ShareMemory(int bar) {
  BAREGPU_RETURN_IF_ERROR(CheckBar(bar));
  const vfio_region_info& info = bars_[bar].info;
  const std::vector<Range>& areas = bars_[bar].mmap_areas;
  if (!(info.flags & VFIO_REGION_INFO_FLAG_MMAP) || areas.size() != 1 || areas.front().start != 0 ||
      areas.front().end + 1 != info.size) {
    return absl::FailedPreconditionError(absl::StrFormat(
        "%s: vfio-pci allows mmap of only parts of BAR %d (%d areas), so it cannot be shared as one mapping", name(),
        bar, areas.size()));
  }
  return SharedMemory{device_.get(), info.offset, info.size};
}

absl::Status VfioDevice::ReadDmaMemory(uint64_t address, std::span<uint8_t> out) {
  return iommu_->buffers.Read(name(), address, out);
}

absl::StatusOr<std::unique_ptr<DmaBuffer>> VfioDevice::AllocDma(size_t size, const DmaOptions& dma_options) {
  HostMemoryOptions options;
  options.numa_node = numa_node_;  // VFIO pins the pages itself; no mlock needed
  options.shareable = dma_options.shareable;
  BAREGPU_ASSIGN_OR_RETURN(HostMemory memory, HostMemory::Allocate(size, options));
  // Large buffers get 2 MiB-aligned IOVAs so the IOMMU (and GPU page tables above) can use large pages.
  const uint64_t alignment = memory.size() >= kHugePageSize ? kHugePageSize : kPageSize;
  BAREGPU_ASSIGN_OR_RETURN(uint64_t iova, iommu_->iova->Allocate(memory.size(), alignment, dma_mask()));
  vfio_iommu_type1_dma_map map{};
  map.argsz = sizeof(map);
  map.flags = VFIO_DMA_MAP_FLAG_READ | VFIO_DMA_MAP_FLAG_WRITE;
  map.vaddr = reinterpret_cast<uintptr_t>(memory.data());
  map.iova = iova;
  map.size = memory.size();
  if (::ioctl(iommu_->container.get(), VFIO_IOMMU_MAP_DMA, &map) != 0) {
    const int err = errno;
    (void)iommu_->iova->Free(iova);
    return base::Annotate(MapDmaError(err, map.size, iova), name());
  }
  std::vector<uint64_t> pages(memory.size() / kPageSize);
  for (size_t i = 0; i < pages.size(); ++i) pages[i] = iova + i * kPageSize;
  return std::make_unique<VfioBuffer>(std::move(memory), std::move(pages), iommu_);
}

absl::StatusOr<std::unique_ptr<DmaMapping>> VfioDevice::MapPeerMemory(std::span<uint8_t> memory) {
  if (memory.empty() || reinterpret_cast<uintptr_t>(memory.data()) % kPageSize != 0 || memory.size() % kPageSize != 0) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s: peer memory of %d bytes: DMA mappings take whole pages", name(), memory.size()));
  }
  const uint64_t alignment = memory.size() >= kHugePageSize ? kHugePageSize : kPageSize;
  BAREGPU_ASSIGN_OR_RETURN(uint64_t iova, iommu_->iova->Allocate(memory.size(), alignment, dma_mask()));
  vfio_iommu_type1_dma_map map{};
  map.argsz = sizeof(map);
  map.flags = VFIO_DMA_MAP_FLAG_READ | VFIO_DMA_MAP_FLAG_WRITE;
  map.vaddr = reinterpret_cast<uintptr_t>(memory.data());
  map.iova = iova;
  map.size = memory.size();
  if (::ioctl(iommu_->container.get(), VFIO_IOMMU_MAP_DMA, &map) != 0) {
    const int err = errno;
    (void)iommu_->iova->Free(iova);
    return base::Annotate(MapDmaError(err, map.size, iova), name() + " (peer memory)");
  }
  return std::make_unique<VfioPeerMapping>(iova, memory.size(), iommu_);
}

absl::Status VfioDevice::ResetFunction() {
  if ((info_.flags & VFIO_DEVICE_FLAGS_RESET) == 0) {
    return absl::FailedPreconditionError(absl::StrFormat(
        "%s: vfio-pci has no reset for this device (no FLR or PM reset, and a bus reset would touch other "
        "devices); power-cycle it or use a slot where it is alone on its bus",
        name()));
  }
  return Ioctl(device_.get(), VFIO_DEVICE_RESET, nullptr, name() + ": VFIO_DEVICE_RESET");
}

absl::StatusOr<std::vector<int>> VfioDevice::EnableInterrupts(int count) {
  if (count < 1 || count > 2048) {  // PCI_MSIX_FLAGS_QSIZE allows at most 2048 vectors
    return absl::InvalidArgumentError(absl::StrFormat("%s: %d interrupt vectors requested (1..2048)", name(), count));
  }
  base::MutexLock lock(&irq_mu_);
  BAREGPU_RETURN_IF_ERROR(DisableInterruptsLocked());
  uint32_t offered[2] = {0, 0};
  int chosen = -1;
  const uint32_t kinds[2] = {VFIO_PCI_MSIX_IRQ_INDEX, VFIO_PCI_MSI_IRQ_INDEX};  // MSI-X preferred
  for (int k = 0; k < 2 && chosen < 0; ++k) {
    vfio_irq_info info{};
    info.argsz = sizeof(info);
    info.index = kinds[k];
    BAREGPU_RETURN_IF_ERROR(
        Ioctl(device_.get(), VFIO_DEVICE_GET_IRQ_INFO, &info, name() + ": VFIO_DEVICE_GET_IRQ_INFO"));
    offered[k] = (info.flags & VFIO_IRQ_INFO_EVENTFD) ? info.count : 0;
    if (offered[k] >= static_cast<uint32_t>(count)) chosen = static_cast<int>(kinds[k]);
  }
  if (chosen < 0) {
    return absl::ResourceExhaustedError(
        absl::StrFormat("%s: %d interrupt vectors requested; the device offers %d MSI-X and %d MSI vectors", name(),
                        count, offered[0], offered[1]));
  }
  std::vector<base::ScopedFd> fds;
  std::vector<uint8_t> buffer(sizeof(vfio_irq_set) + sizeof(int32_t) * count);
  auto* set = reinterpret_cast<vfio_irq_set*>(buffer.data());
  set->argsz = static_cast<uint32_t>(buffer.size());
  set->flags = VFIO_IRQ_SET_DATA_EVENTFD | VFIO_IRQ_SET_ACTION_TRIGGER;
  set->index = static_cast<uint32_t>(chosen);
  set->start = 0;
  set->count = static_cast<uint32_t>(count);
  std::vector<int> result;
  for (int i = 0; i < count; ++i) {
    base::ScopedFd fd(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
    if (!fd.valid()) return base::ErrnoError(errno, absl::StrFormat("%s: eventfd for vector %d", name(), i));
    const int32_t raw = fd.get();
    std::memcpy(set->data + sizeof(int32_t) * i, &raw, sizeof(raw));
    result.push_back(raw);
    fds.push_back(std::move(fd));
  }
  BAREGPU_RETURN_IF_ERROR(Ioctl(device_.get(), VFIO_DEVICE_SET_IRQS, set,
                                absl::StrFormat("%s: VFIO_DEVICE_SET_IRQS (%s, %d vectors)", name(),
                                                chosen == VFIO_PCI_MSIX_IRQ_INDEX ? "MSI-X" : "MSI", count)));
  irq_index_ = chosen;
  irq_fds_ = std::move(fds);
  return result;
}

absl::Status VfioDevice::DisableInterrupts() {
  base::MutexLock lock(&irq_mu_);
  return DisableInterruptsLocked();
}

absl::Status VfioDevice::DisableInterruptsLocked() {
  if (irq_index_ < 0) return absl::OkStatus();
  vfio_irq_set set{};
  set.argsz = sizeof(set);
  set.flags = VFIO_IRQ_SET_DATA_NONE | VFIO_IRQ_SET_ACTION_TRIGGER;
  set.index = static_cast<uint32_t>(irq_index_);
  set.count = 0;  // count 0 with DATA_NONE tears down every vector of the index
  BAREGPU_RETURN_IF_ERROR(
      Ioctl(device_.get(), VFIO_DEVICE_SET_IRQS, &set, name() + ": VFIO_DEVICE_SET_IRQS (disable)"));
  irq_index_ = -1;
  irq_fds_.clear();
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::unique_ptr<Device>> OpenVfio(const Address& address, const SystemPaths& paths) {
  return VfioDevice::Open(address, paths);
}

}  // namespace pci
