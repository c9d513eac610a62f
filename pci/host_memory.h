// Page-aligned, zero-filled host memory for DMA: anonymous mappings, optionally on hugepages, locked, and bound
// to a NUMA node. The memory half of a DmaBuffer; the backend supplies the device addresses.
#ifndef BAREGPU_PCI_HOST_MEMORY_H_
#define BAREGPU_PCI_HOST_MEMORY_H_

#include <cstddef>
#include <cstdint>
#include <optional>

#include "absl/status/statusor.h"

namespace pci {

inline constexpr size_t kPageSize = 4096;
inline constexpr size_t kHugePageSize = size_t{2} << 20;

struct HostMemoryOptions {
  bool hugepages = false;        // MAP_HUGETLB with 2 MiB pages (physically contiguous per page)
  bool locked = false;           // mlock: the pages stay resident (pinned) while mapped
  std::optional<int> numa_node;  // bind to this node (hwloc) when the machine has more than one
  // Backed by a memfd (MAP_SHARED) instead of an anonymous mapping, so another process can map the same pages
  // (fd()): `baregpu serve` hands it to a client over a Unix socket (SCM_RIGHTS).
  bool shareable = false;
};

class HostMemory {
 public:
  HostMemory() = default;
  // Rounds `size` up to the page (or hugepage) size. Fails for size 0.
  static absl::StatusOr<HostMemory> Allocate(size_t size, const HostMemoryOptions& options = {});

  HostMemory(HostMemory&& other) noexcept;
  HostMemory& operator=(HostMemory&& other) noexcept;
  HostMemory(const HostMemory&) = delete;
  HostMemory& operator=(const HostMemory&) = delete;
  ~HostMemory();

  uint8_t* data() const { return data_; }
  size_t size() const { return size_; }
  size_t page_size() const { return page_size_; }
  // The memfd behind a shareable allocation (owned by this object; -1 otherwise).
  int fd() const { return fd_; }

 private:
  void Release();
  uint8_t* data_ = nullptr;
  size_t size_ = 0;
  size_t page_size_ = kPageSize;
  int fd_ = -1;
};

// Number of NUMA nodes hwloc sees on this machine (1 on a machine without NUMA).
int NumaNodeCount();

}  // namespace pci

#endif  // BAREGPU_PCI_HOST_MEMORY_H_
