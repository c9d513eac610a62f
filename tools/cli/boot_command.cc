// baregpu boot DEVICE: brings the GPU up with the driver's IP blocks and prints each step, its time and outcome.
// --trace=regs logs every register access, decoded with the register database.
#include <ostream>

#include "absl/strings/str_format.h"
#include "am/device.h"
#include "base/status_macros.h"
#include "firmware/requirements.h"
#include "firmware/store.h"
#include "pci/open.h"
#include "tools/cli/command.h"
#include "tools/cli/json.h"

namespace cli {
namespace {

absl::Status RunBoot(Invocation& inv) {
  if (inv.positional().size() != 1) return inv.UsageError("'baregpu boot' takes one device (e.g. sim:navi31)");
  const std::optional<std::string> trace = inv.value("trace");
  if (trace && *trace != "regs") return inv.UsageError("--trace takes 'regs' (every register access, decoded)");
  // Firmware comes from where the device's kind says (a virtual GPU's virtual firmware), then the system's.
  BAREGPU_ASSIGN_OR_RETURN(std::unique_ptr<am::Device> device, am::Device::Open(inv.positional()[0]));
  const std::string name = device->pci().name();
  // What the device reported while it opened (a virtual device whose damaged state was discarded, or whose reset a
  // killed process left half done): on stderr, so that --json stays one document.
  for (const std::string& note : device->pci().TakeDiagnostics()) inv.err() << "note: " << note << "\n";
  if (trace) {
    am::RegisterIo& io = device->io();
    std::ostream& out = inv.out();
    io.set_tracer([&io, &out](bool write, uint64_t address, uint32_t value) {
      out << io.Describe(write, address, value) << "\n";
    });
  }
  const absl::Status booted = device->Boot({.full_reset = inv.has("reset")});
  device->io().set_tracer(nullptr);

  if (inv.json()) {
    Json steps = Json::array();
    for (const am::BootStep& step : device->steps()) {
      steps.push_back({{"block", step.block},
                       {"phase", step.phase},
                       {"microseconds", absl::ToInt64Microseconds(step.duration)},
                       {"ok", step.status.ok()},
                       {"error", step.status.ok() ? "" : std::string(step.status.message())}});
    }
    PrintJson(inv.out(), Json{{"device", name},
                              {"booted", booted.ok()},
                              {"kind", std::string(am::BootKindName(device->boot_kind()))},
                              {"steps", steps}});
  } else {
    inv.out() << absl::StrFormat("%s: %s boot\n", name, am::BootKindName(device->boot_kind()));
    for (const am::BootStep& step : device->steps()) {
      inv.out() << absl::StrFormat("%-6s %-8s %9.3f ms  %s\n", step.block, step.phase,
                                   absl::ToDoubleMilliseconds(step.duration),
                                   step.status.ok() ? "ok" : std::string(step.status.message()));
    }
  }
  return booted;
}

BAREGPU_REGISTER_COMMAND(
    kBootRegistered,
    Command{"boot",
            "bring a GPU up (discovery, SOC, GMC, IH, PSP firmware load, SMU, GFX, SDMA) and time each step",
            "baregpu boot DEVICE [--reset] [--trace=regs] [--json]",
            "Runs each IP block's init_sw and init_hw in order and prints the block, the phase, "
            "its duration and its outcome. --trace=regs prints every register access with its "
            "name and fields. Blocks: soc, gmc, ih, psp, smu, gfx, sdma. A device baregpu left booted boots "
            "partially (the firmware keeps running; SOC, GMC, IH, GFX and SDMA again); one another "
            "driver initialised, or any with --reset, gets a mode1 reset and a full boot.",
            {{"json", false, "print the steps as JSON"},
             {"reset", false, "full boot (mode1 reset first if the firmware runs)"},
             {"trace", true, "'regs': log every register access, decoded"}},
            RunBoot});

}  // namespace
}  // namespace cli
