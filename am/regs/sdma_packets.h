// SDMA 6.0 packets, one struct per packet with a member per dword, named after the dwords of Linux 6.12
// drivers/gpu/drm/amd/amdgpu/sdma_v6_0_0_pkt_open.h (SDMA_PKT_<PACKET>_<DWORD>_...). The header gives every field
// as _offset (dword index), _mask and _shift; those are generated into am/regs/sdma_constants.h, and
// tests/am/regs/layouts_test.cc checks each member's position against its dword's _offset.
#ifndef BAREGPU_AM_REGS_SDMA_PACKETS_H_
#define BAREGPU_AM_REGS_SDMA_PACKETS_H_

#include <array>
#include <bit>
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

// SDMA_PKT_SRBM_WRITE: a register write from the ring (HEADER.byte_en selects the bytes; ADDR.addr is the dword
// address).
struct SrbmWrite {
  uint32_t header;
  uint32_t addr;
  uint32_t data;
};

// SDMA_PKT_COND_EXE: the next EXEC_COUNT.exec_count dwords run when the dword at ADDR equals REFERENCE, else are
// skipped (sdma_v6_0_ring_init_cond_exec; amdgpu_ring_patch_cond_exec fills in the count).
struct CondExe {
  uint32_t header;
  uint32_t addr_lo;
  uint32_t addr_hi;
  uint32_t reference;
  uint32_t exec_count;
};

// SDMA_OP_PTEPDE, sub-op SDMA_SUBOP_PTEPDE_GEN: writes count + 1 page-table entries (64-bit) at dst, entry i being
// (init_addr + i * incr) | mask. sdma_v6_0_0_pkt_open.h defines the op and sub-op but not this packet; the layout is
// the ten dwords sdma_v6_0_vm_set_pte_pde emits (the "mask" dwords carry the PTE flags, "value" the first address,
// "increment size" the step; the dword after it is 0, the high half of a 64-bit step).
struct GenPtePde {
  uint32_t header;
  uint32_t dst_addr_lo;
  uint32_t dst_addr_hi;
  uint32_t mask_lo;
  uint32_t mask_hi;
  uint32_t init_addr_lo;
  uint32_t init_addr_hi;
  uint32_t incr_lo;
  uint32_t incr_hi;
  uint32_t count;  // entries - 1
};

// SDMA_PKT_PTEPDE_COPY (SDMA_OP_PTEPDE, SDMA_SUBOP_PTEPDE_COPY): count + 1 page-table entries from src to dst.
struct PtepdeCopy {
  uint32_t header;  // tmz, cpv, ptepde_op
  uint32_t src_addr_lo;
  uint32_t src_addr_hi;
  uint32_t dst_addr_lo;
  uint32_t dst_addr_hi;
  uint32_t mask_dw0;
  uint32_t mask_dw1;
  uint32_t count;  // count (entries - 1), dst/src cache policies
};

// SDMA_PKT_PTEPDE_COPY_BACKWARDS (SDMA_OP_PTEPDE, SDMA_SUBOP_PTEPDE_COPY_BACKWARDS).
struct PtepdeCopyBackwards {
  uint32_t header;  // pte_size, direction, ptepde_op
  uint32_t src_addr_lo;
  uint32_t src_addr_hi;
  uint32_t dst_addr_lo;
  uint32_t dst_addr_hi;
  uint32_t mask_bit_for_dw;    // mask_first_xfer, mask_last_xfer
  uint32_t count_in_32b_xfer;  // count
};

// SDMA_PKT_PTEPDE_RMW (SDMA_OP_PTEPDE, SDMA_SUBOP_PTEPDE_RMW): read-modify-write of 64-bit entries at addr.
struct PtepdeRmw {
  uint32_t header;  // mtype, gcc, sys, snp, gpa, l2_policy, llc_policy, cpv
  uint32_t addr_lo;
  uint32_t addr_hi;
  uint32_t mask_lo;
  uint32_t mask_hi;
  uint32_t value_lo;
  uint32_t value_hi;
  uint32_t count;  // num_of_pte
};

// SDMA_PKT_SEMAPHORE (SDMA_OP_SEM): header write_one, signal, mailbox.
struct Semaphore {
  uint32_t header;
  uint32_t addr_lo;
  uint32_t addr_hi;
};

