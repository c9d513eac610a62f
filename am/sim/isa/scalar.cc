// Scalar ALU, scalar memory and program control (SOP1, SOP2, SOPC, SOPK, SOPP, SMEM), per the RDNA3 ISA
// pseudocode: results and SCC as each operation's description gives them.
#include <bit>
#include <cmath>

#include "absl/strings/str_format.h"
#include "am/sim/isa/float_bits.h"
#include "am/sim/isa/opcodes.h"
#include "am/sim/isa/workgroup_runner.h"

namespace am::sim::isa {
namespace {

uint32_t BitReverse32(uint32_t v) {
  v = ((v >> 1) & 0x55555555u) | ((v & 0x55555555u) << 1);
  v = ((v >> 2) & 0x33333333u) | ((v & 0x33333333u) << 2);
  v = ((v >> 4) & 0x0f0f0f0fu) | ((v & 0x0f0f0f0fu) << 4);
  return __builtin_bswap32(v);
}

// ISA "count leading sign bits": -1 when every bit equals the sign.
int32_t CountLeadingSign32(uint32_t v) {
  const uint32_t x = (v & 0x80000000u) ? ~v : v;
  return x == 0 ? -1 : std::countl_zero(x) - 1;
}

}  // namespace

WorkgroupRunner::Flow WorkgroupRunner::Sop1(Wave& wave, const Instruction& inst) {
  const uint32_t a = ScalarValue(wave, inst, inst.src[0]);
  auto a64 = [&] { return ScalarValue64(wave, inst, inst.src[0], false); };
  const uint16_t d = inst.vdst;
  // The saveexec family: D = EXEC; EXEC = f(S0, EXEC); SCC = EXEC != 0.
  auto saveexec = [&](auto f, bool b64) {
    const uint64_t exec = wave.exec();
    const uint64_t s = b64 ? a64() : a;
    const uint64_t result = f(s, exec) & wave.all_lanes();
    if (b64) {
      WriteScalar64(wave, d, exec);
    } else {
      WriteScalar(wave, d, static_cast<uint32_t>(exec));
    }
    wave.set_exec(b64 ? result : (result & 0xffffffffu) | (exec & ~uint64_t{0xffffffff}));
    wave.scc = wave.exec() != 0;
    return Flow::kNext;
  };
  switch (inst.opcode) {
    case sop1::kSMovB32:
      WriteScalar(wave, d, a);
      break;
    case sop1::kSMovB64:
      WriteScalar64(wave, d, a64());
      break;
    case sop1::kSCmovB32:
      if (wave.scc) WriteScalar(wave, d, a);
      break;
    case sop1::kSCmovB64:
      if (wave.scc) WriteScalar64(wave, d, a64());
      break;
    case sop1::kSBrevB32:
      WriteScalar(wave, d, BitReverse32(a));
      break;
    case sop1::kSBrevB64: {
      const uint64_t v = a64();
      WriteScalar64(wave, d, uint64_t{BitReverse32(static_cast<uint32_t>(v))} << 32 | BitReverse32(v >> 32));
      break;
    }
    case sop1::kSCtzI32B32:
      WriteScalar(wave, d, a == 0 ? ~0u : std::countr_zero(a));
      break;
    case sop1::kSCtzI32B64:
      WriteScalar(wave, d, a64() == 0 ? ~0u : std::countr_zero(a64()));
      break;
    case sop1::kSClzI32U32:
      WriteScalar(wave, d, a == 0 ? ~0u : std::countl_zero(a));
      break;
    case sop1::kSClzI32U64:
      WriteScalar(wave, d, a64() == 0 ? ~0u : std::countl_zero(a64()));
      break;
    case sop1::kSClsI32:
      WriteScalar(wave, d, static_cast<uint32_t>(CountLeadingSign32(a)));
      break;
    case sop1::kSSextI32I8:
      WriteScalar(wave, d, static_cast<uint32_t>(static_cast<int8_t>(a)));
      break;
    case sop1::kSSextI32I16:
      WriteScalar(wave, d, static_cast<uint32_t>(static_cast<int16_t>(a)));
      break;
    case sop1::kSBitset0B32:
      WriteScalar(wave, d, ScalarValue(wave, inst, d) & ~(1u << (a & 31)));
      break;
    case sop1::kSBitset1B32:
      WriteScalar(wave, d, ScalarValue(wave, inst, d) | (1u << (a & 31)));
      break;
    case sop1::kSBitset0B64:
      WriteScalar64(wave, d, ScalarValue64(wave, inst, d, false) & ~(uint64_t{1} << (a & 63)));
      break;
    case sop1::kSBitset1B64:
      WriteScalar64(wave, d, ScalarValue64(wave, inst, d, false) | (uint64_t{1} << (a & 63)));
      break;
    case sop1::kSAbsI32: {
      const int32_t v = static_cast<int32_t>(a);
      const uint32_t r = v < 0 ? 0u - a : a;
      WriteScalar(wave, d, r);
      wave.scc = r != 0;
      break;
    }
    case sop1::kSBcnt0I32B32: {
      const uint32_t r = 32 - std::popcount(a);
      WriteScalar(wave, d, r);
      wave.scc = r != 0;
      break;
    }
    case sop1::kSBcnt1I32B32: {
      const uint32_t r = std::popcount(a);
      WriteScalar(wave, d, r);
      wave.scc = r != 0;
      break;
    }
    case sop1::kSBcnt0I32B64: {
      const uint32_t r = 64 - std::popcount(a64());
      WriteScalar(wave, d, r);
      wave.scc = r != 0;
      break;
    }
    case sop1::kSBcnt1I32B64: {
      const uint32_t r = std::popcount(a64());
      WriteScalar(wave, d, r);
      wave.scc = r != 0;
      break;
    }
    case sop1::kSNotB32:
      WriteScalar(wave, d, ~a);
      wave.scc = ~a != 0;
      break;
    case sop1::kSNotB64:
      WriteScalar64(wave, d, ~a64());
      wave.scc = ~a64() != 0;
      break;
    case sop1::kSAndSaveexecB32:
      return saveexec([](uint64_t s, uint64_t e) { return s & e; }, false);
    case sop1::kSAndSaveexecB64:
      return saveexec([](uint64_t s, uint64_t e) { return s & e; }, true);
    case sop1::kSOrSaveexecB32:
      return saveexec([](uint64_t s, uint64_t e) { return s | e; }, false);
    case sop1::kSOrSaveexecB64:
      return saveexec([](uint64_t s, uint64_t e) { return s | e; }, true);
    case sop1::kSXorSaveexecB32:
      return saveexec([](uint64_t s, uint64_t e) { return s ^ e; }, false);
    case sop1::kSXorSaveexecB64:
      return saveexec([](uint64_t s, uint64_t e) { return s ^ e; }, true);
    case sop1::kSNandSaveexecB32:
      return saveexec([](uint64_t s, uint64_t e) { return ~(s & e); }, false);
    case sop1::kSNorSaveexecB32:
      return saveexec([](uint64_t s, uint64_t e) { return ~(s | e); }, false);
    case sop1::kSXnorSaveexecB32:
      return saveexec([](uint64_t s, uint64_t e) { return ~(s ^ e); }, false);
    case sop1::kSAndNot0SaveexecB32:
      return saveexec([](uint64_t s, uint64_t e) { return ~s & e; }, false);
    case sop1::kSAndNot0SaveexecB64:
      return saveexec([](uint64_t s, uint64_t e) { return ~s & e; }, true);
    case sop1::kSOrNot0SaveexecB32:
      return saveexec([](uint64_t s, uint64_t e) { return ~s | e; }, false);
    case sop1::kSAndNot1SaveexecB32:
      return saveexec([](uint64_t s, uint64_t e) { return s & ~e; }, false);
    case sop1::kSAndNot1SaveexecB64:
      return saveexec([](uint64_t s, uint64_t e) { return s & ~e; }, true);
    case sop1::kSOrNot1SaveexecB32:
      return saveexec([](uint64_t s, uint64_t e) { return s | ~e; }, false);
    case sop1::kSAndNot0WrexecB32:
    case sop1::kSAndNot1WrexecB32: {
      // AND_NOT0: EXEC = ~S0 & EXEC; AND_NOT1: EXEC = S0 & ~EXEC; D = the new EXEC.
      const uint64_t exec = wave.exec();
      const uint64_t r = inst.opcode == sop1::kSAndNot0WrexecB32 ? (~a & exec) : (a & ~exec);
      wave.set_exec((r & 0xffffffffu) | (exec & ~uint64_t{0xffffffff}));
      WriteScalar(wave, d, static_cast<uint32_t>(r));
      wave.scc = (r & 0xffffffffu) != 0;
      break;
    }
    case sop1::kSGetpcB64:
      WriteScalar64(wave, d, wave.pc + inst.dwords * 4u);
      break;
    case sop1::kSSetpcB64:
      wave.pc = a64() & ~uint64_t{3};
      return Flow::kJumped;
    case sop1::kSSwappcB64: {
      const uint64_t target = a64() & ~uint64_t{3};
      WriteScalar64(wave, d, wave.pc + inst.dwords * 4u);
      wave.pc = target;
      return Flow::kJumped;
    }
    case sop1::kSCeilF32:
      WriteScalar(wave, d, Bits32(std::ceil(AsF32(a))));
      break;
    case sop1::kSFloorF32:
      WriteScalar(wave, d, Bits32(std::floor(AsF32(a))));
      break;
    case sop1::kSTruncF32:
      WriteScalar(wave, d, Bits32(std::trunc(AsF32(a))));
      break;
    case sop1::kSRndneF32:
      WriteScalar(wave, d, Bits32(std::nearbyint(AsF32(a))));
      break;
    case sop1::kSCvtF32I32:
      WriteScalar(wave, d, Bits32(static_cast<float>(static_cast<int32_t>(a))));
      break;
    case sop1::kSCvtF32U32:
      WriteScalar(wave, d, Bits32(static_cast<float>(a)));
      break;
    case sop1::kSCvtI32F32:
      WriteScalar(wave, d, static_cast<uint32_t>(CvtF32ToI32(AsF32(a))));
      break;
    case sop1::kSCvtU32F32:
      WriteScalar(wave, d, CvtF32ToU32(AsF32(a)));
      break;
    default:
      return Illegal(wave, inst, "SOP1 operation not implemented by the interpreter");
  }
  return Flow::kNext;
}

WorkgroupRunner::Flow WorkgroupRunner::Sop2(Wave& wave, const Instruction& inst) {
  const uint32_t a = ScalarValue(wave, inst, inst.src[0]);
  const uint32_t b = ScalarValue(wave, inst, inst.src[1]);
  auto a64 = [&] { return ScalarValue64(wave, inst, inst.src[0], false); };
  auto b64 = [&] { return ScalarValue64(wave, inst, inst.src[1], false); };
  const uint16_t d = inst.vdst;
  auto put = [&](uint32_t r) {
    WriteScalar(wave, d, r);
    wave.scc = r != 0;
  };
  auto put64 = [&](uint64_t r) {
    WriteScalar64(wave, d, r);
    wave.scc = r != 0;
  };
  const int32_t sa = static_cast<int32_t>(a), sb = static_cast<int32_t>(b);
  switch (inst.opcode) {
    case sop2::kSAddU32: {
      const uint64_t r = uint64_t{a} + b;
      WriteScalar(wave, d, static_cast<uint32_t>(r));
      wave.scc = (r >> 32) != 0;
      break;
    }
    case sop2::kSSubU32:
      WriteScalar(wave, d, a - b);
      wave.scc = b > a;
      break;
    case sop2::kSAddI32: {
      const uint32_t r = a + b;
      WriteScalar(wave, d, r);
      wave.scc = ((a ^ r) & (b ^ r)) >> 31;  // signed overflow
      break;
    }
    case sop2::kSSubI32: {
      const uint32_t r = a - b;
      WriteScalar(wave, d, r);
      wave.scc = ((a ^ b) & (a ^ r)) >> 31;
      break;
    }
    case sop2::kSAddcU32: {
      const uint64_t r = uint64_t{a} + b + wave.scc;
      WriteScalar(wave, d, static_cast<uint32_t>(r));
      wave.scc = (r >> 32) != 0;
      break;
    }
    case sop2::kSSubbU32: {
      const uint64_t r = uint64_t{a} - b - wave.scc;
      WriteScalar(wave, d, static_cast<uint32_t>(r));
      wave.scc = uint64_t{b} + wave.scc > a;
      break;
    }
    case sop2::kSAbsdiffI32: {
      const int64_t diff = int64_t{sa} - sb;
      put(static_cast<uint32_t>(diff < 0 ? -diff : diff));
      break;
    }
    case sop2::kSLshlB32:
      put(a << (b & 31));
      break;
    case sop2::kSLshlB64:
      put64(a64() << (b & 63));
      break;
    case sop2::kSLshrB32:
      put(a >> (b & 31));
      break;
    case sop2::kSLshrB64:
      put64(a64() >> (b & 63));
      break;
    case sop2::kSAshrI32:
      put(static_cast<uint32_t>(sa >> (b & 31)));
      break;
    case sop2::kSAshrI64:
      put64(static_cast<uint64_t>(static_cast<int64_t>(a64()) >> (b & 63)));
      break;
    case sop2::kSLshl1AddU32:
    case sop2::kSLshl2AddU32:
    case sop2::kSLshl3AddU32:
    case sop2::kSLshl4AddU32: {
      const int shift = inst.opcode - sop2::kSLshl1AddU32 + 1;
      const uint64_t r = (uint64_t{a} << shift) + b;
      WriteScalar(wave, d, static_cast<uint32_t>(r));
      wave.scc = (r >> 32) != 0;
      break;
    }
    case sop2::kSMinI32:
      WriteScalar(wave, d, sa < sb ? a : b);
      wave.scc = sa < sb;
      break;
    case sop2::kSMinU32:
      WriteScalar(wave, d, a < b ? a : b);
      wave.scc = a < b;
      break;
    case sop2::kSMaxI32:
      WriteScalar(wave, d, sa > sb ? a : b);
      wave.scc = sa > sb;
      break;
    case sop2::kSMaxU32:
      WriteScalar(wave, d, a > b ? a : b);
      wave.scc = a > b;
      break;
    case sop2::kSAndB32:
      put(a & b);
      break;
    case sop2::kSAndB64:
      put64(a64() & b64());
      break;
    case sop2::kSOrB32:
      put(a | b);
      break;
    case sop2::kSOrB64:
      put64(a64() | b64());
      break;
    case sop2::kSXorB32:
      put(a ^ b);
      break;
    case sop2::kSXorB64:
      put64(a64() ^ b64());
      break;
    case sop2::kSNandB32:
      put(~(a & b));
      break;
    case sop2::kSNandB64:
      put64(~(a64() & b64()));
      break;
    case sop2::kSNorB32:
      put(~(a | b));
      break;
    case sop2::kSNorB64:
      put64(~(a64() | b64()));
      break;
    case sop2::kSXnorB32:
      put(~(a ^ b));
      break;
    case sop2::kSXnorB64:
      put64(~(a64() ^ b64()));
      break;
    case sop2::kSAndNot1B32:
      put(a & ~b);
      break;
    case sop2::kSAndNot1B64:
      put64(a64() & ~b64());
      break;
    case sop2::kSOrNot1B32:
      put(a | ~b);
      break;
    case sop2::kSOrNot1B64:
      put64(a64() | ~b64());
      break;
    case sop2::kSBfeU32:
    case sop2::kSBfeI32: {
      // S1: offset [4:0], width [22:16].
      const uint32_t offset = b & 31, width = (b >> 16) & 0x7f;
      if (width == 0) {
        put(0);
        break;
      }
      uint32_t r = width >= 32 ? a >> offset : (a >> offset) & ((1u << width) - 1);
      if (inst.opcode == sop2::kSBfeI32 && width < 32) {
        r = static_cast<uint32_t>(static_cast<int32_t>(r << (32 - width)) >> (32 - width));
      }
      put(r);
      break;
    }
    case sop2::kSBfeU64:
    case sop2::kSBfeI64: {
      const uint32_t offset = b & 63, width = (b >> 16) & 0x7f;
      if (width == 0) {
        put64(0);
        break;
      }
      uint64_t r = width >= 64 ? a64() >> offset : (a64() >> offset) & ((uint64_t{1} << width) - 1);
      if (inst.opcode == sop2::kSBfeI64 && width < 64) {
        r = static_cast<uint64_t>(static_cast<int64_t>(r << (64 - width)) >> (64 - width));
      }
      put64(r);
      break;
    }
    case sop2::kSBfmB32:
      WriteScalar(wave, d, ((1u << (a & 31)) - 1) << (b & 31));
      break;
    case sop2::kSBfmB64:
      WriteScalar64(wave, d, ((uint64_t{1} << (a & 63)) - 1) << (b & 63));
      break;
    case sop2::kSMulI32:
      WriteScalar(wave, d, a * b);
      break;
    case sop2::kSMulHiU32:
      WriteScalar(wave, d, static_cast<uint32_t>((uint64_t{a} * b) >> 32));
      break;
    case sop2::kSMulHiI32:
      WriteScalar(wave, d, static_cast<uint32_t>(static_cast<uint64_t>(int64_t{sa} * sb) >> 32));
      break;
    case sop2::kSCselectB32:
      WriteScalar(wave, d, wave.scc ? a : b);
      break;
    case sop2::kSCselectB64:
      WriteScalar64(wave, d, wave.scc ? a64() : b64());
      break;
    case sop2::kSPackLlB32B16:
      WriteScalar(wave, d, (a & 0xffff) | (b << 16));
      break;
    case sop2::kSPackLhB32B16:
      WriteScalar(wave, d, (a & 0xffff) | (b & 0xffff0000u));
      break;
    case sop2::kSPackHhB32B16:
      WriteScalar(wave, d, (a >> 16) | (b & 0xffff0000u));
      break;
    default:
      return Illegal(wave, inst, "SOP2 operation not implemented by the interpreter");
  }
  return Flow::kNext;
}

WorkgroupRunner::Flow WorkgroupRunner::Sopc(Wave& wave, const Instruction& inst) {
  const uint32_t a = ScalarValue(wave, inst, inst.src[0]);
  const uint32_t b = ScalarValue(wave, inst, inst.src[1]);
  const int32_t sa = static_cast<int32_t>(a), sb = static_cast<int32_t>(b);
  bool r;
  switch (inst.opcode) {
    case sopc::kSCmpEqI32:
    case sopc::kSCmpEqU32:
      r = a == b;
      break;
    case sopc::kSCmpLgI32:
    case sopc::kSCmpLgU32:
      r = a != b;
      break;
    case sopc::kSCmpGtI32:
      r = sa > sb;
      break;
    case sopc::kSCmpGeI32:
      r = sa >= sb;
      break;
    case sopc::kSCmpLtI32:
      r = sa < sb;
      break;
    case sopc::kSCmpLeI32:
      r = sa <= sb;
      break;
    case sopc::kSCmpGtU32:
      r = a > b;
      break;
    case sopc::kSCmpGeU32:
      r = a >= b;
      break;
    case sopc::kSCmpLtU32:
      r = a < b;
      break;
    case sopc::kSCmpLeU32:
      r = a <= b;
      break;
    case sopc::kSBitcmp0B32:
      r = ((a >> (b & 31)) & 1) == 0;
      break;
    case sopc::kSBitcmp1B32:
      r = ((a >> (b & 31)) & 1) == 1;
      break;
    case sopc::kSBitcmp0B64:
      r = ((ScalarValue64(wave, inst, inst.src[0], false) >> (b & 63)) & 1) == 0;
      break;
    case sopc::kSBitcmp1B64:
      r = ((ScalarValue64(wave, inst, inst.src[0], false) >> (b & 63)) & 1) == 1;
      break;
    case sopc::kSCmpEqU64:
      r = ScalarValue64(wave, inst, inst.src[0], false) == ScalarValue64(wave, inst, inst.src[1], false);
      break;
    case sopc::kSCmpLgU64:
      r = ScalarValue64(wave, inst, inst.src[0], false) != ScalarValue64(wave, inst, inst.src[1], false);
      break;
    default:
      return Illegal(wave, inst, "SOPC operation not implemented by the interpreter");
  }
  wave.scc = r;
  return Flow::kNext;
}

WorkgroupRunner::Flow WorkgroupRunner::Sopk(Wave& wave, const Instruction& inst) {
  const uint16_t d = inst.vdst;
  const int32_t simm = inst.imm;                          // sign-extended
  const uint32_t uimm = static_cast<uint16_t>(inst.imm);  // zero-extended
  const uint32_t value = ScalarValue(wave, inst, d);
  const int32_t svalue = static_cast<int32_t>(value);
  switch (inst.opcode) {
    case sopk::kSMovkI32:
      WriteScalar(wave, d, static_cast<uint32_t>(simm));
      break;
    case sopk::kSCmovkI32:
      if (wave.scc) WriteScalar(wave, d, static_cast<uint32_t>(simm));
      break;
    case sopk::kSCmpkEqI32:
      wave.scc = svalue == simm;
      break;
    case sopk::kSCmpkLgI32:
      wave.scc = svalue != simm;
      break;
    case sopk::kSCmpkGtI32:
      wave.scc = svalue > simm;
      break;
    case sopk::kSCmpkGeI32:
      wave.scc = svalue >= simm;
      break;
    case sopk::kSCmpkLtI32:
      wave.scc = svalue < simm;
      break;
    case sopk::kSCmpkLeI32:
      wave.scc = svalue <= simm;
      break;
    case sopk::kSCmpkEqU32:
      wave.scc = value == uimm;
      break;
    case sopk::kSCmpkLgU32:
      wave.scc = value != uimm;
      break;
    case sopk::kSCmpkGtU32:
      wave.scc = value > uimm;
      break;
    case sopk::kSCmpkGeU32:
      wave.scc = value >= uimm;
      break;
    case sopk::kSCmpkLtU32:
      wave.scc = value < uimm;
      break;
    case sopk::kSCmpkLeU32:
      wave.scc = value <= uimm;
      break;
    case sopk::kSAddkI32: {
      const uint32_t r = value + static_cast<uint32_t>(simm);
      wave.scc = ((value ^ r) & (static_cast<uint32_t>(simm) ^ r)) >> 31;
      WriteScalar(wave, d, r);
      break;
    }
    case sopk::kSMulkI32:
      WriteScalar(wave, d, value * static_cast<uint32_t>(simm));
      break;
    case sopk::kSGetregB32: {
      // hwreg(id, offset, size): only MODE (1) is architectural state the interpreter keeps.
      const uint32_t id = uimm & 0x3f, offset = (uimm >> 6) & 0x1f, size = ((uimm >> 11) & 0x1f) + 1;
      const uint32_t reg = id == 1 ? wave.mode : 0;
      WriteScalar(wave, d, size >= 32 ? reg >> offset : (reg >> offset) & ((1u << size) - 1));
      break;
    }
    case sopk::kSSetregB32:
    case sopk::kSSetregImm32B32: {
      const uint32_t id = uimm & 0x3f, offset = (uimm >> 6) & 0x1f, size = ((uimm >> 11) & 0x1f) + 1;
      const uint32_t v = inst.opcode == sopk::kSSetregB32 ? value : inst.literal;
      const uint32_t mask = (size >= 32 ? ~0u : ((1u << size) - 1)) << offset;
      if (id == 1) wave.mode = (wave.mode & ~mask) | ((v << offset) & mask);
      break;
    }
    case sopk::kSVersion:
    case sopk::kSWaitcntVscnt:
    case sopk::kSWaitcntVmcnt:
    case sopk::kSWaitcntExpcnt:
    case sopk::kSWaitcntLgkmcnt:
      break;  // the interpreter completes every access before the next instruction
    case sopk::kSCallB64:
      WriteScalar64(wave, d, wave.pc + 4);
      wave.pc = wave.pc + 4 + static_cast<int64_t>(simm) * 4;
      return Flow::kJumped;
    default:
      return Illegal(wave, inst, "SOPK operation not implemented by the interpreter");
  }
  return Flow::kNext;
}

WorkgroupRunner::Flow WorkgroupRunner::Sopp(Wave& wave, const Instruction& inst) {
  auto branch = [&](bool taken) {
    if (!taken) return Flow::kNext;
    wave.pc = wave.pc + 4 + static_cast<int64_t>(inst.imm) * 4;
    return Flow::kJumped;
  };
  switch (inst.opcode) {
    case sopp::kSNop:
    case sopp::kSClause:
    case sopp::kSDelayAlu:
    case sopp::kSWaitcnt:
    case sopp::kSWaitcntDepctr:
    case sopp::kSSleep:
    case sopp::kSSetprio:
    case sopp::kSSetInstPrefetchDistance:
    case sopp::kSIcacheInv:
    case sopp::kSWaitIdle:
    case sopp::kSWaitEvent:
    case sopp::kSIncperflevel:
    case sopp::kSDecperflevel:
    case sopp::kSTtracedata:
    case sopp::kSTtracedataImm:
      return Flow::kNext;
    case sopp::kSSendmsg:
      // MSG_DEALLOC_VGPRS (3) before s_endpgm and MSG_INTERRUPT have no effect the interpreter models.
      return Flow::kNext;
    case sopp::kSRoundMode:
      wave.mode = (wave.mode & ~0xfu) | (inst.imm & 0xf);
      return Flow::kNext;
    case sopp::kSDenormMode:
      wave.mode = (wave.mode & ~0xf0u) | ((inst.imm & 0xf) << 4);
      return Flow::kNext;
    case sopp::kSTrap: {
      // S_TRAP enters the trap handler at TBA with the trap id (RDNA3 ISA pseudocode). baregpu's driver installs
      // no trap handler, so the interpreter does what the HSA trap handler ABI promises a kernel (AMDGPUUsage,
      // "Trap Handler ABI", code object V4+): llvm.debugtrap (3) with no debugger attached continues; every other
      // id (2: llvm.trap, 1: a breakpoint, the reserved ones) halts the wave at the s_trap and fails the dispatch.
      const uint32_t id = static_cast<uint32_t>(inst.imm) & 0xff;
      if (id == 3) return Flow::kNext;
      return Halt(wave, inst, WaveFault::kTrap,
                  absl::StrFormat("s_trap %d%s: no trap handler is installed, so the wave stops here and the dispatch "
                                  "fails (what the HSA trap handler does for llvm.trap)",
                                  id, id == 2 ? " (llvm.trap)" : ""));
    }
    case sopp::kSSethalt:
      // SIMM16[0] sets the wave's HALT bit. Only a debugger (SQ_CMD) resumes a halted wave and none is modelled,
      // so a halt is reported at once, as a wave that never ends would be.
      if ((inst.imm & 1) == 0) return Flow::kNext;
      return Halt(wave, inst, WaveFault::kUnsupported,
                  "s_sethalt 1 halts the wave and nothing resumes it (no debugger): treated as hung");
    case sopp::kSBarrier:
      return Flow::kBarrier;
    case sopp::kSEndpgm:
    case sopp::kSEndpgmSaved:
      return Flow::kEnd;
    case sopp::kSBranch:
      return branch(true);
    case sopp::kSCbranchScc0:
      return branch(!wave.scc);
    case sopp::kSCbranchScc1:
      return branch(wave.scc);
    case sopp::kSCbranchVccz:
      return branch(wave.mask_at(operand::kVccLo) == 0);
    case sopp::kSCbranchVccnz:
      return branch(wave.mask_at(operand::kVccLo) != 0);
    case sopp::kSCbranchExecz:
      return branch(wave.exec() == 0);
    case sopp::kSCbranchExecnz:
      return branch(wave.exec() != 0);
    default:
      return Illegal(wave, inst, "SOPP operation not implemented by the interpreter");
  }
}

WorkgroupRunner::Flow WorkgroupRunner::Smem(Wave& wave, const Instruction& inst) {
  int dwords = 0;
  bool buffer = false;
  switch (inst.opcode) {
    case smem::kSLoadB32:
      dwords = 1;
      break;
    case smem::kSLoadB64:
      dwords = 2;
      break;
    case smem::kSLoadB128:
      dwords = 4;
      break;
    case smem::kSLoadB256:
      dwords = 8;
      break;
    case smem::kSLoadB512:
      dwords = 16;
      break;
    case smem::kSBufferLoadB32:
      dwords = 1, buffer = true;
      break;
    case smem::kSBufferLoadB64:
      dwords = 2, buffer = true;
      break;
    case smem::kSBufferLoadB128:
      dwords = 4, buffer = true;
      break;
    case smem::kSBufferLoadB256:
      dwords = 8, buffer = true;
      break;
    case smem::kSBufferLoadB512:
      dwords = 16, buffer = true;
      break;
    case smem::kSGl1Inv:
    case smem::kSDcacheInv:
      return Flow::kNext;  // the interpreter has no caches
    default:
      return Illegal(wave, inst, "SMEM operation not implemented by the interpreter");
  }
  const uint32_t sbase = inst.src[0];
  uint64_t base = wave.sgpr[sbase & 127] | uint64_t{wave.sgpr[(sbase + 1) & 127]} << 32;
  if (buffer) base &= 0xffffffffffffull;  // V# base address: 48 bits
  const int64_t offset = inst.offset + (inst.src[2] != operand::kNull ? int64_t{wave.sgpr[inst.src[2] & 127]} : 0);
  // Scalar loads ignore the two low address bits.
  const uint64_t address = (base + offset) & ~uint64_t{3};
  uint32_t data[16];
  if (absl::Status s = memory_.Read(address, data, dwords * 4); !s.ok()) return MemoryFault(wave, inst, s);
  for (int i = 0; i < dwords; ++i) WriteScalar(wave, static_cast<uint16_t>(inst.vdst + i), data[i]);
  return Flow::kNext;
}

}  // namespace am::sim::isa
