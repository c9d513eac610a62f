// The PM4 packets baregpu sends to a gfx11 compute queue, one encoder each: the driver (am::Gfx, KIQ-less
// queues), HCQ (hcq/amd) and the tests all build packets here, so an encoding is written once. Opcodes and field
// encodings come from the generated am/regs/pm4_constants.h (Linux 6.12 nvd.h); each encoder names the amdgpu
// function whose packet it reproduces. Every encoder returns the packet's dwords; the *Dword constants say where
// a value a caller patches later (a variable's value, a fence's data) sits in it.
#ifndef BAREGPU_AM_REGS_PM4_PACKETS_H_
#define BAREGPU_AM_REGS_PM4_PACKETS_H_

#include <array>
#include <cstdint>
#include <span>

#include "am/regs/pm4.h"

namespace am::regs::pm4 {

// nvd.h documents WAIT_REG_MEM_FUNCTION's values only in a comment: 0 always, 1 <, 2 <=, 3 ==, 4 !=, 5 >=, 6 >.
enum class Compare : uint32_t { kAlways = 0, kLess = 1, kLessEqual = 2, kEqual = 3, kNotEqual = 4, kGreaterEqual = 5 };

// WAIT_REG_MEM's poll interval: gfx_v11_0_wait_reg_mem polls every 0x20 clocks.
inline constexpr uint32_t kWaitPollInterval = 0x20;

constexpr uint32_t Lo32(uint64_t v) { return static_cast<uint32_t>(v); }
constexpr uint32_t Hi32(uint64_t v) { return static_cast<uint32_t>(v >> 32); }

// gfx_v11_0_wait_reg_mem on memory: wait until (*address & mask) compares true against `reference`.
struct WaitMemory {
  static constexpr uint32_t kDwords = 7;
  static constexpr uint32_t kAddressLoDword = 2;  // bits 1:0 are the swap field: the address is dword aligned
  static constexpr uint32_t kAddressHiDword = 3;
  static constexpr uint32_t kReferenceDword = 4;
  static constexpr std::array<uint32_t, kDwords> Encode(uint64_t address, uint32_t reference,
                                                        Compare compare = Compare::kGreaterEqual,
                                                        uint32_t mask = 0xffffffff) {
    return {Packet3(PACKET3_WAIT_REG_MEM, kDwords - 2),
            WAIT_REG_MEM_FUNCTION(static_cast<uint32_t>(compare)) | WAIT_REG_MEM_MEM_SPACE(1) |
                WAIT_REG_MEM_OPERATION(0) | WAIT_REG_MEM_ENGINE(0),
            Lo32(address) & ~3u,
            Hi32(address),
            reference,
            mask,
            kWaitPollInterval};
  }
};

// gfx_v11_0_ring_emit_reg_write_reg_wait / _hdp_flush: write `value` to register `write_register`, then wait until
// register `wait_register` & mask == value (absolute dword addresses).
struct WriteWaitRegister {
  static constexpr uint32_t kDwords = 7;
  static constexpr std::array<uint32_t, kDwords> Encode(uint32_t write_register, uint32_t wait_register, uint32_t value,
                                                        uint32_t mask) {
    return {Packet3(PACKET3_WAIT_REG_MEM, kDwords - 2),
            WAIT_REG_MEM_FUNCTION(static_cast<uint32_t>(Compare::kEqual)) | WAIT_REG_MEM_MEM_SPACE(0) |
                WAIT_REG_MEM_OPERATION(1) | WAIT_REG_MEM_ENGINE(0),
            write_register,
            wait_register,
            value,
            mask,
            kWaitPollInterval};
  }
};

// RELEASE_MEM's DATA_SEL and INT_SEL (nvd.h's comments on PACKET3_RELEASE_MEM).
enum class ReleaseData : uint32_t { kNone = 0, kLow32 = 1, k64 = 2, kGpuClock = 3 };
enum class ReleaseInterrupt : uint32_t { kNone = 0, kAfterWriteConfirm = 2 };

// gfx_v11_0_ring_emit_fence: at end of pipe, write back and invalidate GL2/GLM (in sequence), then write `data`
// (or the GPU clock) to `address`, optionally raising the EOP interrupt with `context` as its context id.
struct ReleaseMem {
  static constexpr uint32_t kDwords = 8;
  static constexpr uint32_t kAddressLoDword = 3;
  static constexpr uint32_t kAddressHiDword = 4;
  static constexpr uint32_t kDataLoDword = 5;
  static constexpr uint32_t kDataHiDword = 6;
  static constexpr uint32_t kEvent =
      PACKET3_RELEASE_MEM_GCR_SEQ | PACKET3_RELEASE_MEM_GCR_GL2_WB | PACKET3_RELEASE_MEM_GCR_GLM_INV |
      PACKET3_RELEASE_MEM_GCR_GLM_WB | PACKET3_RELEASE_MEM_CACHE_POLICY(3) |
      PACKET3_RELEASE_MEM_EVENT_TYPE(CACHE_FLUSH_AND_INV_TS_EVENT) | PACKET3_RELEASE_MEM_EVENT_INDEX(5);
  static constexpr std::array<uint32_t, kDwords> Encode(uint64_t address, ReleaseData data_sel, uint64_t data = 0,
                                                        ReleaseInterrupt int_sel = ReleaseInterrupt::kNone,
                                                        uint32_t context = 0) {
    return {Packet3(PACKET3_RELEASE_MEM, kDwords - 2),
            kEvent,
            PACKET3_RELEASE_MEM_DATA_SEL(static_cast<uint32_t>(data_sel)) |
                PACKET3_RELEASE_MEM_INT_SEL(static_cast<uint32_t>(int_sel)) | PACKET3_RELEASE_MEM_DST_SEL(0),
            Lo32(address),
            Hi32(address),
            Lo32(data),
            Hi32(data),
            context};
  }
};

// gfx_v11_0_emit_mem_sync: invalidate every cache level and write back GL2/GLM, over the whole address range.
struct AcquireMem {
  static constexpr uint32_t kDwords = 8;
  static constexpr uint32_t kGcr = PACKET3_ACQUIRE_MEM_GCR_CNTL_GL2_INV(1) | PACKET3_ACQUIRE_MEM_GCR_CNTL_GL2_WB(1) |
                                   PACKET3_ACQUIRE_MEM_GCR_CNTL_GLM_INV(1) | PACKET3_ACQUIRE_MEM_GCR_CNTL_GLM_WB(1) |
                                   PACKET3_ACQUIRE_MEM_GCR_CNTL_GL1_INV(1) | PACKET3_ACQUIRE_MEM_GCR_CNTL_GLV_INV(1) |
                                   PACKET3_ACQUIRE_MEM_GCR_CNTL_GLK_INV(1) | PACKET3_ACQUIRE_MEM_GCR_CNTL_GLI_INV(1);
  // gfx_v11_0_emit_mem_sync's COHER_SIZE (all ones, 32 + 24 bits) and poll interval (10).
  static constexpr uint32_t kSizeLo = 0xffffffff, kSizeHi = 0xffffff, kPollInterval = 0x0000000A;
  static constexpr std::array<uint32_t, kDwords> Encode() {
    return {Packet3(PACKET3_ACQUIRE_MEM, kDwords - 2), 0, kSizeLo, kSizeHi, 0, 0, kPollInterval, kGcr};
  }
};

// SET_SH_REG of consecutive registers from `first` (an absolute dword address in gc segment 0): the header, the
// offset relative to PACKET3_SET_SH_REG_START, then the values.
struct SetShReg {
  static constexpr uint32_t kHeaderDwords = 2;
  static constexpr uint32_t Header(uint32_t count) { return Packet3(PACKET3_SET_SH_REG, count); }
  static constexpr uint32_t Offset(uint32_t first) { return first - PACKET3_SET_SH_REG_START; }
};

// DISPATCH_DIRECT: the workgroup counts, then COMPUTE_DISPATCH_INITIATOR.
struct DispatchDirect {
  static constexpr uint32_t kDwords = 5;
  static constexpr uint32_t kGroupsDword = 1;  // x, y, z follow
  static constexpr std::array<uint32_t, kDwords> Encode(uint32_t x, uint32_t y, uint32_t z, uint32_t initiator) {
    return {Packet3(PACKET3_DISPATCH_DIRECT, kDwords - 2), x, y, z, initiator};
  }
};

// EVENT_WRITE of an event without data (gfx11's compute partial flush: CS_PARTIAL_FLUSH, index 4).
struct EventWrite {
  static constexpr uint32_t kDwords = 2;
  static constexpr std::array<uint32_t, kDwords> Encode(uint32_t event, uint32_t index) {
    return {Packet3(PACKET3_EVENT_WRITE, kDwords - 2), EVENT_TYPE(event) | EVENT_INDEX(index)};
  }
  static constexpr std::array<uint32_t, kDwords> CsPartialFlush() { return Encode(CS_PARTIAL_FLUSH, 4); }
};

// gfx_v11_0_ring_emit_ib_compute: an indirect buffer of `dwords` dwords at `address` (dword aligned, 48 bits),
// run in `vmid` (0 = the queue's own context). The size field is 20 bits.
struct IndirectBuffer {
  static constexpr uint32_t kDwords = 4;
  static constexpr uint32_t kMaxDwords = (1u << 20) - 1;
  static constexpr uint32_t kVmidShift = 24;
  static constexpr std::array<uint32_t, kDwords> Encode(uint64_t address, uint32_t dwords, uint32_t vmid = 0) {
    return {Packet3(PACKET3_INDIRECT_BUFFER, kDwords - 2), Lo32(address) & ~3u, Hi32(address) & 0xffff,
            INDIRECT_BUFFER_VALID | (dwords & kMaxDwords) | (vmid << kVmidShift)};
  }
  // The size an encoded packet carries.
  static constexpr uint32_t Size(std::span<const uint32_t, kDwords> packet) { return packet[3] & kMaxDwords; }
  static constexpr uint64_t Address(std::span<const uint32_t, kDwords> packet) {
    return packet[1] | (uint64_t{packet[2] & 0xffff} << 32);
  }
};

// WRITE_DATA of `data.size()` dwords to memory (DST_SEL 5) with write confirm, or to a register (DST_SEL 0).
struct WriteData {
  static constexpr uint32_t kHeaderDwords = 4;
  static constexpr uint32_t kDstRegister = 0, kDstMemory = 5;
  static constexpr uint32_t kWriteConfirm = 1u << 20;
  static constexpr std::array<uint32_t, kHeaderDwords> Header(uint32_t dst_sel, uint64_t address, uint32_t count) {
    return {Packet3(PACKET3_WRITE_DATA, 2 + count), WRITE_DATA_DST_SEL(dst_sel) | kWriteConfirm, Lo32(address),
            Hi32(address)};
  }
};

}  // namespace am::regs::pm4

#endif  // BAREGPU_AM_REGS_PM4_PACKETS_H_