// SDMA_PKT_PRE_EXE (SDMA_OP_PRE_EXE): header dev_sel; the next exec_count dwords are what it governs.
struct PreExe {
  uint32_t header;
  uint32_t exec_count;
};

// SDMA_PKT_DUMMY_TRAP (SDMA_OP_DUMMY_TRAP).
struct DummyTrap {
  uint32_t header;
  uint32_t int_context;
};

// SDMA_PKT_GPUVM_INV (SDMA_OP_GPUVM_INV): the fields of a VM_INVALIDATE_ENG*_REQ plus a page address.
struct GpuvmInv {
  uint32_t header;
  uint32_t payload1;  // per_vmid_inv_req, flush_type, l2_ptes, l2_pde0-2, l1_ptes, clr_protection_fault_status_addr,
                      // log_request, four_kilobytes
  uint32_t payload2;  // s, page_va_42_12
  uint32_t payload3;  // page_va_47_43
};

// SDMA_PKT_VM_INVALIDATION (SDMA_OP_POLL_REGMEM, SDMA_SUBOP_VM_INVALIDATION): a TLB invalidation through a GC hub
// and/or an MM hub invalidation engine (header gfx_eng_id / mm_eng_id, 0x1f for none), waiting for the ack.
struct VmInvalidation {
  uint32_t header;
  uint32_t invalidatereq;   // the engine's VM_INVALIDATE_ENG*_REQ value
  uint32_t addressrangelo;  // address range (0xffffffff with addressrangehi 0x1f: everything)
  uint32_t addressrangehi;  // invalidateack (the ack bits waited for), addressrangehi
};

// Encoders: one per packet baregpu sends, each filling the packet's structure above (so a dword's position is the
// one layouts_test checks against sdma_v6_0_0_pkt_open.h) and returning its dwords. The driver (am::Sdma), HCQ
// (hcq/amd) and the tests all encode here. *Dword constants say where a value patched later sits.
template <typename Packet>
constexpr std::array<uint32_t, sizeof(Packet) / 4> Dwords(const Packet& packet) {
  return std::bit_cast<std::array<uint32_t, sizeof(Packet) / 4>>(packet);
}

// SDMA_PKT_COPY_LINEAR's count holds bytes - 1 in 30 bits: a larger copy is split at this.
inline constexpr uint64_t kMaxCopyLinearBytes = uint64_t{1} << 30;

// sdma_v6_0_emit_copy_buffer: `bytes` (1 .. kMaxCopyLinearBytes) from `source` to `destination` (byte addresses,
// any alignment).
inline constexpr uint32_t kCopySourceLoDword = SDMA_PKT_COPY_LINEAR_SRC_ADDR_LO_src_addr_31_0_offset;
inline constexpr uint32_t kCopySourceHiDword = SDMA_PKT_COPY_LINEAR_SRC_ADDR_HI_src_addr_63_32_offset;
inline constexpr uint32_t kCopyDestinationLoDword = SDMA_PKT_COPY_LINEAR_DST_ADDR_LO_dst_addr_31_0_offset;
inline constexpr uint32_t kCopyDestinationHiDword = SDMA_PKT_COPY_LINEAR_DST_ADDR_HI_dst_addr_63_32_offset;
constexpr std::array<uint32_t, sizeof(CopyLinear) / 4> EncodeCopyLinear(uint64_t destination, uint64_t source,
                                                                        uint64_t bytes) {
  return Dwords(CopyLinear{.header = Header(SDMA_OP_COPY, SDMA_SUBOP_COPY_LINEAR),
                           .count = static_cast<uint32_t>(bytes - 1),
                           .parameter = 0,
                           .src_addr_lo = static_cast<uint32_t>(source),
                           .src_addr_hi = static_cast<uint32_t>(source >> 32),
                           .dst_addr_lo = static_cast<uint32_t>(destination),
                           .dst_addr_hi = static_cast<uint32_t>(destination >> 32)});
}

