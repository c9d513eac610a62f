// baregpu smi DEVICE [--watch[=SECONDS]] [--count=N]: a device's health in the manner of amd-smi: clocks,
// temperatures, power and activity from the SMU's metrics table (SmuMetrics_t, which smu_v13_0_0_get_smu_metrics_data
// reads), VRAM, the running firmware's versions (the SMU's GetSmuVersion, the PSP sOS's C2PMSG_58) beside the
// versions in the files a boot loads, and the process that holds the device.
//
// The metrics need the SMU's driver table, which only a booted driver has: on a device baregpu booted, smi opens it
// as every baregpu program does (a partial boot: the firmware keeps running, the queues are set up again); on a
// device no one booted it reports what needs no firmware and says how to boot. It never boots a cold device.
#include <unistd.h>

#include <chrono>
#include <optional>
#include <ostream>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "am/device.h"
#include "am/gmc.h"
#include "am/memory_manager.h"
#include "am/psp.h"
#include "am/regs/gc.h"
#include "am/regs/mp0.h"
#include "am/regs/smu_constants.h"
#include "am/regs/smu_driver_if_constants.h"
#include "am/regs/smu_tables.h"
#include "am/sim/persistent_state.h"
#include "am/smu.h"
#include "base/printable.h"
#include "base/status_macros.h"
#include "firmware/container.h"
#include "firmware/store.h"
#include "pci/open.h"
#include "pci/virtual_registry.h"
#include "tools/cli/command.h"
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
  return am::sim::PersistentState::Holder(name);
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

Json FirmwareFiles(am::Device& device) {
  Json files = Json::array();
  absl::StatusOr<std::vector<firmware::RequiredFile>> required = device.RequiredFirmware();
  if (!required.ok()) return files;
  const firmware::Store store(firmware::DeviceSearchRoots(device.pci().firmware_roots()));
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

// The device the command inspects: opened here only, so that the open can become attach-aware in one place.
absl::StatusOr<std::unique_ptr<pci::Device>> OpenDevice(const std::string& name) { return pci::Open(name); }

absl::Status RunSmi(Invocation& inv) {
  if (inv.positional().size() != 1) {
    return inv.UsageError("usage: baregpu smi DEVICE [--watch[=SECONDS]] [--count=N] [--json]");
  }
  BAREGPU_ASSIGN_OR_RETURN(Options options, ParseOptions(inv));
  const std::string name = inv.positional()[0];
  std::ostream& out = inv.out();

  // A device another process holds cannot be opened here (one holder at a time): say who holds it.
  BAREGPU_ASSIGN_OR_RETURN(std::optional<uint32_t> holder, HolderOf(name));
  if (holder.has_value()) {
    if (inv.json()) {
      PrintJson(out, Json{{"device", name}, {"available", false}, {"processes", Json::array({{{"pid", *holder}}})}});
    } else {
      out << absl::StrFormat(
          "%s: held by process %d; smi's metrics come from the SMU's mailbox, which the holder owns, so smi reads "
          "only a device no other process holds. Inspect it attached with regs, pt, ih, mem, rings and waves, "
          "or run smi after the holder closes it\n",
          base::Printable(name), *holder);
    }
    return absl::OkStatus();
  }

  BAREGPU_ASSIGN_OR_RETURN(std::unique_ptr<pci::Device> pci, OpenDevice(name));
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
  versions.files = FirmwareFiles(*device);

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
  Json firmware = {{"smu", versions.smu ? Json(SmuVersionText(*versions.smu)) : Json(nullptr)},
                   {"sos", versions.sos ? Json(Hex(*versions.sos, 8)) : Json(nullptr)},
                   {"files", versions.files}};

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
    out << absl::StrFormat("  firmware: SMU %s, PSP sOS %s\n",
                           versions.smu ? SmuVersionText(*versions.smu) : "not answering",
                           versions.sos ? Hex(*versions.sos, 8) : "not running");
    for (const Json& file : versions.files) {
      out << absl::StrFormat(
          "    %-26s %s\n", file["name"].get<std::string>(),
          file.contains("ucode_version") ? file["ucode_version"].get<std::string>() : file["error"].get<std::string>());
    }
    out << absl::StrFormat("  processes: %d (this smi; no other process holds the device)\n", ::getpid());
  }

  Json samples = Json::array();
  const uint64_t count = options.count.value_or(options.watch_seconds.has_value() ? UINT64_MAX : 1);
  for (uint64_t i = 0; i < count && booted; ++i) {
    if (i > 0) {
      std::this_thread::sleep_for(std::chrono::duration<double>(*options.watch_seconds));
    }
    BAREGPU_ASSIGN_OR_RETURN(smu::SmuMetrics metrics, device->smu().Metrics());
    if (inv.json()) {
      samples.push_back(MetricsJson(metrics));
    } else {
      if (count > 1) out << absl::StrFormat("sample %d\n", i + 1);
      PrintMetrics(out, metrics);
      out.flush();
    }
  }
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
    Command{"smi",
            "show clocks, temperatures, power, activity, VRAM, firmware versions and holders",
            "baregpu smi DEVICE [--watch[=SECONDS]] [--count=N] [--json]",
            "Reads the SMU's metrics table (TransferTableSmu2Dram of TABLE_SMU_METRICS: current clocks, "
            "temperatures, socket power, GFX and memory activity, fan, PCIe) on a device baregpu booted (it opens it "
            "as any baregpu program does: a partial boot that leaves the firmware running); a device no one booted "
            "is not booted, only what needs no firmware is shown. Also VRAM (size and how the driver divides it; "
            "allocations belong to the process that made them and are not visible), the running firmware (SMU "
            "GetSmuVersion, PSP sOS version) with the versions in the files a boot loads, and the process that holds "
            "the device (a virtual device's state names it; then nothing else can be read). --watch repeats every "
            "SECONDS (default 1) until interrupted or --count samples.\n"
            "JSON: {device, available, booted, firmware: {smu, sos, files: [{name, ucode_version | error}]}, "
            "vram: {total, cpu_visible, firmware_reserved, driver_boot_region, page_tables, general, allocations}, "
            "processes: [{pid, note}], samples: [{clocks_mhz: {gfx, soc, memory, fabric, video0, decode0}, "
            "gfx_clock_average_mhz, temperatures_c: {edge, hotspot, memory, vr_gfx, vr_soc}, socket_power_w, "
            "gfx_activity_percent, memory_activity_percent, fan_rpm, pcie: {rate, width}, metrics_counter}]}; a held "
            "device: {device, available: false, processes: [{pid}]}.",
            {{"json", false, "print one JSON document (all samples)"},
             {"watch", true, "repeat every SECONDS (default 1)", /*optional_value=*/true},
             {"count", true, "stop after N samples"}},
            RunSmi});

}  // namespace
}  // namespace cli
