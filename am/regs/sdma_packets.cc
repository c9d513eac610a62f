#include "am/regs/sdma_packets.h"

namespace am::regs::sdma {
namespace {

// Named as sdma_v6_0_0_pkt_open.h's SDMA_PKT_* structures. `dwords` 0: the length is in a later dword (WRITE's
// count) or not fixed; NOP's comes from its header.
struct Named {
  uint32_t op;
  int sub_op;  // -1: any sub-op
  const char* name;
  uint32_t dwords;
};
constexpr Named kPackets[] = {
    {SDMA_OP_NOP, -1, "NOP", 0},
    {SDMA_OP_COPY, SDMA_SUBOP_COPY_LINEAR, "COPY_LINEAR", sizeof(CopyLinear) / 4},
    {SDMA_OP_COPY, -1, "COPY", 0},
    {SDMA_OP_WRITE, SDMA_SUBOP_WRITE_LINEAR, "WRITE_UNTILED", 0},
    {SDMA_OP_WRITE, -1, "WRITE", 0},
    {SDMA_OP_INDIRECT, -1, "INDIRECT", sizeof(Indirect) / 4},
    {SDMA_OP_FENCE, -1, "FENCE", sizeof(Fence) / 4},
    {SDMA_OP_TRAP, -1, "TRAP", sizeof(Trap) / 4},
    {SDMA_OP_SEM, -1, "SEMAPHORE", sizeof(Semaphore) / 4},
    {SDMA_OP_POLL_REGMEM, 0, "POLL_REGMEM", sizeof(PollRegmem) / 4},
    {SDMA_OP_POLL_REGMEM, SDMA_SUBOP_VM_INVALIDATION, "VM_INVALIDATION", sizeof(VmInvalidation) / 4},
    {SDMA_OP_POLL_REGMEM, -1, "POLL_REGMEM (sub-op)", 0},
    {SDMA_OP_COND_EXE, -1, "COND_EXE", sizeof(CondExe) / 4},
    {SDMA_OP_ATOMIC, -1, "ATOMIC", sizeof(Atomic) / 4},
    {SDMA_OP_CONST_FILL, -1, "CONSTANT_FILL", sizeof(ConstantFill) / 4},
    {SDMA_OP_PTEPDE, SDMA_SUBOP_PTEPDE_GEN, "PTEPDE_GEN", sizeof(GenPtePde) / 4},
    {SDMA_OP_PTEPDE, SDMA_SUBOP_PTEPDE_COPY, "PTEPDE_COPY", sizeof(PtepdeCopy) / 4},
    {SDMA_OP_PTEPDE, SDMA_SUBOP_PTEPDE_RMW, "PTEPDE_RMW", sizeof(PtepdeRmw) / 4},
    {SDMA_OP_PTEPDE, SDMA_SUBOP_PTEPDE_COPY_BACKWARDS, "PTEPDE_COPY_BACKWARDS", sizeof(PtepdeCopyBackwards) / 4},
    {SDMA_OP_PTEPDE, -1, "PTEPDE", 0},
    {SDMA_OP_TIMESTAMP, SDMA_SUBOP_TIMESTAMP_SET, "TIMESTAMP_SET", sizeof(TimestampSet) / 4},
    {SDMA_OP_TIMESTAMP, SDMA_SUBOP_TIMESTAMP_GET, "TIMESTAMP_GET", sizeof(TimestampGet) / 4},
    {SDMA_OP_TIMESTAMP, SDMA_SUBOP_TIMESTAMP_GET_GLOBAL, "TIMESTAMP_GET_GLOBAL", sizeof(TimestampGetGlobal) / 4},
    {SDMA_OP_TIMESTAMP, -1, "TIMESTAMP", 0},
    {SDMA_OP_SRBM_WRITE, -1, "SRBM_WRITE", sizeof(SrbmWrite) / 4},
    {SDMA_OP_PRE_EXE, -1, "PRE_EXE", sizeof(PreExe) / 4},
    {SDMA_OP_GPUVM_INV, -1, "GPUVM_INV", sizeof(GpuvmInv) / 4},
    {SDMA_OP_GCR_REQ, -1, "GCR_REQ", 0},
    {SDMA_OP_DUMMY_TRAP, -1, "DUMMY_TRAP", sizeof(DummyTrap) / 4},
};

const Named* Find(uint32_t header) {
  const uint32_t op = (header >> SDMA_PKT_COPY_LINEAR_HEADER_op_shift) & SDMA_PKT_COPY_LINEAR_HEADER_op_mask;
  const int sub_op =
      static_cast<int>((header >> SDMA_PKT_COPY_LINEAR_HEADER_sub_op_shift) & SDMA_PKT_COPY_LINEAR_HEADER_sub_op_mask);
  for (const Named& n : kPackets) {
    if (n.op == op && (n.sub_op < 0 || n.sub_op == sub_op)) return &n;
  }
  return nullptr;
}

}  // namespace

const char* PacketName(uint32_t header) {
  const Named* named = Find(header);
  return named != nullptr ? named->name : nullptr;
}

uint32_t PacketDwords(uint32_t header) {
  const Named* named = Find(header);
  if (named == nullptr) return 0;
  if (named->op == SDMA_OP_NOP)
    return 1 + ((header >> SDMA_PKT_NOP_HEADER_count_shift) & SDMA_PKT_NOP_HEADER_count_mask);
  return named->dwords;
}

}  // namespace am::regs::sdma
