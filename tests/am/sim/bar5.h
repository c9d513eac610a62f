// The driver's view of the virtual Navi31's registers in tests: BAR5 as an am::regs::DwordSpace, so typed
// registers are read and written through the PCI BAR exactly as a driver would.
#ifndef BAREGPU_TESTS_AM_SIM_BAR5_H_
#define BAREGPU_TESTS_AM_SIM_BAR5_H_

#include <cstdint>

#include "pci/mmio.h"

namespace am::sim::testing {

class Bar5 {
 public:
  explicit Bar5(pci::Mmio mmio) : mmio_(mmio) {}
  uint32_t ReadDword(uint64_t address) { return mmio_.Read32(address * 4); }
  void WriteDword(uint64_t address, uint32_t value) { mmio_.Write32(address * 4, value); }

 private:
  pci::Mmio mmio_;
};

}  // namespace am::sim::testing

#endif  // BAREGPU_TESTS_AM_SIM_BAR5_H_
