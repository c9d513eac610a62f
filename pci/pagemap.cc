#include "pci/pagemap.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/fd.h"
#include "base/file.h"
#include "pci/host_memory.h"

namespace pci {

absl::StatusOr<uint64_t> DecodePagemapEntry(uint64_t entry, uint64_t vaddr, const std::string& pagemap_path) {
  if ((entry & kPagemapPresent) == 0) {
    return absl::FailedPreconditionError(absl::StrFormat(
        "%s: page at %#x is not present in memory (entry %#x); DMA memory must be locked before its physical "
        "address is read",
        pagemap_path, vaddr, entry));
  }
  const uint64_t pfn = entry & kPagemapPfnMask;
  if (pfn == 0) {
    return absl::PermissionDeniedError(absl::StrFormat(
        "%s: the page frame number of %#x reads as zero: the kernel hides physical addresses from processes "
        "without CAP_SYS_ADMIN; run as root outside a user namespace (a container needs --cap-add SYS_ADMIN), or "
        "use the VFIO backend, which needs no physical addresses",
        pagemap_path, vaddr));
  }
  return pfn * kPageSize + vaddr % kPageSize;
}

absl::StatusOr<uint64_t> PhysicalAddress(const std::string& pagemap_path, uint64_t vaddr) {
  base::ScopedFd fd(::open(pagemap_path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd.valid()) return base::ErrnoError(errno, absl::StrCat("open ", pagemap_path));
  uint64_t entry = 0;
  const off_t offset = static_cast<off_t>(vaddr / kPageSize * sizeof(entry));
  const ssize_t n = ::pread(fd.get(), &entry, sizeof(entry), offset);
  if (n < 0) return base::ErrnoError(errno, absl::StrFormat("read %s at offset %#x", pagemap_path, offset));
  if (n != sizeof(entry)) {
    return absl::OutOfRangeError(absl::StrFormat("%s: no entry for address %#x (read %d of 8 bytes at offset %#x)",
                                                 pagemap_path, vaddr, n, offset));
  }
  return DecodePagemapEntry(entry, vaddr, pagemap_path);
}

}  // namespace pci
