#include "pci/host_memory.h"

#include <hwloc.h>
#include <linux/memfd.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/bits.h"
#include "base/fd.h"
#include "base/file.h"

namespace pci {
namespace {

struct Topology {
  hwloc_topology_t topology = nullptr;
  Topology() {
    if (hwloc_topology_init(&topology) != 0 || hwloc_topology_load(topology) != 0) topology = nullptr;
  }
  ~Topology() {
    if (topology != nullptr) hwloc_topology_destroy(topology);
  }
};

const Topology& MachineTopology() {
  static const Topology* topology = new Topology();
  return *topology;
}

absl::Status BindToNode(void* data, size_t size, int node) {
  hwloc_topology_t topology = MachineTopology().topology;
  if (topology == nullptr) return absl::OkStatus();
  hwloc_obj_t obj = hwloc_get_numanode_obj_by_os_index(topology, static_cast<unsigned>(node));
  if (obj == nullptr) {
    return absl::InvalidArgumentError(absl::StrFormat("NUMA node %d does not exist on this machine", node));
  }
  if (hwloc_set_area_membind(topology, data, size, obj->nodeset, HWLOC_MEMBIND_BIND,
                             HWLOC_MEMBIND_BYNODESET | HWLOC_MEMBIND_MIGRATE) != 0) {
    return base::ErrnoError(errno, absl::StrFormat("binding %d bytes of DMA memory to NUMA node %d", size, node));
  }
  return absl::OkStatus();
}

}  // namespace

int NumaNodeCount() {
  hwloc_topology_t topology = MachineTopology().topology;
  if (topology == nullptr) return 1;
  int count = hwloc_get_nbobjs_by_type(topology, HWLOC_OBJ_NUMANODE);
  return count > 0 ? count : 1;
}

absl::StatusOr<HostMemory> HostMemory::Allocate(size_t size, const HostMemoryOptions& options) {
  if (size == 0) return absl::InvalidArgumentError("DMA memory of size 0 requested");
  const size_t page = options.hugepages ? kHugePageSize : kPageSize;
  if (size > (size_t{1} << 46)) {
    return absl::InvalidArgumentError(absl::StrFormat("DMA memory of %d bytes requested; the limit is 64 TiB", size));
  }
  const size_t rounded = base::AlignUp(size, page);
  base::ScopedFd memfd;
  if (options.shareable) {
    const unsigned memfd_flags = MFD_CLOEXEC | (options.hugepages ? MFD_HUGETLB | MFD_HUGE_2MB : 0u);
    memfd = base::ScopedFd(::memfd_create("baregpu-dma", memfd_flags));
    if (!memfd.valid()) return base::ErrnoError(errno, "memfd_create for shareable DMA memory");
    if (::ftruncate(memfd.get(), static_cast<off_t>(rounded)) != 0) {
      return base::ErrnoError(errno, absl::StrFormat("sizing shareable DMA memory to %d bytes", rounded));
    }
  }
  int flags = options.shareable ? MAP_SHARED : MAP_PRIVATE | MAP_ANONYMOUS;
  // Hugepages are reserved at mmap time (no MAP_NORESERVE), so a shortage fails here with ENOMEM instead of later
  // as a SIGBUS or a misleading mlock failure.
  if (options.hugepages && !options.shareable) {
    flags |= MAP_HUGETLB | (21 << MAP_HUGE_SHIFT);  // 2^21: 2 MiB pages
  } else if (!options.hugepages) {
    flags |= MAP_NORESERVE;
  }
  void* data = ::mmap(nullptr, rounded, PROT_READ | PROT_WRITE, flags, memfd.valid() ? memfd.get() : -1, 0);
  if (data == MAP_FAILED) {
    int err = errno;
    std::string what =
        absl::StrFormat("mmap of %d bytes of DMA memory%s", rounded, options.hugepages ? " on 2 MiB hugepages" : "");
    absl::Status status = base::ErrnoError(err, what);
    if (options.hugepages && err == ENOMEM) {
      return absl::ResourceExhaustedError(
          absl::StrCat(status.message(), "; reserve hugepages first: echo 512 > /proc/sys/vm/nr_hugepages"));
    }
    return status;
  }
  HostMemory memory;
  memory.data_ = static_cast<uint8_t*>(data);
  memory.size_ = rounded;
  memory.page_size_ = page;
  memory.fd_ = memfd.Release();
  if (options.numa_node.has_value() && NumaNodeCount() > 1) {
    if (absl::Status s = BindToNode(data, rounded, *options.numa_node); !s.ok()) return s;
  }
  if (options.locked && ::mlock(data, rounded) != 0) {
    int err = errno;
    absl::Status status = base::ErrnoError(err, absl::StrFormat("mlock of %d bytes of DMA memory", rounded));
    if (err == ENOMEM || err == EPERM) {
      return absl::ResourceExhaustedError(
          absl::StrCat(status.message(),
                       "; RLIMIT_MEMLOCK is too low: raise it with `ulimit -l unlimited` (or memlock in "
                       "/etc/security/limits.conf) for the user running baregpu"));
    }
    return status;
  }
  return memory;
}

HostMemory::HostMemory(HostMemory&& other) noexcept
    : data_(std::exchange(other.data_, nullptr)),
      size_(std::exchange(other.size_, 0)),
      page_size_(other.page_size_),
      fd_(std::exchange(other.fd_, -1)) {}

HostMemory& HostMemory::operator=(HostMemory&& other) noexcept {
  if (this != &other) {
    Release();
    data_ = std::exchange(other.data_, nullptr);
    size_ = std::exchange(other.size_, 0);
    page_size_ = other.page_size_;
    fd_ = std::exchange(other.fd_, -1);
  }
  return *this;
}

HostMemory::~HostMemory() { Release(); }

void HostMemory::Release() {
  if (data_ != nullptr) ::munmap(data_, size_);
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
  data_ = nullptr;
  size_ = 0;
}

}  // namespace pci
