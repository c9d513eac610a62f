#include "pci/enumerate.h"

#include <hwloc.h>

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "pci/host_memory.h"
#include "pci/sysfs_tree.h"

namespace pci {
namespace {

class Topology {
 public:
  ~Topology() {
    if (topology_ != nullptr) hwloc_topology_destroy(topology_);
  }
  absl::Status Load() {
    if (hwloc_topology_init(&topology_) != 0) {
      topology_ = nullptr;
      return absl::InternalError("hwloc_topology_init failed");
    }
    // I/O objects are filtered out by default; GPUs are among the "important" PCI devices hwloc keeps.
    if (hwloc_topology_set_io_types_filter(topology_, HWLOC_TYPE_FILTER_KEEP_IMPORTANT) != 0) {
      return absl::InternalError("hwloc_topology_set_io_types_filter failed");
    }
    if (hwloc_topology_load(topology_) != 0) return absl::InternalError("hwloc_topology_load failed");
    return absl::OkStatus();
  }
  hwloc_topology_t get() const { return topology_; }

 private:
  hwloc_topology_t topology_ = nullptr;
};

std::string ObjectName(hwloc_obj_t obj) {
  const char* vendor = hwloc_obj_get_info_by_name(obj, "PCIVendor");
  const char* device = hwloc_obj_get_info_by_name(obj, "PCIDevice");
  if (vendor != nullptr && device != nullptr) return absl::StrCat(vendor, " ", device);
  if (device != nullptr) return device;
  return obj->name != nullptr ? obj->name : "";
}

std::optional<int> ObjectNumaNode(hwloc_topology_t topology, hwloc_obj_t obj) {
  if (hwloc_get_nbobjs_by_type(topology, HWLOC_OBJ_NUMANODE) <= 1) return std::nullopt;
  hwloc_obj_t ancestor = hwloc_get_non_io_ancestor_obj(topology, obj);
  // Meaningful only when the device hangs below exactly one node; the machine object spans them all.
  if (ancestor == nullptr || ancestor->nodeset == nullptr || hwloc_bitmap_weight(ancestor->nodeset) != 1) {
    return std::nullopt;
  }
  return hwloc_bitmap_first(ancestor->nodeset);
}

}  // namespace

absl::StatusOr<std::vector<PciFunctionInfo>> ScanPciFunctions() {
  Topology topology;
  BAREGPU_RETURN_IF_ERROR(base::Annotate(topology.Load(), "enumerating PCI devices through hwloc"));
  std::vector<PciFunctionInfo> functions;
  for (hwloc_obj_t obj = hwloc_get_next_pcidev(topology.get(), nullptr); obj != nullptr;
       obj = hwloc_get_next_pcidev(topology.get(), obj)) {
    const auto& pci = obj->attr->pcidev;
    PciFunctionInfo f;
    f.address = Address{pci.domain, pci.bus, pci.dev, pci.func};
    f.vendor_id = pci.vendor_id;
    f.device_id = pci.device_id;
    f.class_id = pci.class_id;
    f.name = ObjectName(obj);
    f.numa_node = ObjectNumaNode(topology.get(), obj);
    f.link_gbytes_per_s = pci.linkspeed;
    functions.push_back(std::move(f));
  }
  return functions;
}

std::vector<GpuInfo> SelectGpus(const std::vector<PciFunctionInfo>& functions) {
  std::vector<GpuInfo> gpus;
  for (const PciFunctionInfo& f : functions) {
    if (f.vendor_id != kVendorAmd && f.vendor_id != kVendorNvidia) continue;
    if ((f.class_id >> 8) != kPciBaseClassDisplay) continue;  // skips the GPU's audio and USB functions
    GpuInfo gpu;
    gpu.address = f.address;
    gpu.vendor_id = f.vendor_id;
    gpu.device_id = f.device_id;
    gpu.class_code = uint32_t{f.class_id} << 8;
    gpu.name = f.name;
    gpu.numa_node = f.numa_node;
    gpu.link_gbytes_per_s = f.link_gbytes_per_s;
    gpus.push_back(std::move(gpu));
  }
  std::sort(gpus.begin(), gpus.end(), [](const GpuInfo& a, const GpuInfo& b) { return a.address < b.address; });
  return gpus;
}

absl::Status CompleteFromSysfs(GpuInfo& gpu, const SystemPaths& paths) {
  SysfsPciFunction function(paths, gpu.address);
  if (!function.Exists()) return absl::OkStatus();
  if (auto class_code = function.ClassCode(); class_code.ok()) gpu.class_code = *class_code;
  BAREGPU_ASSIGN_OR_RETURN(gpu.driver, function.Driver());
  BAREGPU_ASSIGN_OR_RETURN(gpu.iommu_group, function.IommuGroup());
  BAREGPU_ASSIGN_OR_RETURN(gpu.bars, function.Bars());
  gpu.link_speed = function.LinkSpeed();
  gpu.link_width = function.LinkWidth();
  if (!gpu.numa_node.has_value() && NumaNodeCount() > 1) gpu.numa_node = function.NumaNode();
  return absl::OkStatus();
}

absl::StatusOr<std::vector<GpuInfo>> EnumerateGpus(const SystemPaths& paths) {
  BAREGPU_ASSIGN_OR_RETURN(std::vector<PciFunctionInfo> functions, ScanPciFunctions());
  std::vector<GpuInfo> gpus = SelectGpus(functions);
  for (GpuInfo& gpu : gpus) BAREGPU_RETURN_IF_ERROR(CompleteFromSysfs(gpu, paths));
  return gpus;
}

}  // namespace pci
