// baregpu sim: manage virtual devices' persistent state (power-cycling them).
#include <ostream>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "pci/sim/persistent_state.h"
#include "pci/virtual_registry.h"
#include "tools/cli/command.h"
#include "tools/cli/json.h"

namespace cli {
namespace {

absl::Status RunSim(Invocation& inv) {
  const std::vector<std::string>& args = inv.positional();
  if (args.empty()) return inv.UsageError("missing action: baregpu sim reset NAME");
  if (args[0] != "reset") return inv.UsageError(absl::StrCat("unknown action '", args[0], "'; the action is reset"));
  if (args.size() != 2) return inv.UsageError("'baregpu sim reset' takes one virtual device name (e.g. sim:navi31)");
  const std::string& name = args[1];
  if (!absl::StartsWith(name, pci::kVirtualPrefix)) {
    return inv.UsageError(absl::StrCat("'", name,
                                       "' is not a virtual device; only sim: devices can be power-cycled "
                                       "here; a real GPU is reset by its driver"));
  }
  // Validates the name the way opening does, without powering the device on.
  std::string kind = name.substr(pci::kVirtualPrefix.size());
  kind = kind.substr(0, kind.find(':'));
  bool known = false;
  for (const pci::VirtualDeviceKind* k : pci::VirtualDeviceKinds()) known |= k->kind == kind;
  if (!known)
    return absl::NotFoundError(absl::StrCat("no virtual device kind '", kind, "'; `baregpu list` shows them"));
  BAREGPU_RETURN_IF_ERROR(pci::sim::PersistentState::PowerCycle(name));
  if (inv.json()) {
    PrintJson(inv.out(), Json{{"device", name}, {"reset", true}, {"state_directory", pci::sim::StateDirectory()}});
  } else {
    inv.out() << name << ": power-cycled; the next open finds a cold device\n";
  }
  return absl::OkStatus();
}

BAREGPU_REGISTER_COMMAND(kSimRegistered,
                         Command{"sim",
                                 "manage virtual devices (power-cycle their persistent state)",
                                 "baregpu sim reset NAME [--json]",
                                 "Virtual devices keep VRAM and registers between processes, as a real GPU does.\n"
                                 "`reset` discards that state, as a power cycle would. State lives in\n"
                                 "$BAREGPU_SIM_DIR, else $XDG_RUNTIME_DIR/baregpu-sim, else /dev/shm/baregpu-sim-UID.",
                                 {{"json", false, "print a JSON document"}},
                                 RunSim});

}  // namespace
}  // namespace cli
