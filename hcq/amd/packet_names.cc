#include "hcq/amd/packet_names.h"

#include <utility>

#include "absl/strings/str_format.h"
#include "am/regs/pm4.h"
#include "am/regs/sdma_constants.h"

namespace hcq::amd {
namespace {

namespace pm4 = am::regs::pm4;
namespace sdma = am::regs::sdma;

constexpr std::pair<uint32_t, const char*> kPm4[] = {
    {pm4::PACKET3_NOP, "NOP"},
    {pm4::PACKET3_WAIT_REG_MEM, "WAIT_REG_MEM"},
    {pm4::PACKET3_RELEASE_MEM, "RELEASE_MEM"},
    {pm4::PACKET3_ACQUIRE_MEM, "ACQUIRE_MEM"},
    {pm4::PACKET3_SET_SH_REG, "SET_SH_REG"},
    {pm4::PACKET3_DISPATCH_DIRECT, "DISPATCH_DIRECT"},
    {pm4::PACKET3_EVENT_WRITE, "EVENT_WRITE"},
    {pm4::PACKET3_INDIRECT_BUFFER, "INDIRECT_BUFFER"},
    {pm4::PACKET3_WRITE_DATA, "WRITE_DATA"},
};

constexpr std::pair<uint32_t, const char*> kSdma[] = {
    {sdma::SDMA_OP_NOP, "NOP"},
    {sdma::SDMA_OP_COPY, "COPY"},
    {sdma::SDMA_OP_WRITE, "WRITE"},
    {sdma::SDMA_OP_INDIRECT, "INDIRECT"},
    {sdma::SDMA_OP_FENCE, "FENCE"},
    {sdma::SDMA_OP_TRAP, "TRAP"},
    {sdma::SDMA_OP_POLL_REGMEM, "POLL_REGMEM"},
    {sdma::SDMA_OP_TIMESTAMP, "TIMESTAMP"},
};

}  // namespace

std::string Pm4PacketName(uint32_t header) {
  if (pm4::PacketType(header) != pm4::PACKET_TYPE3) return absl::StrFormat("a type-%d packet", pm4::PacketType(header));
  const uint32_t opcode = pm4::Packet3Opcode(header);
  for (const auto& [value, name] : kPm4) {
    if (value == opcode) return name;
  }
  return absl::StrFormat("opcode %#x", opcode);
}

std::string SdmaPacketName(uint32_t header) {
  const uint32_t op = header & 0xff;
  for (const auto& [value, name] : kSdma) {
    if (value == op) return name;
  }
  return absl::StrFormat("op %#x", op);
}

}  // namespace hcq::amd
