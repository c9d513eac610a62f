// The architectural state of one wave: what AMD's RDNA3 ISA guide calls the wave's program state (PC, EXEC, VCC,
// SCC, M0, MODE, STATUS) plus its SGPRs and VGPRs.
#ifndef BAREGPU_AM_SIM_ISA_WAVE_H_
#define BAREGPU_AM_SIM_ISA_WAVE_H_

#include <cstdint>
#include <memory>

#include "am/sim/isa/instruction.h"

namespace am::sim::isa {

inline constexpr int kMaxLanes = 64;
inline constexpr int kVgprCount = 256;

struct Wave {
  // Scalar registers indexed by their operand code: s0..s105, VCC (106/107), TTMPs, NULL (124, reads 0), M0 (125),
  // EXEC (126/127). One array makes every scalar operand an index.
  uint32_t sgpr[128] = {};
  bool scc = false;
  uint64_t pc = 0;
  int lanes = 32;  // 32 or 64
  uint32_t mode = 0;
  uint32_t wave_id = 0;  // within its workgroup
  bool done = false;
  bool at_barrier = false;
  // VGPRs: vgpr[register * kMaxLanes + lane].
  std::unique_ptr<uint32_t[]> vgpr{new uint32_t[kVgprCount * kMaxLanes]()};

  uint32_t* v(uint32_t reg) { return &vgpr[(reg & (kVgprCount - 1)) * kMaxLanes]; }
  uint64_t exec() const {
    return lanes == 32 ? sgpr[operand::kExecLo] : (sgpr[operand::kExecLo] | uint64_t{sgpr[operand::kExecHi]} << 32);
  }
  void set_exec(uint64_t mask) {
    sgpr[operand::kExecLo] = static_cast<uint32_t>(mask);
    if (lanes == 64) sgpr[operand::kExecHi] = static_cast<uint32_t>(mask >> 32);
  }
  // A lane mask in SGPRs (VCC or a compare destination): one register in wave32, a pair in wave64.
  uint64_t mask_at(uint16_t code) const {
    if (code == operand::kNull) return 0;
    uint64_t m = sgpr[code & 127];
    if (lanes == 64) m |= uint64_t{sgpr[(code + 1) & 127]} << 32;
    return m;
  }
  void set_mask_at(uint16_t code, uint64_t mask) {
    if (code == operand::kNull) return;
    sgpr[code & 127] = static_cast<uint32_t>(mask);
    if (lanes == 64) sgpr[(code + 1) & 127] = static_cast<uint32_t>(mask >> 32);
    sgpr[operand::kNull] = 0;
  }
  uint64_t all_lanes() const { return lanes == 64 ? ~uint64_t{0} : 0xffffffffull; }
};

}  // namespace am::sim::isa

#endif  // BAREGPU_AM_SIM_ISA_WAVE_H_
