#include "pci/virtual_registry.h"

#include <map>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/mutex.h"

namespace pci {
namespace {

struct Registry {
  base::Mutex mu;
  std::map<std::string, VirtualDeviceKind> kinds ABSL_GUARDED_BY(mu);
};

Registry& GetRegistry() {
  static Registry* registry = new Registry();  // never destroyed: registrations happen during static init
  return *registry;
}

bool ValidName(absl::string_view text) {
  if (text.empty() || text.size() > 64) return false;
  for (char c : text) {
    if (!absl::ascii_isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '-') return false;
  }
  return true;
}

}  // namespace

bool RegisterVirtualDevice(VirtualDeviceKind kind) {
  Registry& registry = GetRegistry();
  base::MutexLock lock(&registry.mu);
  std::string key = kind.kind;
  return registry.kinds.emplace(std::move(key), std::move(kind)).second;
}

std::vector<const VirtualDeviceKind*> VirtualDeviceKinds() {
  Registry& registry = GetRegistry();
  base::MutexLock lock(&registry.mu);
  std::vector<const VirtualDeviceKind*> kinds;
  for (const auto& [name, kind] : registry.kinds) kinds.push_back(&kind);  // entries are never removed
  return kinds;
}

absl::StatusOr<std::unique_ptr<Device>> OpenVirtual(absl::string_view name) {
  if (!absl::StartsWith(name, kVirtualPrefix)) {
    return absl::InvalidArgumentError(absl::StrCat("'", name, "' is not a virtual device name (sim:KIND[:INSTANCE])"));
  }
  absl::string_view rest = name.substr(kVirtualPrefix.size());
  absl::string_view kind_name = rest.substr(0, rest.find(':'));
  absl::string_view instance = kind_name.size() < rest.size() ? rest.substr(kind_name.size() + 1) : "";
  if (!ValidName(kind_name) || (kind_name.size() < rest.size() && !ValidName(instance))) {
    return absl::InvalidArgumentError(
        absl::StrCat("'", name,
                     "' is not a valid virtual device name: use sim:KIND or sim:KIND:INSTANCE, with letters, digits, "
                     "'-' and '_' (e.g. sim:navi31:0)"));
  }
  const VirtualDeviceKind* found = nullptr;
  std::vector<std::string> known;
  for (const VirtualDeviceKind* kind : VirtualDeviceKinds()) {
    known.push_back(absl::StrCat(kVirtualPrefix, kind->kind));
    if (kind->kind == kind_name) found = kind;
  }
  if (found == nullptr) {
    return absl::NotFoundError(absl::StrCat("no virtual device kind '", kind_name,
                                            "'; known: ", known.empty() ? "none" : absl::StrJoin(known, ", ")));
  }
  absl::StatusOr<std::unique_ptr<Device>> device = found->open(std::string(name), std::string(instance));
  if (device.ok() && found->firmware_roots) (*device)->set_firmware_roots(found->firmware_roots());
  return device;
}

}  // namespace pci
