#include "am/sim/isa/operand_shape.h"

#include <optional>

#include "absl/strings/string_view.h"
#include "am/sim/isa/wmma.h"

namespace am::sim::isa {
namespace {

struct TypeSuffixes {
  int count = 0;
  char first_kind = 0, last_kind = 0;
  int first_bits = 32, last_bits = 32;
};

// The _[fiub]NN / _bf16 tokens of a mnemonic, e.g. v_cvt_f64_i32 -> {f64, i32}.
TypeSuffixes ParseTypes(absl::string_view name) {
  TypeSuffixes t;
  size_t pos = 0;
  while (pos < name.size()) {
    size_t end = name.find('_', pos);
    if (end == absl::string_view::npos) end = name.size();
    absl::string_view token = name.substr(pos, end - pos);
    if (token.substr(0, 2) == "bf") token = token.substr(1);
    if (token.size() >= 2 && (token[0] == 'f' || token[0] == 'i' || token[0] == 'u' || token[0] == 'b')) {
      int bits = 0;
      bool digits = true;
      for (char c : token.substr(1)) {
        if (c < '0' || c > '9') digits = false;
        bits = bits * 10 + (c - '0');
      }
      if (digits && (bits == 8 || bits == 16 || bits == 32 || bits == 64 || bits == 4)) {
        if (t.count == 0) {
          t.first_kind = token[0];
          t.first_bits = bits;
        }
        t.last_kind = token[0];
        t.last_bits = bits;
        ++t.count;
      }
    }
    pos = end + 1;
  }
  return t;
}

uint8_t Dwords(int bits) { return bits == 64 ? 2 : 1; }
bool StartsWith(absl::string_view s, absl::string_view p) { return s.substr(0, p.size()) == p; }
bool Contains(absl::string_view s, absl::string_view p) { return s.find(p) != absl::string_view::npos; }

// Number of sources of a VALU operation in VOP3 numbering (without the implicit VCC of the short forms).
uint8_t ValuSources(uint16_t op, absl::string_view name) {
  if (op < 256) return 2;  // compares
  if (op < 384) {          // VOP2
    if (name == "v_cndmask_b32" || Contains(name, "_co_ci_")) return 3;
    return 2;
  }
  if (op < 512) return (name == "v_nop" || name == "v_pipeflush") ? 0 : 1;
  return op < 768 ? 3 : 2;
}

}  // namespace

bool HasScalarDestination(uint16_t op) { return (op >= 288 && op <= 290) || (op >= 764 && op <= 770); }

const char* EncodingName(Encoding encoding) {
  switch (encoding) {
    case Encoding::kSop2:
      return "SOP2";
    case Encoding::kSopk:
      return "SOPK";
    case Encoding::kSop1:
      return "SOP1";
    case Encoding::kSopc:
      return "SOPC";
    case Encoding::kSopp:
      return "SOPP";
    case Encoding::kSmem:
      return "SMEM";
    case Encoding::kVop1:
      return "VOP1";
    case Encoding::kVop2:
      return "VOP2";
    case Encoding::kVop3:
      return "VOP3";
    case Encoding::kVop3p:
      return "VOP3P";
    case Encoding::kVopc:
      return "VOPC";
    case Encoding::kVopd:
      return "VOPD";
    case Encoding::kDs:
      return "DS";
    case Encoding::kFlat:
      return "FLAT";
    case Encoding::kGlobal:
      return "GLOBAL";
    case Encoding::kScratch:
      return "SCRATCH";
    case Encoding::kMubuf:
      return "MUBUF";
  }
  return "?";
}

OperandShape ShapeOf(const Instruction& inst, bool wave64) {
  const absl::string_view name = inst.name();
  const TypeSuffixes types = ParseTypes(name);
  OperandShape shape;
  const uint8_t dst = Dwords(types.first_bits), src = Dwords(types.last_bits);
  shape.dst_dwords = dst;
  for (uint8_t& s : shape.src_dwords) s = src;
  if (types.first_kind == 'f') shape.result_float_bits = static_cast<uint8_t>(types.first_bits);
  shape.float_sources = types.last_kind == 'f' || Contains(name, "bf16");
  if (shape.float_sources)
    shape.float_bits = static_cast<uint8_t>(types.last_bits == 64 ? 64 : types.last_bits == 16 ? 16 : 32);
  switch (inst.encoding) {
    case Encoding::kSop1:
      shape.num_srcs = 1;
      if (name == "s_getpc_b64") shape.num_srcs = 0;
      if (name == "s_setpc_b64" || name == "s_rfe_b64") shape.has_dst = false;
      if (StartsWith(name, "s_bitset")) shape.src_dwords[0] = 1;
      break;
    case Encoding::kSop2:
      shape.num_srcs = 2;
      if (name == "s_lshl_b64" || name == "s_lshr_b64" || name == "s_ashr_i64" || StartsWith(name, "s_bfe_")) {
        shape.src_dwords[1] = 1;
      }
      if (name == "s_bfm_b64") shape.src_dwords[0] = shape.src_dwords[1] = 1;
      break;
    case Encoding::kSopc:
      shape.num_srcs = 2;
      shape.has_dst = false;
      if (StartsWith(name, "s_bitcmp")) shape.src_dwords[1] = 1;
      break;
    case Encoding::kVop1:
    case Encoding::kVop2:
    case Encoding::kVopc:
    case Encoding::kVop3: {
      shape.num_srcs = ValuSources(inst.valu_op, name);
      if (name == "v_mad_u64_u32" || name == "v_mad_i64_i32") {
        shape.dst_dwords = 2;
        shape.src_dwords[0] = shape.src_dwords[1] = 1;
        shape.src_dwords[2] = 2;
      }
      if (name == "v_lshlrev_b64" || name == "v_lshrrev_b64" || name == "v_ashrrev_i64") shape.src_dwords[0] = 1;
      if (name == "v_ldexp_f64" || name == "v_trig_preop_f64" || Contains(name, "_class_f64")) {
        shape.src_dwords[1] = 1;
      }
      if (name == "v_cndmask_b32" || Contains(name, "_co_ci_")) shape.src_dwords[2] = 1;
      // The quad sums of absolute differences (RDNA3 ISA pseudocode): a 64-bit S0 window, a 32-bit S1 reference, an
      // accumulator as wide as D (four 16-bit sums in 64 bits, or four 32-bit sums in 128).
      if (name == "v_qsad_pk_u16_u8" || name == "v_mqsad_pk_u16_u8" || name == "v_mqsad_u32_u8") {
        shape.src_dwords[0] = 2;
        shape.src_dwords[1] = 1;
        shape.dst_dwords = shape.src_dwords[2] = name == "v_mqsad_u32_u8" ? 4 : 2;
      }
      if (inst.valu_op < 256) shape.dst_dwords = 1;  // a wave32 lane mask
      if (name == "v_nop" || name == "v_pipeflush") shape.has_dst = false;
      break;
    }
    case Encoding::kVop3p:
      shape.num_srcs =
          (Contains(name, "mad") || Contains(name, "fma") || Contains(name, "dot") || Contains(name, "wmma")) ? 3 : 2;
      for (uint8_t& s : shape.src_dwords) s = 1;
      shape.dst_dwords = 1;
      if (const std::optional<WmmaFormat> wmma = WmmaFormatOf(inst.opcode); wmma.has_value()) {
        shape.src_dwords[0] = shape.src_dwords[1] = static_cast<uint8_t>(wmma->input_dwords());
        shape.src_dwords[2] = shape.dst_dwords = static_cast<uint8_t>(WmmaAccumulatorDwords(wave64 ? 64 : 32));
      }
      break;
    default:
      break;
  }
  return shape;
}

}  // namespace am::sim::isa
