// How the inspecting commands (regs, pt, ih, mem) reach a device: opened directly when it is free, or, when another
// process holds it, through that process's debug endpoint (serve/debug_endpoint.h), so that each command works the
// same either way. Attached is read-only unless the command line says --force.
#ifndef BAREGPU_TOOLS_CLI_DEVICE_ACCESS_H_
#define BAREGPU_TOOLS_CLI_DEVICE_ACCESS_H_

#include <memory>
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "pci/device.h"
#include "tools/cli/command.h"

namespace cli {

// The option every command that may attach declares.
inline constexpr char kForceOption[] = "force";
OptionSpec ForceOptionSpec();

// Opens `name`; when another process holds it, attaches to that process's debug endpoint (writable only with
// --force) and says so on stderr when a person watches. When the holder serves no endpoint, the error says how to
// start one.
absl::StatusOr<std::unique_ptr<pci::Device>> OpenForInspection(Invocation& inv, const std::string& name);

// The pid of the process whose device `device` is attached to; nullopt when it was opened directly.
std::optional<int> AttachedHolder(const pci::Device& device);

// A write (`what`: "write 0x1 to GCVM_CONTEXT0_CNTL") to a device attached without --force is refused, naming the
// holder and the option.
absl::Status CheckWriteAllowed(const Invocation& inv, const pci::Device& device, absl::string_view what);

// The first register access that failed on an attached device since the last call (a register read cannot return
// an error itself): OK for a device opened directly.
absl::Status TakeAccessError(pci::Device& device);

}  // namespace cli

#endif  // BAREGPU_TOOLS_CLI_DEVICE_ACCESS_H_
