// Runs the waves of one workgroup to completion on the calling thread: they share the workgroup's LDS and meet
// at s_barrier. The waves take turns (each runs until it reaches a barrier or ends), which is a legal schedule of
// the hardware's and keeps a workgroup on one thread. A worker thread reuses one runner for many workgroups.
#ifndef BAREGPU_AM_SIM_ISA_WORKGROUP_RUNNER_H_
#define BAREGPU_AM_SIM_ISA_WORKGROUP_RUNNER_H_

#include <array>
#include <atomic>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "am/sim/gpu_memory.h"
#include "am/sim/isa/instruction.h"
#include "am/sim/isa/memory_view.h"
#include "am/sim/isa/program.h"
#include "am/sim/isa/wave.h"
#include "am/sim/shader_executor.h"
#include "am/sim/wave_slots.h"

namespace am::sim::isa {

template <int N>
class FastValuLanes;

// Everything the waves of a dispatch share, fixed before the first wave starts.
struct DispatchSetup {
  Program* program = nullptr;
  GpuMemory* memory = nullptr;
  MemoryClient client;
  int lanes = 32;
  std::array<uint32_t, 16> user_data{};
  uint32_t user_sgprs = 0;
  bool tgid_enable[3] = {false, false, false};
  bool tg_size_enable = false;
  bool scratch_enable = false;
  uint32_t workitem_id_dims = 0;             // RSRC2.TIDIG_COMP_CNT: 0 = X, 1 = X and Y, 2 = X, Y and Z
  std::array<uint32_t, 3> workgroup_size{};  // work-items per workgroup in X, Y, Z
  std::array<uint32_t, 3> grid{};            // workgroups in X, Y, Z
  std::array<uint32_t, 3> start{};
  uint32_t lds_bytes = 0;
  uint32_t scratch_bytes_per_lane = 0;
  uint32_t float_mode = 0;  // RSRC1.FLOAT_MODE, the wave's initial MODE round/denorm bits
  ShMemRegisters sh_mem;    // the VMID's SH_MEM_BASES (FLAT apertures) and SH_MEM_CONFIG (alignment)
  // Whether the fast paths run (FastValu, whole-dword global accesses); off, every instruction takes the general
  // path, which is the oracle the tests check the fast ones against (Rdna3Executor::set_fast_paths).
  bool fast_paths = true;
  std::atomic<bool>* stop = nullptr;               // set when any workgroup failed: the others end early
  const std::atomic<bool>* reset_waves = nullptr;  // DispatchState::reset_waves: every wave ends where it is
  // The SQ's wave slots, where the waves show themselves to the SQ's indirect registers (null: nowhere), and what
  // those registers say of every wave of the dispatch: VGPRs per lane, SQ_WAVE_GPR_ALLOC, SQ_WAVE_HW_ID2's queue
  // and VMID fields.
  WaveSlots* wave_slots = nullptr;
  uint32_t vgprs = 0;
  uint32_t gpr_alloc = 0;
  uint32_t hw_id2 = 0;
  // Whether the waves must end now (another workgroup failed, or the queue's waves were reset).
  bool stopping() const {
    return (stop != nullptr && stop->load(std::memory_order_relaxed)) ||
           (reset_waves != nullptr && reset_waves->load(std::memory_order_relaxed));
  }
};

// Why a wave stopped (the executor turns it into the device's report).
struct WaveFault {
  enum Kind { kNone, kMemory, kIllegalInstruction, kUnsupported, kTrap } kind = kNone;
  uint64_t pc = 0;
  uint32_t words[3] = {0, 0, 0};
  int dwords = 0;
  std::string message;
  // The faulting wave's slot (wave_slots.h), when its WGP had one: the SQ's interrupt word names it.
  std::optional<WaveLocation> location;
};

class WorkgroupRunner {
 public:
  // `waves`: the wave storage this runner uses (grown as needed), owned by the caller so that it outlives the
  // dispatch: a wave's register file is 64 KiB, which a new runner per dispatch would allocate and clear again.
  WorkgroupRunner(const DispatchSetup& setup, std::vector<Wave>& waves);
  ~WorkgroupRunner();
  WorkgroupRunner(const WorkgroupRunner&) = delete;
  WorkgroupRunner& operator=(const WorkgroupRunner&) = delete;

  // Runs workgroup (x, y, z) of the grid. A non-OK status carries the fault in fault().
  absl::Status Run(uint32_t x, uint32_t y, uint32_t z);
  const WaveFault& fault() const { return fault_; }
  uint64_t lane_instructions() const { return lane_instructions_; }

 private:
  // kHalted: the SQ halted the wave (SQ_CMD SETHALT) before its next instruction; it resumes there.
  enum class Flow { kNext, kJumped, kBarrier, kEnd, kFault, kHalted };

  // Between two instructions of `current`: copies any wave of the workgroup a reader of the SQ's indirect registers
  // waits for, and says whether `current` is to halt.
  bool AttendSq(const Wave& current);
  WaveSnapshot SnapshotOf(const Wave& wave) const;
  void InitWave(Wave& wave, uint32_t index, uint32_t x, uint32_t y, uint32_t z, uint32_t waves);
  Flow RunWave(Wave& wave);
  Flow Execute(Wave& wave, const Instruction& inst);
  Flow Illegal(Wave& wave, const Instruction& inst, const std::string& why);
  // The words at the wave's PC did not decode (Program::ErrorAt says why).
  Flow Undecodable(Wave& wave);
  Flow MemoryFault(Wave& wave, const Instruction& inst, const absl::Status& status);
  // The wave stops at `inst` for good (s_trap without a trap handler, s_sethalt 1): the dispatch fails with `why`.
  Flow Halt(Wave& wave, const Instruction& inst, WaveFault::Kind kind, const std::string& why);

