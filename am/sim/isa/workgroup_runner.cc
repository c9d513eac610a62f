#include "am/sim/isa/workgroup_runner.h"

#include <algorithm>
#include <bit>
#include <cfenv>
#include <chrono>
#include <thread>

#include "absl/strings/str_format.h"
#include "am/regs/gc.h"
#include "am/regs/sh_mem_constants.h"
#include "am/regs/sq_wave_field_constants.h"
#include "am/sim/isa/decoder.h"
#include "am/sim/isa/float_bits.h"
#include "am/sim/isa/wmma.h"

namespace am::sim::isa {
namespace {

// A wave that runs this many instructions without ending is reported as hung (the hardware would hang the queue
// until the driver's timeout; the virtual GPU says so instead of spinning forever).
constexpr uint64_t kWaveInstructionLimit = uint64_t{1} << 30;
// A running wave looks whether the SQ wants it (a copy for a reader of its indirect registers, a halt) every this
// many instructions (a power of two): one relaxed load each time, and a reader waits microseconds.
constexpr uint64_t kSqPollInstructions = 256;
// A workgroup whose remaining waves are all halted checks this often for the resume (and for a reader's copy).
constexpr auto kHaltedPoll = std::chrono::microseconds(100);

// MODE.FP_ROUND (RDNA3 ISA, MODE register): bits [1:0] round single precision, [3:2] double and half precision;
// 0 (round to nearest even) in both is the default the interpreter runs without touching the host's rounding.
constexpr uint32_t kModeFpRound = 0xf;

// The float inline constants 240..248 (RDNA3 ISA, "Scalar/vector source operands") in single precision.
constexpr uint32_t kInlineF32[] = {0x3f000000, 0xbf000000, 0x3f800000, 0xbf800000, 0x40000000,
                                   0xc0000000, 0x40800000, 0xc0800000, 0x3e22f983};
constexpr uint64_t kInlineF64[] = {0x3fe0000000000000, 0xbfe0000000000000, 0x3ff0000000000000,
                                   0xbff0000000000000, 0x4000000000000000, 0xc000000000000000,
                                   0x4010000000000000, 0xc010000000000000, 0x3fc45f306dc9c882};

}  // namespace

WorkgroupRunner::WorkgroupRunner(const DispatchSetup& setup, std::vector<Wave>& waves)
    : setup_(setup), memory_(*setup.memory, setup.client), waves_(waves), lds_(setup.lds_bytes) {
  // SHARED_BASE and PRIVATE_BASE are address bits 63:48, so bits 63:32 of an aperture address are the field << 16.
  const auto bases = regs::gc::SH_MEM_BASES::FromRaw(setup.sh_mem.bases);
  shared_aperture_high_ = bases.shared_base() << 16;
  private_aperture_high_ = bases.private_base() << 16;
  alignment_mode_ = regs::gc::SH_MEM_CONFIG::FromRaw(setup.sh_mem.config).alignment_mode();
  if (setup.wave_slots != nullptr) wgp_ = setup.wave_slots->ClaimWgp();
}

WorkgroupRunner::~WorkgroupRunner() {
  if (wgp_.has_value()) setup_.wave_slots->ReleaseWgp(*wgp_);
}

WaveSnapshot WorkgroupRunner::SnapshotOf(const Wave& wave) const {
  namespace sq = regs::sq;
  const WaveLocation where = WaveSlots::Locate(*wgp_, wave.wave_id);
  WaveSnapshot s;
  s.pc = wave.pc;
  s.mode = wave.mode;
  const bool halted = setup_.wave_slots->HaltRequested(*wgp_, wave.wave_id);
  // SQ_WAVE_STATUS: the bits the interpreter's state gives. TRAP never shows: a wave that traps ends the dispatch
  // (no trap handler is installed), and PRIV/TRAP_EN are 0 for user waves.
  s.status = sq::SQ_WAVE_STATUS__VALID_MASK | (wave.scc ? sq::SQ_WAVE_STATUS__SCC_MASK : 0) |
             (wave.exec() == 0 ? sq::SQ_WAVE_STATUS__EXECZ_MASK : 0) |
             (wave.mask_at(operand::kVccLo) == 0 ? sq::SQ_WAVE_STATUS__VCCZ_MASK : 0) |
             (waves_in_workgroup_ > 1 ? sq::SQ_WAVE_STATUS__IN_TG_MASK : 0) |
             (wave.at_barrier ? sq::SQ_WAVE_STATUS__IN_BARRIER_MASK : 0) | (halted ? sq::SQ_WAVE_STATUS__HALT_MASK : 0);
  s.hw_id1 = (where.slot << sq::SQ_WAVE_HW_ID1__WAVE_ID__SHIFT) | (where.simd << sq::SQ_WAVE_HW_ID1__SIMD_ID__SHIFT) |
             (where.wgp << sq::SQ_WAVE_HW_ID1__WGP_ID__SHIFT) | (where.sa << sq::SQ_WAVE_HW_ID1__SA_ID__SHIFT) |
             (where.se << sq::SQ_WAVE_HW_ID1__SE_ID__SHIFT);
  s.hw_id2 = setup_.hw_id2;
  s.gpr_alloc = setup_.gpr_alloc;
  s.ib_sts2 = wave.lanes == 64 ? sq::SQ_WAVE_IB_STS2__WAVE64_MASK : 0;
  std::copy(std::begin(wave.sgpr), std::end(wave.sgpr), s.sgpr.begin());
  s.vgprs = std::min<uint32_t>(setup_.vgprs, kVgprCount);
  s.vgpr.assign(wave.vgpr.get(), wave.vgpr.get() + size_t{s.vgprs} * kMaxLanes);
  return s;
}

bool WorkgroupRunner::AttendSq(const Wave& current) {
  WaveSlots& slots = *setup_.wave_slots;
  if (!slots.NeedsAttention(*wgp_)) return false;
  for (uint32_t w = 0; w < waves_in_workgroup_; ++w) {
    if (slots.CopyRequested(*wgp_, w)) slots.Publish(*wgp_, w, SnapshotOf(waves_[w]));
  }
  return slots.HaltRequested(*wgp_, current.wave_id);
}

absl::Status WorkgroupRunner::AmbiguousAperture(uint64_t address) const {
  return absl::FailedPreconditionError(absl::StrFormat(
      "FLAT address %#x is in both the shared and the private aperture: SH_MEM_BASES of VMID %d is %#x "
      "(SHARED_BASE == PRIVATE_BASE; the power-on value 0 puts both at 0 until the driver programs them, "
      "gfx_v11_0_constants_init)",
      address, setup_.client.vmid, setup_.sh_mem.bases));
}

absl::StatusOr<uint64_t> WorkgroupRunner::Aligned(uint64_t address, int bytes) const {
  // "Element size" is the access for 1, 2, 4, 8 and 16 bytes; a 12-byte access is three dwords.
  const uint64_t natural = std::has_single_bit(static_cast<unsigned>(bytes)) ? bytes : 4;
  const uint64_t dword_or_less = std::min<uint64_t>(natural, 4);
  switch (alignment_mode_) {
    case regs::gc::SH_MEM_ALIGNMENT_MODE_UNALIGNED:
      return address;
    case regs::gc::SH_MEM_ALIGNMENT_MODE_DWORD:
      // "Automatic alignment to multiple of the smaller of element size or a DWORD": the low bits are dropped.
      return address & ~(dword_or_less - 1);
    case regs::gc::SH_MEM_ALIGNMENT_MODE_DWORD_STRICT:
    case regs::gc::SH_MEM_ALIGNMENT_MODE_STRICT: {
      const uint64_t required = alignment_mode_ == regs::gc::SH_MEM_ALIGNMENT_MODE_STRICT ? natural : dword_or_less;
      if ((address & (required - 1)) == 0) return address;
      return absl::FailedPreconditionError(absl::StrFormat(
          "%d-byte access at %#x is not %d-byte aligned, which SH_MEM_CONFIG.ALIGNMENT_MODE %s (%#x for VMID %d) "
          "requires",
          bytes, address, required,
          alignment_mode_ == regs::gc::SH_MEM_ALIGNMENT_MODE_STRICT ? "STRICT" : "DWORD_STRICT", setup_.sh_mem.config,
          setup_.client.vmid));
    }
  }
  return address;
}

uint32_t WorkgroupRunner::ScalarValue(const Wave& wave, const Instruction& inst, uint16_t code) const {
  if (code < 128) return code == operand::kNull ? 0 : wave.sgpr[code];
  if (code <= 192) return code - operand::kIntZero;
  if (code <= 208) return static_cast<uint32_t>(-static_cast<int32_t>(code - 192));
  if (code >= operand::kFloatHalf && code <= operand::kInvTwoPi) return kInlineF32[code - operand::kFloatHalf];
  switch (code) {
    case operand::kVccz:
      return wave.mask_at(operand::kVccLo) == 0;
    case operand::kExecz:
      return wave.exec() == 0;
    case operand::kScc:
      return wave.scc;
    case operand::kLiteral:
      return inst.literal;
    // As 32-bit operands the aperture registers read as the high dword of the aperture's first (base) or last
    // (limit) byte address; both apertures are 2^32 bytes, so base and limit share it.
    case operand::kSharedBase:
    case operand::kSharedLimit:
      return shared_aperture_high_;
    case operand::kPrivateBase:
    case operand::kPrivateLimit:
      return private_aperture_high_;
    default:
      return 0;
  }
}

uint64_t WorkgroupRunner::ScalarValue64(const Wave& wave, const Instruction& inst, uint16_t code, bool f64) const {
  if (code < 128) {
    if (code == operand::kNull) return 0;
    return wave.sgpr[code] | uint64_t{wave.sgpr[(code + 1) & 127]} << 32;
  }
  if (code <= 192) return code - operand::kIntZero;
  if (code <= 208) return static_cast<uint64_t>(-static_cast<int64_t>(code - 192));
  if (code >= operand::kFloatHalf && code <= operand::kInvTwoPi) {
    return f64 ? kInlineF64[code - operand::kFloatHalf] : kInlineF32[code - operand::kFloatHalf];
  }
  if (code == operand::kLiteral) return f64 ? uint64_t{inst.literal} << 32 : inst.literal;
  // As 64-bit operands (s_mov_b64 s[0:1], src_private_base, which clang emits) they are the whole address.
  switch (code) {
    case operand::kSharedBase:
      return uint64_t{shared_aperture_high_} << 32;
    case operand::kSharedLimit:
      return uint64_t{shared_aperture_high_} << 32 | 0xffffffffu;
    case operand::kPrivateBase:
      return uint64_t{private_aperture_high_} << 32;
    case operand::kPrivateLimit:
      return uint64_t{private_aperture_high_} << 32 | 0xffffffffu;
    default:
      return ScalarValue(wave, inst, code);
  }
}

void WorkgroupRunner::WriteScalar(Wave& wave, uint16_t code, uint32_t value) {
  if (code >= 128 || code == operand::kNull) return;
  wave.sgpr[code] = value;
}

void WorkgroupRunner::WriteScalar64(Wave& wave, uint16_t code, uint64_t value) {
  if (code >= 128 || code == operand::kNull) return;
  wave.sgpr[code] = static_cast<uint32_t>(value);
  wave.sgpr[(code + 1) & 127] = static_cast<uint32_t>(value >> 32);
  wave.sgpr[operand::kNull] = 0;
}

void WorkgroupRunner::InitWave(Wave& wave, uint32_t index, uint32_t x, uint32_t y, uint32_t z, uint32_t waves) {
  std::fill(std::begin(wave.sgpr), std::end(wave.sgpr), 0);
  wave.lanes = setup_.lanes;
  wave.pc = setup_.program->entry();
  wave.scc = false;
  wave.mode = setup_.float_mode;
  wave.wave_id = index;
  wave.done = false;
  wave.at_barrier = false;
  // AMDGPUUsage, "Initial Kernel Execution State": user SGPRs from COMPUTE_USER_DATA, then the enabled
  // workgroup ids, the workgroup info and the scratch wave offset.
  uint32_t s = 0;
  for (; s < setup_.user_sgprs && s < setup_.user_data.size(); ++s) wave.sgpr[s] = setup_.user_data[s];
  const uint32_t ids[3] = {x, y, z};
  for (int d = 0; d < 3; ++d) {
    if (setup_.tgid_enable[d]) wave.sgpr[s++] = ids[d];
  }
  if (setup_.tg_size_enable) wave.sgpr[s++] = waves & 0x3f;  // TG_SIZE: wave count in the workgroup
  if (setup_.scratch_enable) wave.sgpr[s++] = 0;             // private segment wave offset (host scratch: 0)
  // Work-item ids packed into VGPR0 (gfx11: X bits 9:0, Y 19:10, Z 29:20), EXEC for the lanes that exist.
  const auto& size = setup_.workgroup_size;
  const uint32_t total = size[0] * size[1] * size[2];
  uint32_t* v0 = wave.v(0);
  uint64_t exec = 0;
  // Work-item t = index * lanes + lane is (t % X, t / X % Y, t / (X * Y)): divided once for the first lane, then
  // counted on.
  const uint32_t first = index * wave.lanes;
  uint32_t tx = first % size[0], ty = (first / size[0]) % size[1], tz = first / (size[0] * size[1]);
  for (int lane = 0; lane < wave.lanes; ++lane) {
    if (first + lane >= total) {
      v0[lane] = 0;
      continue;
    }
    exec |= uint64_t{1} << lane;
    v0[lane] = tx | (setup_.workitem_id_dims >= 1 ? ty << 10 : 0) | (setup_.workitem_id_dims >= 2 ? tz << 20 : 0);
    if (++tx == size[0]) {
      tx = 0;
      if (++ty == size[1]) {
        ty = 0;
        ++tz;
      }
    }
  }
  wave.set_exec(exec);
}

absl::Status WorkgroupRunner::Run(uint32_t x, uint32_t y, uint32_t z) {
  const auto& size = setup_.workgroup_size;
  const uint32_t threads = size[0] * size[1] * size[2];
  const uint32_t waves = (threads + setup_.lanes - 1) / setup_.lanes;
  if (waves_.size() < waves) waves_.resize(waves);
  std::fill(lds_.begin(), lds_.end(), 0);
  const size_t scratch_bytes = size_t{setup_.scratch_bytes_per_lane} * setup_.lanes * waves;
  if (scratch_.size() != scratch_bytes) scratch_.assign(scratch_bytes, 0);
  for (uint32_t w = 0; w < waves; ++w) {
    InitWave(waves_[w], w, setup_.start[0] + x, setup_.start[1] + y, setup_.start[2] + z, waves);
  }
  // The waves show themselves in their WGP's slots while the workgroup runs, and leave them however it ends.
  waves_in_workgroup_ = wgp_.has_value() ? std::min(waves, WaveSlots::kSlotsPerWgp) : 0;
  for (uint32_t w = 0; w < waves_in_workgroup_; ++w) setup_.wave_slots->Occupy(*wgp_, w);
  struct Vacate {
    WorkgroupRunner* runner;
    ~Vacate() {
      for (uint32_t w = 0; w < runner->waves_in_workgroup_; ++w) runner->setup_.wave_slots->Vacate(*runner->wgp_, w);
      runner->waves_in_workgroup_ = 0;
    }
  } vacate{this};
  // Round robin: each wave runs to its next barrier or its end; a barrier opens when every wave that has not
  // ended reached it. A halted wave (SQ_CMD SETHALT) waits where it is, neither running nor at the barrier.
  while (true) {
    bool any_running = false, any_halted = false;
    for (uint32_t w = 0; w < waves; ++w) {
      Wave& wave = waves_[w];
      if (wave.done || wave.at_barrier) continue;
      const Flow flow = RunWave(wave);
      if (flow == Flow::kFault) {
        if (setup_.stop != nullptr) setup_.stop->store(true, std::memory_order_relaxed);
        return absl::InternalError(fault_.message);
      }
      if (flow == Flow::kHalted) {
        any_halted = true;
        continue;
      }
      any_running = true;
    }
    bool all_done = true;
    for (uint32_t w = 0; w < waves; ++w) {
      if (!waves_[w].done) all_done = false;
    }
    if (all_done) return absl::OkStatus();
    if (!any_running && !any_halted) {
      for (uint32_t w = 0; w < waves; ++w) waves_[w].at_barrier = false;
    }
    if (!any_running && any_halted) {
      // Only halted waves (and waves at a barrier they hold up) are left: wait for the resume without spinning.
      std::this_thread::sleep_for(kHaltedPoll);
    }
    if (setup_.stopping()) {
      return absl::AbortedError("dispatch stopped (a fault in another workgroup, or the queue's waves were reset)");
    }
  }
}

WorkgroupRunner::Flow WorkgroupRunner::RunWave(Wave& wave) {
  uint64_t executed = 0;
  // The slot of the instruction that falls through from the last one, when the table holds it next (no lookup).
  const DecodedSlot* following = nullptr;
  while (true) {
    if (wgp_.has_value() && (executed & (kSqPollInstructions - 1)) == 0) {
      if (AttendSq(wave)) return Flow::kHalted;
      following = nullptr;  // what the SQ was asked may have moved the wave: look its PC up
    }
    const DecodedSlot* found = following != nullptr ? following : setup_.program->Find(wave.pc);
    following = nullptr;
    if (found == nullptr) {
      absl::StatusOr<const DecodedSlot*> slot = setup_.program->At(wave.pc, *setup_.memory, setup_.client);
      if (!slot.ok()) {
        fault_ = {WaveFault::kMemory,
                  wave.pc,
                  {0, 0, 0},
                  0,
                  absl::StrFormat("instruction fetch at PC %#x: %s", wave.pc, slot.status().message())};
        return Flow::kFault;
      }
      found = *slot;
    }
    const DecodedSlot& decoded = *found;
    if (!decoded.valid) return Undecodable(wave);
    const Instruction& inst = decoded.inst;
    const Flow flow = Execute(wave, inst);
    lane_instructions_ += wave.lanes;
    switch (flow) {
      case Flow::kNext:
        wave.pc += inst.dwords * 4u;
        if (decoded.next_follows) following = found + 1;
        break;
      case Flow::kJumped:
        break;
      case Flow::kBarrier:
        wave.pc += inst.dwords * 4u;
        wave.at_barrier = true;
        return flow;
      case Flow::kEnd:
        wave.done = true;
        return flow;
      case Flow::kFault:
      case Flow::kHalted:
        return flow;
    }
    if (++executed > kWaveInstructionLimit) {
      fault_ = {WaveFault::kUnsupported,
                wave.pc,
                {0, 0, 0},
                0,
                absl::StrFormat("wave %d ran %d instructions without ending (PC %#x): treated as hung", wave.wave_id,
                                executed, wave.pc)};
      return Flow::kFault;
    }
    if ((executed & 0xffff) == 0 && setup_.stopping()) {
      wave.done = true;
      return Flow::kEnd;
    }
  }
}

WorkgroupRunner::Flow WorkgroupRunner::Execute(Wave& wave, const Instruction& inst) {
  switch (inst.encoding) {
    case Encoding::kSop1:
      return Sop1(wave, inst);
    case Encoding::kSop2:
      return Sop2(wave, inst);
    case Encoding::kSopc:
      return Sopc(wave, inst);
    case Encoding::kSopk:
      return Sopk(wave, inst);
    case Encoding::kSopp:
      return Sopp(wave, inst);
    case Encoding::kSmem:
      return Smem(wave, inst);
    case Encoding::kVop1:
    case Encoding::kVop2:
    case Encoding::kVopc:
    case Encoding::kVop3:
      if ((wave.mode & kModeFpRound) != 0) return DirectedRoundingValu(wave, inst);
      if (inst.fast_valu != FastValu::kNone && setup_.fast_paths) return RunFastValu(wave, inst);
      return Valu(wave, inst);
    case Encoding::kVop3p:
      // WMMA rounds to nearest even under every MODE (wmma.cc), so it never runs under a switched host mode.
      if ((wave.mode & kModeFpRound) != 0 && !WmmaFormatOf(inst.opcode).has_value()) {
        return DirectedRoundingValu(wave, inst);
      }
      return Vop3p(wave, inst);
    case Encoding::kVopd:
      if ((wave.mode & kModeFpRound) != 0) return DirectedRoundingValu(wave, inst);
      if (setup_.fast_paths) return RunFastVopd(wave, inst);
      return Vopd(wave, inst);
    case Encoding::kGlobal:
    case Encoding::kFlat:
      return Global(wave, inst);
    case Encoding::kScratch:
      return Scratch(wave, inst);
    case Encoding::kDs:
      return Ds(wave, inst);
    case Encoding::kMubuf:
      return Mubuf(wave, inst);
  }
  return Illegal(wave, inst, "unknown encoding");
}

// The float operations in vector.cc are the host's (SSE arithmetic, libm's fma and sqrt, libgcc's half
// conversions), all of which round the way the host's MXCSR / fenv rounding mode says; vector.cc computes nothing
// that rounds at compile time, and it is another translation unit, so nothing moves across the fesetround calls.
WorkgroupRunner::Flow WorkgroupRunner::DirectedRoundingValu(Wave& wave, const Instruction& inst) {
  // MODE.FP_ROUND values (LLVM SIDefines.h FP_ROUND_ROUND_TO_*): 0 nearest even, 1 +infinity, 2 -infinity, 3 zero.
  static constexpr int kHostRounding[4] = {FE_TONEAREST, FE_UPWARD, FE_DOWNWARD, FE_TOWARDZERO};
  const int host = kHostRounding[(wave.mode >> inst.round_shift) & 3];
  const int saved = std::fegetround();
  if (host != saved) std::fesetround(host);
  Flow flow;
  switch (inst.encoding) {
    case Encoding::kVop3p:
      flow = Vop3p(wave, inst);
      break;
    case Encoding::kVopd:
      flow = Vopd(wave, inst);
      break;
    default:
      flow = Valu(wave, inst);
      break;
  }
  if (host != saved) std::fesetround(saved);
  return flow;
}

WorkgroupRunner::Flow WorkgroupRunner::Illegal(Wave& wave, const Instruction& inst, const std::string& why) {
  fault_.kind = WaveFault::kIllegalInstruction;
  fault_.pc = wave.pc;
  if (wgp_.has_value()) fault_.location = WaveSlots::Locate(*wgp_, wave.wave_id);
  fault_.dwords = std::max(1, setup_.program->WordsAt(wave.pc, fault_.words));
  std::string words = absl::StrFormat("%08x", fault_.words[0]);
  for (int i = 1; i < fault_.dwords && i < 3; ++i) absl::StrAppendFormat(&words, " %08x", fault_.words[i]);
  const char* name = inst.name();
  fault_.message = absl::StrFormat("illegal instruction at PC %#x (encoding %s%s%s): %s", wave.pc, words,
                                   name[0] != 0 ? ", " : "", name, why);
  return Flow::kFault;
}

WorkgroupRunner::Flow WorkgroupRunner::Undecodable(Wave& wave) {
  fault_.kind = WaveFault::kIllegalInstruction;
  fault_.pc = wave.pc;
  if (wgp_.has_value()) fault_.location = WaveSlots::Locate(*wgp_, wave.wave_id);
  fault_.dwords = std::max(1, setup_.program->WordsAt(wave.pc, fault_.words));
  fault_.message = absl::StrFormat("illegal instruction at PC %#x (encoding %08x): %s", wave.pc, fault_.words[0],
                                   setup_.program->ErrorAt(wave.pc));
  return Flow::kFault;
}

WorkgroupRunner::Flow WorkgroupRunner::Halt(Wave& wave, const Instruction& inst, WaveFault::Kind kind,
                                            const std::string& why) {
  fault_.kind = kind;
  fault_.pc = wave.pc;
  fault_.dwords = inst.dwords;
  setup_.program->WordsAt(wave.pc, fault_.words);
  fault_.message = absl::StrFormat("wave %d halted at PC %#x (%s): %s", wave.wave_id, wave.pc,
                                   Disassemble(inst, wave.lanes == 64), why);
  return Flow::kFault;
}

WorkgroupRunner::Flow WorkgroupRunner::MemoryFault(Wave& wave, const Instruction& inst, const absl::Status& status) {
  fault_.kind = WaveFault::kMemory;
  fault_.pc = wave.pc;
  fault_.dwords = inst.dwords;
  setup_.program->WordsAt(wave.pc, fault_.words);
  fault_.message = absl::StrFormat("memory violation at PC %#x (%s): %s", wave.pc, Disassemble(inst, wave.lanes == 64),
                                   status.message());
  return Flow::kFault;
}

}  // namespace am::sim::isa
