// A kernel's machine code, decoded once: starting at the entry point, every instruction reachable through
// fall-through and direct branches is fetched (page by page, through the GMC) and decoded into a table indexed by
// address. Waves then execute from the table and never decode. A target only known at run time (s_setpc_b64) is
// decoded on first use. The table is kept between dispatches of the same entry point while the code words it was
// built from are unchanged.
#ifndef BAREGPU_AM_SIM_ISA_PROGRAM_H_
#define BAREGPU_AM_SIM_ISA_PROGRAM_H_

#include <cstdint>
#include <forward_list>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "am/sim/gpu_memory.h"
#include "am/sim/isa/instruction.h"

namespace am::sim::isa {

// What a wave finds at an address: an instruction, or why there is none (its words, for the SQ's report).
struct DecodedSlot {
  Instruction inst;
  bool present = false;  // the address was decoded (successfully or not)
  bool valid = false;
  // For an invalid slot: the decoder's reason, kept by the Program (a slot is copied and stored by the thousand, so
  // it holds no string of its own).
  const char* error = "";
};

// The SQ's instruction cache line on gfx11: 128 bytes (LLVM AMDGPUTargetAsmStreamer::EmitCodeEnd:
// Log2CacheLineSize 7 for GFX11 and later).
inline constexpr uint64_t kInstructionCacheLineBytes = 128;

class Program {
 public:
  // Fetches and decodes the code from `entry` (instruction fetches: the pages must be EXECUTABLE). The SQ
  // prefetches `prefetch_lines` instruction cache lines past the line it executes (SH_MEM_CONFIG
  // .INITIAL_INST_PREFETCH), so the lines up to that many after the end of the reachable code are fetched too: a
  // page there that is not mapped executable faults (docs/fidelity.md, B10).
  static absl::StatusOr<std::unique_ptr<Program>> Load(GpuMemory& memory, const MemoryClient& client, uint64_t entry,
                                                       uint32_t prefetch_lines = 0);

  uint64_t entry() const { return entry_; }
  // The slot at `pc`; decodes it (under a lock) when it was not reached by the static walk. An error is an
  // instruction fetch fault.
  absl::StatusOr<const DecodedSlot*> At(uint64_t pc, GpuMemory& memory, const MemoryClient& client) {
    if (const DecodedSlot* slot = Find(pc); slot != nullptr) return slot;
    return Late(pc, memory, client);
  }
  // The slot at `pc` when the static walk decoded it, else null (At decodes it): the lookup of every instruction a
  // wave runs, without At's status.
  const DecodedSlot* Find(uint64_t pc) const {
    const uint64_t index = (pc - entry_) / 4;
    if (pc >= entry_ && (pc & 3) == 0 && index < slot_count_ && slots_[index].present) return &slots_[index];
    return nullptr;
  }
  // Whether the code in memory is still what was decoded: the reachable code the static walk fetched, and the words
  // of every slot decoded late.
  bool Unchanged(GpuMemory& memory, const MemoryClient& client);
  size_t instruction_count() const { return decoded_; }
  uint32_t prefetch_lines() const { return prefetch_lines_; }

 private:
  explicit Program(uint64_t entry) : entry_(entry) {}
  absl::StatusOr<const DecodedSlot*> Late(uint64_t pc, GpuMemory& memory, const MemoryClient& client);

  // Keeps a decoder message for the program's life and returns it for DecodedSlot::error.
  const char* KeepMessage(absl::string_view message);

  uint64_t entry_;
  std::vector<uint32_t> words_;  // the reachable code from entry_ on, as fetched
  std::vector<DecodedSlot> slots_;
  size_t slot_count_ = 0;  // slots_.size(), kept so that Find does not divide by the slot's size
  size_t decoded_ = 0;
  uint32_t prefetch_lines_ = 0;
  std::mutex late_mu_;
  std::map<uint64_t, std::unique_ptr<DecodedSlot>> late_;  // guarded by late_mu_
  std::mutex messages_mu_;
  // Guarded by messages_mu_; elements never move. A list, not a deque: an empty deque allocates, and most programs
  // keep no message.
  std::forward_list<std::string> messages_;
};

}  // namespace am::sim::isa

#endif  // BAREGPU_AM_SIM_ISA_PROGRAM_H_
