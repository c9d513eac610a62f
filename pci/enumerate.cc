#include "pci/enumerate.h"

namespace pci {

absl::StatusOr<std::vector<GpuInfo>> EnumerateGpus(const SystemPaths&) { return std::vector<GpuInfo>{}; }

}  // namespace pci
