#include "tools/cli/device_access.h"

#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "base/file.h"
#include "base/printable.h"
#include "pci/open.h"
#include "pci/virtual_registry.h"
#include "serve/attached_device.h"
#include "serve/debug_endpoint.h"

namespace cli {
namespace {

// The firmware roots a virtual device of this name gets when opened (its kind's virtual firmware), so an attached
// device finds the same files as the holder: "sim:navi31:0" -> the navi31 kind's roots.
std::vector<std::string> VirtualFirmwareRoots(const std::string& name) {
  if (!absl::StartsWith(name, pci::kVirtualPrefix)) return {};
  const std::vector<std::string> parts = absl::StrSplit(name.substr(pci::kVirtualPrefix.size()), ':');
  for (const pci::VirtualDeviceKind* kind : pci::VirtualDeviceKinds()) {
    if (kind->kind == parts[0] && kind->firmware_roots) return kind->firmware_roots();
  }
  return {};
}

}  // namespace

OptionSpec ForceOptionSpec() {
  return {kForceOption, false,
          "when attached to the process that holds the device: allow writes (they change the device under it)"};
}

absl::StatusOr<std::unique_ptr<pci::Device>> OpenForInspection(Invocation& inv, const std::string& name) {
  absl::StatusOr<std::unique_ptr<pci::Device>> direct = pci::Open(name);
  // Unavailable is "in use by another process" (pci/open.h's backends); anything else is the device's own error.
  if (direct.ok() || direct.status().code() != absl::StatusCode::kUnavailable) return direct;
  absl::StatusOr<std::string> path = serve::DebugEndpointPath(name);
  if (!path.ok()) return direct;
  if (!base::PathExists(*path)) {
    return absl::UnavailableError(absl::StrFormat(
        "%s; it serves no debug endpoint (%s), so it cannot be inspected while it runs: start it with %s=1 (or "
        "hcq::DeviceOptions::debug_endpoint), and give both the same %s",
        direct.status().message(), base::Printable(*path), serve::kDebugEndpointEnv, serve::kRuntimeDirEnv));
  }
  absl::StatusOr<std::unique_ptr<serve::AttachedDevice>> attached =
      serve::AttachedDevice::Connect(name, *path, serve::AttachOptions{.writable = inv.has(kForceOption)});
  if (!attached.ok()) {
    return absl::Status(
        attached.status().code(),
        absl::StrFormat("%s; attaching to it failed: %s", direct.status().message(), attached.status().message()));
  }
  (*attached)->set_firmware_roots(VirtualFirmwareRoots(name));
  if (inv.interactive()) {
    inv.err() << absl::StrFormat("%s: attached to process %d, which holds it (%s)\n", name, (*attached)->holder_pid(),
                                 inv.has(kForceOption) ? "writes allowed" : "read-only");
  }
  return std::unique_ptr<pci::Device>(std::move(*attached));
}

std::optional<int> AttachedHolder(const pci::Device& device) {
  if (const auto* attached = dynamic_cast<const serve::AttachedDevice*>(&device)) return attached->holder_pid();
  return std::nullopt;
}

absl::Status CheckWriteAllowed(const Invocation& inv, const pci::Device& device, absl::string_view what) {
  const std::optional<int> holder = AttachedHolder(device);
  if (!holder.has_value() || inv.has(kForceOption)) return absl::OkStatus();
  return absl::FailedPreconditionError(absl::StrFormat(
      "%s is held by process %d and attached read-only: not doing '%s'; pass --%s to change the device under its "
      "holder",
      device.name(), *holder, what, kForceOption));
}

absl::Status TakeAccessError(pci::Device& device) {
  if (auto* attached = dynamic_cast<serve::AttachedDevice*>(&device)) return attached->TakeAccessError();
  return absl::OkStatus();
}

}  // namespace cli