  // Families (scalar.cc, vector.cc, memory.cc).
  Flow Sop1(Wave& wave, const Instruction& inst);
  Flow Sop2(Wave& wave, const Instruction& inst);
  Flow Sopc(Wave& wave, const Instruction& inst);
  Flow Sopk(Wave& wave, const Instruction& inst);
  Flow Sopp(Wave& wave, const Instruction& inst);
  Flow Smem(Wave& wave, const Instruction& inst);
  Flow Valu(Wave& wave, const Instruction& inst);
  // An instruction the decoder gave a FastValu (instruction.h), under round-to-nearest-even: its lanes in one
  // plain loop. Bit for bit what Valu does with it.
  Flow RunFastValu(Wave& wave, const Instruction& inst);
  template <int N>
  friend class FastValuLanes;  // RunFastValu's handlers (vector.cc)
  // A VALU instruction under a MODE.FP_ROUND other than round-to-nearest-even: runs it with the host's rounding
  // mode switched to the one MODE selects for the instruction's result precision.
  Flow DirectedRoundingValu(Wave& wave, const Instruction& inst);
  Flow Vop3p(Wave& wave, const Instruction& inst);
  // V_WMMA_* (wmma.cc): the whole wave's 16x16x16 matrix multiply-accumulate, rounding to nearest even whatever
  // MODE.FP_ROUND says.
  Flow Wmma(Wave& wave, const Instruction& inst);
  Flow Vopd(Wave& wave, const Instruction& inst);
  // A wave32 VOPD pair under round-to-nearest-even with f32 denormals kept (what LLVM's wave32 code runs): each
  // half's lanes in one loop per operation over source rows resolved once. Bit for bit what Vopd does with it; Vopd
  // runs the rest (wave64, a flushing MODE, v_dual_dot2acc_f32_f16).
  Flow RunFastVopd(Wave& wave, const Instruction& inst);
  template <int N>
  Flow FastVopd(Wave& wave, const Instruction& inst);
  Flow Global(Wave& wave, const Instruction& inst);
  Flow Scratch(Wave& wave, const Instruction& inst);
  Flow Ds(Wave& wave, const Instruction& inst);
  Flow Mubuf(Wave& wave, const Instruction& inst);

  // FLAT's generic addresses (64-bit address mode): an address whose high 32 bits are an aperture's is an offset
  // into that aperture, which is 2^32 bytes at SH_MEM_BASES' 16-bit field << 48 (AMDGPUUsage, "Memory Spaces").
  // kAmbiguous: the address is in both apertures because SHARED_BASE == PRIVATE_BASE (SH_MEM_BASES' power-on
  // value 0 puts both at 0); the model refuses such an access (docs/fidelity.md, B9).
  enum class Aperture { kGlobal, kShared, kPrivate, kAmbiguous };
  Aperture ApertureOf(uint64_t address) const {
    const uint32_t high = static_cast<uint32_t>(address >> 32);
    if (high == shared_aperture_high_ && high == private_aperture_high_) return Aperture::kAmbiguous;
    if (high == shared_aperture_high_) return Aperture::kShared;
    if (high == private_aperture_high_) return Aperture::kPrivate;
    return Aperture::kGlobal;
  }
  // The MEMVIOL of a FLAT access at `address` in both apertures.
  absl::Status AmbiguousAperture(uint64_t address) const;
  // SH_MEM_CONFIG.ALIGNMENT_MODE applied to a non-atomic access of `bytes` at `address` (RDNA3 ISA 3.3.3, which
  // applies it to buffer, global, flat, scratch and LDS accesses): the address the access uses (DWORD mode aligns
  // it down), or the MEMVIOL of a misaligned access under DWORD_STRICT or STRICT.
  absl::StatusOr<uint64_t> Aligned(uint64_t address, int bytes) const;
  // The bytes at `offset` of lane `lane`'s private segment, or an out-of-range error naming the access.
  absl::StatusOr<uint8_t*> PrivateBytes(const Wave& wave, int lane, int64_t offset, int bytes, bool store);

  // Scalar operand values (inline constants per the operand's type; `f64`/`f16` select the float encodings).
  uint32_t ScalarValue(const Wave& wave, const Instruction& inst, uint16_t code) const;
  uint64_t ScalarValue64(const Wave& wave, const Instruction& inst, uint16_t code, bool f64) const;
  void WriteScalar(Wave& wave, uint16_t code, uint32_t value);
  void WriteScalar64(Wave& wave, uint16_t code, uint64_t value);

  const DispatchSetup& setup_;
  MemoryView memory_;
  std::vector<Wave>& waves_;
  std::vector<uint8_t> lds_;
  std::vector<uint8_t> scratch_;  // per wave: lanes x scratch_bytes_per_lane
  WaveFault fault_;
  uint64_t lane_instructions_ = 0;
  uint32_t shared_aperture_high_ = 0, private_aperture_high_ = 0;  // the apertures' address bits 63:32
  uint32_t alignment_mode_ = 0;                                    // SH_MEM_CONFIG.ALIGNMENT_MODE
  std::optional<uint32_t> wgp_;  // the WGP whose wave slots this runner's waves occupy (nullopt: none)
  uint32_t waves_in_workgroup_ = 0;
};

}  // namespace am::sim::isa

#endif  // BAREGPU_AM_SIM_ISA_WORKGROUP_RUNNER_H_
