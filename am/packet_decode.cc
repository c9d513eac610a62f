#include "am/packet_decode.h"

#include <algorithm>
#include <bit>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "am/regs/database.h"
#include "am/regs/pm4.h"
#include "am/regs/pm4_packets.h"
#include "am/regs/sdma_packets.h"

namespace am {
namespace {

namespace pm4 = am::regs::pm4;
namespace sdma = am::regs::sdma;

// At most this many dwords of a packet no decoder knows are shown raw, and this many registers of a SET_*_REG.
constexpr size_t kRawDwordsShown = 8;
constexpr size_t kRegistersShown = 16;

// Field extraction by nvd.h's shift macros: each field runs from its shift up to the next field nvd.h defines.
// WAIT_REG_MEM dword 1: FUNCTION [2:0] (values 0..6), MEM_SPACE [5:4], OPERATION [7:6].
constexpr uint32_t kWaitFunctionMask = 0x7;
constexpr uint32_t kWaitMemSpaceShift = std::countr_zero(pm4::WAIT_REG_MEM_MEM_SPACE(1));
constexpr uint32_t kWaitOperationShift = std::countr_zero(pm4::WAIT_REG_MEM_OPERATION(1));
constexpr uint32_t kTwoBits = 0x3;
// RELEASE_MEM dword 2: DATA_SEL [31:29], INT_SEL [26:24]; dword 1: EVENT_TYPE [5:0], EVENT_INDEX [11:8].
constexpr uint32_t kReleaseDataSelShift = std::countr_zero(pm4::PACKET3_RELEASE_MEM_DATA_SEL(1));
constexpr uint32_t kReleaseIntSelShift = std::countr_zero(pm4::PACKET3_RELEASE_MEM_INT_SEL(1));
constexpr uint32_t kThreeBits = 0x7;
constexpr uint32_t kEventTypeMask = 0x3f;
// WRITE_DATA dword 1: DST_SEL [11:8].
constexpr uint32_t kWriteDstSelShift = std::countr_zero(pm4::WRITE_DATA_DST_SEL(1));
constexpr uint32_t kFourBits = 0xf;
// SET_SH_REG / SET_UCONFIG_REG dword 1: the register offset in its low 16 bits (gfx_v11_0 emits it so).
constexpr uint32_t kSetRegOffsetMask = 0xffff;
// INDIRECT_BUFFER dword 3: VMID [27:24] (gfx_v11_0_ring_emit_ib_compute: vmid << 24).
constexpr uint32_t kIbVmidMask = 0xf;

const char* CompareName(uint32_t function) {
  static constexpr const char* kNames[] = {"always", "<", "<=", "==", "!=", ">=", ">"};
  return function < std::size(kNames) ? kNames[function] : "?";
}

// The register at absolute dword address `address` by its database name: what SET_SH_REG's START + offset,
// WRITE_DATA's register destination and WAIT_REG_MEM's registers hold (gfx_v11_0 and tinygrad put SOC15_REG_OFFSET,
// base included, in them; a wait may name an NBIO register, as the HDP flush's write-wait does). GC first when
// blocks overlap.
std::string RegisterName(const am::regs::IpBases& bases, uint32_t address) {
  const std::vector<am::regs::AddressMatch> matches = am::regs::FindByAddress(bases, address);
  for (const am::regs::AddressMatch& match : matches) {
    if (match.reg.ip() == am::regs::Ip::kGc) return std::string(match.reg.name());
  }
  if (!matches.empty()) return std::string(matches.front().reg.name());
  return absl::StrFormat("reg %#x", address);
}

// Up to kRawDwordsShown dwords of `packet` from index `from` in hex, "..." when there are more.
std::string HexWords(std::span<const uint32_t> packet, size_t from) {
  std::vector<std::string> words;
  for (size_t i = from; i < packet.size() && i < from + kRawDwordsShown; ++i) {
    words.push_back(absl::StrFormat("%08x", packet[i]));
  }
  if (packet.size() > from + kRawDwordsShown) words.push_back("...");
  return absl::StrJoin(words, " ");
}

std::string RawDwords(std::span<const uint32_t> packet, size_t from) {
  const std::string words = HexWords(packet, from);
  return words.empty() ? "" : absl::StrCat("dwords ", words);
}

uint64_t Pair(std::span<const uint32_t> p, size_t lo) { return p[lo] | (uint64_t{p[lo + 1]} << 32); }

std::string Pm4Fields(uint32_t opcode, std::span<const uint32_t> p, const am::regs::IpBases& bases) {
  switch (opcode) {
    case pm4::PACKET3_NOP:
      return "";
    case pm4::PACKET3_SET_SH_REG:
    case pm4::PACKET3_SET_UCONFIG_REG: {
      if (p.size() < pm4::SetShReg::kHeaderDwords) return "";
      const uint32_t start =
          opcode == pm4::PACKET3_SET_SH_REG ? pm4::PACKET3_SET_SH_REG_START : pm4::PACKET3_SET_UCONFIG_REG_START;
      std::vector<std::string> writes;
      for (size_t i = pm4::SetShReg::kHeaderDwords; i < p.size() && writes.size() < kRegistersShown; ++i) {
        const uint32_t offset = start + (p[1] & kSetRegOffsetMask) + static_cast<uint32_t>(i) - 2;
        writes.push_back(absl::StrFormat("%s=%#x", RegisterName(bases, offset), p[i]));
      }
      return absl::StrJoin(writes, " ");
    }
    case pm4::PACKET3_WRITE_DATA: {
      if (p.size() < pm4::WriteData::kHeaderDwords) return "";
      const uint32_t dst = (p[1] >> kWriteDstSelShift) & kFourBits;
      std::string target =
          dst == pm4::WriteData::kDstRegister ? RegisterName(bases, p[2]) : absl::StrFormat("addr=%#x", Pair(p, 2));
      return absl::StrFormat("dst_sel=%d %s data=%s", dst, target, HexWords(p, pm4::WriteData::kHeaderDwords));
    }
    case pm4::PACKET3_RELEASE_MEM: {
      if (p.size() < pm4::ReleaseMem::kDwords) return RawDwords(p, 1);
      return absl::StrFormat("event=%#x data_sel=%d int_sel=%d addr=%#x data=%#x ctx=%#x", p[1] & kEventTypeMask,
                             (p[2] >> kReleaseDataSelShift) & kThreeBits, (p[2] >> kReleaseIntSelShift) & kThreeBits,
                             Pair(p, pm4::ReleaseMem::kAddressLoDword), Pair(p, pm4::ReleaseMem::kDataLoDword), p[7]);
    }
    case pm4::PACKET3_WAIT_REG_MEM: {
      if (p.size() < pm4::WaitMemory::kDwords) return RawDwords(p, 1);
      const bool memory = ((p[1] >> kWaitMemSpaceShift) & kTwoBits) != 0;
      const uint32_t operation = (p[1] >> kWaitOperationShift) & kTwoBits;
      const std::string what =
          memory ? absl::StrFormat("mem %#x", Pair(p, pm4::WaitMemory::kAddressLoDword) & ~uint64_t{3})
                 : absl::StrFormat("reg %s%s", RegisterName(bases, p[3]),
                                   operation != 0 ? absl::StrCat(" after writing ", RegisterName(bases, p[2])) : "");
      return absl::StrFormat("wait until %s & %#x %s %#x (poll %d)", what, p[5], CompareName(p[1] & kWaitFunctionMask),
                             p[4], p[6]);
    }
    case pm4::PACKET3_INDIRECT_BUFFER: {
      if (p.size() < pm4::IndirectBuffer::kDwords) return RawDwords(p, 1);
      const auto ib = p.first<pm4::IndirectBuffer::kDwords>();
      return absl::StrFormat("addr=%#x dwords=%d vmid=%d", pm4::IndirectBuffer::Address(ib),
                             pm4::IndirectBuffer::Size(ib), (p[3] >> pm4::IndirectBuffer::kVmidShift) & kIbVmidMask);
    }
    case pm4::PACKET3_DISPATCH_DIRECT:
      if (p.size() < pm4::DispatchDirect::kDwords) return RawDwords(p, 1);
      return absl::StrFormat("groups=%dx%dx%d initiator=%#x", p[1], p[2], p[3], p[4]);
    case pm4::PACKET3_EVENT_WRITE:
      if (p.size() < pm4::EventWrite::kDwords) return "";
      return absl::StrFormat("event=%#x", p[1] & kEventTypeMask);
    default:
      return RawDwords(p, 1);
  }
}

}  // namespace

DecodedPacket DecodePm4(std::span<const uint32_t> packet, const am::regs::IpBases& bases) {
  DecodedPacket decoded;
  if (packet.empty()) return decoded;
  const uint32_t header = packet[0];
  if (pm4::PacketType(header) != pm4::PACKET_TYPE3) {
    decoded.name = absl::StrFormat("type-%d packet", pm4::PacketType(header));
    decoded.fields = absl::StrFormat("header %#010x", header);
    return decoded;  // only type-3 packets carry a length the rest of the stream can be delimited by
  }
  const uint32_t opcode = pm4::Packet3Opcode(header);
  const char* name = pm4::Packet3Name(opcode);
  decoded.name = name != nullptr ? name : absl::StrFormat("opcode %#x", opcode);
  decoded.dwords = pm4::PacketCount(header) + 2;
  decoded.truncated = decoded.dwords > packet.size();
  const std::span<const uint32_t> body = packet.first(std::min<size_t>(decoded.dwords, packet.size()));
  decoded.fields = Pm4Fields(opcode, body, bases);
  if (opcode == pm4::PACKET3_INDIRECT_BUFFER && body.size() >= pm4::IndirectBuffer::kDwords) {
    const auto ib = body.first<pm4::IndirectBuffer::kDwords>();
    const uint32_t vmid = (body[3] >> pm4::IndirectBuffer::kVmidShift) & kIbVmidMask;
    decoded.indirect = IndirectTarget{pm4::IndirectBuffer::Address(ib), pm4::IndirectBuffer::Size(ib),
                                      vmid != 0 ? std::optional<uint32_t>(vmid) : std::nullopt};
  }
  return decoded;
}

DecodedPacket DecodeSdma(std::span<const uint32_t> packet) {
  DecodedPacket decoded;
  if (packet.empty()) return decoded;
  const uint32_t header = packet[0];
  const char* name = sdma::PacketName(header);
  decoded.name = name != nullptr ? name
                                 : absl::StrFormat("op %#x", (header >> sdma::SDMA_PKT_COPY_LINEAR_HEADER_op_shift) &
                                                                 sdma::SDMA_PKT_COPY_LINEAR_HEADER_op_mask);
  decoded.dwords = sdma::PacketDwords(header);
  decoded.truncated = decoded.dwords > packet.size();
  const std::span<const uint32_t> p =
      packet.first(decoded.dwords == 0 ? std::min<size_t>(packet.size(), kRawDwordsShown + 1)
                                       : std::min<size_t>(decoded.dwords, packet.size()));
  const std::string n = decoded.name;
  auto fits = [&](size_t bytes) { return p.size() * 4 >= bytes; };
  if (n == "COPY_LINEAR" && fits(sizeof(sdma::CopyLinear))) {
    decoded.fields =
        absl::StrFormat("bytes=%d src=%#x dst=%#x", (p[1] & sdma::SDMA_PKT_COPY_LINEAR_COUNT_count_mask) + 1,
                        Pair(p, sdma::kCopySourceLoDword), Pair(p, sdma::kCopyDestinationLoDword));
  } else if (n == "FENCE" && fits(sizeof(sdma::Fence))) {
    decoded.fields =
        absl::StrFormat("addr=%#x data=%#x", Pair(p, sdma::kFenceAddressLoDword), p[sdma::kFenceDataDword]);
  } else if (n == "TRAP" && fits(sizeof(sdma::Trap))) {
    decoded.fields = absl::StrFormat("context=%#x", p[1]);
  } else if (n == "POLL_REGMEM" && fits(sizeof(sdma::PollRegmem))) {
    decoded.fields = absl::StrFormat("addr=%#x value=%#x mask=%#x dw5=%#x", Pair(p, sdma::kPollAddressLoDword),
                                     p[sdma::kPollReferenceDword], p[4], p[5]);
  } else if (n == "TIMESTAMP_GET_GLOBAL" && fits(sizeof(sdma::TimestampGet))) {
    decoded.fields = absl::StrFormat("addr=%#x", Pair(p, sdma::kTimestampAddressLoDword));
  } else if (n == "INDIRECT" && fits(sizeof(sdma::Indirect))) {
    const uint32_t vmid =
        (header >> sdma::SDMA_PKT_INDIRECT_HEADER_vmid_shift) & sdma::SDMA_PKT_INDIRECT_HEADER_vmid_mask;
    const uint64_t base = Pair(p, 1);
    decoded.fields = absl::StrFormat("addr=%#x dwords=%d vmid=%d", base, p[3], vmid);
    decoded.indirect = IndirectTarget{base, p[3], vmid != 0 ? std::optional<uint32_t>(vmid) : std::nullopt};
  } else if (n != "NOP") {
    decoded.fields = RawDwords(p, 1);
  }
  return decoded;
}

}  // namespace am
