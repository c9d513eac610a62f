#include "am/regs/pm4.h"

namespace am::regs::pm4 {

const char* Packet3Name(uint32_t opcode) {
  struct Named {
    uint32_t opcode;
    const char* name;
  };
  static constexpr Named kNames[] = {
      {pm4::PACKET3_NOP, "NOP"},
      {pm4::PACKET3_DISPATCH_DIRECT, "DISPATCH_DIRECT"},
      {pm4::PACKET3_PRED_EXEC, "PRED_EXEC"},
      {pm4::PACKET3_WRITE_DATA, "WRITE_DATA"},
      {pm4::PACKET3_WAIT_REG_MEM, "WAIT_REG_MEM"},
      {pm4::PACKET3_INDIRECT_BUFFER, "INDIRECT_BUFFER"},
      {pm4::PACKET3_EVENT_WRITE, "EVENT_WRITE"},
      {pm4::PACKET3_RELEASE_MEM, "RELEASE_MEM"},
      {pm4::PACKET3_ACQUIRE_MEM, "ACQUIRE_MEM"},
      {pm4::PACKET3_SET_SH_REG, "SET_SH_REG"},
      {pm4::PACKET3_SET_UCONFIG_REG, "SET_UCONFIG_REG"},
      {pm4::PACKET3_COPY_DATA, "COPY_DATA"},
      {pm4::PACKET3_DMA_DATA, "DMA_DATA"},
      {pm4::PACKET3_SET_RESOURCES, "SET_RESOURCES"},
      {pm4::PACKET3_MAP_QUEUES, "MAP_QUEUES"},
      {pm4::PACKET3_UNMAP_QUEUES, "UNMAP_QUEUES"},
      {pm4::PACKET3_QUERY_STATUS, "QUERY_STATUS"},
  };
  for (const Named& n : kNames) {
    if (n.opcode == opcode) return n.name;
  }
  return nullptr;
}

}  // namespace am::regs::pm4
