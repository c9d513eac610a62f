#include "am/sim/sq_model.h"

#include "absl/strings/str_format.h"
#include "am/regs/gc.h"
#include "am/regs/sq_cmd_constants.h"
#include "am/regs/sq_ind_constants.h"
#include "am/regs/sq_wave_constants.h"
#include "am/regs/sq_wave_field_constants.h"
#include "am/sim/register_file.h"

namespace am::sim {
namespace {

namespace gc = regs::gc;
namespace sq = regs::sq;

// How long an index write waits for the selected wave's thread to copy it (it answers between two instructions).
constexpr absl::Duration kCopyTimeout = absl::Milliseconds(200);
// GRBM_GFX_INDEX.INSTANCE_INDEX on gfx11's SQ: SQ_WAVE_HW_ID1's SIMD_ID (bits 9:8) and WGP_ID (13:10) shifted down
// by SIMD_ID's shift, so the SIMD is the instance's low 2 bits.
constexpr uint32_t kInstanceSimdBits = 2;
constexpr uint32_t kInstanceSimdMask = (1u << kInstanceSimdBits) - 1;

}  // namespace

SqModel::SqModel(const ModelContext& context, WaveSlots& slots)
    : context_(context),
      slots_(slots),
      grbm_gfx_index_(RegisterAddress<gc::GRBM_GFX_INDEX>(context.bases)),
      sq_ind_index_(RegisterAddress<gc::SQ_IND_INDEX>(context.bases)) {
  RegisterFile& registers = context_.registers;
  registers.OnWrite(sq_ind_index_, "sq", [this](uint32_t value) { OnIndexWrite(value); });
  registers.OnRead(sq_ind_index_, "sq", [this](uint32_t) {
    base::ReaderMutexLock lock(&mu_);
    return index_;
  });
  registers.OnRead(RegisterAddress<gc::SQ_IND_DATA>(context.bases), "sq", [this](uint32_t) { return OnDataRead(); });
  registers.OnWrite(RegisterAddress<gc::SQ_CMD>(context.bases), "sq",
                    [this](uint32_t value) { OnCommandWrite(value); });
}

std::vector<WaveLocation> SqModel::Selection(std::optional<uint32_t> slot) const {
  const auto index = gc::GRBM_GFX_INDEX::FromRaw(context_.registers.Peek(grbm_gfx_index_));
  std::vector<WaveLocation> out;
  for (uint32_t se = 0; se < WaveSlots::kSes; ++se) {
    if (!index.se_broadcast_writes() && se != index.se_index()) continue;
    for (uint32_t sa = 0; sa < WaveSlots::kSasPerSe; ++sa) {
      if (!index.sa_broadcast_writes() && sa != index.sa_index()) continue;
      for (uint32_t instance = 0; instance < WaveSlots::kWgpsPerSa << kInstanceSimdBits; ++instance) {
        if (!index.instance_broadcast_writes() && instance != index.instance_index()) continue;
        for (uint32_t s = 0; s < WaveSlots::kSlotsPerSimd; ++s) {
          if (slot.has_value() && s != *slot) continue;
          out.push_back({se, sa, instance >> kInstanceSimdBits, instance & kInstanceSimdMask, s});
        }
      }
    }
  }
  return out;
}

void SqModel::OnIndexWrite(uint32_t value) {
  const auto index = gc::SQ_IND_INDEX::FromRaw(value);
  // A read names one wave: broadcast bits select nothing to read (as the hardware, which reads one instance).
  const auto grbm = gc::GRBM_GFX_INDEX::FromRaw(context_.registers.Peek(grbm_gfx_index_));
  std::optional<WaveSnapshot> wave;
  if (!grbm.se_broadcast_writes() && !grbm.sa_broadcast_writes() && !grbm.instance_broadcast_writes() &&
      grbm.se_index() < WaveSlots::kSes && grbm.sa_index() < WaveSlots::kSasPerSe &&
      grbm.instance_index() < (WaveSlots::kWgpsPerSa << kInstanceSimdBits) &&
      index.wave_id() < WaveSlots::kSlotsPerSimd) {
    const WaveLocation where{grbm.se_index(), grbm.sa_index(), grbm.instance_index() >> kInstanceSimdBits,
                             grbm.instance_index() & kInstanceSimdMask, index.wave_id()};
    wave = slots_.Snapshot(where, kCopyTimeout);
  }
  base::MutexLock lock(&mu_);
  index_ = value;
  wave_ = std::move(wave);
}

uint32_t SqModel::Indirect(const WaveSnapshot& wave, uint32_t index, uint32_t lane) {
  if (index >= sq::SQIND_WAVE_VGPRS_OFFSET && index < sq::SQIND_WAVE_VGPRS_OFFSET + sq::SQIND_WAVE_VGPRS_SIZE) {
    const uint32_t reg = index - sq::SQIND_WAVE_VGPRS_OFFSET;
    if (reg >= wave.vgprs || lane >= WaveSnapshot::kMaxLanes) return 0;
    return wave.vgpr[reg * WaveSnapshot::kMaxLanes + lane];
  }
  if (index >= sq::SQIND_WAVE_SGPRS_OFFSET && index < sq::SQIND_WAVE_SGPRS_OFFSET + WaveSnapshot::kSgprs) {
    return wave.sgpr[index - sq::SQIND_WAVE_SGPRS_OFFSET];  // M0 and EXEC included (ixSQ_WAVE_M0, _EXEC_LO/HI)
  }
  switch (index) {
    case sq::ixSQ_WAVE_MODE:
      return wave.mode;
    case sq::ixSQ_WAVE_STATUS:
      return wave.status;
    case sq::ixSQ_WAVE_GPR_ALLOC:
      return wave.gpr_alloc;
    case sq::ixSQ_WAVE_LDS_ALLOC:
      return wave.lds_alloc;
    case sq::ixSQ_WAVE_PC_LO:
      return static_cast<uint32_t>(wave.pc);
    case sq::ixSQ_WAVE_PC_HI:
      return static_cast<uint32_t>(wave.pc >> 32);
    case sq::ixSQ_WAVE_HW_ID1:
      return wave.hw_id1;
    case sq::ixSQ_WAVE_HW_ID2:
      return wave.hw_id2;
    case sq::ixSQ_WAVE_IB_STS2:
      return wave.ib_sts2;
    default:
      return 0;  // TRAPSTS, IB_STS, FLAT_SCRATCH, ...: nothing the interpreter keeps (docs/fidelity.md)
  }
}

uint32_t SqModel::OnDataRead() {
  base::MutexLock lock(&mu_);
  auto index = gc::SQ_IND_INDEX::FromRaw(index_);
  const uint32_t value = wave_.has_value() ? Indirect(*wave_, index.index(), index.workitem_id()) : 0;
  if (index.auto_incr()) index_ = index.index(index.index() + 1).raw();
  return value;
}

void SqModel::OnCommandWrite(uint32_t value) {
  const auto cmd = gc::SQ_CMD::FromRaw(value);
  if (cmd.cmd() == sq::SQ_IND_CMD_CMD_NULL) return;
  if (cmd.cmd() != sq::SQ_IND_CMD_CMD_SETHALT ||
      (cmd.mode() != sq::SQ_IND_CMD_MODE_SINGLE && cmd.mode() != sq::SQ_IND_CMD_MODE_BROADCAST)) {
    context_.errors.Report(
        "sq", absl::StrFormat("SQ_CMD %#010x (CMD %d, MODE %d) is not modelled: the virtual SQ knows SETHALT in "
                              "modes SINGLE and BROADCAST only; nothing happened",
                              value, cmd.cmd(), cmd.mode()));
    return;
  }
  const bool halt = cmd.data() != 0;
  const std::vector<WaveLocation> targets =
      Selection(cmd.mode() == sq::SQ_IND_CMD_MODE_SINGLE ? std::optional<uint32_t>(cmd.wave_id()) : std::nullopt);
  for (const WaveLocation& where : targets) {
    if (cmd.check_vmid()) {
      // Only the waves of VM_ID (their HW_ID2.VM_ID).
      std::optional<WaveSnapshot> wave = slots_.Snapshot(where, kCopyTimeout);
      if (!wave.has_value() ||
          ((wave->hw_id2 & sq::SQ_WAVE_HW_ID2__VM_ID_MASK) >> sq::SQ_WAVE_HW_ID2__VM_ID__SHIFT) != cmd.vm_id()) {
        continue;
      }
    }
    slots_.SetHalt(where, halt);
  }
}

}  // namespace am::sim
