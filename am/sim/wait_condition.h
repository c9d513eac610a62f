// The compare functions both command processors share: PM4 WAIT_REG_MEM's FUNCTION field and SDMA POLL_REGMEM's
// FUNC field use the same encoding (nvd.h WAIT_REG_MEM_FUNCTION; Linux's sdma_v6_0 emits FUNC(3) for "equal").
#ifndef BAREGPU_AM_SIM_WAIT_CONDITION_H_
#define BAREGPU_AM_SIM_WAIT_CONDITION_H_

#include <cstdint>

namespace am::sim {

// 0 always, 1 <, 2 <=, 3 ==, 4 !=, 5 >=, 6 >; 7 is not defined and never holds.
inline bool WaitConditionHolds(uint32_t function, uint32_t value, uint32_t reference) {
  switch (function) {
    case 0:
      return true;
    case 1:
      return value < reference;
    case 2:
      return value <= reference;
    case 3:
      return value == reference;
    case 4:
      return value != reference;
    case 5:
      return value >= reference;
    case 6:
      return value > reference;
    default:
      return false;
  }
}

}  // namespace am::sim

#endif  // BAREGPU_AM_SIM_WAIT_CONDITION_H_
