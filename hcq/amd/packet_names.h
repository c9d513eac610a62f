// Names of the packets hcq/amd sends, for messages about a stopped queue.
#ifndef BAREGPU_HCQ_AMD_PACKET_NAMES_H_
#define BAREGPU_HCQ_AMD_PACKET_NAMES_H_

#include <cstdint>
#include <string>

namespace hcq::amd {

// PM4 type-3 opcode name (nvd.h PACKET3_* without the prefix), or "opcode 0x.." for others.
std::string Pm4PacketName(uint32_t header);
// SDMA op name (sdma_v6_0_0_pkt_open.h SDMA_OP_* without the prefix), or "op 0x..".
std::string SdmaPacketName(uint32_t header);

}  // namespace hcq::amd

#endif  // BAREGPU_HCQ_AMD_PACKET_NAMES_H_
