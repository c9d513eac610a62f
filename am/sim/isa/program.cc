#include "am/sim/isa/program.h"

#include <algorithm>
#include <cstring>
#include <optional>
#include <span>

#include "absl/strings/str_format.h"
#include "am/sim/isa/decoder.h"
#include "base/status_macros.h"

namespace am::sim::isa {
namespace {

constexpr uint64_t kPage = 4096;

// SOPP opcodes (RDNA3 ISA, SOPP table) that end or redirect the instruction stream.
constexpr uint16_t kSoppEndpgm = 48, kSoppEndpgmSaved = 49, kSoppBranch = 32, kSoppCbranchFirst = 33,
                   kSoppCbranchLast = 42, kSoppCodeEnd = 31;
// SOP1 s_setpc_b64 / s_swappc_b64 / s_rfe_b64; SOPK s_call_b64.
constexpr uint16_t kSop1Setpc = 72, kSop1Swappc = 73, kSop1Rfe = 74, kSopkCall = 20;

// Reads whole words from `address` onto the end of `words`: whole instruction cache lines up to the one holding
// `until` (an address; the fetch goes at least one line), never past the end of the page, as the SQ fetches code a
// line at a time (a kernel of a few dozen instructions no longer copies a whole page). False (and nothing appended)
// when the fetch may have been redirected to the dummy page: a fetch from a page not mapped executable succeeds there
// under amdgpu's default fault handling (docs/fidelity.md, B9/B10), and what faulting writes left in the dummy page can
// decode as instructions that fall through onto the next page, redirected to the same words, up to the walk's bound
// (issue 23). The static walk stops at such a page; a wave that gets there decodes late, from the dummy page's
// words, as the hardware would fetch them.
absl::StatusOr<bool> FetchLines(GpuMemory& memory, const MemoryClient& client, uint64_t address, uint64_t until,
                                std::vector<uint32_t>& words) {
  const uint64_t page_end = (address & ~(kPage - 1)) + kPage;
  const uint64_t lines_end = (std::max(until, address) / kInstructionCacheLineBytes + 1) * kInstructionCacheLineBytes;
  const uint64_t bytes = std::min(page_end, lines_end) - address;
  const size_t old = words.size();
  words.resize(old + bytes / 4);
  const uint64_t redirected = memory.redirected_accesses();
  absl::Status read =
      ReadMemory(memory, client, address, {reinterpret_cast<uint8_t*>(words.data() + old), bytes}, Access::kExecute);
  if (!read.ok() || memory.redirected_accesses() != redirected) words.resize(old);
  BAREGPU_RETURN_IF_ERROR(read);
  return words.size() != old;
}

// The walk's working tables, one set per thread and reused from load to load: a program keeps only what its walk
// reached, copied out at the end, so a load touches no fresh memory for whole pages of words and slots (issue 24:
// page faults on those were about half of a kernel's first dispatch).
struct WalkScratch {
  std::vector<uint32_t> words;
  std::vector<uint32_t> slot_of_word;  // as Program::slot_of_word_, numbering `slots` in the walk's order
  std::vector<DecodedSlot> slots;      // in the order the walk decoded them
  std::vector<std::pair<uint64_t, std::string>> errors;  // word index, the decoder's message
  std::vector<uint64_t> work;
};

}  // namespace

absl::StatusOr<std::unique_ptr<Program>> Program::Load(GpuMemory& memory, const MemoryClient& client, uint64_t entry,
                                                       uint32_t prefetch_lines) {
  if ((entry & 3) != 0) {
    return absl::InvalidArgumentError(absl::StrFormat("program address %#x is not dword aligned", entry));
  }
  std::unique_ptr<Program> program(new Program(entry));
  program->prefetch_lines_ = prefetch_lines;
  thread_local WalkScratch scratch;
  std::vector<uint32_t>& words = scratch.words;
  std::vector<uint32_t>& slot_of_word = scratch.slot_of_word;
  std::vector<DecodedSlot>& slots = scratch.slots;
  words.clear();
  slot_of_word.clear();  // keeps the capacity: fetch_next's resize() zeroes what it brings back
  slots.clear();
  scratch.errors.clear();
  uint64_t end_word = 0;  // one past the last word of the reachable code
  // The walk fetches no page at or after one that may have been redirected: `fetch_end` words, once known.
  std::optional<uint64_t> fetch_end;
  // Fetches on from the end of `words`, at least through the line holding word `until`.
  auto fetch_next = [&](uint64_t until) -> absl::StatusOr<bool> {
    if (fetch_end.has_value()) return false;
    BAREGPU_ASSIGN_OR_RETURN(const bool fetched,
                             FetchLines(memory, client, entry + words.size() * 4, entry + until * 4, words));
    if (!fetched) fetch_end = words.size();
    slot_of_word.resize(words.size());  // zeroes the new words' entries: no slot yet
    return fetched;
  };
  BAREGPU_RETURN_IF_ERROR(fetch_next(0).status());
  std::vector<uint64_t>& work = scratch.work;
  work.assign(1, 0);
  while (!work.empty()) {
    const uint64_t index = work.back();
    work.pop_back();
    // Code before the entry point is not part of this kernel; a wave going there decodes late.
    if (index >= (uint64_t{1} << 24)) continue;
    bool reachable = true;
    while (reachable && index >= words.size()) {
      BAREGPU_ASSIGN_OR_RETURN(reachable, fetch_next(index));
    }
    if (!reachable) continue;  // past a redirected page: decoded late, if a wave gets there
    if (slot_of_word[index] != 0) continue;
    // Decoded in place, into the slot it will have.
    DecodedSlot& slot = slots.emplace_back();
    absl::Status decoded = DecodeInto(
        std::span<const uint32_t>(words).subspan(index, std::min<size_t>(kMaxInstructionDwords, words.size() - index)),
        slot.inst);
    if (!decoded.ok() && words.size() - index < kMaxInstructionDwords) {
      // Possibly cut off by the end of what was fetched: the instruction continues on the next line (or page).
      bool fetched = true;
      while (fetched && words.size() - index < kMaxInstructionDwords) {
        BAREGPU_ASSIGN_OR_RETURN(fetched, fetch_next(index + kMaxInstructionDwords - 1));
      }
      if (!fetched) {  // it continues on a redirected page: decoded late
        slots.pop_back();
        continue;
      }
      decoded = DecodeInto(std::span<const uint32_t>(words).subspan(index, kMaxInstructionDwords), slot.inst);
    }
    slot_of_word[index] = static_cast<uint32_t>(slots.size());
    const Instruction* inst = &slot.inst;
    end_word = std::max<uint64_t>(end_word, index + (decoded.ok() ? inst->dwords : 1));
    if (!decoded.ok()) {
      slot.inst = Instruction();
      scratch.errors.emplace_back(index, std::string(decoded.message()));
      continue;  // executing it raises the SQ's illegal-instruction interrupt
    }
    slot.valid = true;
    ++program->decoded_;
    const uint64_t next = index + inst->dwords;
    const uint64_t target = static_cast<uint64_t>(static_cast<int64_t>(index) + 1 + inst->imm);
    bool falls_through = true;
    if (inst->encoding == Encoding::kSopp) {
      const uint16_t op = inst->opcode;
      if (op == kSoppEndpgm || op == kSoppEndpgmSaved || op == kSoppCodeEnd) falls_through = false;
      if (op == kSoppBranch) falls_through = false;
      if (op == kSoppBranch || (op >= kSoppCbranchFirst && op <= kSoppCbranchLast)) work.push_back(target);
    } else if (inst->encoding == Encoding::kSop1 && (inst->opcode == kSop1Setpc || inst->opcode == kSop1Rfe)) {
      falls_through = false;
    } else if (inst->encoding == Encoding::kSopk && inst->opcode == kSopkCall) {
      work.push_back(target);
    }
    (void)kSop1Swappc;
    if (falls_through) work.push_back(next);
  }
  // The program keeps the reachable code and its slots in address order, exactly sized. Words past it were never
  // decoded: At() decodes them late, if a wave gets there.
  const uint64_t fetched_end = entry + words.size() * 4;
  // Every decoded instruction lies inside what was fetched, and slot_of_word covers every fetched word.
  const size_t kept = end_word;
  const size_t slot_bytes = slots.size() * sizeof(DecodedSlot), index_bytes = kept * sizeof(uint32_t);
  const size_t index_lines = (2 * index_bytes + alignof(DecodedSlot) - 1) / alignof(DecodedSlot) * alignof(DecodedSlot);
  const size_t table_bytes = index_lines + slot_bytes;
  program->tables_.reset(
      static_cast<std::byte*>(::operator new[](table_bytes, std::align_val_t{alignof(DecodedSlot)})));
  auto* program_slots = reinterpret_cast<DecodedSlot*>(program->tables_.get() + index_lines);
  auto* program_slot_of_word = reinterpret_cast<uint32_t*>(program->tables_.get());
  auto* program_words = reinterpret_cast<uint32_t*>(program->tables_.get() + index_bytes);
  std::copy_n(words.begin(), kept, program_words);
  size_t count = 0;
  for (size_t index = 0; index < kept; ++index) {
    program_slot_of_word[index] = 0;
    if (slot_of_word[index] == 0) continue;
    new (&program_slots[count]) DecodedSlot(slots[slot_of_word[index] - 1]);
    program_slot_of_word[index] = static_cast<uint32_t>(++count);
  }
  for (size_t index = 0; index < kept; ++index) {
    const uint32_t slot = program_slot_of_word[index];
    if (slot == 0 || !program_slots[slot - 1].valid) continue;
    const size_t next = index + program_slots[slot - 1].inst.dwords;
    program_slots[slot - 1].next_follows = next < kept && program_slot_of_word[next] == slot + 1;
  }
  program->slots_ = program_slots;
  program->slot_of_word_ = program_slot_of_word;
  program->words_ = program_words;
  program->word_count_ = kept;
  for (auto& [index, message] : scratch.errors) {
    if (index < kept) program->errors_.emplace_back(index, std::move(message));
  }
  // The prefetcher runs `prefetch_lines` lines ahead of the line being executed: past the line that holds the last
  // reachable word. The fetched pages are already known to be executable; the ones after them are checked.
  const uint64_t code_end = entry + end_word * 4;
  const uint64_t prefetch_end =
      (code_end + kInstructionCacheLineBytes - 1) / kInstructionCacheLineBytes * kInstructionCacheLineBytes +
      uint64_t{prefetch_lines} * kInstructionCacheLineBytes;
  for (uint64_t at = fetched_end; at < prefetch_end; at = (at & ~(kPage - 1)) + kPage) {
    uint8_t word[4];
    if (absl::Status fetched = ReadMemory(memory, client, at, word, Access::kExecute); !fetched.ok()) {
      return absl::Status(
          fetched.code(),
          absl::StrFormat("instruction prefetch past the end of the code at %#x (SH_MEM_CONFIG.INITIAL_INST_PREFETCH "
                          "%d lines of %d bytes reach %#x): %s",
                          code_end, prefetch_lines, kInstructionCacheLineBytes, prefetch_end, fetched.message()));
    }
  }
  return program;
}

int Program::WordsAt(uint64_t pc, uint32_t (&words)[3]) const {
  std::fill(std::begin(words), std::end(words), 0);
  if (const DecodedSlot* slot = Find(pc); slot != nullptr) {
    const size_t index = (pc - entry_) / 4;
    const size_t count = std::min<size_t>({slot->valid ? slot->inst.dwords : size_t{1}, 3, word_count_ - index});
    std::copy_n(words_ + index, count, words);
    return static_cast<int>(count);
  }
  std::lock_guard lock(late_mu_);
  auto it = late_.find(pc);
  if (it == late_.end()) return 0;
  std::copy(std::begin(it->second->words), std::end(it->second->words), words);
  return it->second->slot.valid ? std::min<int>(it->second->slot.inst.dwords, 3) : 1;
}

std::string Program::ErrorAt(uint64_t pc) const {
  if (Find(pc) != nullptr) {
    for (const auto& [index, message] : errors_) {
      if (entry_ + index * 4 == pc) return message;
    }
    return "";
  }
  std::lock_guard lock(late_mu_);
  auto it = late_.find(pc);
  return it != late_.end() ? it->second->error : "";
}

bool Program::Unchanged(GpuMemory& memory, const MemoryClient& client) {
  // Compared a chunk at a time through a buffer on the stack: every dispatch of a cached program asks, and a copy of
  // the whole code on the heap was an allocation per dispatch.
  constexpr size_t kChunkBytes = 4096;
  uint8_t current[kChunkBytes];
  const auto* code = reinterpret_cast<const uint8_t*>(words_);
  const size_t bytes = word_count_ * 4;
  for (size_t done = 0; done < bytes;) {
    const size_t n = std::min(kChunkBytes, bytes - done);
    if (!ReadMemory(memory, client, entry_ + done, std::span<uint8_t>(current, n), Access::kExecute).ok()) return false;
    if (std::memcmp(current, code + done, n) != 0) return false;
    done += n;
  }
  // What waves decoded late (targets of s_setpc_b64, code past a redirected page) must still be there too.
  std::lock_guard lock(late_mu_);
  for (const auto& [pc, late] : late_) {
    const size_t slot_bytes = (late->slot.valid ? late->slot.inst.dwords : 1) * 4;
    if (!ReadMemory(memory, client, pc, std::span<uint8_t>(current, slot_bytes), Access::kExecute).ok()) return false;
    if (std::memcmp(current, late->words, slot_bytes) != 0) return false;
  }
  return true;
}

absl::StatusOr<const DecodedSlot*> Program::Late(uint64_t pc, GpuMemory& memory, const MemoryClient& client) {
  std::lock_guard lock(late_mu_);
  auto it = late_.find(pc);
  if (it != late_.end()) return &it->second->slot;
  auto late = std::make_unique<LateSlot>();
  size_t have = 0;
  absl::StatusOr<Instruction> inst = absl::InvalidArgumentError("no words");
  for (have = 1; have <= kMaxInstructionDwords; ++have) {
    uint8_t bytes[4];
    BAREGPU_RETURN_IF_ERROR(ReadMemory(memory, client, pc + (have - 1) * 4, bytes, Access::kExecute));
    std::memcpy(&late->words[have - 1], bytes, 4);
    inst = Decode(std::span<const uint32_t>(late->words, have));
    if (inst.ok()) break;
  }
  if (inst.ok()) {
    late->slot.valid = true;
    late->slot.inst = *inst;
  } else {
    late->error = std::string(inst.status().message());
  }
  return &(late_[pc] = std::move(late))->slot;
}

}  // namespace am::sim::isa
