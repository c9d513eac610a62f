// Register segment bases of every IP block instance the virtual Navi31 lists in its discovery table
// (generated from the Linux kernel's sienna_cichlid_ip_offset.h, a sixth segment from dimgrey_cavefish_ip_offset.h,
// by tools/sim/gen_ip_offsets.py).
#ifndef BAREGPU_AM_SIM_NAVI31_IP_OFFSETS_H_
#define BAREGPU_AM_SIM_NAVI31_IP_OFFSETS_H_

#include <array>
#include <cstdint>
#include <span>

namespace am::sim {

struct IpOffsets {
  const char* block;  // the header's name without _BASE: "GC", "MMHUB", "NBIO", "SDMA0", ...
  int instance;
  int count;                         // segments listed: up to the last non-zero base (NBIO's segment 0 is at 0)
  std::array<uint32_t, 6> segments;  // dword bases; 0 past `count`
};

extern const std::span<const IpOffsets> kNavi31IpOffsets;

}  // namespace am::sim

#endif  // BAREGPU_AM_SIM_NAVI31_IP_OFFSETS_H_
