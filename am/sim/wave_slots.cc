#include "am/sim/wave_slots.h"

#include <thread>

#include "absl/time/clock.h"

namespace am::sim {
namespace {

// How often a reader looks whether its copy has been made: a wave's thread answers within a few hundred
// instructions, microseconds.
constexpr auto kCopyPoll = std::chrono::microseconds(10);

}  // namespace

WaveSlots::WaveSlots() : wgps_(new Wgp[kWgps]) {}

std::optional<uint32_t> WaveSlots::ClaimWgp() {
  for (uint32_t i = 0; i < kWgps; ++i) {
    bool expected = false;
    if (wgps_[i].claimed.compare_exchange_strong(expected, true, std::memory_order_acq_rel)) return i;
  }
  return std::nullopt;
}

void WaveSlots::ReleaseWgp(uint32_t wgp) { wgps_[wgp].claimed.store(false, std::memory_order_release); }

uint32_t WaveSlots::SlotIndex(uint32_t wave_in_workgroup) {
  const uint32_t simd = wave_in_workgroup % kSimdsPerWgp, slot = wave_in_workgroup / kSimdsPerWgp;
  return simd * kSlotsPerSimd + slot;
}

WaveLocation WaveSlots::Locate(uint32_t wgp, uint32_t wave_in_workgroup) {
  return {.se = wgp / (kSasPerSe * kWgpsPerSa),
          .sa = (wgp / kWgpsPerSa) % kSasPerSe,
          .wgp = wgp % kWgpsPerSa,
          .simd = wave_in_workgroup % kSimdsPerWgp,
          .slot = wave_in_workgroup / kSimdsPerWgp};
}

uint32_t WaveSlots::WgpIndex(const WaveLocation& where) {
  return (where.se * kSasPerSe + where.sa) * kWgpsPerSa + where.wgp;
}

WaveSlots::Slot& WaveSlots::SlotAt(const WaveLocation& where) {
  return wgps_[WgpIndex(where)].slots[where.simd * kSlotsPerSimd + where.slot];
}

void WaveSlots::Occupy(uint32_t wgp, uint32_t wave_in_workgroup) {
  Slot& slot = wgps_[wgp].slots[SlotIndex(wave_in_workgroup)];
  if (slot.halt.exchange(false, std::memory_order_acq_rel)) wgps_[wgp].halted.fetch_sub(1, std::memory_order_relaxed);
  {
    base::MutexLock lock(&slot.mu);
    slot.served = slot.requested.load(std::memory_order_acquire);  // the previous wave's copies are not this one's
    slot.snapshot.reset();
  }
  slot.occupied.store(true, std::memory_order_release);
}

void WaveSlots::Vacate(uint32_t wgp, uint32_t wave_in_workgroup) {
  Slot& slot = wgps_[wgp].slots[SlotIndex(wave_in_workgroup)];
  slot.occupied.store(false, std::memory_order_release);
  if (slot.halt.exchange(false, std::memory_order_acq_rel)) wgps_[wgp].halted.fetch_sub(1, std::memory_order_relaxed);
}

bool WaveSlots::HaltRequested(uint32_t wgp, uint32_t wave_in_workgroup) const {
  return wgps_[wgp].slots[SlotIndex(wave_in_workgroup)].halt.load(std::memory_order_acquire);
}

bool WaveSlots::CopyRequested(uint32_t wgp, uint32_t wave_in_workgroup) const {
  Slot& slot = wgps_[wgp].slots[SlotIndex(wave_in_workgroup)];
  const uint64_t requested = slot.requested.load(std::memory_order_acquire);
  base::ReaderMutexLock lock(&slot.mu);
  return requested > slot.served;
}

void WaveSlots::Publish(uint32_t wgp, uint32_t wave_in_workgroup, const WaveSnapshot& snapshot) {
  Slot& slot = wgps_[wgp].slots[SlotIndex(wave_in_workgroup)];
  // Read before the copy: a request made while copying gets a later ticket and waits for the next copy.
  const uint64_t answered = slot.requested.load(std::memory_order_acquire);
  base::MutexLock lock(&slot.mu);
  if (slot.snapshot) {
    *slot.snapshot = snapshot;
  } else {
    slot.snapshot = std::make_unique<WaveSnapshot>(snapshot);
  }
  slot.served = answered;
}

bool WaveSlots::Occupied(const WaveLocation& where) const {
  return const_cast<WaveSlots*>(this)->SlotAt(where).occupied.load(std::memory_order_acquire);
}

std::optional<WaveSnapshot> WaveSlots::Snapshot(const WaveLocation& where, absl::Duration timeout) {
  Slot& slot = SlotAt(where);
  if (!slot.occupied.load(std::memory_order_acquire)) return std::nullopt;
  Wgp& wgp = wgps_[WgpIndex(where)];
  const uint64_t ticket = slot.requested.fetch_add(1, std::memory_order_acq_rel) + 1;
  wgp.requests.fetch_add(1, std::memory_order_acq_rel);
  const absl::Time deadline = absl::Now() + timeout;
  std::optional<WaveSnapshot> copy;
  while (true) {
    {
      base::ReaderMutexLock lock(&slot.mu);
      if (slot.served >= ticket) {
        copy = slot.snapshot ? *slot.snapshot : WaveSnapshot{};  // none: a new wave answered an earlier wave's request
        break;
      }
    }
    if (!slot.occupied.load(std::memory_order_acquire)) break;  // the wave ended
    if (absl::Now() > deadline) {
      // The wave's thread did not come by in time: the last copy made of this wave, if any.
      base::ReaderMutexLock lock(&slot.mu);
      if (slot.snapshot && slot.snapshot->status != 0) copy = *slot.snapshot;
      break;
    }
    std::this_thread::sleep_for(kCopyPoll);
  }
  wgp.requests.fetch_sub(1, std::memory_order_acq_rel);
  return copy;
}

void WaveSlots::SetHalt(const WaveLocation& where, bool halt) {
  Slot& slot = SlotAt(where);
  Wgp& wgp = wgps_[WgpIndex(where)];
  if (!halt) {
    if (slot.halt.exchange(false, std::memory_order_acq_rel)) wgp.halted.fetch_sub(1, std::memory_order_relaxed);
    return;
  }
  if (!slot.occupied.load(std::memory_order_acquire)) return;
  if (!slot.halt.exchange(true, std::memory_order_acq_rel)) wgp.halted.fetch_add(1, std::memory_order_relaxed);
}

}  // namespace am::sim
