// The LLVM assembly text of a decoded instruction, as llvm-objdump-19 --mcpu=gfx1100 prints it (wave32).
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/string_view.h"
#include "am/sim/isa/decoder.h"
#include "am/sim/isa/opcode_names.h"
#include "am/sim/isa/operand_shape.h"

namespace am::sim::isa {
namespace {

std::string Range(char prefix, uint32_t first, uint32_t dwords) {
  if (dwords == 1) return absl::StrFormat("%c%d", prefix, first);
  return absl::StrFormat("%c[%d:%d]", prefix, first, first + dwords - 1);
}

// A scalar register (or pair) by its operand code.
std::string Scalar(uint32_t code, uint32_t dwords) {
  switch (code) {
    case operand::kVccLo:
      return dwords == 2 ? "vcc" : "vcc_lo";
    case operand::kVccHi:
      return "vcc_hi";
    case operand::kNull:
      return "null";
    case operand::kM0:
      return "m0";
    case operand::kExecLo:
      return dwords == 2 ? "exec" : "exec_lo";
    case operand::kExecHi:
      return "exec_hi";
    default:
      break;
  }
  if (code >= 108 && code <= 123) {
    return dwords == 1 ? absl::StrFormat("ttmp%d", code - 108)
                       : absl::StrFormat("ttmp[%d:%d]", code - 108, code - 108 + dwords - 1);
  }
  return Range('s', code, dwords);
}

std::string Source(const Instruction& inst, uint32_t code, uint32_t dwords) {
  if (code >= operand::kVgpr0) return Range('v', code - operand::kVgpr0, dwords);
  if (code < operand::kIntZero) return Scalar(code, dwords);
  if (code <= 192) return absl::StrCat(code - operand::kIntZero);
  if (code <= 208) return absl::StrCat(-static_cast<int>(code - 192));
  switch (code) {
    case 240:
      return "0.5";
    case 241:
      return "-0.5";
    case 242:
      return "1.0";
    case 243:
      return "-1.0";
    case 244:
      return "2.0";
    case 245:
      return "-2.0";
    case 246:
      return "4.0";
    case 247:
      return "-4.0";
    case 248:
      return "0.15915494";
    case operand::kSharedBase:
      return "src_shared_base";
    case operand::kSharedLimit:
      return "src_shared_limit";
    case operand::kPrivateBase:
      return "src_private_base";
    case operand::kPrivateLimit:
      return "src_private_limit";
    case operand::kVccz:
      return "src_vccz";
    case operand::kExecz:
      return "src_execz";
    case operand::kScc:
      return "src_scc";
    case operand::kLdsDirect:
      return "src_lds_direct";
    case operand::kLiteral:
      // LLVM prints a literal whose value an inline integer constant could have carried (-16..64) as that integer.
      if (const int32_t value = static_cast<int32_t>(inst.literal); value >= -16 && value <= 64) {
        return absl::StrCat(value);
      }
      return absl::StrFormat("0x%x", inst.literal);
    default:
      return absl::StrFormat("<operand %d>", code);
  }
}

std::string WithModifiers(std::string text, bool abs, bool neg) {
  if (abs) text = absl::StrCat("|", text, "|");
  if (neg) text = absl::StrCat("-", text);
  return text;
}

std::string Bits(uint32_t mask, int count) {
  std::string out = "[";
  for (int i = 0; i < count; ++i) absl::StrAppend(&out, i ? "," : "", (mask >> i) & 1);
  return out + "]";
}

std::string Waitcnt(int32_t imm) {
  // gfx11 S_WAITCNT: expcnt [2:0], lgkmcnt [9:4], vmcnt [15:10]; a field at its maximum does not wait.
  const uint32_t v = static_cast<uint16_t>(imm);
  std::vector<std::string> parts;
  if (((v >> 10) & 0x3f) != 0x3f) parts.push_back(absl::StrFormat("vmcnt(%d)", (v >> 10) & 0x3f));
  if ((v & 7) != 7) parts.push_back(absl::StrFormat("expcnt(%d)", v & 7));
  if (((v >> 4) & 0x3f) != 0x3f) parts.push_back(absl::StrFormat("lgkmcnt(%d)", (v >> 4) & 0x3f));
  if (parts.empty()) return absl::StrFormat("0x%x", v);
  return absl::StrJoin(parts, " ");
}

std::string DelayAlu(int32_t imm) {
  static constexpr const char* kDeps[] = {
      "NO_DEP",        "VALU_DEP_1",    "VALU_DEP_2",        "VALU_DEP_3",   "VALU_DEP_4",   "TRANS32_DEP_1",
      "TRANS32_DEP_2", "TRANS32_DEP_3", "FMA_ACCUM_CYCLE_1", "SALU_CYCLE_1", "SALU_CYCLE_2", "SALU_CYCLE_3"};
  static constexpr const char* kSkips[] = {"SAME", "NEXT", "SKIP_1", "SKIP_2", "SKIP_3", "SKIP_4"};
  const uint32_t v = static_cast<uint16_t>(imm);
  const uint32_t id0 = v & 0xf, skip = (v >> 4) & 7, id1 = (v >> 7) & 0xf;
  if (id0 > 11 || skip > 5 || id1 > 11 || (v >> 11) != 0) return absl::StrFormat("0x%x", v);
  std::vector<std::string> parts;
  if (id0 != 0) parts.push_back(absl::StrCat("instid0(", kDeps[id0], ")"));
  if (skip != 0) parts.push_back(absl::StrCat("instskip(", kSkips[skip], ")"));
  if (id1 != 0) parts.push_back(absl::StrCat("instid1(", kDeps[id1], ")"));
  if (parts.empty()) return "0";
  return absl::StrJoin(parts, " | ");
}

std::string Sendmsg(int32_t imm) {
  const uint32_t v = static_cast<uint16_t>(imm);
  switch (v) {
    case 1:
      return "sendmsg(MSG_INTERRUPT)";
    case 3:
      return "sendmsg(MSG_DEALLOC_VGPRS)";
    default:
      return absl::StrFormat("sendmsg(%d, %d, %d)", v & 0xff, (v >> 4) & 7, (v >> 8) & 3);
  }
}

std::string Hwreg(int32_t imm) {
  static constexpr std::pair<uint32_t, const char*> kNames[] = {
      {1, "HW_REG_MODE"},         {2, "HW_REG_STATUS"},       {3, "HW_REG_TRAPSTS"},       {5, "HW_REG_GPR_ALLOC"},
      {6, "HW_REG_LDS_ALLOC"},    {7, "HW_REG_IB_STS"},       {23, "HW_REG_HW_ID1"},       {24, "HW_REG_HW_ID2"},
      {20, "HW_REG_FLAT_SCR_LO"}, {21, "HW_REG_FLAT_SCR_HI"}, {29, "HW_REG_SHADER_CYCLES"}};
  const uint32_t v = static_cast<uint16_t>(imm);
  const uint32_t id = v & 0x3f, offset = (v >> 6) & 0x1f, size = ((v >> 11) & 0x1f) + 1;
  std::string reg = absl::StrCat(id);
  for (const auto& [n, text] : kNames) {
    if (n == id) reg = text;
  }
  if (offset == 0 && size == 32) return absl::StrCat("hwreg(", reg, ")");
  return absl::StrFormat("hwreg(%s, %d, %d)", reg, offset, size);
}

std::string Sopp(const Instruction& inst) {
  const absl::string_view name = inst.name();
  if (name == "s_waitcnt") return absl::StrCat(name, " ", Waitcnt(inst.imm));
  if (name == "s_delay_alu") return absl::StrCat(name, " ", DelayAlu(inst.imm));
  if (name == "s_sendmsg" || name == "s_sendmsghalt") return absl::StrCat(name, " ", Sendmsg(inst.imm));
  if (name == "s_endpgm" || name == "s_barrier" || name == "s_code_end" || name == "s_icache_inv" ||
      name == "s_wakeup" || name == "s_endpgm_saved" || name == "s_ttracedata" || name == "s_wait_idle" ||
      name == "s_endpgm_ordered_ps_done") {
    return std::string(name);
  }
  if (name.substr(0, 9) == "s_branch" || name.substr(0, 10) == "s_cbranch_")
    return absl::StrCat(name, " ", static_cast<uint16_t>(inst.imm));
  if (name == "s_nop" || name == "s_setprio" || name == "s_sleep" || name == "s_setkill" || name == "s_sethalt") {
    return absl::StrCat(name, " ", static_cast<uint16_t>(inst.imm));
  }
  // The trap id prints in decimal while an inline integer constant could carry it (0..64), else in hex.
  if (name == "s_trap" && static_cast<uint16_t>(inst.imm) <= 64) return absl::StrCat(name, " ", inst.imm);
  return absl::StrFormat("%s 0x%x", name, static_cast<uint16_t>(inst.imm));
}

std::string Smem(const Instruction& inst) {
  const absl::string_view name = inst.name();
  if (name == "s_gl1_inv" || name == "s_dcache_inv") return std::string(name);
  int dwords = 1;
  for (int n : {512, 256, 128, 64}) {
    if (absl::StrContains(name, absl::StrCat("b", n))) {
      dwords = n / 32;
      break;
    }
  }
  const bool buffer = absl::StrContains(name, "buffer");
  std::string text =
      absl::StrCat(name, " ", Scalar(inst.vdst, dwords), ", ", Scalar(inst.src[0], buffer ? 4 : 2), ", ");
  if (inst.src[2] != operand::kNull) {
    absl::StrAppend(&text, Scalar(inst.src[2], 1));
    if (inst.offset != 0) absl::StrAppendFormat(&text, " offset:0x%x", inst.offset);
  } else if (inst.offset != 0) {
    absl::StrAppendFormat(&text, "0x%x", inst.offset);
  } else {
    absl::StrAppend(&text, "null");
  }
  if (inst.glc) absl::StrAppend(&text, " glc");
  if (inst.dlc) absl::StrAppend(&text, " dlc");
  return text;
}

int MemoryDwords(absl::string_view name) {
  for (auto [suffix, dwords] : {std::pair{"b128", 4}, {"b96", 3}, {"b64", 2}}) {
    if (absl::StrContains(name, suffix)) return dwords;
  }
  return 1;
}

std::string Flat(const Instruction& inst) {
  const absl::string_view name = inst.name();
  const int dwords = MemoryDwords(name);
  const bool atomic = absl::StrContains(name, "atomic");
  const bool store = absl::StrContains(name, "store");
  const bool returns = !store && (!atomic || inst.glc);
  const int data_dwords = absl::StrContains(name, "cmpswap") ? 2 * dwords : dwords;
  std::vector<std::string> ops;
  if (returns) ops.push_back(Range('v', inst.vdst, dwords));
  std::string address;
  if (inst.encoding == Encoding::kScratch) {
    address = inst.offen ? Range('v', inst.src[0] - operand::kVgpr0, 1) : "off";
  } else if (inst.encoding == Encoding::kGlobal && inst.src[2] != operand::kNull) {
    address = Range('v', inst.src[0] - operand::kVgpr0, 1);
  } else {
    address = Range('v', inst.src[0] - operand::kVgpr0, 2);
  }
  ops.push_back(address);
  if (store || atomic) ops.push_back(Range('v', inst.src[1] - operand::kVgpr0, data_dwords));
  if (inst.encoding == Encoding::kScratch) {
    ops.push_back(inst.src[2] == operand::kNull ? "off" : Scalar(inst.src[2], 1));
  } else if (inst.encoding == Encoding::kGlobal) {
    ops.push_back(inst.src[2] == operand::kNull ? "off" : Scalar(inst.src[2], 2));
  }
  std::string text = absl::StrCat(name, " ", absl::StrJoin(ops, ", "));
  if (inst.offset != 0) absl::StrAppend(&text, " offset:", inst.offset);
  if (inst.glc) absl::StrAppend(&text, " glc");
  if (inst.slc) absl::StrAppend(&text, " slc");
  if (inst.dlc) absl::StrAppend(&text, " dlc");
  return text;
}

std::string Mubuf(const Instruction& inst) {
  const absl::string_view name = inst.name();
  if (name == "buffer_gl0_inv" || name == "buffer_gl1_inv") return std::string(name);
  const int dwords = MemoryDwords(name);
  const int vaddr_dwords = (inst.offen && inst.idxen) ? 2 : 1;
  std::string text =
      absl::StrCat(name, " ", Range('v', inst.src[1] - operand::kVgpr0, dwords), ", ",
                   (inst.offen || inst.idxen) ? Range('v', inst.src[0] - operand::kVgpr0, vaddr_dwords) : "off", ", ",
                   Scalar(inst.src[2], 4), ", ", Source(inst, inst.vdst, 1));
  if (inst.idxen) absl::StrAppend(&text, " idxen");
  if (inst.offen) absl::StrAppend(&text, " offen");
  if (inst.offset != 0) absl::StrAppend(&text, " offset:", inst.offset);
  if (inst.glc) absl::StrAppend(&text, " glc");
  if (inst.slc) absl::StrAppend(&text, " slc");
  if (inst.dlc) absl::StrAppend(&text, " dlc");
  return text;
}

std::string Ds(const Instruction& inst) {
  const absl::string_view name = inst.name();
  const int dwords = MemoryDwords(name);
  const bool two_address = absl::StrContains(name, "2addr");
  const bool load = absl::StrContains(name, "load");
  const bool returns =
      load || absl::StrContains(name, "rtn") || name == "ds_swizzle_b32" || absl::StrContains(name, "permute");
  const bool store = absl::StrContains(name, "store") && !absl::StrContains(name, "storexchg");
  const bool has_data = !load && name != "ds_nop";
  const bool two_data = two_address ? !load : (absl::StrContains(name, "cmpstore") || absl::StrContains(name, "mskor"));
  std::vector<std::string> ops;
  if (returns) ops.push_back(Range('v', inst.vdst, (two_address && load) ? 2 * dwords : dwords));
  ops.push_back(Range('v', inst.src[0] - operand::kVgpr0, 1));
  if (has_data || store) ops.push_back(Range('v', inst.src[1] - operand::kVgpr0, dwords));
  if (two_data) ops.push_back(Range('v', inst.src[2] - operand::kVgpr0, dwords));
  std::string text = absl::StrCat(name, " ", absl::StrJoin(ops, ", "));
  if (two_address) {
    if (inst.offset != 0) absl::StrAppend(&text, " offset0:", inst.offset);
    if (inst.offset1 != 0) absl::StrAppend(&text, " offset1:", inst.offset1);
  } else {
    const uint32_t offset = static_cast<uint32_t>(inst.offset) | (uint32_t{inst.offset1} << 8);
    if (name == "ds_swizzle_b32") {
      absl::StrAppendFormat(&text, " offset:0x%x", offset);
    } else if (offset != 0) {
      absl::StrAppend(&text, " offset:", offset);
    }
  }
  if (inst.gds) absl::StrAppend(&text, " gds");
  return text;
}

std::string Dpp(const Instruction& inst) {
  const uint32_t w = inst.dpp_word;
  if (inst.dpp == 8) {
    std::string text = " dpp8:[";
    for (int i = 0; i < 8; ++i) absl::StrAppend(&text, i ? "," : "", (w >> (8 + 3 * i)) & 7);
    return absl::StrCat(text, "]", inst.dpp_fi ? " fi:1" : "");
  }
  const uint32_t ctrl = (w >> 8) & 0x1ff;
  std::string text;
  if (ctrl <= 0xff) {
    text = absl::StrFormat(" quad_perm:[%d,%d,%d,%d]", ctrl & 3, (ctrl >> 2) & 3, (ctrl >> 4) & 3, (ctrl >> 6) & 3);
  } else if (ctrl >= 0x101 && ctrl <= 0x10f) {
    text = absl::StrFormat(" row_shl:%d", ctrl - 0x100);
  } else if (ctrl >= 0x111 && ctrl <= 0x11f) {
    text = absl::StrFormat(" row_shr:%d", ctrl - 0x110);
  } else if (ctrl >= 0x121 && ctrl <= 0x12f) {
    text = absl::StrFormat(" row_ror:%d", ctrl - 0x120);
  } else if (ctrl == 0x140) {
    text = " row_mirror";
  } else if (ctrl == 0x141) {
    text = " row_half_mirror";
  } else if (ctrl >= 0x150 && ctrl <= 0x15f) {
    text = absl::StrFormat(" row_share:%d", ctrl - 0x150);
  } else if (ctrl >= 0x160 && ctrl <= 0x16f) {
    text = absl::StrFormat(" row_xmask:%d", ctrl - 0x160);
  } else {
    text = absl::StrFormat(" dpp_ctrl:0x%x", ctrl);
  }
  absl::StrAppendFormat(&text, " row_mask:0x%x bank_mask:0x%x", (w >> 28) & 0xf, (w >> 24) & 0xf);
  if ((w >> 19) & 1) absl::StrAppend(&text, " bound_ctrl:1");
  if ((w >> 18) & 1) absl::StrAppend(&text, " fi:1");
  return text;
}

// VOP1/VOP2/VOPC/VOP3.
std::string Valu(const Instruction& inst, uint32_t mask) {
  const OperandShape shape = ShapeOf(inst);
  const absl::string_view name = inst.name();
  const uint16_t op = inst.valu_op;
  const bool vop3 = inst.encoding == Encoding::kVop3;
  const bool is_cmpx = name.substr(0, 6) == "v_cmpx";
  std::string mnemonic(name);
  // LLVM names the encoding when an operation has both a short and a VOP3 form.
  if (inst.dpp != 0) {
    absl::StrAppend(&mnemonic, vop3 ? "_e64_dpp" : "_dpp");
  } else if (vop3 && op < 512) {
    absl::StrAppend(&mnemonic, "_e64");
  } else if (!vop3) {
    const bool has_vop3_form = OpcodeName(Encoding::kVop3, op) != nullptr;
    // llvm-objdump-19 prints v_readfirstlane_b32 and the operand-less v_pipeflush without the suffix.
    if (has_vop3_form && name != "v_readfirstlane_b32" && name != "v_pipeflush") absl::StrAppend(&mnemonic, "_e32");
  }
  std::vector<std::string> ops;
  if (op < 256) {  // compares: the mask destination (none for v_cmpx)
    if (!is_cmpx) ops.push_back(Scalar(vop3 ? inst.sdst : operand::kVccLo, mask));
  } else if (shape.has_dst) {
    if (name == "v_readfirstlane_b32" || name == "v_readlane_b32") {
      ops.push_back(Scalar(inst.vdst, 1));
    } else {
      ops.push_back(Range('v', inst.vdst, shape.dst_dwords));
    }
    if (HasScalarDestination(op) || (!vop3 && absl::StrContains(name, "_co_ci_"))) {
      ops.push_back(Scalar(vop3 ? inst.sdst : operand::kVccLo, mask));
    }
  }
  const bool fmamk = name == "v_fmamk_f32" || name == "v_fmamk_f16";
  const bool fmaak = name == "v_fmaak_f32" || name == "v_fmaak_f16";
  for (int i = 0; i < shape.num_srcs; ++i) {
    if (fmamk && i == 1) ops.push_back(absl::StrFormat("0x%x", inst.literal));
    uint32_t dwords = shape.src_dwords[i];
    if (i == 2 && (name == "v_cndmask_b32" || absl::StrContains(name, "_co_ci_"))) dwords = mask;
    if (!vop3 && i == 2 && (name == "v_cndmask_b32" || absl::StrContains(name, "_co_ci_"))) {
      ops.push_back(Scalar(operand::kVccLo, mask));
      continue;
    }
    std::string text = Source(inst, inst.src[i], dwords);
    if (vop3 || inst.dpp == 16) text = WithModifiers(text, (inst.abs >> i) & 1, (inst.neg >> i) & 1);
    ops.push_back(text);
  }
  if (fmaak) ops.push_back(absl::StrFormat("0x%x", inst.literal));
  std::string text = absl::StrCat(mnemonic, ops.empty() ? "" : " ", absl::StrJoin(ops, ", "));
  if (vop3) {
    if (inst.opsel != 0) absl::StrAppend(&text, " op_sel:", Bits(inst.opsel, shape.num_srcs + 1));
    if (inst.clamp) absl::StrAppend(&text, " clamp");
    static constexpr const char* kOmod[] = {"", " mul:2", " mul:4", " div:2"};
    absl::StrAppend(&text, kOmod[inst.omod & 3]);
  }
  if (inst.dpp != 0) absl::StrAppend(&text, Dpp(inst));
  return text;
}

std::string Vop3p(const Instruction& inst, bool wave64) {
  const OperandShape shape = ShapeOf(inst, wave64);
  // v_fma_mix*: the sources are f32 or f16 one by one, so NEG_HI is each source's abs and the modifiers print on
  // the operands; op_sel_hi (f16 source) defaults to 0.
  const bool mix = absl::StartsWith(inst.name(), "v_fma_mix");
  std::vector<std::string> ops{Range('v', inst.vdst, shape.dst_dwords)};  // WMMA's matrices span VGPR blocks
  for (int i = 0; i < shape.num_srcs; ++i) {
    std::string source = Source(inst, inst.src[i], shape.src_dwords[i]);
    if (mix) source = WithModifiers(source, (inst.neg_hi >> i) & 1, (inst.neg >> i) & 1);
    ops.push_back(source);
  }
  std::string text = absl::StrCat(inst.name(), inst.dpp != 0 ? "_e64_dpp " : " ", absl::StrJoin(ops, ", "));
  const int n = shape.num_srcs;
  const uint32_t all = (1u << n) - 1;
  if (inst.opsel != 0) absl::StrAppend(&text, " op_sel:", Bits(inst.opsel, n));
  if ((inst.opsel_hi & all) != (mix ? 0 : all)) absl::StrAppend(&text, " op_sel_hi:", Bits(inst.opsel_hi, n));
  if (!mix && inst.neg != 0) absl::StrAppend(&text, " neg_lo:", Bits(inst.neg, n));
  if (!mix && inst.neg_hi != 0) absl::StrAppend(&text, " neg_hi:", Bits(inst.neg_hi, n));
  if (inst.clamp) absl::StrAppend(&text, " clamp");
  if (inst.dpp != 0) absl::StrAppend(&text, Dpp(inst));
  return text;
}

std::string VopdHalf(const Instruction& inst, uint8_t op, uint16_t vdst, uint16_t src0, uint16_t vsrc1) {
  const std::string name = OpcodeName(Encoding::kVopd, op);
  const std::string dst = Range('v', vdst, 1);
  const std::string a = Source(inst, src0, 1), b = Source(inst, vsrc1, 1);
  const std::string literal = absl::StrFormat("0x%x", inst.literal);
  switch (op) {
    case kDualMovB32:
      return absl::StrCat(name, " ", dst, ", ", a);
    case kDualFmaakF32:
      return absl::StrCat(name, " ", dst, ", ", a, ", ", b, ", ", literal);
    case kDualFmamkF32:
      return absl::StrCat(name, " ", dst, ", ", a, ", ", literal, ", ", b);
    default:
      return absl::StrCat(name, " ", dst, ", ", a, ", ", b);
  }
}

}  // namespace

std::string Disassemble(const Instruction& inst, bool wave64) {
  const uint32_t mask = wave64 ? 2 : 1;
  const absl::string_view name = inst.name();
  const OperandShape shape = ShapeOf(inst);
  switch (inst.encoding) {
    case Encoding::kSopp:
      return Sopp(inst);
    case Encoding::kSopk: {
      if (name == "s_getreg_b32") return absl::StrCat(name, " ", Scalar(inst.vdst, 1), ", ", Hwreg(inst.imm));
      if (name == "s_setreg_b32") return absl::StrCat(name, " ", Hwreg(inst.imm), ", ", Scalar(inst.vdst, 1));
      if (name == "s_setreg_imm32_b32") return absl::StrCat(name, " ", Hwreg(inst.imm), ", ", inst.literal);
      if (name == "s_version") return absl::StrFormat("%s 0x%x", name, static_cast<uint16_t>(inst.imm));
      if (name == "s_call_b64") return absl::StrCat(name, " ", Scalar(inst.vdst, 2), ", ", inst.imm);
      return absl::StrFormat("%s %s, 0x%x", name, Scalar(inst.vdst, 1), static_cast<uint16_t>(inst.imm));
    }
    case Encoding::kSop1:
    case Encoding::kSop2:
    case Encoding::kSopc: {
      std::vector<std::string> ops;
      if (shape.has_dst) ops.push_back(Scalar(inst.vdst, shape.dst_dwords));
      for (int i = 0; i < shape.num_srcs; ++i) ops.push_back(Source(inst, inst.src[i], shape.src_dwords[i]));
      return absl::StrCat(name, ops.empty() ? "" : " ", absl::StrJoin(ops, ", "));
    }
    case Encoding::kSmem:
      return Smem(inst);
    case Encoding::kVop1:
    case Encoding::kVop2:
    case Encoding::kVopc:
    case Encoding::kVop3:
      return Valu(inst, mask);
    case Encoding::kVop3p:
      return Vop3p(inst, wave64);
    case Encoding::kVopd:
      return absl::StrCat(VopdHalf(inst, inst.opx, inst.vdst, inst.src[0], inst.src[1]),
                          " :: ", VopdHalf(inst, inst.opy, inst.y_vdst, inst.y_src0, inst.y_vsrc1));
    case Encoding::kDs:
      return Ds(inst);
    case Encoding::kFlat:
    case Encoding::kGlobal:
    case Encoding::kScratch:
      return Flat(inst);
    case Encoding::kMubuf:
      return Mubuf(inst);
  }
  return std::string(name);
}

}  // namespace am::sim::isa
