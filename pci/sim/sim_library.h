// The one entry point libbaregpu-sim.so exports. The core (pci/virtual_registry.cc) dlopens the library the first
// time a sim: device is opened and no kind of that name is registered, then calls this to receive the library's
// kinds into its own registry: the library carries its own (local) copy of the core objects it uses, so the kinds
// that registered themselves at its load time sit in the library's copy of the registry, not the core's.
#ifndef BAREGPU_PCI_SIM_SIM_LIBRARY_H_
#define BAREGPU_PCI_SIM_SIM_LIBRARY_H_

#include <cstddef>

#include "pci/virtual_registry.h"

// The caller's registration function: copies `kind` into its registry; false when the name is taken.
using BaregpuSimRegisterKindFn = bool (*)(const pci::VirtualDeviceKind* kind);

extern "C" {

// Hands every kind the library registered to `register_kind`. `version` and `kind_size` are the caller's
// BAREGPU_VERSION_STRING and sizeof(pci::VirtualDeviceKind): the kinds cross as C++ objects, so both sides must be
// the same build. Returns the number of kinds handed over, or -1 (and hands over none) when they differ.
int baregpu_sim_register_kinds(const char* version, size_t kind_size, BaregpuSimRegisterKindFn register_kind);

}  // extern "C"

namespace pci::sim {
inline constexpr char kSimLibraryEntryPoint[] = "baregpu_sim_register_kinds";
}  // namespace pci::sim

#endif  // BAREGPU_PCI_SIM_SIM_LIBRARY_H_
