// A kernel's machine code, decoded once: starting at the entry point, every instruction reachable through
// fall-through and direct branches is fetched (page by page, through the GMC) and decoded into a table indexed by
// address. Waves then execute from the table and never decode. A target only known at run time (s_setpc_b64) is
// decoded on first use. The table is kept between dispatches of the same entry point while the code words it was
// built from are unchanged.
#ifndef BAREGPU_AM_SIM_ISA_PROGRAM_H_
#define BAREGPU_AM_SIM_ISA_PROGRAM_H_

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <new>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "am/sim/gpu_memory.h"
#include "am/sim/isa/instruction.h"

namespace am::sim::isa {

// What a wave finds at an address: an instruction, or none (the words did not decode: Program::ErrorAt says why,
// Program::WordsAt what they were). One 64-byte line: a program keeps one per instruction of its reachable code.
struct alignas(64) DecodedSlot {
  Instruction inst;
  bool valid = false;
  // The next slot of the table (this + 1) is the instruction that follows this one (at PC + dwords * 4): a wave that
  // falls through takes it without a lookup.
  bool next_follows = false;
};
static_assert(sizeof(DecodedSlot) == 64, "a slot is one cache line (instruction.h orders Instruction's fields so)");
static_assert(std::is_trivially_copyable_v<DecodedSlot> && std::is_trivially_destructible_v<DecodedSlot>,
              "a program's slots live in a raw block that is never destroyed slot by slot");

// The SQ's instruction cache line on gfx11: 128 bytes (LLVM AMDGPUTargetAsmStreamer::EmitCodeEnd:
// Log2CacheLineSize 7 for GFX11 and later).
inline constexpr uint64_t kInstructionCacheLineBytes = 128;

// Frees a program's table block (one aligned allocation).
struct ProgramTablesDeleter {
  void operator()(std::byte* block) const { ::operator delete[](block, std::align_val_t{alignof(DecodedSlot)}); }
};

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
    if (pc < entry_ || (pc & 3) != 0 || index >= word_count_) return nullptr;
    const uint32_t slot = slot_of_word_[index];
    return slot != 0 ? &slots_[slot - 1] : nullptr;
  }
  // The words fetched at `pc` for the instruction there (up to 3; for a slot that did not decode, the first), for
  // fault reports; 0 when `pc` holds no slot.
  int WordsAt(uint64_t pc, uint32_t (&words)[3]) const;
  // Why the words at `pc` did not decode ("" when they did, or `pc` holds no slot).
  std::string ErrorAt(uint64_t pc) const;
  // Whether the code in memory is still what was decoded: the reachable code the static walk fetched, and the words
  // of every slot decoded late.
  bool Unchanged(GpuMemory& memory, const MemoryClient& client);
  size_t instruction_count() const { return decoded_; }
  uint32_t prefetch_lines() const { return prefetch_lines_; }

 private:
  explicit Program(uint64_t entry) : entry_(entry) {}
  absl::StatusOr<const DecodedSlot*> Late(uint64_t pc, GpuMemory& memory, const MemoryClient& client);

  // The tables, in one block of one allocation (issue 24: a program's first dispatch paid for every allocation and
  // every fresh page of its tables): for each word of the reachable code the number of the slot that starts there
  // (index + 1; 0: none), a slot per instruction instead of one per code word; the reachable code from entry_ on, as
  // fetched; then, from the next cache line, the instructions the static walk decoded, in address order. (The order
  // is not known to matter: builds of this code swing 5-8% in the interpreter's speed, likely from the alignment of its
  // hot loops; NOTES.md, "Performance, session 17".)
  uint64_t entry_;
  std::unique_ptr<std::byte[], ProgramTablesDeleter> tables_;
  const DecodedSlot* slots_ = nullptr;
  const uint32_t* slot_of_word_ = nullptr;
  const uint32_t* words_ = nullptr;
  size_t word_count_ = 0;  // of slot_of_word_ and words_: through the end of the last reachable instruction
  size_t decoded_ = 0;
  uint32_t prefetch_lines_ = 0;
  // The decoder's messages for the static slots that did not decode: (word index, message); few, usually none.
  std::vector<std::pair<uint64_t, std::string>> errors_;
  // A slot decoded on first use, with the words it was decoded from and the decoder's message.
  struct LateSlot {
    DecodedSlot slot;
    uint32_t words[3] = {0, 0, 0};
    std::string error;
  };
  mutable std::mutex late_mu_;
  std::map<uint64_t, std::unique_ptr<LateSlot>> late_;  // guarded by late_mu_
};

}  // namespace am::sim::isa

#endif  // BAREGPU_AM_SIM_ISA_PROGRAM_H_
