// baregpu pt DEVICE walk VA: how the GPU translates an address, read from the device itself: the VM context's
// registers (page-table base, depth, range) and each level's entry in VRAM, with the PTE/PDE bits decoded.
#include <ostream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_format.h"
#include "base/printable.h"
#include "base/status_macros.h"
#include "tools/cli/command.h"
#include "tools/cli/device_access.h"
#include "tools/cli/json.h"
#include "tools/cli/page_walk.h"

namespace cli {
namespace {

absl::Status RunPt(Invocation& inv) {
  const std::vector<std::string>& args = inv.positional();
  if (args.size() != 3 || args[1] != "walk") return inv.UsageError("usage: baregpu pt DEVICE walk VA [--vmid=N]");
  uint64_t va = 0;
  if (!absl::StartsWithIgnoreCase(args[2], "0x") || !absl::SimpleHexAtoi(args[2].substr(2), &va)) {
    return inv.UsageError(
        absl::StrCat("'", base::Printable(args[2]), "' is not a GPU address; write it in hex (0x7f0000001000)"));
  }
  uint32_t vmid = 0;
  if (std::optional<std::string> text = inv.value("vmid")) {
    if (!absl::SimpleAtoi(*text, &vmid) || vmid > 15) return inv.UsageError("--vmid takes 0 to 15");
  }
  BAREGPU_ASSIGN_OR_RETURN(std::unique_ptr<pci::Device> device, OpenForInspection(inv, args[0]));
  BAREGPU_ASSIGN_OR_RETURN(const VmContext context, ReadVmContext(*device, vmid));
  std::ostream& out = inv.out();
  if (!inv.json()) {
    out << absl::StrFormat("GCHUB context %d: %s, depth %d, block size %d, page-table base 0x%x, range 0x%x..0x%x\n",
                           vmid, context.enabled ? "enabled" : "DISABLED", context.depth, context.block_size,
                           context.base, context.start, context.end);
  }
  BAREGPU_ASSIGN_OR_RETURN(const PageWalk walk, WalkPageTable(*device, context, va));
  Json steps = Json::array();
  for (const WalkStep& step : walk.steps) {
    steps.push_back({{"level", step.level},
                     {"table", Hex(step.table)},
                     {"index", step.index},
                     {"entries", step.entries},
                     {"entry", Hex(step.entry, 16)},
                     {"flags", step.flags}});
    if (!inv.json()) {
      out << absl::StrFormat("  %-4s table 0x%012x  index %4d of %4d  entry 0x%016x  %s\n", step.level, step.table,
                             step.index, step.entries, step.entry, step.flags);
    }
  }
  if (inv.json()) {
    PrintJson(
        out,
        Json{{"device", device->name()}, {"vmid", vmid}, {"va", Hex(va)}, {"steps", steps}, {"result", walk.outcome}});
  } else {
    out << "  " << walk.outcome << "\n";
  }
  return absl::OkStatus();
}

BAREGPU_REGISTER_COMMAND(
    kPtRegistered,
    Command{"pt",
            "walk a GPU virtual address through the device's page tables",
            "baregpu pt DEVICE walk VA [--vmid=N] [--json]",
            "Reads GCHUB VM context N's registers (default 0) and the page-table entries in "
            "VRAM, and prints each level's table, index, entry and flags, then what the "
            "address translates to. A device another process holds is read through that "
            "process's debug endpoint.",
            {{"json", false, "print the walk as JSON"}, {"vmid", true, "VM context (0-15)"}, ForceOptionSpec()},
            RunPt});

}  // namespace
}  // namespace cli
