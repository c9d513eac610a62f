// baregpu smi DEVICE [--watch[=SECONDS]] [--count=N]: a device's health in the manner of amd-smi: clocks,
// temperatures, power and activity from the SMU's metrics table (SmuMetrics_t, which smu_v13_0_0_get_smu_metrics_data
// reads), VRAM, the running firmware's versions (the SMU's GetSmuVersion, the PSP sOS's C2PMSG_58) beside the
// versions in the files a boot loads, and the process that holds the device.
//
// The metrics need the SMU's driver table, which only a booted driver has: on a device baregpu booted, smi opens it
// as every baregpu program does (a partial boot: the firmware keeps running, the queues are set up again); on a
// device no one booted it reports what needs no firmware and says how to boot. It never boots a cold device. On a
// device another process holds, the holder's driver answers through its debug endpoint (HOLDER_STATUS).
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstring>
#include <functional>
#include <initializer_list>
#include <optional>
#include <ostream>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "am/device.h"
#include "am/discovery.h"
#include "am/gmc.h"
#include "am/memory_manager.h"
#include "am/psp.h"
#include "am/regs/gc.h"
#include "am/regs/mp0.h"
#include "am/regs/smu_constants.h"
#include "am/regs/smu_driver_if_constants.h"
#include "am/regs/smu_tables.h"
#include "am/smu.h"
#include "base/printable.h"
#include "base/status_macros.h"
#include "firmware/container.h"
#include "firmware/store.h"
#include "pci/open.h"
#include "pci/sim/persistent_state.h"
#include "pci/virtual_registry.h"
#include "serve/attached_device.h"
#include "serve/debug_endpoint.h"
#include "tools/cli/command.h"
#include "tools/cli/device_access.h"
#include "tools/cli/json.h"

