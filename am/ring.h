// am::Ring: the one writer of a hardware queue's ring buffer (the MEC compute queue's, an SDMA queue's). Every
// producer — the driver's own blocks, HCQ (hcq/amd), the tools — appends packets through Write, which
//   1. waits, bounded, for room (the engine's read pointer; a ring is never filled completely, as on hardware,
//      where a full ring reads as an empty one),
//   2. copies the packets at the write pointer (two pieces at the end: both engines fetch across the wrap),
//   3. publishes the write pointer: the wptr poll location (MEC), a full memory fence so the ring's bytes (BAR0)
//      are visible before the next steps, the HDP flush, then the queue's 64-bit doorbell (one write, as
//      amdgpu_ring_commit's mb() + WDOORBELL64).
// Write is thread-safe (a spin lock: the section is a memcpy and three stores) and allocates nothing; it makes no
// system call unless the ring is full.
//
// The pointer formats differ per engine (RingFormat): the MEC counts dwords and reports a 32-bit rptr wrapped to
// the ring (gfx_v11_0_ring_get_rptr_compute); SDMA counts bytes and writes back a 64-bit rptr that only grows
// (sdma_v6_0_ring_get_rptr).
#ifndef BAREGPU_AM_RING_H_
#define BAREGPU_AM_RING_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "base/spin_lock.h"
#include "pci/mmio.h"

namespace am {

struct RingFormat {
  const char* queue;      // "compute queue (MEC1 pipe 0 queue 0)", for messages
  uint32_t pointer_unit;  // bytes per rptr/wptr unit: 4 (PM4 dwords) or 1 (SDMA bytes)
  bool rptr_wraps;        // the rptr is reported modulo the ring (MEC) rather than as a growing count (SDMA)
  const char* unit_name;  // "dwords" / "bytes"
  // The packet starting at `packet` (at most the dwords up to wptr): its name with any detail worth a message,
  // and its length in dwords (0: unknown, the rest of the ring cannot be delimited).
  std::string (*describe)(std::span<const uint32_t> packet);
  uint32_t (*length)(std::span<const uint32_t> packet);
};

// The PM4 compute queue's and the SDMA queue's formats (names and lengths from am/regs' one table per engine).
extern const RingFormat kPm4RingFormat;
extern const RingFormat kSdmaRingFormat;

class Ring {
 public:
  // Where the ring and its pointers live (CPU views of VRAM through BAR0) and how its engine is told.
  struct Layout {
    std::span<uint8_t> ring;        // a power of two bytes
    const void* rptr = nullptr;     // the engine's rptr report (uint32_t when it wraps, else uint64_t)
    uint64_t* wptr_poll = nullptr;  // where the engine polls the wptr (null: the doorbell only)
    pci::Mmio doorbells;            // BAR2
    uint64_t doorbell_offset = 0;   // byte offset of the queue's 64-bit doorbell
    pci::Mmio registers;            // BAR5
    uint64_t hdp_flush_offset = 0;  // the remapped HDP memory flush register (byte offset in BAR5)
  };

  explicit Ring(const RingFormat& format) : format_(format) {}
  Ring(const Ring&) = delete;
  Ring& operator=(const Ring&) = delete;

  // Binds the ring to its memory; `wptr` is where the engine starts (0 at boot, the old wptr after a reset).
  void Attach(const Layout& layout, uint64_t wptr);
  bool attached() const { return !layout_.ring.empty(); }
  // Zeroes the ring and restarts it at 0 (a fresh queue at boot).
  void Clear();

  // Appends `dwords` (whole packets) and rings the doorbell; waits up to `timeout` for room. With
  // `end_alignment` (dwords), `pad` dwords go first so that the packets end on that boundary of the ring (an SDMA
  // INDIRECT must end on an 8-dword boundary, sdma_v6_0_ring_emit_ib).
  absl::Status Write(std::span<const uint32_t> dwords, absl::Duration timeout, uint32_t end_alignment = 0,
                     uint32_t pad = 0) ABSL_LOCKS_EXCLUDED(mu_);

  // Sees every Write's packets once they are published (BAREGPU_TRACE=packets): the packets and the write pointer
  // (in the format's unit) where the first one starts. Set before the ring is shared between threads; none by
  // default, and then Write only tests for it.
  using Tracer = std::function<void(const Ring& ring, std::span<const uint32_t> packets, uint64_t at)>;
  void set_tracer(Tracer tracer) { tracer_ = std::move(tracer); }

  // Pointers in the format's unit: wptr never wraps; rptr as the engine reports it.
  uint64_t wptr() const { return wptr_.load(std::memory_order_acquire); }
  uint64_t rptr() const;
  // Units the engine has not consumed yet.
  uint64_t pending() const;
  bool idle() const { return pending() == 0; }
  uint64_t size_units() const { return layout_.ring.size() / format_.pointer_unit; }
  uint64_t size_bytes() const { return layout_.ring.size(); }
  const RingFormat& format() const { return format_; }

  // The unconsumed packets by name, from the rptr on (stops at one whose length is unknown).
  std::vector<std::string> PendingPackets() const;
  // "compute queue (...): rptr R, wptr W (dwords, ring of N), idle" or "..., stopped at NAME (header H)".
  std::string Describe() const;

 private:
  // Write without the tracer: returns where the packets start (after any padding).
  absl::StatusOr<uint64_t> Append(std::span<const uint32_t> dwords, absl::Duration timeout, uint32_t end_alignment,
                                  uint32_t pad) ABSL_LOCKS_EXCLUDED(mu_);
  // Units between `rptr` and the write pointer.
  uint64_t PendingSince(uint64_t rptr) const;
  uint32_t DwordAt(uint64_t byte_offset) const;
  // Copies at byte position `at` of the ring (wrapping).
  void CopyIn(uint64_t at, const void* data, uint64_t bytes);
  std::vector<uint32_t> PacketAt(uint64_t unit, uint64_t available_units) const;

  const RingFormat& format_;
  Layout layout_;
  base::SpinLock mu_;
  std::atomic<uint64_t> wptr_{0};
  // The read pointer as Append last read it (guarded by mu_). Room is judged against it first: the engine writes the
  // real one after every packet, and reading that cache line on every submit cost the submitting thread a transfer
  // from the engine's core (issue 24). A stale value only under-counts the room, since the read pointer only moves
  // on and Append never writes past a whole ring beyond the value it judged by; when it shows no room, Append reads
  // the real one. Forgotten when the ring is attached or cleared (nothing is known of the pointers' history then).
  std::optional<uint64_t> rptr_seen_;
  Tracer tracer_;
};

}  // namespace am

#endif  // BAREGPU_AM_RING_H_
