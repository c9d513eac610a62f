#include "am/sim/nbio_model.h"

#include "absl/strings/str_format.h"
#include "am/regs/nbio.h"

namespace am::sim {
namespace {

namespace nbio = regs::nbio;

// One S2A doorbell entry. All six share one layout (nbio_4_3_0_sh_mask.h); the typed registers name each field
// after its port, hence one decoder per entry.
struct S2aEntry {
  uint32_t raw = 0;
  bool enable = false;
  uint32_t awid = 0, range_offset = 0, range_size = 0, awaddr_31_28 = 0;

  bool Covers(uint64_t index) const { return index >= range_offset && index - range_offset < range_size; }
};

#define BAREGPU_DECODE_S2A_ENTRY(N)                                   \
  S2aEntry DecodeEntry##N(uint32_t raw) {                             \
    const auto r = nbio::S2A_DOORBELL_ENTRY_##N##_CTRL::FromRaw(raw); \
    return {raw,                                                      \
            r.s2a_doorbell_port##N##_enable() != 0,                   \
            r.s2a_doorbell_port##N##_awid(),                          \
            r.s2a_doorbell_port##N##_range_offset(),                  \
            r.s2a_doorbell_port##N##_range_size(),                    \
            r.s2a_doorbell_port##N##_awaddr_31_28_value()};           \
  }
BAREGPU_DECODE_S2A_ENTRY(0)
BAREGPU_DECODE_S2A_ENTRY(1)
BAREGPU_DECODE_S2A_ENTRY(2)
BAREGPU_DECODE_S2A_ENTRY(3)
BAREGPU_DECODE_S2A_ENTRY(4)
BAREGPU_DECODE_S2A_ENTRY(5)
#undef BAREGPU_DECODE_S2A_ENTRY

// The AXI write id and address bits [31:28] that lead each entry to its engine. Their meaning is not public: the
// values are the ones amdgpu programs (nbio_v4_3_gc_doorbell_init writes 0x30000007 to entry 0 and 0x3000000d to
// entry 3: AWID 3 and 6, AWADDR_31_28 3; nbio_v4_3_sdma_doorbell_range AWID 0xe, AWADDR_31_28 3;
// nbio_v4_3_vcn_doorbell_range AWID and AWADDR_31_28 both 4 for instance 0, 7 for instance 1; tinygrad's
// AM_SOC.doorbell_enable callers the same), and an entry with any other is taken to lead nowhere the model knows.
struct Lead {
  uint32_t awid, awaddr_31_28;
};
constexpr Lead kGcEntry0{0x3, 0x3};
constexpr Lead kGcEntry3{0x6, 0x3};
constexpr Lead kSdmaEntry2{0xe, 0x3};
constexpr Lead kVcn0Entry4{0x4, 0x4};
constexpr Lead kVcn1Entry5{0x7, 0x7};

bool Leads(const S2aEntry& entry, const Lead& lead) {
  return entry.enable && entry.awid == lead.awid && entry.awaddr_31_28 == lead.awaddr_31_28;
}

}  // namespace

NbioModel::NbioModel(RegisterFile& registers, const regs::IpBases& bases)
    : registers_(registers),
      flush_req_(RegisterAddress<regs::nbio::BIF_BX_PF0_GPU_HDP_FLUSH_REQ>(bases)),
      flush_done_(RegisterAddress<regs::nbio::BIF_BX_PF0_GPU_HDP_FLUSH_DONE>(bases)),
      remap_mem_flush_(RegisterAddress<regs::nbio::BIF_BX0_REMAP_HDP_MEM_FLUSH_CNTL>(bases)),
      remap_reg_flush_(RegisterAddress<regs::nbio::BIF_BX0_REMAP_HDP_REG_FLUSH_CNTL>(bases)),
      doorbell_aper_en_(RegisterAddress<regs::nbio::RCC_DEV0_EPF0_RCC_DOORBELL_APER_EN>(bases)),
      s2a_entries_{RegisterAddress<nbio::S2A_DOORBELL_ENTRY_0_CTRL>(bases),
                   RegisterAddress<nbio::S2A_DOORBELL_ENTRY_1_CTRL>(bases),
                   RegisterAddress<nbio::S2A_DOORBELL_ENTRY_2_CTRL>(bases),
                   RegisterAddress<nbio::S2A_DOORBELL_ENTRY_3_CTRL>(bases),
                   RegisterAddress<nbio::S2A_DOORBELL_ENTRY_4_CTRL>(bases),
                   RegisterAddress<nbio::S2A_DOORBELL_ENTRY_5_CTRL>(bases)} {
  registers_.OnWrite(flush_req_, "hdp", [this](uint32_t clients) {
    handshake_flushes_.fetch_add(1, std::memory_order_acq_rel);
    registers_.Poke(flush_done_, clients);
  });
}

bool NbioModel::OnRegisterBarWrite(uint64_t byte_offset) {
  // An unprogrammed remap register (0) would alias MM_INDEX: only a programmed one defines the flush page.
  for (uint64_t remap : {remap_mem_flush_, remap_reg_flush_}) {
    const uint32_t target = registers_.Peek(remap);
    if (target != 0 && byte_offset == target) {
      // Counted without a locked instruction: on the hardware this flush is one posted write, and a locked increment
      // would hold the writer until its earlier stores (a ring's packets, which the engine's core holds) had left
      // (issue 24: one cross-core transfer more on every submit). Two threads flushing at once may count once.
      page_flushes_.store(page_flushes_.load(std::memory_order_relaxed) + 1, std::memory_order_release);
      return true;
    }
  }
  return false;
}

bool NbioModel::doorbell_aperture_enabled() const {
  return regs::nbio::RCC_DEV0_EPF0_RCC_DOORBELL_APER_EN::FromRaw(registers_.Peek(doorbell_aper_en_))
             .bif_doorbell_aper_en() != 0;
}

DoorbellPort NbioModel::RouteDoorbell(uint64_t index) const {
  const S2aEntry sdma = DecodeEntry2(registers_.Peek(s2a_entries_[2]));
  if (Leads(sdma, kSdmaEntry2) && sdma.Covers(index)) return DoorbellPort::kSdma;
  const S2aEntry vcn0 = DecodeEntry4(registers_.Peek(s2a_entries_[4]));
  const S2aEntry vcn1 = DecodeEntry5(registers_.Peek(s2a_entries_[5]));
  if ((Leads(vcn0, kVcn0Entry4) && vcn0.Covers(index)) || (Leads(vcn1, kVcn1Entry5) && vcn1.Covers(index))) {
    return DoorbellPort::kVcn;
  }
  if (Leads(DecodeEntry0(registers_.Peek(s2a_entries_[0])), kGcEntry0) &&
      Leads(DecodeEntry3(registers_.Peek(s2a_entries_[3])), kGcEntry3)) {
    return DoorbellPort::kGc;
  }
  return DoorbellPort::kNone;
}

std::string NbioModel::DescribeDoorbellRouting() const {
  const S2aEntry entries[] = {
      DecodeEntry0(registers_.Peek(s2a_entries_[0])), DecodeEntry1(registers_.Peek(s2a_entries_[1])),
      DecodeEntry2(registers_.Peek(s2a_entries_[2])), DecodeEntry3(registers_.Peek(s2a_entries_[3])),
      DecodeEntry4(registers_.Peek(s2a_entries_[4])), DecodeEntry5(registers_.Peek(s2a_entries_[5]))};
  std::string out;
  for (size_t n = 0; n < std::size(entries); ++n) {
    const S2aEntry& e = entries[n];
    out += absl::StrFormat("%sS2A_DOORBELL_ENTRY_%d_CTRL %#010x", n == 0 ? "" : ", ", n, e.raw);
    if (e.enable) {
      out += absl::StrFormat(" (AWID %#x, dwords %#x+%#x)", e.awid, e.range_offset, e.range_size);
    }
  }
  return out;
}

}  // namespace am::sim
