// Packets of a compute queue (PM4 type 3, nvd.h) and of an SDMA queue (sdma_v6_0_0_pkt_open.h) decoded for a
// person: the packet's name from am/regs' one table per engine, the fields worth reading (addresses, data,
// register names from the database), its length, and where an indirect buffer it starts lives.
#ifndef BAREGPU_AM_PACKET_DECODE_H_
#define BAREGPU_AM_PACKET_DECODE_H_

#include <cstdint>
#include <optional>
#include <span>
#include <string>

#include "am/regs/ip_bases.h"

namespace am {

// An indirect buffer a packet hands the engine (PM4 INDIRECT_BUFFER, SDMA INDIRECT).
struct IndirectTarget {
  uint64_t address = 0;
  uint32_t dwords = 0;
  std::optional<uint32_t> vmid;  // the packet's VMID field; nullopt: the queue's own
};

struct DecodedPacket {
  std::string name;        // "RELEASE_MEM", "COPY_LINEAR"; "opcode 0x99" / "op 0x42" for one no table names
  std::string fields;      // "addr=0x1000 data=0x5", empty when nothing is decoded
  uint32_t dwords = 0;     // the packet's length; 0 when it cannot be told (the rest of the stream is undelimited)
  bool truncated = false;  // the stream ends before the packet does
  std::optional<IndirectTarget> indirect;
};

// `packet`: the dwords from the packet's header to the end of what is readable (the write pointer, the IB's end).
// `bases` place SET_SH_REG / SET_UCONFIG_REG / WRITE_DATA registers for their names.
DecodedPacket DecodePm4(std::span<const uint32_t> packet, const am::regs::IpBases& bases);
DecodedPacket DecodeSdma(std::span<const uint32_t> packet);

}  // namespace am

#endif  // BAREGPU_AM_PACKET_DECODE_H_
