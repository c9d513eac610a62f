// Physical addresses of this process's pages, from /proc/self/pagemap: what a device sees as bus addresses when
// no IOMMU translates its DMA (the sysfs backend).
//
// Each virtual page has one 64-bit entry; bit 63 says the page is present and bits 0-54 hold its page frame
// number (Linux kernel, Documentation/admin-guide/mm/pagemap.rst). Since Linux 4.2 the PFN reads as zero without
// CAP_SYS_ADMIN, which is explained rather than returned as address 0.
#ifndef BAREGPU_PCI_PAGEMAP_H_
#define BAREGPU_PCI_PAGEMAP_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"

namespace pci {

inline constexpr uint64_t kPagemapPresent = uint64_t{1} << 63;
inline constexpr uint64_t kPagemapPfnMask = (uint64_t{1} << 55) - 1;

// The physical address of the byte at `vaddr`, from the pagemap file at `pagemap_path` (4 KiB pages).
absl::StatusOr<uint64_t> PhysicalAddress(const std::string& pagemap_path, uint64_t vaddr);

// Decodes one entry read for `vaddr`; `pagemap_path` names the file in errors.
absl::StatusOr<uint64_t> DecodePagemapEntry(uint64_t entry, uint64_t vaddr, const std::string& pagemap_path);

}  // namespace pci

#endif  // BAREGPU_PCI_PAGEMAP_H_
