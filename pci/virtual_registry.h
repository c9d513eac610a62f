// The registry of virtual device kinds, so that pci::Open("sim:navi31") and pci::Open("0000:03:00.0") are one call.
//
// A kind registers itself at load time (see BAREGPU_REGISTER_VIRTUAL_DEVICE). Names are "sim:KIND" or
// "sim:KIND:INSTANCE"; instances of one kind are independent devices.
#ifndef BAREGPU_PCI_VIRTUAL_REGISTRY_H_
#define BAREGPU_PCI_VIRTUAL_REGISTRY_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "pci/device.h"

namespace pci {

inline constexpr absl::string_view kVirtualPrefix = "sim:";

struct VirtualDeviceKind {
  std::string kind;         // "navi31"
  std::string description;  // "virtual AMD Radeon RX 7900 XTX (Navi31)"
  uint16_t vendor_id = 0;
  uint16_t device_id = 0;
  // Creates the device named `name` ("sim:navi31:1"); `instance` is the part after the kind ("1", or "" ).
  std::function<absl::StatusOr<std::unique_ptr<Device>>(const std::string& name, const std::string& instance)> open;
  // Where the kind's devices find their firmware before the system's roots (a virtual GPU's own virtual
  // firmware); the opened device carries them (pci::Device::firmware_roots). Empty: the system's only.
  std::function<std::vector<std::string>()> firmware_roots;
};

// Returns false (and changes nothing) if a kind of that name exists already.
bool RegisterVirtualDevice(VirtualDeviceKind kind);
// All registered kinds, sorted by name.
std::vector<const VirtualDeviceKind*> VirtualDeviceKinds();

// Opens "sim:KIND[:INSTANCE]". A kind that is not registered makes it load the virtual GPU library first
// (LoadVirtualDeviceLibrary); a kind still unknown is an error that lists the known ones.
absl::StatusOr<std::unique_ptr<Device>> OpenVirtual(absl::string_view name);

// The virtual GPU library (libbaregpu-sim.so.SOVERSION) and the variable that names another path for it.
extern const char kVirtualDeviceLibrary[];
inline constexpr char kVirtualDeviceLibraryEnv[] = "BAREGPU_SIM_LIBRARY";

// Loads the virtual GPU library and registers its kinds; OK at once when it is loaded already. Programs that link
// the virtual GPU statically (the tests, the CLI) have its kinds registered without it. Looks for
// $BAREGPU_SIM_LIBRARY when set, else beside the library (or program) this code is in, then through the dynamic
// linker's search path. The error names every path tried and how to fix it. Failures are not remembered: a later
// call tries again.
absl::Status LoadVirtualDeviceLibrary();

}  // namespace pci

#define BAREGPU_REGISTER_VIRTUAL_DEVICE(registrar_name, ...) \
  [[maybe_unused]] static const bool registrar_name = ::pci::RegisterVirtualDevice(__VA_ARGS__)

#endif  // BAREGPU_PCI_VIRTUAL_REGISTRY_H_
