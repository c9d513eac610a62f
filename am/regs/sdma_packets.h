// SDMA 6.0 packets, one struct per packet with a member per dword, named after the dwords of Linux 6.12
// drivers/gpu/drm/amd/amdgpu/sdma_v6_0_0_pkt_open.h (SDMA_PKT_<PACKET>_<DWORD>_...). The header gives every field
// as _offset (dword index), _mask and _shift; those are generated into am/regs/sdma_constants.h, and
// tests/am/regs/layouts_test.cc checks each member's position against its dword's _offset.
#ifndef BAREGPU_AM_REGS_SDMA_PACKETS_H_
#define BAREGPU_AM_REGS_SDMA_PACKETS_H_

#include <cstdint>

#include "am/regs/sdma_constants.h"

namespace am::regs::sdma {

// The first dword of every packet: op in bits 7:0, sub_op in bits 15:8 (SDMA_PKT_*_HEADER_op / _sub_op).
constexpr uint32_t Header(uint32_t op, uint32_t sub_op = 0) {
  return ((op & SDMA_PKT_COPY_LINEAR_HEADER_op_mask) << SDMA_PKT_COPY_LINEAR_HEADER_op_shift) |
         ((sub_op & SDMA_PKT_COPY_LINEAR_HEADER_sub_op_mask) << SDMA_PKT_COPY_LINEAR_HEADER_sub_op_shift);
}

// SDMA_PKT_COPY_LINEAR (SDMA_OP_COPY, SDMA_SUBOP_COPY_LINEAR).
struct CopyLinear {
  uint32_t header;
  uint32_t count;  // bytes - 1
  uint32_t parameter;
  uint32_t src_addr_lo;
  uint32_t src_addr_hi;
  uint32_t dst_addr_lo;
  uint32_t dst_addr_hi;
};

// SDMA_PKT_WRITE_UNTILED (SDMA_OP_WRITE): followed by the data dwords, data0 being the first.
struct WriteUntiled {
  uint32_t header;
  uint32_t dst_addr_lo;
  uint32_t dst_addr_hi;
  uint32_t dw_3;  // count (dwords - 1), sw
  uint32_t data0;
};

// SDMA_PKT_FENCE (SDMA_OP_FENCE).
struct Fence {
  uint32_t header;
  uint32_t addr_lo;
  uint32_t addr_hi;
  uint32_t data;
};

// SDMA_PKT_TRAP (SDMA_OP_TRAP).
struct Trap {
  uint32_t header;
  uint32_t int_context;
};

// SDMA_PKT_POLL_REGMEM (SDMA_OP_POLL_REGMEM).
struct PollRegmem {
  uint32_t header;
  uint32_t addr_lo;
  uint32_t addr_hi;
  uint32_t value;
  uint32_t mask;
  uint32_t dw5;  // interval, retry_count
};

// SDMA_PKT_TIMESTAMP_SET / _GET / _GET_GLOBAL (SDMA_OP_TIMESTAMP with a sub-op each).
struct TimestampSet {
  uint32_t header;
  uint32_t init_data_lo;
  uint32_t init_data_hi;
};
struct TimestampGet {
  uint32_t header;
  uint32_t write_addr_lo;
  uint32_t write_addr_hi;
};
using TimestampGetGlobal = TimestampGet;

// SDMA_PKT_INDIRECT (SDMA_OP_INDIRECT).
struct Indirect {
  uint32_t header;
  uint32_t base_lo;
  uint32_t base_hi;
  uint32_t ib_size;
  uint32_t csa_addr_lo;
  uint32_t csa_addr_hi;
};

// SDMA_PKT_NOP (SDMA_OP_NOP): the header's count field gives further padding dwords.
struct Nop {
  uint32_t header;
  uint32_t data0;
};

// SDMA_PKT_ATOMIC (SDMA_OP_ATOMIC).
struct Atomic {
  uint32_t header;
  uint32_t addr_lo;
  uint32_t addr_hi;
  uint32_t src_data_lo;
  uint32_t src_data_hi;
  uint32_t cmp_data_lo;
  uint32_t cmp_data_hi;
  uint32_t loop_interval;
};

// SDMA_PKT_CONSTANT_FILL (SDMA_OP_CONST_FILL).
struct ConstantFill {
  uint32_t header;
  uint32_t dst_addr_lo;
  uint32_t dst_addr_hi;
  uint32_t data;
  uint32_t count;  // bytes - 1
};

}  // namespace am::regs::sdma

#endif  // BAREGPU_AM_REGS_SDMA_PACKETS_H_
