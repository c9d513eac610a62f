// baregpu boot DEVICE: brings the GPU up with the driver's IP blocks and prints each step, its time and outcome.
// --trace=regs logs every register access, decoded with the register database, grouped by the step that made it.
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "am/device.h"
#include "am/gmc.h"
#include "am/regs/database.h"
#include "base/log.h"
#include "base/status_macros.h"
#include "nv/device.h"
#include "nv/regs/database.h"
#include "nv/regs/known_registers.h"
#include "nv/regs/names.h"
#include "pci/open.h"
#include "tools/cli/command.h"
#include "tools/cli/json.h"
#include "tools/cli/register_json.h"

namespace cli {
namespace {

// Register accesses as the tracer saw them. Recording one is a clock read and a push_back into reserved space; all
// decoding and printing happens after the boot, so the step times the boot reports are those of an untraced boot
// (measured: see NOTES.md, "boot --trace").
struct Access {
  absl::Time time;
  bool write;
  uint64_t address;
  uint32_t value;
};

// A full boot of the virtual Navi31 makes about 850 accesses; reserving past that keeps the vector from growing
// (and copying) inside a timed step.
constexpr size_t kExpectedAccesses = 4096;

// The accesses of one boot step, or of the driver between steps (deciding the boot kind before the first one).
struct TraceGroup {
  std::optional<size_t> step;  // index into Device::steps(); nullopt: between steps
  std::vector<Access> accesses;
};

std::vector<TraceGroup> GroupByStep(const std::vector<Access>& accesses, const std::vector<am::BootStep>& steps) {
  std::vector<TraceGroup> groups;
  size_t next_step = 0;
  for (const Access& access : accesses) {
    // Steps run one after the other and accesses come in time order: the step an access belongs to is the first
    // one not yet finished at its time, if it had begun.
    while (next_step < steps.size() && access.time > steps[next_step].start + steps[next_step].duration) ++next_step;
    std::optional<size_t> step;
    if (next_step < steps.size() && access.time >= steps[next_step].start) step = next_step;
    if (groups.empty() || groups.back().step != step) groups.push_back({step, {}});
    groups.back().accesses.push_back(access);
  }
  return groups;
}

std::string StepTitle(const std::vector<am::BootStep>& steps, const std::optional<size_t>& step) {
  if (!step) return "outside the steps (Device::Boot itself: the boot kind before them, the booted flag after)";
  return absl::StrFormat("%s %s", steps[*step].block, steps[*step].phase);
}

Json AccessJson(am::RegisterIo& io, const Access& access) {
  Json json = {{"access", access.write ? "W" : "R"},
               {"address", Hex(access.address)},
               {"register", io.NameOf(access.address)},
               {"value", Hex(access.value, 8)}};
  const std::vector<am::regs::AddressMatch> matches = am::regs::FindByAddress(io.bases(), access.address);
  json["fields"] = matches.empty() ? Json::array() : FieldsJson(matches.front().reg, access.value);
  return json;
}

// One traced event of an NVIDIA boot: a BAR0 access or an RPC.
struct NvTraceEvent {
  absl::Time time;
  std::string text;
};

// "W gsp.NV_PFALCON_FALCON_MAILBOX0 = 0x00131000" with the fields, or the address where no register is known.
std::string DescribeNvAccess(bool write, uint32_t address, uint32_t value) {
  const std::vector<nv::regs::AddressMatch> matches = nv::regs::FindByAddress(nv::regs::Chip::kAd102, address);
  if (matches.empty()) return absl::StrFormat("%s %#x = 0x%08x", write ? "W" : "R", address, value);
  const nv::regs::AddressMatch& m = matches.front();
  const std::string name = nv::regs::Label(m);
  std::string text = absl::StrFormat("%s %s = 0x%08x", write ? "W" : "R", name, value);
  if (m.reg.field_count() > 1) {
    for (const nv::regs::DecodedField& d : nv::regs::Decode(m.reg, value)) {
      absl::StrAppendFormat(&text, " %s=%#x", d.field.name, d.value);
    }
  }
  return text;
}

// An NVIDIA GPU: nv::Device's steps through GSP-RM, each timed; then GSP-RM's unload.
absl::Status RunNvBoot(Invocation& inv, std::unique_ptr<pci::Device> pci) {
  if (inv.has("reset")) return inv.UsageError("--reset is for AMD GPUs; an NVIDIA GPU left with WPR2 up is reset");
  const std::optional<std::string> trace = inv.value("trace");
  if (trace && *trace != "regs" && *trace != "rpc") {
    return inv.UsageError("--trace takes 'regs' (BAR0 accesses, decoded) or 'rpc' (GSP-RM's RPCs and messages)");
  }
  std::vector<NvTraceEvent> events;
  nv::DeviceOptions options;
  // The PROM window is read a word at a time (1 MiB of VBIOS): one line for each run of PROM reads, not 262144.
  constexpr const nv::regs::known::KnownRegister& kProm = *nv::regs::known::FindKnownRegister("PROM_DATA");
  constexpr uint32_t kPromBase = kProm.offset, kPromSize = kProm.stride * kProm.count;
  uint64_t prom_reads = 0;
  auto flush_prom = [&] {
    if (prom_reads == 0) return;
    events.push_back({absl::Now(), absl::StrFormat("R PROM window (VBIOS) x%d", prom_reads)});
    prom_reads = 0;
  };
  if (trace == "regs") {
    options.register_tracer = [&](bool write, uint32_t address, uint32_t value) {
      if (!write && address >= kPromBase && address < kPromBase + kPromSize) {
        ++prom_reads;
        return;
      }
      flush_prom();
      events.push_back({absl::Now(), DescribeNvAccess(write, address, value)});
    };
  }
  if (trace == "rpc") {
    options.rpc_tracer = [&](const nv::gsp::RpcTrace& rpc) {
      const absl::string_view name = nv::regs::RpcName(rpc.function);
      std::string text = absl::StrFormat("%s %s (%#x), %d bytes", rpc.sent ? "->" : "<-",
                                         name.empty() ? "unknown" : name, rpc.function, rpc.payload_bytes);
      if (!rpc.sent && rpc.rpc_result != 0) {
        absl::StrAppendFormat(&text, ", %s", nv::regs::StatusName(rpc.rpc_result));
      }
      events.push_back({absl::Now(), std::move(text)});
    };
  }
  BAREGPU_ASSIGN_OR_RETURN(std::unique_ptr<nv::Device> device, nv::Device::Open(std::move(pci), options));
  const std::string name = device->pci().name();
  for (const std::string& note : device->pci().TakeDiagnostics()) inv.err() << "note: " << note << "\n";
  const absl::Status booted = device->Boot();
  if (!booted.ok()) {
    // Why the virtual GPU's firmware models refused (a real board's ucode says no more than its mailbox).
    for (const std::string& note : device->pci().TakeDiagnostics()) inv.err() << "note: " << note << "\n";
  }
  std::vector<nv::BootStep> steps = device->steps();
  // GSP-RM cannot outlive this process (its message queues are this process's memory): unload it, so that the next
  // process finds WPR2 down, and show those steps too.
  const absl::Status shut_down = device->Shutdown();
  flush_prom();
  for (size_t i = 0; i < device->steps().size(); ++i) {
    if (i >= steps.size() || device->steps()[i].name != steps[i].name) steps.push_back(device->steps()[i]);
  }
  // Each event under the step it happened in (steps run one after the other; events come in time order).
  std::vector<std::pair<std::string, std::vector<std::string>>> groups;
  size_t next = 0;
  for (const NvTraceEvent& event : events) {
    while (next < steps.size() && event.time > steps[next].start + steps[next].duration) ++next;
    const std::string title = next < steps.size() && event.time >= steps[next].start
                                  ? steps[next].name
                                  : std::string("outside the steps (opening the device)");
    if (groups.empty() || groups.back().first != title) groups.push_back({title, {}});
    groups.back().second.push_back(event.text);
  }
  if (inv.json()) {
    SetJsonSchema("baregpu.boot.nv/1");
    Json step_list = Json::array();
    for (const nv::BootStep& step : steps) {
      step_list.push_back({{"step", step.name},
                           {"microseconds", absl::ToInt64Microseconds(step.duration)},
                           {"ok", step.status.ok()},
                           {"detail", step.detail},
                           {"error", step.status.ok() ? "" : std::string(step.status.message())}});
    }
    Json document{{"device", name},
                  {"chip", device->chip()},
                  {"booted", booted.ok()},
                  {"stopped", booted.ok() ? "" : std::string(booted.message())},
                  {"steps", step_list}};
    if (trace) {
      Json trace_groups = Json::array();
      for (const auto& [title, lines] : groups) trace_groups.push_back({{"step", title}, {"events", lines}});
      document["trace"] = trace_groups;
    }
    PrintJson(inv.out(), document);
    return booted.ok() ? shut_down : booted;
  }
  std::ostream& out = inv.out();
  for (const auto& [title, lines] : groups) {
    out << absl::StrFormat("== %s: %d %s\n", title, lines.size(), trace == "rpc" ? "messages" : "register accesses");
    for (const std::string& line : lines) out << line << "\n";
  }
  if (!groups.empty()) out << "\n";
  out << absl::StrFormat("%s: %s\n", name, device->chip().empty() ? "NVIDIA GPU" : device->chip());
  for (const nv::BootStep& step : steps) {
    out << absl::StrFormat("%-13s %9.3f ms  %s\n", step.name, absl::ToDoubleMilliseconds(step.duration),
                           step.status.ok() ? step.detail : std::string(step.status.message()));
  }
  return booted.ok() ? shut_down : booted;
}

absl::Status RunBoot(Invocation& inv) {
  if (inv.positional().size() != 1) return inv.UsageError("'baregpu boot' takes one device (e.g. sim:navi31)");
  const std::optional<std::string> trace = inv.value("trace");
  // The driver follows the vendor: NVIDIA's GSP-RM path or AMD's IP blocks. The device opened here is the one the
  // driver gets, so what it reported while opening (a discarded state) reaches the notes below.
  BAREGPU_ASSIGN_OR_RETURN(std::unique_ptr<pci::Device> pci, pci::Open(inv.positional()[0]));
  BAREGPU_LOG(kInfo, "%s: opened (%s backend)", pci->name(), pci->backend());
  if (nv::Device::IsNvidia(*pci)) return RunNvBoot(inv, std::move(pci));
  if (trace && *trace != "regs") return inv.UsageError("--trace takes 'regs' (every register access, decoded)");
  // As am::Device::Open(name) does: the DMA mask the GMC addresses.
  BAREGPU_RETURN_IF_ERROR(pci->SetDmaMaskBits(am::Gmc::kDmaMaskBits));
  // Firmware comes from where the device's kind says (a virtual GPU's virtual firmware), then the system's.
  BAREGPU_ASSIGN_OR_RETURN(std::unique_ptr<am::Device> device, am::Device::Open(std::move(pci)));
  const std::string name = device->pci().name();
  // What the device reported while it opened (a virtual device whose damaged state was discarded, or whose reset a
  // killed process left half done): on stderr, so that --json stays one document.
  for (const std::string& note : device->pci().TakeDiagnostics()) inv.err() << "note: " << note << "\n";
  std::vector<Access> accesses;
  if (trace) {
    accesses.reserve(kExpectedAccesses);
    device->io().set_tracer([&accesses](bool write, uint64_t address, uint32_t value) {
      accesses.push_back({absl::Now(), write, address, value});
    });
  }
  const absl::Status booted = device->Boot({.full_reset = inv.has("reset")});
  device->io().set_tracer(nullptr);
  const std::vector<am::BootStep>& steps = device->steps();
  const std::vector<TraceGroup> groups = GroupByStep(accesses, steps);

  if (inv.json()) {
    Json step_list = Json::array();
    for (const am::BootStep& step : steps) {
      step_list.push_back({{"block", step.block},
                           {"phase", step.phase},
                           {"microseconds", absl::ToInt64Microseconds(step.duration)},
                           {"ok", step.status.ok()},
                           {"error", step.status.ok() ? "" : std::string(step.status.message())}});
    }
    Json document{{"device", name},
                  {"booted", booted.ok()},
                  {"kind", std::string(am::BootKindName(device->boot_kind()))},
                  {"steps", step_list}};
    if (trace) {
      Json trace_groups = Json::array();
      for (const TraceGroup& group : groups) {
        Json list = Json::array();
        for (const Access& access : group.accesses) list.push_back(AccessJson(device->io(), access));
        trace_groups.push_back({{"step", group.step ? Json(*group.step) : Json(nullptr)},
                                {"title", StepTitle(steps, group.step)},
                                {"accesses", list}});
      }
      document["trace"] = trace_groups;
    }
    PrintJson(inv.out(), document);
    return booted;
  }
  std::ostream& out = inv.out();
  for (const TraceGroup& group : groups) {
    out << absl::StrFormat("== %s: %d register accesses\n", StepTitle(steps, group.step), group.accesses.size());
    for (const Access& access : group.accesses) {
      out << device->io().Describe(access.write, access.address, access.value) << "\n";
    }
  }
  if (!groups.empty()) out << "\n";
  out << absl::StrFormat("%s: %s boot\n", name, am::BootKindName(device->boot_kind()));
  for (const am::BootStep& step : steps) {
    out << absl::StrFormat("%-6s %-8s %9.3f ms  %s\n", step.block, step.phase,
                           absl::ToDoubleMilliseconds(step.duration),
                           step.status.ok() ? "ok" : std::string(step.status.message()));
  }
  return booted;
}

BAREGPU_REGISTER_COMMAND(
    kBootRegistered,
    Command{"boot",
            "bring a GPU up (AMD: discovery, SOC, GMC, IH, PSP, SMU, GFX, SDMA; NVIDIA: FWSEC, booter, GSP-RM) "
            "and time each step",
            "baregpu boot DEVICE [--reset] [--trace=regs|rpc] [--json]",
            "Runs each IP block's init_sw and init_hw in order and prints the block, the phase, its duration\n"
            "and its outcome. Blocks: soc, gmc, ih, psp, smu, gfx, sdma. A device baregpu left booted boots\n"
            "partially (the firmware keeps running; SOC, GMC, IH, GFX and SDMA again); one another driver\n"
            "initialised, or any with --reset, gets a mode1 reset and a full boot.\n"
            "An NVIDIA GPU (sim:ad102) boots through GSP-RM 535.113.01: identify, gfw-boot, firmware, wpr2 (GSP-RM\n"
            "a dead process left running is unloaded), fb, layout (nouveau's WPR2 layout), fwsec-frts (FWSEC\n"
            "from the VBIOS), gsp-memory, booter-load (SEC2 starts GSP-RM), init-done (with GSP-RM's CPU\n"
            "sequencer), static-info; then unload, fwsec-sb and booter-unload, since GSP-RM cannot outlive the\n"
            "process whose memory holds its queues. --trace=regs shows its BAR0 accesses decoded (the VBIOS's PROM\n"
            "reads as one line), --trace=rpc every RPC to GSP-RM and message from it, grouped by step.\n"
            "--trace=regs prints every register access with its name and fields, grouped by step (a line\n"
            "'== block phase: N register accesses' heads each group), before the step list; with --json the\n"
            "trace is the document's \"trace\" array. The trace is recorded raw and decoded after the boot, so\n"
            "step times are those of an untraced boot. A program using the library gets the same lines on\n"
            "stderr with BAREGPU_TRACE=regs.",
            {{"json", false, "print the steps as JSON"},
             {"reset", false, "full boot (mode1 reset first if the firmware runs)"},
             {"trace", true, "'regs': log every register access, decoded; 'rpc' (NVIDIA): GSP-RM's messages"}},
            RunBoot});

}  // namespace
}  // namespace cli
