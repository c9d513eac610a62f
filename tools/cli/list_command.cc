// baregpu list: the GPUs on this machine and the virtual devices this build carries.
#include <ostream>

#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "base/status_macros.h"
#include "pci/enumerate.h"
#include "pci/virtual_registry.h"
#include "tools/cli/command.h"
#include "tools/cli/json.h"

namespace cli {
namespace {

std::string BarSummary(const std::vector<pci::BarInfo>& bars) {
  std::vector<std::string> parts;
  for (const pci::BarInfo& bar : bars) {
    const uint64_t mib = bar.size >> 20;
    parts.push_back(mib > 0 ? absl::StrFormat("BAR%d %d MiB", bar.index, mib)
                            : absl::StrFormat("BAR%d %d KiB", bar.index, bar.size >> 10));
  }
  return absl::StrJoin(parts, ", ");
}

absl::Status RunList(Invocation& inv) {
  if (!inv.positional().empty()) return inv.UsageError("'baregpu list' takes no arguments");
  BAREGPU_ASSIGN_OR_RETURN(std::vector<pci::GpuInfo> gpus, pci::EnumerateGpus());
  std::vector<const pci::VirtualDeviceKind*> kinds = pci::VirtualDeviceKinds();

  if (inv.json()) {
    Json devices = Json::array();
    for (const pci::GpuInfo& gpu : gpus) {
      Json bars = Json::array();
      for (const pci::BarInfo& bar : gpu.bars) {
        bars.push_back({{"index", bar.index},
                        {"size", bar.size},
                        {"64bit", bar.is_64bit},
                        {"prefetchable", bar.prefetchable},
                        {"io", bar.is_io}});
      }
      devices.push_back({{"name", gpu.address.ToString()},
                         {"kind", "pci"},
                         {"vendor_id", Hex(gpu.vendor_id, 4)},
                         {"device_id", Hex(gpu.device_id, 4)},
                         {"class", Hex(gpu.class_code, 6)},
                         {"description", gpu.name},
                         {"numa_node", gpu.numa_node ? Json(*gpu.numa_node) : Json(nullptr)},
                         {"link_speed", gpu.link_speed},
                         {"link_width", gpu.link_width ? Json(*gpu.link_width) : Json(nullptr)},
                         {"link_gbytes_per_s", gpu.link_gbytes_per_s > 0 ? Json(gpu.link_gbytes_per_s) : Json(nullptr)},
                         {"driver", gpu.driver ? Json(*gpu.driver) : Json(nullptr)},
                         {"iommu_group", gpu.iommu_group ? Json(*gpu.iommu_group) : Json(nullptr)},
                         {"bars", bars}});
    }
    for (const pci::VirtualDeviceKind* kind : kinds) {
      devices.push_back({{"name", absl::StrCat(pci::kVirtualPrefix, kind->kind)},
                         {"kind", "virtual"},
                         {"vendor_id", Hex(kind->vendor_id, 4)},
                         {"device_id", Hex(kind->device_id, 4)},
                         {"description", kind->description}});
    }
    PrintJson(inv.out(), Json{{"devices", devices}});
    return absl::OkStatus();
  }

  std::ostream& out = inv.out();
  if (gpus.empty()) {
    out << "No AMD or NVIDIA GPU found on this machine.\n";
  } else {
    out << "GPUs:\n";
    for (const pci::GpuInfo& gpu : gpus) {
      out << absl::StrFormat("  %s  %04x:%04x  %s\n", gpu.address.ToString(), gpu.vendor_id, gpu.device_id,
                             gpu.name.empty() ? "(unknown model)" : gpu.name);
      out << absl::StrFormat("      driver %s, IOMMU group %s%s%s\n", gpu.driver.value_or("none"),
                             gpu.iommu_group.value_or("none (IOMMU off)"),
                             gpu.link_speed.empty() ? "" : absl::StrCat(", link ", gpu.link_speed),
                             gpu.link_width ? absl::StrFormat(" x%d", *gpu.link_width) : "");
      if (gpu.numa_node) out << absl::StrFormat("      NUMA node %d\n", *gpu.numa_node);
      if (!gpu.bars.empty()) out << "      " << BarSummary(gpu.bars) << "\n";
    }
  }
  out << "\nVirtual devices (open as sim:KIND or sim:KIND:INSTANCE):\n";
  for (const pci::VirtualDeviceKind* kind : kinds) {
    out << absl::StrFormat("  %-14s %04x:%04x  %s\n", absl::StrCat(pci::kVirtualPrefix, kind->kind), kind->vendor_id,
                           kind->device_id, kind->description);
  }
  return absl::OkStatus();
}

BAREGPU_REGISTER_COMMAND(kListRegistered,
                         Command{
                             "list",
                             "list the GPUs on this machine and the virtual devices",
                             "baregpu list [--json]",
                             "Real GPUs are found through hwloc (PCI display and 3D controllers of AMD and NVIDIA)\n"
                             "and completed from sysfs: bound driver, IOMMU group, BAR sizes.",
                             {{"json", false, "print a JSON document"}},
                             RunList});

}  // namespace
}  // namespace cli