// sdma_v6_0_ring_emit_fence: writes 32 bits of `data` to `address`.
inline constexpr uint32_t kFenceDataDword = SDMA_PKT_FENCE_DATA_data_offset;
inline constexpr uint32_t kFenceAddressLoDword = SDMA_PKT_FENCE_ADDR_LO_addr_31_0_offset;
inline constexpr uint32_t kFenceAddressHiDword = SDMA_PKT_FENCE_ADDR_HI_addr_63_32_offset;
constexpr std::array<uint32_t, sizeof(Fence) / 4> EncodeFence(uint64_t address, uint32_t data) {
  return Dwords(Fence{.header = Header(SDMA_OP_FENCE),
                      .addr_lo = static_cast<uint32_t>(address),
                      .addr_hi = static_cast<uint32_t>(address >> 32),
                      .data = data});
}

// sdma_v6_0_ring_emit_fence's trap: the TRAP interrupt with `context` (sdma_v6_0_process_trap_irq).
constexpr std::array<uint32_t, sizeof(Trap) / 4> EncodeTrap(uint32_t context) {
  return Dwords(Trap{.header = Header(SDMA_OP_TRAP), .int_context = context});
}

// POLL_REGMEM's function field uses WAIT_REG_MEM's encoding (sdma_v6_0_ring_emit_wait_reg_mem): 3 ==, 5 >=.
enum class PollCompare : uint32_t { kEqual = 3, kGreaterEqual = 5 };
// sdma_v6_0_ring_emit_wait_reg_mem's poll interval (4) and its "retry forever" count (all ones).
inline constexpr uint32_t kPollInterval = 4;
inline constexpr uint32_t kPollRetryForever = SDMA_PKT_POLL_REGMEM_DW5_retry_count_mask;
inline constexpr uint32_t kPollReferenceDword = SDMA_PKT_POLL_REGMEM_VALUE_value_offset;
inline constexpr uint32_t kPollAddressLoDword = SDMA_PKT_POLL_REGMEM_ADDR_LO_addr_31_0_offset;
inline constexpr uint32_t kPollAddressHiDword = SDMA_PKT_POLL_REGMEM_ADDR_HI_addr_63_32_offset;

// sdma_v6_0_ring_emit_wait_reg_mem on memory: wait until (*address & mask) compares true against `reference`.
constexpr std::array<uint32_t, sizeof(PollRegmem) / 4> EncodePollMemory(
    uint64_t address, uint32_t reference, PollCompare compare = PollCompare::kGreaterEqual, uint32_t mask = 0xffffffff,
    uint32_t retry_count = kPollRetryForever) {
  return Dwords(PollRegmem{.header = Header(SDMA_OP_POLL_REGMEM) | (1u << SDMA_PKT_POLL_REGMEM_HEADER_mem_poll_shift) |
                                     (static_cast<uint32_t>(compare) << SDMA_PKT_POLL_REGMEM_HEADER_func_shift),
                           .addr_lo = static_cast<uint32_t>(address),
                           .addr_hi = static_cast<uint32_t>(address >> 32),
                           .value = reference,
                           .mask = mask,
                           .dw5 = (kPollInterval << SDMA_PKT_POLL_REGMEM_DW5_interval_shift) |
                                  ((retry_count & SDMA_PKT_POLL_REGMEM_DW5_retry_count_mask)
                                   << SDMA_PKT_POLL_REGMEM_DW5_retry_count_shift)});
}

// TIMESTAMP GET_GLOBAL: the 100 MHz reference clock (64 bits) to `address` (8-byte aligned: the packet holds
// write_addr_31_3).
inline constexpr uint32_t kTimestampAddressLoDword = SDMA_PKT_TIMESTAMP_GET_GLOBAL_WRITE_ADDR_LO_write_addr_31_3_offset;
inline constexpr uint32_t kTimestampAddressHiDword =
    SDMA_PKT_TIMESTAMP_GET_GLOBAL_WRITE_ADDR_HI_write_addr_63_32_offset;
constexpr std::array<uint32_t, sizeof(TimestampGet) / 4> EncodeTimestampGlobal(uint64_t address) {
  return Dwords(TimestampGet{.header = Header(SDMA_OP_TIMESTAMP, SDMA_SUBOP_TIMESTAMP_GET_GLOBAL),
                             .write_addr_lo = static_cast<uint32_t>(address),
                             .write_addr_hi = static_cast<uint32_t>(address >> 32)});
}