namespace cli {
namespace {

namespace smu = am::regs::smu;

constexpr double kDefaultWatchSeconds = 1.0;
constexpr double kMaxWatchSeconds = 3600.0;
constexpr uint64_t kMaxCount = 1'000'000;
// smu_v13_0_0_get_smu_metrics_data: AverageSocketPower is in watts (the driver shifts it by 8 into its 8.8 fixed
// point), temperatures in degrees Celsius (times SMU_TEMPERATURE_UNITS_PER_CENTIGRADES for the driver), activity in
// percent, clocks in MHz. The SMU firmware version is major.minor.debug in bits 23:16, 15:8, 7:0
// (smu_v13_0_check_fw_version prints it so).
constexpr int kSmuVersionMajorShift = 16, kSmuVersionMinorShift = 8;
constexpr uint32_t kSmuVersionFieldMask = 0xff;

struct ClockName {
  uint32_t index;
  const char* name;
};
constexpr ClockName kClocks[] = {{smu::PPCLK_GFXCLK, "gfx"},    {smu::PPCLK_SOCCLK, "soc"},
                                 {smu::PPCLK_UCLK, "memory"},   {smu::PPCLK_FCLK, "fabric"},
                                 {smu::PPCLK_VCLK_0, "video0"}, {smu::PPCLK_DCLK_0, "decode0"}};
constexpr ClockName kTemperatures[] = {{smu::TEMP_EDGE, "edge"},
                                       {smu::TEMP_HOTSPOT, "hotspot"},
                                       {smu::TEMP_MEM, "memory"},
                                       {smu::TEMP_VR_GFX, "vr_gfx"},
                                       {smu::TEMP_VR_SOC, "vr_soc"}};

struct Options {
  std::optional<double> watch_seconds;  // nullopt: one sample
  std::optional<uint64_t> count;        // samples; nullopt with --watch: until interrupted
};

absl::StatusOr<Options> ParseOptions(const Invocation& inv) {
  Options options;
  if (inv.has("watch")) {
    options.watch_seconds = kDefaultWatchSeconds;
    std::optional<std::string> text = inv.value("watch");
    double seconds = 0;
    if (text.has_value() && !text->empty() &&
        (!absl::SimpleAtod(*text, &seconds) || !(seconds > 0) || seconds > kMaxWatchSeconds)) {
      return inv.UsageError(absl::StrFormat("--watch=%s: give the interval in seconds, more than 0 and at most %g",
                                            base::Printable(*text), kMaxWatchSeconds));
    }
    if (text.has_value() && !text->empty()) options.watch_seconds = seconds;
  }
  if (std::optional<std::string> text = inv.value("count")) {
    uint64_t count = 0;
    if (!absl::SimpleAtoi(*text, &count) || count == 0 || count > kMaxCount) {
      return inv.UsageError(absl::StrFormat("--count takes a number of samples, 1 to %d", kMaxCount));
    }
    options.count = count;
  }
  if (options.count.has_value() && *options.count > 1 && !options.watch_seconds.has_value()) {
    options.watch_seconds = kDefaultWatchSeconds;  // several samples need an interval
  }
  return options;
}

// The process that holds the device, when the device says (a virtual GPU's state header); nullopt: nobody, or the
// backend cannot tell (VFIO keeps no list of holders).
absl::StatusOr<std::optional<uint32_t>> HolderOf(const std::string& name) {
  if (!absl::StartsWith(name, pci::kVirtualPrefix)) return std::nullopt;
  return pci::sim::PersistentState::Holder(name);
}

struct FirmwareVersions {
  std::optional<uint32_t> smu;  // GetSmuVersion, when the SMU answers
  std::optional<uint32_t> sos;  // C2PMSG_58, when the sOS is alive
  Json files = Json::array();   // the versions in the files a boot loads
};

std::string SmuVersionText(uint32_t v) {
  return absl::StrFormat("%#010x (%d.%d.%d)", v, (v >> kSmuVersionMajorShift) & kSmuVersionFieldMask,
                         (v >> kSmuVersionMinorShift) & kSmuVersionFieldMask, v & kSmuVersionFieldMask);
}

Json FirmwareFiles(const absl::StatusOr<std::vector<firmware::RequiredFile>>& required,
                   const std::vector<std::string>& roots) {
  Json files = Json::array();
  if (!required.ok()) return files;
  const firmware::Store store(firmware::DeviceSearchRoots(roots));
  for (const firmware::RequiredFile& file : *required) {
    absl::StatusOr<firmware::LoadedFile> loaded = store.Load(file.name, file.fallbacks);
    if (!loaded.ok()) {
      files.push_back({{"name", file.name}, {"error", "not found"}});
      continue;
    }
    absl::StatusOr<firmware::Container> container = firmware::ParseContainer(loaded->path, loaded->data);
    if (!container.ok()) {
      files.push_back({{"name", loaded->name}, {"error", std::string(container.status().message())}});
      continue;
    }
    files.push_back({{"name", loaded->name}, {"ucode_version", Hex(container->header.ucode_version, 8)}});
  }
  return files;
}

Json MetricsJson(const smu::SmuMetrics& m) {
  Json clocks = Json::object();
  for (const ClockName& c : kClocks) clocks[c.name] = m.CurrClock[c.index];
  Json temperatures = Json::object();
  for (const ClockName& t : kTemperatures) temperatures[t.name] = m.AvgTemperature[t.index];
  return {{"clocks_mhz", clocks},
          {"gfx_clock_average_mhz", m.AverageGfxclkFrequencyPostDs},
          {"temperatures_c", temperatures},
          {"socket_power_w", m.AverageSocketPower},
          {"gfx_activity_percent", m.AverageGfxActivity},
          {"memory_activity_percent", m.AverageUclkActivity},
          {"fan_rpm", m.AvgFanRpm},
          {"pcie", {{"rate", m.PcieRate}, {"width", m.PcieWidth}}},
          {"metrics_counter", m.MetricsCounter}};
}

void PrintMetrics(std::ostream& out, const smu::SmuMetrics& m) {
  out << "  clocks (MHz):";
  for (const ClockName& c : kClocks) out << absl::StrFormat(" %s %d", c.name, m.CurrClock[c.index]);
  out << absl::StrFormat("  (gfx average %d)\n", m.AverageGfxclkFrequencyPostDs);
  out << "  temperatures (C):";
  for (const ClockName& t : kTemperatures) out << absl::StrFormat(" %s %d", t.name, m.AvgTemperature[t.index]);
  out << "\n";
  out << absl::StrFormat("  power %d W  activity gfx %d%% memory %d%%  fan %d rpm  PCIe rate %d width %d\n",
                         m.AverageSocketPower, m.AverageGfxActivity, m.AverageUclkActivity, m.AvgFanRpm, m.PcieRate,
                         m.PcieWidth);
}

void PrintFirmware(std::ostream& out, const FirmwareVersions& versions) {
  out << absl::StrFormat("  firmware: SMU %s, PSP sOS %s\n",
                         versions.smu ? SmuVersionText(*versions.smu) : "not answering",
                         versions.sos ? Hex(*versions.sos, 8) : "not running");
  for (const Json& file : versions.files) {
    out << absl::StrFormat(
        "    %-26s %s\n", file["name"].get<std::string>(),
        file.contains("ucode_version") ? file["ucode_version"].get<std::string>() : file["error"].get<std::string>());
  }
}

Json FirmwareJson(const FirmwareVersions& versions) {
  return {{"smu", versions.smu ? Json(SmuVersionText(*versions.smu)) : Json(nullptr)},
          {"sos", versions.sos ? Json(Hex(*versions.sos, 8)) : Json(nullptr)},
          {"files", versions.files}};
}

// Samples `count` times, `interval` apart; `sample` gives the metrics or nullopt when there are none. Text is printed
// as it comes (--watch), JSON collected.
absl::StatusOr<Json> Sample(Invocation& inv, uint64_t count, std::optional<double> interval,
                            const std::function<absl::StatusOr<smu::SmuMetrics>()>& sample) {
  Json samples = Json::array();
  for (uint64_t i = 0; i < count; ++i) {
    if (i > 0) std::this_thread::sleep_for(std::chrono::duration<double>(*interval));
    BAREGPU_ASSIGN_OR_RETURN(smu::SmuMetrics metrics, sample());
    if (inv.json()) {
      samples.push_back(MetricsJson(metrics));
    } else {
      if (count > 1) inv.out() << absl::StrFormat("sample %d\n", i + 1);
      PrintMetrics(inv.out(), metrics);
      inv.out().flush();
    }
  }
  return samples;
}

// The holder's status document (hcq::amd::AmdDevice::HolderStatus, baregpu.holder_status/1), checked.
absl::StatusOr<Json> HolderStatus(serve::AttachedDevice& attached) {
  BAREGPU_ASSIGN_OR_RETURN(std::string text, attached.HolderStatus());
  Json status = Json::parse(text, nullptr, /*allow_exceptions=*/false);
  auto numbers = [](const Json& object, std::initializer_list<const char*> keys) {
    if (!object.is_object()) return false;
    for (const char* key : keys) {
      if (!object.contains(key) || !object[key].is_number_unsigned()) return false;
    }
    return true;
  };
  auto shaped = [&](const Json& s) {
    if (!s.is_object() || s.value("schema", "") != "baregpu.holder_status/1" || !numbers(s, {"pid"})) return false;
    if (!s.contains("firmware") || !s["firmware"].is_object() || !s.contains("metrics") || !s["metrics"].is_object() ||
        !s.contains("vram") || !numbers(s["vram"], {"total", "cpu_visible", "mappings"}) ||
        !s["vram"].contains("regions")) {
      return false;
    }
    for (const char* region : {"general", "boot", "page_tables"}) {
      const Json& regions = s["vram"]["regions"];
      if (!regions.is_object() || !regions.contains(region) ||
          !numbers(regions[region], {"size", "free", "largest_free", "allocations"})) {
        return false;
      }
    }
    return true;
  };
  if (status.is_discarded() || !shaped(status)) {
    return absl::DataLossError(absl::StrFormat(
        "%s: process %d's status is not a baregpu.holder_status/1 document (a holder of another baregpu version?)",
        attached.name(), attached.holder_pid()));
  }
  return status;
}

// The SMU metrics table as the holder sent it (the raw SmuMetrics_t bytes in hex), or why there is none.
absl::StatusOr<smu::SmuMetrics> MetricsFrom(const Json& status) {
  const Json& m = status["metrics"];
  if (m.contains("error")) {
    return absl::UnavailableError(
        absl::StrCat("the holder's SMU: ", m["error"].is_string() ? m["error"].get<std::string>() : "?"));
  }
  if (!m.contains("table") || !m["table"].is_string() || !m.contains("size") || !m["size"].is_number_unsigned()) {
    return absl::DataLossError("the holder's metrics have no table");
  }
  const std::string hex = m.value("table", "");
  smu::SmuMetrics metrics;
  if (m.value("size", uint64_t{0}) != sizeof(metrics) || hex.size() != 2 * sizeof(metrics)) {
    return absl::DataLossError(
        absl::StrFormat("the holder's metrics table has %d bytes; SmuMetrics_t (smu13_driver_if_v13_0_0.h) has %d",
                        m.value("size", uint64_t{0}), sizeof(metrics)));
  }
  if (!std::all_of(hex.begin(), hex.end(), [](char c) { return std::isxdigit(static_cast<unsigned char>(c)); })) {
    return absl::DataLossError("the holder's metrics table is not hex");
  }
  const std::string bytes = absl::HexStringToBytes(hex);
  std::memcpy(&metrics, bytes.data(), sizeof(metrics));
  return metrics;
}

// The holder's waits (Device::wait_stats), null from a holder that does not report them (an older baregpu).
Json WaitsOf(const Json& status) {
  if (!status.contains("waits")) return nullptr;
  const Json& w = status["waits"];
  if (!w.is_object() || !w.contains("interrupt") || !w["interrupt"].is_boolean()) return nullptr;
  for (const char* key : {"sleeping", "sleeps", "interrupt_wakes", "timer_wakes", "blind_waits"}) {
    if (!w.contains(key) || !w[key].is_number_unsigned()) return nullptr;
  }
  return w;
}

// How the holder's waits slept: on the device's interrupt (hcq/interrupt_sleep.h) or, without one, in steps.
void PrintWaits(std::ostream& out, const Json& status) {
  const Json w = WaitsOf(status);
  if (w.is_null()) return;
  if (!w["interrupt"].get<bool>()) {
    out << absl::StrFormat("  waits: the device has no interrupt; %d waits slept in steps\n",
                           w["blind_waits"].get<uint64_t>());
    return;
  }
  out << absl::StrFormat(
      "  waits: %d sleeping on the device's interrupt now; %d sleeps since it opened, %d ended by the interrupt, %d "
      "by their time limit\n",
      w["sleeping"].get<uint64_t>(), w["sleeps"].get<uint64_t>(), w["interrupt_wakes"].get<uint64_t>(),
      w["timer_wakes"].get<uint64_t>());
}

// smi on a device another process holds: everything from the holder, through its debug endpoint.
absl::Status RunAttached(Invocation& inv, const Options& options, serve::AttachedDevice& attached) {
  std::ostream& out = inv.out();
  BAREGPU_ASSIGN_OR_RETURN(Json status, HolderStatus(attached));
  FirmwareVersions versions;
  const Json firmware = status["firmware"];
  if (firmware.contains("smu") && firmware["smu"].is_number_unsigned()) versions.smu = firmware["smu"].get<uint32_t>();
  if (firmware.contains("sos") && firmware["sos"].is_number_unsigned()) versions.sos = firmware["sos"].get<uint32_t>();
  absl::StatusOr<am::DeviceDiscovery> found = am::ReadDiscovery(attached);
  versions.files = FirmwareFiles(found.ok() ? am::RequiredFirmware(found->discovery)
                                            : absl::StatusOr<std::vector<firmware::RequiredFile>>(found.status()),
                                 attached.firmware_roots());
  const Json vram = status["vram"];
  const Json regions = vram["regions"];
  const uint32_t pid = status["pid"].get<uint32_t>();
  const bool metrics = MetricsFrom(status).ok();
  if (!inv.json()) {
    out << absl::StrFormat("%s (attached to process %d, which holds it): %s\n", attached.name(), pid,
                           metrics ? "booted, firmware running" : "booted; no metrics from its SMU");
    auto mib = [](const Json& v) { return v.get<uint64_t>() >> 20; };
    out << absl::StrFormat("  VRAM %d MiB (%d MiB CPU-visible); the holder's allocations:\n", mib(vram["total"]),
                           mib(vram["cpu_visible"]));
    for (const char* name : {"general", "boot", "page_tables"}) {
      const Json& r = regions[name];
      out << absl::StrFormat("    %-12s %6d MiB, %6d MiB free (largest free block %d MiB), %d allocations\n", name,
                             mib(r["size"]), mib(r["free"]), mib(r["largest_free"]), r["allocations"].get<uint64_t>());
    }
    out << absl::StrFormat("    %d GPU mappings\n", vram["mappings"].get<uint64_t>());
    PrintFirmware(out, versions);
    PrintWaits(out, status);
    out << absl::StrFormat("  processes: %d (the holder)\n", pid);
  }
  const uint64_t count = options.count.value_or(options.watch_seconds.has_value() ? UINT64_MAX : 1);
  BAREGPU_ASSIGN_OR_RETURN(
      Json samples, Sample(inv, metrics ? count : 0, options.watch_seconds, [&]() -> absl::StatusOr<smu::SmuMetrics> {
        // Each sample is a fresh status.
        BAREGPU_ASSIGN_OR_RETURN(Json now, HolderStatus(attached));
        return MetricsFrom(now);
      }));
  if (inv.json()) {
    PrintJson(out, Json{{"device", attached.name()},
                        {"available", true},
                        {"attached", true},
                        {"booted", true},
                        {"firmware", FirmwareJson(versions)},
                        {"vram",
                         {{"total", vram["total"]},
                          {"cpu_visible", vram["cpu_visible"]},
                          {"regions", regions},
                          {"mappings", vram["mappings"]}}},
                        {"processes", Json::array({{{"pid", pid}, {"note", "holder"}}})},
                        {"waits", WaitsOf(status)},
                        {"samples", samples}});
  }
  return absl::OkStatus();
}

absl::Status RunSmi(Invocation& inv) {
  if (inv.positional().size() != 1) {
    return inv.UsageError("usage: baregpu smi DEVICE [--watch[=SECONDS]] [--count=N] [--json]");
  }
  BAREGPU_ASSIGN_OR_RETURN(Options options, ParseOptions(inv));
  const std::string name = inv.positional()[0];
  std::ostream& out = inv.out();

  // A device another process holds is read through its debug endpoint; without one, say who holds it.
  absl::StatusOr<std::unique_ptr<pci::Device>> opened = OpenForInspection(inv, name);
  if (opened.ok()) {
    if (auto* attached = dynamic_cast<serve::AttachedDevice*>(opened->get())) {
      return RunAttached(inv, options, *attached);
    }
  }
  BAREGPU_ASSIGN_OR_RETURN(std::optional<uint32_t> holder, HolderOf(name));
  if (!opened.ok() && opened.status().code() == absl::StatusCode::kUnavailable && holder.has_value()) {
    if (inv.json()) {
      PrintJson(out, Json{{"device", name}, {"available", false}, {"processes", Json::array({{{"pid", *holder}}})}});
    } else {
      out << absl::StrFormat(
          "%s: held by process %d, which serves no debug endpoint; smi's metrics come from the SMU's mailbox, "
          "which the holder owns, so they are read through the holder: start it with %s=1\n",
          base::Printable(name), *holder, serve::kDebugEndpointEnv);
    }
    return absl::OkStatus();
  }

  BAREGPU_ASSIGN_OR_RETURN(std::unique_ptr<pci::Device> pci, std::move(opened));
  BAREGPU_RETURN_IF_ERROR(pci->SetDmaMaskBits(am::Gmc::kDmaMaskBits));  // as am::Device::Open(name) does
  BAREGPU_ASSIGN_OR_RETURN(std::unique_ptr<am::Device> device, am::Device::Open(std::move(pci)));

  // Booted by baregpu (its flag in SCRATCH_REG7) with the firmware alive: a partial boot gets the driver table
  // back without touching the firmware. Anything else is left as it is.
  const bool flagged =
      device->Regs<am::regs::Ip::kGc>().Read<am::regs::gc::SCRATCH_REG7>().raw() == am::Device::kBootedFlag;
  const bool sos_alive = device->psp().sos_alive();
  FirmwareVersions versions;
  if (sos_alive) versions.sos = device->psp().sos_version();
  bool booted = false;
  if (flagged && sos_alive) {
    BAREGPU_RETURN_IF_ERROR(device->Boot());
    booted = true;
    BAREGPU_ASSIGN_OR_RETURN(uint32_t smu_version, device->smu().Send(smu::PPSMC_MSG_GetSmuVersion));
    versions.smu = smu_version;
  }
  versions.files = FirmwareFiles(device->RequiredFirmware(), device->pci().firmware_roots());

  const am::VramLayout& layout = device->memory().layout();
  const uint64_t general = layout.vram_size - layout.reserved_top - layout.boot_size - layout.page_table_size;
  Json vram = {{"total", layout.vram_size},
               {"cpu_visible", device->memory().cpu_visible_size()},
               {"firmware_reserved", layout.reserved_top},
               {"driver_boot_region", layout.boot_size},
               {"page_tables", layout.page_table_size},
               {"general", general},
               {"allocations",
                "not visible: each baregpu process allocates from the general region itself and shares no "
                "allocation table"}};
  const Json processes = Json::array({{{"pid", static_cast<uint32_t>(::getpid())}, {"note", "this smi"}}});
  const Json firmware = FirmwareJson(versions);

  if (!inv.json()) {
    out << absl::StrFormat("%s (%s): %s\n", device->pci().name(), device->pci().backend(),
                           booted      ? "booted by baregpu, firmware running"
                           : sos_alive ? "firmware running, not booted by baregpu (no metrics without its driver table)"
                                       : absl::StrFormat("not booted: no firmware runs (`baregpu boot %s` starts it)",
                                                         base::Printable(name)));
    out << absl::StrFormat(
        "  VRAM %d MiB (%d MiB CPU-visible): firmware %d MiB, driver boot region %d MiB, page tables %d MiB, general "
        "%d MiB; allocations are each process's own and not visible here\n",
        layout.vram_size >> 20, device->memory().cpu_visible_size() >> 20, layout.reserved_top >> 20,
        layout.boot_size >> 20, layout.page_table_size >> 20, general >> 20);
    PrintFirmware(out, versions);
    out << absl::StrFormat("  processes: %d (this smi; no other process holds the device)\n", ::getpid());
  }

  const uint64_t count = options.count.value_or(options.watch_seconds.has_value() ? UINT64_MAX : 1);
  BAREGPU_ASSIGN_OR_RETURN(
      Json samples, Sample(inv, booted ? count : 0, options.watch_seconds, [&] { return device->smu().Metrics(); }));
  if (inv.json()) {
    PrintJson(out, Json{{"device", device->pci().name()},
                        {"available", true},
                        {"booted", booted},
                        {"firmware", firmware},
                        {"vram", vram},
                        {"processes", processes},
                        {"samples", samples}});
  }
  return absl::OkStatus();
}

BAREGPU_REGISTER_COMMAND(
    kSmiRegistered,
    Command{
        "smi",
        "show clocks, temperatures, power, activity, VRAM, firmware versions and holders",
        "baregpu smi DEVICE [--watch[=SECONDS]] [--count=N] [--json]",
        "Reads the SMU's metrics table (TransferTableSmu2Dram of TABLE_SMU_METRICS: current clocks, "
        "temperatures, socket power, GFX and memory activity, fan, PCIe) on a device baregpu booted (it opens it "
        "as any baregpu program does: a partial boot that leaves the firmware running); a device no one booted "
        "is not booted, only what needs no firmware is shown. Also VRAM (size and how the driver divides it; "
        "allocations belong to the process that made them and are not visible), the running firmware (SMU "
        "GetSmuVersion, PSP sOS version) with the versions in the files a boot loads, and the process that holds "
        "the device. A device another process holds is read through that process's debug endpoint: its driver "
        "reports the metrics, firmware and its own VRAM allocations. --watch repeats every "
        "SECONDS (default 1) until interrupted or --count samples.\n"
        "JSON: {device, available, booted, firmware: {smu, sos, files: [{name, ucode_version | error}]}, "
        "vram: {total, cpu_visible, firmware_reserved, driver_boot_region, page_tables, general, allocations}, "
        "processes: [{pid, note}], samples: [{clocks_mhz: {gfx, soc, memory, fabric, video0, decode0}, "
        "gfx_clock_average_mhz, temperatures_c: {edge, hotspot, memory, vr_gfx, vr_soc}, socket_power_w, "
        "gfx_activity_percent, memory_activity_percent, fan_rpm, pcie: {rate, width}, metrics_counter}]}; attached: "
        "also attached: true and vram: {total, cpu_visible, regions: {general, boot, page_tables: {size, free, "
        "largest_free, allocations}}, mappings}; a held device without an endpoint: {device, available: false, "
        "processes: [{pid}]}.",
        {{"json", false, "print one JSON document (all samples)"},
         {"watch", true, "repeat every SECONDS (default 1)", /*optional_value=*/true},
         {"count", true, "stop after N samples"}},
        RunSmi});

}  // namespace
}  // namespace cli
