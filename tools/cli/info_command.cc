// baregpu info DEVICE: what the GPU says it is, from PCI and its IP discovery table, and the firmware it runs (the
// sOS's version as the PSP reports it) and would load (each file a boot takes, with its version); changes nothing
// on it.
#include <linux/pci_regs.h>

#include <ostream>

#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "am/device.h"
#include "am/discovery.h"
#include "am/register_io.h"
#include "am/regs/hw_id_constants.h"
#include "am/regs/mp0.h"
#include "am/regs/register_space.h"
#include "base/status_macros.h"
#include "firmware/container.h"
#include "firmware/store.h"
#include "nv/device.h"
#include "pci/enumerate.h"
#include "pci/open.h"
#include "tools/cli/amdgpu_ids.h"
#include "tools/cli/command.h"
#include "tools/cli/json.h"

namespace cli {
namespace {

namespace gsp = nv::gsp;

std::string Version(const am::IpVersion& v) { return absl::StrFormat("%d.%d.%d", v.major, v.minor, v.revision); }

// The LLVM processor name (clang -mcpu) of a GC IP version: "gfx" then major, minor and stepping, the stepping in
// hex, as amdkfd's gfx_target_version (kfd_device.c: GC 11.0.0 -> 110000) is printed by the ROCm runtime and as
// LLVM's AMDGPUUsage lists processors (gfx1100 = GC 11.0.0, gfx90a = GC 9.0.10).
std::string GfxTarget(const am::IpVersion& gc) { return absl::StrFormat("gfx%d%d%x", gc.major, gc.minor, gc.revision); }

// The firmware side of a device: what runs (the sOS reports its version in C2PMSG_58 once it shows a sign of life
// in C2PMSG_81, as psp_v13_0 reads them) and the files a boot would load from the device's firmware search path.
struct FirmwareFile {
  std::string name;
  std::string path;   // empty when not found
  std::string error;  // why it could not be read or parsed
  uint32_t ucode_version = 0;
};
struct FirmwareState {
  std::optional<uint32_t> sos_version;  // nullopt: the sOS is not running
  std::vector<FirmwareFile> files;
};

absl::StatusOr<FirmwareState> ReadFirmwareState(pci::Device& device, const am::Discovery& discovery) {
  FirmwareState state;
  BAREGPU_ASSIGN_OR_RETURN(pci::Mmio bar5, device.MapMmio(5));
  am::RegisterIo io(bar5, discovery.Bases());
  BAREGPU_ASSIGN_OR_RETURN(auto mp0,
                           (am::regs::IpRegisters<am::regs::Ip::kMp0, am::RegisterIo>::Create(io, discovery.Bases())));
  if (mp0.Read<am::regs::mp0::MP0_SMN_C2PMSG_81>().raw() != 0) {
    state.sos_version = mp0.Read<am::regs::mp0::MP0_SMN_C2PMSG_58>().raw();
  }
  BAREGPU_RETURN_IF_ERROR(mp0.status());
  BAREGPU_ASSIGN_OR_RETURN(std::vector<firmware::RequiredFile> required, am::RequiredFirmware(discovery));
  const firmware::Store store(firmware::DeviceSearchRoots(device.firmware_roots()));
  for (const firmware::RequiredFile& file : required) {
    FirmwareFile entry{file.name};
    absl::StatusOr<firmware::LoadedFile> loaded = store.Load(file.name, file.fallbacks);
    if (!loaded.ok()) {
      entry.error = "not found";
    } else {
      entry.name = loaded->name;
      entry.path = loaded->path;
      absl::StatusOr<firmware::Container> container = firmware::ParseContainer(loaded->path, loaded->data);
      if (container.ok()) {
        entry.ucode_version = container->header.ucode_version;
      } else {
        entry.error = std::string(container.status().message());
      }
    }
    state.files.push_back(std::move(entry));
  }
  return state;
}

// An NVIDIA GPU: what only GSP-RM tells (its static information) needs a boot, so `info` boots it (nv::Device) and
// shuts it down again, and shows the chip, FB, the GSP-RM release, the GPC and TPC masks and the BARs.
absl::Status RunNvInfo(Invocation& inv, std::unique_ptr<pci::Device> pci) {
  std::vector<pci::BarInfo> bars;
  for (int i = 0; i < pci::kBarCount; ++i) {
    BAREGPU_ASSIGN_OR_RETURN(pci::BarInfo bar, pci->GetBarInfo(i));
    if (bar.present()) bars.push_back(bar);
  }
  BAREGPU_ASSIGN_OR_RETURN(const uint16_t device_id, pci->ReadConfig16(PCI_DEVICE_ID));
  BAREGPU_ASSIGN_OR_RETURN(const uint8_t revision, pci->ReadConfig8(PCI_REVISION_ID));
  BAREGPU_ASSIGN_OR_RETURN(std::unique_ptr<nv::Device> device, nv::Device::Open(std::move(pci)));
  if (absl::Status booted = device->Boot(); !booted.ok()) {
    return absl::Status(booted.code(), absl::StrCat("booting GSP-RM for its static information: ", booted.message()));
  }
  const gsp::GspStaticConfigInfo info = device->static_info();
  const std::string firmware = device->gsp_version();
  const std::string name = device->gpu_name();
  const int tpcs = device->tpc_count();
  BAREGPU_RETURN_IF_ERROR(device->Shutdown());
  std::vector<std::pair<int, uint32_t>> tpc_masks;  // the TPC mask of each GPC in gpcMask
  for (int gpc = 0; gpc < static_cast<int>(std::size(info.tpcInfo)); ++gpc) {
    if ((info.gpcInfo.gpcMask >> gpc & 1) != 0) tpc_masks.emplace_back(gpc, info.tpcInfo[gpc].tpcMask);
  }
  if (inv.json()) {
    SetJsonSchema("baregpu.info.nv/1");
    Json gpcs = Json::array();
    for (const auto& [gpc, mask] : tpc_masks) gpcs.push_back({{"gpc", gpc}, {"tpc_mask", Hex(mask)}});
    Json bar_list = Json::array();
    for (const pci::BarInfo& bar : bars) {
      bar_list.push_back(
          {{"index", bar.index}, {"size", bar.size}, {"64bit", bar.is_64bit}, {"prefetchable", bar.prefetchable}});
    }
    PrintJson(inv.out(), Json{{"device", device->pci().name()},
                              {"backend", std::string(device->pci().backend())},
                              {"vendor_id", Hex(0x10de, 4)},
                              {"device_id", Hex(device_id, 4)},
                              {"revision", Hex(revision, 2)},
                              {"chip", device->chip()},
                              {"name", name},
                              {"vram_size", device->fb_size()},
                              {"gsp_rm", firmware},
                              {"gpc_mask", Hex(info.gpcInfo.gpcMask)},
                              {"gpcs", gpcs},
                              {"tpcs", tpcs},
                              {"bars", bar_list}});
    return absl::OkStatus();
  }
  std::ostream& out = inv.out();
  out << absl::StrFormat("%s: %s (%s, PCI 10de:%04x rev %02x, %s)\n", device->pci().name(), name, device->chip(),
                         device_id, revision, device->pci().backend());
  out << absl::StrFormat("VRAM: %d MiB\nGSP-RM: %s\n", device->fb_size() >> 20, firmware);
  out << absl::StrFormat("GPCs: %d (mask 0x%x), TPCs: %d\n", tpc_masks.size(), info.gpcInfo.gpcMask, tpcs);
  for (const auto& [gpc, mask] : tpc_masks) out << absl::StrFormat("  GPC %2d: TPC mask 0x%x\n", gpc, mask);
  for (const pci::BarInfo& bar : bars) {
    out << absl::StrFormat("BAR%d: %d MiB%s%s\n", bar.index, bar.size >> 20, bar.is_64bit ? ", 64-bit" : "",
                           bar.prefetchable ? ", prefetchable" : "");
  }
  return absl::OkStatus();
}

absl::Status RunInfo(Invocation& inv) {
  if (inv.positional().size() != 1) return inv.UsageError("'baregpu info' takes one device (e.g. sim:navi31)");
  BAREGPU_ASSIGN_OR_RETURN(std::unique_ptr<pci::Device> device, pci::Open(inv.positional()[0]));
  BAREGPU_ASSIGN_OR_RETURN(uint16_t vendor, device->ReadConfig16(PCI_VENDOR_ID));
  BAREGPU_ASSIGN_OR_RETURN(uint16_t device_id, device->ReadConfig16(PCI_DEVICE_ID));
  BAREGPU_ASSIGN_OR_RETURN(uint8_t revision, device->ReadConfig8(PCI_REVISION_ID));
  if (nv::Device::IsNvidia(*device)) return RunNvInfo(inv, std::move(device));
  if (vendor != pci::kVendorAmd) {
    return absl::FailedPreconditionError(absl::StrFormat("%s is %04x:%04x, not an AMD GPU (vendor %04x)",
                                                         device->name(), vendor, device_id, pci::kVendorAmd));
  }
  std::vector<pci::BarInfo> bars;
  for (int i = 0; i < pci::kBarCount; ++i) {
    BAREGPU_ASSIGN_OR_RETURN(pci::BarInfo bar, device->GetBarInfo(i));
    if (bar.present()) bars.push_back(bar);
  }
  BAREGPU_ASSIGN_OR_RETURN(am::DeviceDiscovery found, am::ReadDiscovery(*device));
  const am::Discovery& discovery = found.discovery;
  BAREGPU_ASSIGN_OR_RETURN(const FirmwareState firmware_state, ReadFirmwareState(*device, discovery));
  const std::optional<ProductName> product = LookupProductName(device_id, revision);
  const std::optional<am::IpVersion> gc = discovery.VersionOf(am::regs::discovery::GC_HWID);

  if (inv.json()) {
    Json j{
        {"device", device->name()},
        {"backend", std::string(device->backend())},
        {"vendor_id", Hex(vendor, 4)},
        {"device_id", Hex(device_id, 4)},
        {"revision", Hex(revision, 2)},
        {"product", product ? Json(product->name) : Json(nullptr)},
        {"product_source", product ? Json(product->source) : Json(nullptr)},
        {"gfx_target", gc ? Json(GfxTarget(*gc)) : Json(nullptr)},
        {"vram_size", found.vram_size},
        {"discovery",
         {{"address", Hex(found.table_address)},
          {"through_mm_index", found.through_mm_index},
          {"binary_version", absl::StrFormat("%d.%d", discovery.binary_version_major, discovery.binary_version_minor)},
          {"ip_table_version", discovery.ip_table_version}}}};
    Json bar_list = Json::array();
    for (const pci::BarInfo& bar : bars) {
      bar_list.push_back(
          {{"index", bar.index}, {"size", bar.size}, {"64bit", bar.is_64bit}, {"prefetchable", bar.prefetchable}});
    }
    j["bars"] = bar_list;
    Json ips = Json::array();
    for (const am::DiscoveredIp& ip : discovery.ips) {
      Json segments = Json::array();
      for (uint64_t base : ip.segments) segments.push_back(Hex(base));
      ips.push_back({{"block", am::HwIdName(ip.hw_id)},
                     {"hw_id", ip.hw_id},
                     {"instance", ip.instance},
                     {"version", Version(ip.version)},
                     {"bases", segments}});
    }
    j["ips"] = ips;
    if (discovery.gc) {
      const am::GcInfo& gc = *discovery.gc;
      j["gc_info"] = {{"version", absl::StrFormat("%d.%d", gc.version_major, gc.version_minor)},
                      {"shader_engines", gc.num_se},
                      {"shader_arrays_per_se", gc.num_sa_per_se},
                      {"cus_per_sa", gc.num_cu_per_sa},
                      {"compute_units", gc.total_cus()},
                      {"rbs_per_se", gc.num_rb_per_se},
                      {"gl2c", gc.num_gl2c},
                      {"wave_size", gc.wave_size},
                      {"max_waves_per_simd", gc.max_waves_per_simd},
                      {"lds_kib", gc.lds_size_kib}};
    }
    Json harvested = Json::array();
    for (const am::HarvestedIp& h : discovery.harvested) {
      harvested.push_back({{"block", am::HwIdName(h.hw_id)}, {"instance", h.instance}});
    }
    j["harvested"] = harvested;
    Json files = Json::array();
    for (const FirmwareFile& f : firmware_state.files) {
      files.push_back(
          {{"name", f.name}, {"path", f.path}, {"ucode_version", Hex(f.ucode_version)}, {"error", f.error}});
    }
    j["firmware"] = {{"sos_running", firmware_state.sos_version.has_value()},
                     {"sos_version", Hex(firmware_state.sos_version.value_or(0))},
                     {"files", files}};
    PrintJson(inv.out(), j);
    return absl::OkStatus();
  }

  std::ostream& out = inv.out();
  out << absl::StrFormat("%s (%s): %04x:%04x rev %02x, %s\n", device->name(), device->backend(), vendor, device_id,
                         revision, product ? product->name : "unknown product");
  if (product) out << absl::StrFormat("  product name from %s\n", product->source);
  out << absl::StrFormat("  compile target %s (GC %s), VRAM %s\n", gc ? GfxTarget(*gc) : "unknown (no GC block)",
                         gc ? Version(*gc) : "-", HumanBytes(found.vram_size));
  for (const pci::BarInfo& bar : bars) {
    out << absl::StrFormat("  BAR%d  %10s  %s%s\n", bar.index, HumanBytes(bar.size), bar.is_64bit ? "64-bit" : "32-bit",
                           bar.prefetchable ? ", prefetchable" : "");
  }
  out << absl::StrFormat("IP discovery: binary %d.%d, IP table v%d, at VRAM %#x%s\n", discovery.binary_version_major,
                         discovery.binary_version_minor, discovery.ip_table_version, found.table_address,
                         found.through_mm_index ? " (read through MM_INDEX/MM_DATA)" : "");
  out << absl::StrFormat("  %-8s %-4s %-9s %s\n", "block", "inst", "version", "segment bases (dwords)");
  for (const am::DiscoveredIp& ip : discovery.ips) {
    std::vector<std::string> bases;
    for (uint64_t base : ip.segments) bases.push_back(absl::StrFormat("0x%08x", base));
    out << absl::StrFormat("  %-8s %-4d %-9s %s\n", am::HwIdName(ip.hw_id), ip.instance, Version(ip.version),
                           absl::StrJoin(bases, " "));
  }
  if (discovery.gc) {
    const am::GcInfo& gc = *discovery.gc;
    out << absl::StrFormat(
        "gc_info %d.%d: %d shader engines x %d arrays x %d CUs = %d CUs, %d RBs/SE, wave%d, %d KiB LDS\n",
        gc.version_major, gc.version_minor, gc.num_se, gc.num_sa_per_se, gc.num_cu_per_sa, gc.total_cus(),
        gc.num_rb_per_se, gc.wave_size, gc.lds_size_kib);
  }
  out << "harvested: " << (discovery.harvested.empty() ? "nothing" : "") << "\n";
  for (const am::HarvestedIp& h : discovery.harvested) {
    out << absl::StrFormat("  %s instance %d\n", am::HwIdName(h.hw_id), h.instance);
  }
  if (firmware_state.sos_version) {
    out << absl::StrFormat("firmware: sOS %#010x running (MP0 C2PMSG_58)\n", *firmware_state.sos_version);
  } else {
    out << "firmware: not running (the sOS shows no sign of life in MP0 C2PMSG_81; boot loads it)\n";
  }
  out << absl::StrFormat("  %-24s %-10s %s\n", "file a boot loads", "version", "from");
  for (const FirmwareFile& f : firmware_state.files) {
    out << absl::StrFormat("  %-24s %-10s %s\n", f.name, f.error.empty() ? Hex(f.ucode_version, 8) : "-",
                           f.error.empty() ? f.path : absl::StrCat(f.path, f.path.empty() ? "" : ": ", f.error));
  }
  return absl::OkStatus();
}

BAREGPU_REGISTER_COMMAND(kInfoRegistered,
                         Command{"info",
                                 "show a GPU's IP versions, register bases, VRAM, BARs and gc_info",
                                 "baregpu info DEVICE [--json]",
                                 "Reads PCI configuration space, RCC_CONFIG_MEMSIZE and the IP discovery table at\n"
                                 "the top of VRAM. The product name comes from libdrm's amdgpu.ids (device id and\n"
                                 "revision; /usr/share/libdrm/amdgpu.ids, else a built-in copy of its Navi31 lines),\n"
                                 "the compile target (clang -mcpu) from the GC version. It also reads\n"
                                 "the running sOS's version (MP0 C2PMSG_58), and lists the firmware\n"
                                 "files a boot would load (BAREGPU_FIRMWARE_PATH first) with their versions.\n"
                                 "Changes nothing on the device.",
                                 {{"json", false, "print a JSON document"}},
                                 RunInfo});

}  // namespace
}  // namespace cli
