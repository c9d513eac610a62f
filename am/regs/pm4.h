// PM4 type-3 packets as the gfx11 CP (MEC) reads them. Opcodes and field encodings are generated from Linux 6.12
// drivers/gpu/drm/amd/amdgpu/nvd.h into am/regs/pm4_constants.h (PACKET3_*, WAIT_REG_MEM_*(x), ...); this file adds
// the header word, which nvd.h builds with its two-argument PACKET3(op, n) macro. Event types for EVENT_WRITE and
// RELEASE_MEM (soc21_enum.h VGT_EVENT_TYPE): am/regs/pm4_event_constants.h.
#ifndef BAREGPU_AM_REGS_PM4_H_
#define BAREGPU_AM_REGS_PM4_H_

#include <cstdint>

#include "am/regs/pm4_constants.h"
#include "am/regs/pm4_event_constants.h"

namespace am::regs::pm4 {

// nvd.h PACKET3(op, n): type 3 in bits 31:30, n (the number of dwords after the header, minus one) in bits
// 29:16, the opcode in bits 15:8.
constexpr uint32_t Packet3(uint32_t opcode, uint32_t count_minus_one) {
  return (PACKET_TYPE3 << 30) | ((count_minus_one & 0x3fff) << 16) | ((opcode & 0xff) << 8);
}

// The parts of a header word (nvd.h CP_PACKET_GET_TYPE, CP_PACKET_GET_COUNT, CP_PACKET3_GET_OPCODE).
constexpr uint32_t PacketType(uint32_t header) { return (header >> 30) & 3; }
constexpr uint32_t PacketCount(uint32_t header) { return (header >> 16) & 0x3fff; }
constexpr uint32_t Packet3Opcode(uint32_t header) { return (header >> 8) & 0xff; }

// The name of a compute-queue opcode (nvd.h's PACKET3_* without the prefix), or nullptr for one baregpu never
// sends or executes. For messages: a stuck queue's next packet, a packet the virtual MEC refuses.
const char* Packet3Name(uint32_t opcode);

// SET_SH_REG / SET_UCONFIG_REG address registers relative to the start of their range (a register's dword
// offset in gc segment 0 minus PACKET3_SET_SH_REG_START or PACKET3_SET_UCONFIG_REG_START).
constexpr bool IsShReg(uint32_t dword_offset) {
  return dword_offset >= PACKET3_SET_SH_REG_START && dword_offset < PACKET3_SET_SH_REG_END;
}
constexpr bool IsUconfigReg(uint32_t dword_offset) {
  return dword_offset >= PACKET3_SET_UCONFIG_REG_START && dword_offset < PACKET3_SET_UCONFIG_REG_END;
}

}  // namespace am::regs::pm4

#endif  // BAREGPU_AM_REGS_PM4_H_