// sdma_v6_0_ring_emit_ib: an indirect buffer of `dwords` dwords (a multiple of 8, at most the 20-bit ib_size) at
// `address`, in VMID 0. The packet must end on an 8-dword boundary of the ring (pad with NOPs before it).
inline constexpr uint32_t kMaxIndirectDwords = SDMA_PKT_INDIRECT_IB_SIZE_ib_size_mask;
inline constexpr uint32_t kIndirectAlignDwords = 8;
constexpr std::array<uint32_t, sizeof(Indirect) / 4> EncodeIndirect(uint64_t address, uint32_t dwords) {
  return Dwords(Indirect{.header = Header(SDMA_OP_INDIRECT),
                         .base_lo = static_cast<uint32_t>(address),
                         .base_hi = static_cast<uint32_t>(address >> 32),
                         .ib_size = dwords & kMaxIndirectDwords,
                         .csa_addr_lo = 0,
                         .csa_addr_hi = 0});
}

// sdma_v6_0_ring_init_cond_exec: the next `dwords` dwords run only while the dword at `address` is `reference`.
inline constexpr uint32_t kMaxCondExeDwords = SDMA_PKT_COND_EXE_EXEC_COUNT_exec_count_mask;
constexpr std::array<uint32_t, sizeof(CondExe) / 4> EncodeCondExe(uint64_t address, uint32_t reference,
                                                                  uint32_t dwords) {
  return Dwords(CondExe{.header = Header(SDMA_OP_COND_EXE),
                        .addr_lo = static_cast<uint32_t>(address),
                        .addr_hi = static_cast<uint32_t>(address >> 32),
                        .reference = reference,
                        .exec_count = dwords & kMaxCondExeDwords});
}

// sdma_v6_0_vm_set_pte_pde: `count` (>= 1) entries at `destination`, the first `address | flags`, each next one
// `step` bytes further.
constexpr std::array<uint32_t, sizeof(GenPtePde) / 4> EncodeGenPtePde(uint64_t destination, uint64_t address,
                                                                      uint32_t count, uint32_t step, uint64_t flags) {
  return Dwords(GenPtePde{.header = Header(SDMA_OP_PTEPDE, SDMA_SUBOP_PTEPDE_GEN),
                          .dst_addr_lo = static_cast<uint32_t>(destination),
                          .dst_addr_hi = static_cast<uint32_t>(destination >> 32),
                          .mask_lo = static_cast<uint32_t>(flags),
                          .mask_hi = static_cast<uint32_t>(flags >> 32),
                          .init_addr_lo = static_cast<uint32_t>(address),
                          .init_addr_hi = static_cast<uint32_t>(address >> 32),
                          .incr_lo = step,
                          .incr_hi = 0,
                          .count = count - 1});
}

// A one-dword NOP (sdma_v6_0_ring_pad_ib pads with these).
constexpr uint32_t EncodeNop() { return Header(SDMA_OP_NOP); }

// sdma_v6_0_ring_emit_wreg: the whole register at dword address `reg` takes `value` (all four byte enables).
inline constexpr uint32_t kSrbmWriteAllBytes = SDMA_PKT_SRBM_WRITE_HEADER_byte_en_mask;
constexpr std::array<uint32_t, sizeof(SrbmWrite) / 4> EncodeSrbmWrite(uint32_t reg, uint32_t value) {
  return Dwords(
      SrbmWrite{.header = Header(SDMA_OP_SRBM_WRITE) | (kSrbmWriteAllBytes << SDMA_PKT_SRBM_WRITE_HEADER_byte_en_shift),
                .addr = reg & SDMA_PKT_SRBM_WRITE_ADDR_addr_mask,
                .data = value});
}

// The packet's name (SDMA_PKT_* of sdma_v6_0_0_pkt_open.h without the prefix, sub-op included: "COPY_LINEAR",
// "TIMESTAMP_GET_GLOBAL"), or nullptr for an op no table entry covers. One table for the driver, HCQ, the CLI and
// the virtual GPU's messages.
const char* PacketName(uint32_t header);
// The length of a packet whose length its header alone gives (fixed-size packets, NOP's count), or 0 when it
// depends on later dwords or the op is unknown.
uint32_t PacketDwords(uint32_t header);

}  // namespace am::regs::sdma

#endif  // BAREGPU_AM_REGS_SDMA_PACKETS_H_
