// baregpu list: the GPUs on this machine and the virtual devices this build carries.
#include <sys/stat.h>

#include <ostream>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "base/printable.h"
#include "base/status_macros.h"
#include "pci/enumerate.h"
#include "pci/sim/persistent_state.h"
#include "pci/virtual_registry.h"
#include "serve/debug_endpoint.h"
#include "tools/cli/command.h"
#include "tools/cli/json.h"

namespace cli {
namespace {

// An instance found in the state directory: its device name, state, holder and whether that holder serves a debug
// endpoint (serve/debug_endpoint.h).
struct Instance {
  std::string name;  // "sim:navi31:0"; the file base when no registered kind matches it
  pci::sim::StateSummary state;
  bool endpoint = false;
};

std::string DeviceNameOf(const std::string& file_base, const std::vector<const pci::VirtualDeviceKind*>& kinds) {
  // StateFileBase's mapping backwards: "navi31" is sim:navi31, "navi31-0" sim:navi31:0.
  for (const pci::VirtualDeviceKind* kind : kinds) {
    if (file_base == kind->kind) return absl::StrCat(pci::kVirtualPrefix, kind->kind);
    if (absl::StartsWith(file_base, kind->kind + "-")) {
      return absl::StrCat(pci::kVirtualPrefix, kind->kind, ":", file_base.substr(kind->kind.size() + 1));
    }
  }
  return file_base;
}

absl::StatusOr<std::vector<Instance>> Instances(const std::vector<const pci::VirtualDeviceKind*>& kinds) {
  BAREGPU_ASSIGN_OR_RETURN(std::vector<pci::sim::StateSummary> states, pci::sim::ListStates());
  std::vector<Instance> instances;
  for (pci::sim::StateSummary& state : states) {
    Instance instance{DeviceNameOf(state.file_base, kinds), std::move(state), false};
    absl::StatusOr<std::string> path = serve::DebugEndpointPath(instance.name);
    struct stat st;
    instance.endpoint =
        instance.state.holder_alive && path.ok() && ::lstat(path->c_str(), &st) == 0 && S_ISSOCK(st.st_mode);
    instances.push_back(std::move(instance));
  }
  return instances;
}

std::string StateText(const pci::sim::StateSummary& s) {
  if (!s.valid_header) return "state not readable (damaged; the next open discards it)";
  if (s.in_power_transition) return "inside a power transition (the next open completes it)";
  if (!s.open) return "powered, closed cleanly";
  return s.holder_alive ? "powered, held" : absl::StrFormat("powered, left open by process %d (ended)", s.holder_pid);
}

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
  BAREGPU_ASSIGN_OR_RETURN(const std::vector<Instance> instances, Instances(kinds));

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
    Json listed = Json::array();
    for (const Instance& i : instances) {
      listed.push_back({{"name", i.name},
                        {"state_valid", i.state.valid_header},
                        {"open", i.state.open},
                        {"power_transition", i.state.in_power_transition},
                        {"holder_pid", i.state.holder_alive ? Json(i.state.holder_pid) : Json(nullptr)},
                        {"debug_endpoint", i.endpoint}});
    }
    PrintJson(inv.out(), Json{{"devices", devices}, {"instances", listed}});
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
  if (!instances.empty()) {
    out << absl::StrFormat("\nVirtual device instances (state in %s):\n", pci::sim::StateDirectory());
    for (const Instance& i : instances) {
      std::string holder;
      if (i.state.holder_alive) {
        holder = absl::StrFormat("; process %d, %s", i.state.holder_pid,
                                 i.endpoint ? "debug endpoint: `baregpu regs/pt/ih/mem/rings/waves` attach"
                                            : "no debug endpoint (start it with BAREGPU_DEBUG_ENDPOINT=1)");
      }
      out << absl::StrFormat("  %-20s %s%s\n", base::Printable(i.name), StateText(i.state), holder);
    }
  }
  return absl::OkStatus();
}

BAREGPU_REGISTER_COMMAND(kListRegistered,
                         Command{
                             "list",
                             "list the GPUs on this machine, the virtual devices and their instances",
                             "baregpu list [--json]",
                             "Real GPUs are found through hwloc (PCI display and 3D controllers of AMD and NVIDIA)\n"
                             "and completed from sysfs: bound driver, IOMMU group, BAR sizes. Virtual device\n"
                             "instances are the state directory's ($BAREGPU_SIM_DIR): whether each is held, by which\n"
                             "process, and whether that process serves a debug endpoint. JSON: devices[] and\n"
                             "instances[] {name, state_valid, open, power_transition, holder_pid (null when free),\n"
                             "debug_endpoint}.",
                             {{"json", false, "print a JSON document"}},
                             RunList});

}  // namespace
}  // namespace cli
