// The SQ's wave slots: where each live wave of the virtual GPU sits (shader engine, shader array, WGP, SIMD, slot)
// and its state as the SQ's indirect registers show it (gc_11_0_0_offset.h ixSQ_WAVE_*, read through
// SQ_IND_INDEX/SQ_IND_DATA as gfx_v11_0_read_wave_data does). The shader executor's worker threads own the waves;
// a reader on another thread (the SQ model's register hooks) asks for a copy, and the wave's own thread makes it
// between two instructions, so every copy is one consistent moment of the wave. SQ_CMD's SETHALT sets a slot's
// halt flag, which the wave's thread honours at the same point.
//
// The executor claims one WGP per worker thread for as long as the thread runs workgroups; a workgroup's waves
// go round the WGP's SIMDs (wave w on SIMD w % 4, slot w / 4), so a workgroup of up to 64 waves fits.
#ifndef BAREGPU_AM_SIM_WAVE_SLOTS_H_
#define BAREGPU_AM_SIM_WAVE_SLOTS_H_

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/time/time.h"
#include "base/mutex.h"

namespace am::sim {

// The copy of one wave the indirect registers read: hardware registers by their ixSQ_WAVE_* meaning, SGPRs by
// operand code (s0.., VCC 106, TTMP 108.., M0 125, EXEC 126: the order of SQIND_WAVE_SGPRS_OFFSET + n, where
// ixSQ_WAVE_M0 = 0x27d and ixSQ_WAVE_EXEC_LO = 0x27e sit), VGPRs as [register * kMaxLanes + lane].
struct WaveSnapshot {
  static constexpr int kSgprs = 128;
  static constexpr int kMaxLanes = 64;
  uint64_t pc = 0;
  uint32_t status = 0;     // SQ_WAVE_STATUS
  uint32_t mode = 0;       // SQ_WAVE_MODE
  uint32_t hw_id1 = 0;     // SQ_WAVE_HW_ID1
  uint32_t hw_id2 = 0;     // SQ_WAVE_HW_ID2
  uint32_t gpr_alloc = 0;  // SQ_WAVE_GPR_ALLOC
  uint32_t lds_alloc = 0;  // SQ_WAVE_LDS_ALLOC
  uint32_t ib_sts2 = 0;    // SQ_WAVE_IB_STS2 (WAVE64)
  uint32_t vgprs = 0;      // VGPRs copied (the wave's allocation)
  std::array<uint32_t, kSgprs> sgpr{};
  std::vector<uint32_t> vgpr;
};

// A slot's place: SE, SA within it, WGP within the SA, SIMD within the WGP, wave slot within the SIMD.
struct WaveLocation {
  uint32_t se = 0, sa = 0, wgp = 0, simd = 0, slot = 0;
};

class WaveSlots {
 public:
  // Navi31's shader engines (discovery's gc_info: 6 SEs x 2 SAs x 4 WGPs), 4 SIMD32s per WGP (RDNA's WGP: two CUs
  // of two SIMDs; SQ_WAVE_HW_ID1.SIMD_ID is 2 bits) and 16 wave slots per SIMD (gc_info max_waves_per_simd).
  static constexpr uint32_t kSes = 6, kSasPerSe = 2, kWgpsPerSa = 4, kSimdsPerWgp = 4, kSlotsPerSimd = 16;
  static constexpr uint32_t kWgps = kSes * kSasPerSe * kWgpsPerSa;
  static constexpr uint32_t kSlotsPerWgp = kSimdsPerWgp * kSlotsPerSimd;

  WaveSlots();
  WaveSlots(const WaveSlots&) = delete;
  WaveSlots& operator=(const WaveSlots&) = delete;

  // --- The executor's side (the thread that runs the waves) ---
  // A free WGP for a worker thread, or nullopt when every WGP is taken (more workers than WGPs: that thread's
  // waves have no slot and the SQ does not see them).
  std::optional<uint32_t> ClaimWgp();
  void ReleaseWgp(uint32_t wgp);
  static WaveLocation Locate(uint32_t wgp, uint32_t wave_in_workgroup);
  // The slot of wave `wave_in_workgroup` of the workgroup on `wgp`: marked live (a new wave: not halted) or empty.
  void Occupy(uint32_t wgp, uint32_t wave_in_workgroup);
  void Vacate(uint32_t wgp, uint32_t wave_in_workgroup);
  // Whether a reader waits for a copy of a wave on `wgp`, or a wave there is to halt: one relaxed load, for the
  // executor's polling between instructions.
  bool NeedsAttention(uint32_t wgp) const {
    return wgps_[wgp].requests.load(std::memory_order_relaxed) != 0 ||
           wgps_[wgp].halted.load(std::memory_order_relaxed) != 0;
  }
  bool HaltRequested(uint32_t wgp, uint32_t wave_in_workgroup) const;
  // Whether the slot has an unanswered copy request; Publish answers it.
  bool CopyRequested(uint32_t wgp, uint32_t wave_in_workgroup) const;
  void Publish(uint32_t wgp, uint32_t wave_in_workgroup, const WaveSnapshot& snapshot);

  // --- A reader's side ---
  // A consistent copy of the wave at `where`, made by its own thread; nullopt when the slot is empty or the wave
  // ended while the copy was awaited. Waits at most `timeout` (a wave's thread answers between two instructions;
  // the bound keeps a reader from hanging on a thread stuck in a long memory access): then the last copy made.
  std::optional<WaveSnapshot> Snapshot(const WaveLocation& where, absl::Duration timeout);
  bool Occupied(const WaveLocation& where) const;
  // SQ_CMD SETHALT: halts (or resumes) the wave at `where`; an empty slot is left alone.
  void SetHalt(const WaveLocation& where, bool halt);

 private:
  struct Slot {
    std::atomic<bool> occupied{false};
    std::atomic<bool> halt{false};
    std::atomic<uint64_t> requested{0};  // copy requests so far (tickets)
    base::Mutex mu;
    uint64_t served ABSL_GUARDED_BY(mu) = 0;  // the last ticket a copy answered
    // Made by the first Publish, dropped when the next wave occupies the slot: 48 WGPs x 64 slots of snapshots
    // cleared at every open cost more than the rest of a partial boot, and most slots are never copied.
    std::unique_ptr<WaveSnapshot> snapshot ABSL_GUARDED_BY(mu);
  };
  struct Wgp {
    std::atomic<bool> claimed{false};
    std::atomic<uint32_t> requests{0};  // readers waiting for a copy of one of its waves
    std::atomic<uint32_t> halted{0};    // slots with their halt flag set
    std::array<Slot, kSlotsPerWgp> slots;
  };
  static uint32_t WgpIndex(const WaveLocation& where);
  static uint32_t SlotIndex(uint32_t wave_in_workgroup);
  Slot& SlotAt(const WaveLocation& where);

  std::unique_ptr<Wgp[]> wgps_;
};

}  // namespace am::sim

#endif  // BAREGPU_AM_SIM_WAVE_SLOTS_H_
