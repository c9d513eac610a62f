// The SQ's register interface to the waves, as a debugger (umr --waves, amdgpu's debugfs wave file) uses it:
//   GRBM_GFX_INDEX     selects SE_INDEX, SA_INDEX and INSTANCE_INDEX; on gfx11 the instance names the WGP and SIMD
//                      (gfx_v11_0_read_wave_data: "the SIMD_ID is specified as part of the INSTANCE field"), packed
//                      as SQ_WAVE_HW_ID1 bits 13:8 hold them: (WGP_ID << 2) | SIMD_ID.
//   SQ_IND_INDEX       WAVE_ID (the slot), INDEX (an ixSQ_WAVE_* register, SQIND_WAVE_SGPRS_OFFSET + n for SGPR n,
//                      SQIND_WAVE_VGPRS_OFFSET + n for VGPR n of lane WORKITEM_ID), AUTO_INCR.
//   SQ_IND_DATA        the selected register; with AUTO_INCR each read moves INDEX on (wave_read_regs).
//   SQ_CMD             CMD SETHALT with DATA 1 halts, DATA 0 resumes, the one wave (MODE SINGLE: WAVE_ID in the
//                      selected SE/SA/instance) or every wave the selection covers (MODE BROADCAST, GRBM_GFX_INDEX's
//                      broadcast bits widen it; CHECK_VMID keeps the waves of VM_ID).
// Writing SQ_IND_INDEX takes one consistent copy of the selected wave (WaveSlots::Snapshot); the SQ_IND_DATA reads
// that follow read it. A running wave changes between two index writes, as on hardware: halt it for a state that
// holds still.
#ifndef BAREGPU_AM_SIM_SQ_MODEL_H_
#define BAREGPU_AM_SIM_SQ_MODEL_H_

#include <cstdint>
#include <optional>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "am/sim/model_context.h"
#include "am/sim/wave_slots.h"
#include "base/mutex.h"

namespace am::sim {

class SqModel {
 public:
  SqModel(const ModelContext& context, WaveSlots& slots);
  SqModel(const SqModel&) = delete;
  SqModel& operator=(const SqModel&) = delete;

 private:
  void OnIndexWrite(uint32_t value);
  uint32_t OnDataRead();
  void OnCommandWrite(uint32_t value);
  // The value of indirect register `index` of the copy (lane `lane` for VGPRs); 0 for one the model does not hold.
  static uint32_t Indirect(const WaveSnapshot& wave, uint32_t index, uint32_t lane);
  // The slots GRBM_GFX_INDEX selects (every one of a broadcast field), with wave slot `slot` or every slot.
  std::vector<WaveLocation> Selection(std::optional<uint32_t> slot) const;

  ModelContext context_;
  WaveSlots& slots_;
  const uint64_t grbm_gfx_index_;
  const uint64_t sq_ind_index_;
  base::Mutex mu_;
  uint32_t index_ ABSL_GUARDED_BY(mu_) = 0;                // SQ_IND_INDEX as last written (INDEX moved on by AUTO_INCR)
  std::optional<WaveSnapshot> wave_ ABSL_GUARDED_BY(mu_);  // the selected wave's copy; nullopt: an empty slot
};

}  // namespace am::sim

#endif  // BAREGPU_AM_SIM_SQ_MODEL_H_
