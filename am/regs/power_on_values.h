// The registers' power-on (reset) values, from the kernel's asic_reg/*_default.h headers (generated into
// am/regs/power_on_values.cc by tools/regs/generate.py). Only GC 11.0.0 has such a header in Linux 6.12 (it holds
// SDMA 6.0's registers too); every register not listed powers on as 0. The virtual GPU seeds its register file
// from this table at cold power-on and after a mode1 reset; typed registers with a listed default also carry it as
// R::kDefault, which is what Linux's gfx_v11_0_compute_mqd_init starts its MQD fields from.
#ifndef BAREGPU_AM_REGS_POWER_ON_VALUES_H_
#define BAREGPU_AM_REGS_POWER_ON_VALUES_H_

#include <cstdint>
#include <span>

#include "am/regs/ip.h"

namespace am::regs {

struct PowerOnValue {
  Ip ip;
  uint8_t segment;
  uint32_t offset;  // dwords, relative to the segment's base
  uint32_t value;
};

// Every register whose power-on value is not zero, in the kernel header's order.
std::span<const PowerOnValue> PowerOnValues();

}  // namespace am::regs

#endif  // BAREGPU_AM_REGS_POWER_ON_VALUES_H_
