// Program::Load's static walk of a kernel's code (issue 23): it follows the code from the entry and fetches page by
// page, and must stop at a page whose instruction fetch was redirected to the dummy page (a page mapped without
// EXECUTABLE under amdgpu's default fault handling). The dummy page starts zeroed, and zeros are v_illegal, which
// ends the walk; but faulting writes are redirected there too, and what they leave can decode as instructions that
// fall through: every later page redirects to the same words, so the walk went on to its 2^24-word bound with a
// 128-byte decoded slot per word.
#include "am/sim/isa/program.h"

#include <cstring>
#include <map>
#include <vector>

#include "absl/strings/str_format.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace am::sim::isa {
namespace {

constexpr uint64_t kPage = 4096;
constexpr uint64_t kWordsPerPage = kPage / 4;
// Encodings from llvm-mc-19 -mcpu=gfx1100 -show-encoding.
constexpr uint32_t kSNop0 = 0xbf800000;         // s_nop 0
constexpr uint32_t kSEndpgm = 0xbfb00000;       // s_endpgm
constexpr uint32_t kSBranchPlus1 = 0xbfa00001;  // s_branch 1 (SOPP opcode 32, simm16 1: skips one word)

// Pages of words; an instruction fetch from a page not marked executable is redirected to a zero-filled dummy page,
// as GmcModel redirects it under amdgpu's default (*_PROTECTION_FAULT_ENABLE_DEFAULT set), and counted.
class RedirectingMemory : public GpuMemory {
 public:
  void AddPage(uint64_t address, std::vector<uint32_t> words, bool executable) {
    words.resize(kWordsPerPage);
    pages_[address] = {std::move(words), executable};
  }
  absl::StatusOr<std::span<uint8_t>> Map(const MemoryClient&, uint64_t address, uint64_t length,
                                         Access access) override {
    const uint64_t page = address & ~(kPage - 1);
    const uint64_t offset = address - page;
    const uint64_t size = std::min(length, kPage - offset);
    auto it = pages_.find(page);
    if (it == pages_.end()) return absl::PermissionDeniedError(absl::StrFormat("%#x is not mapped", address));
    if (access == Access::kExecute && !it->second.executable) {
      ++redirected_;
      return std::span<uint8_t>(dummy_ + offset, size);
    }
    return std::span<uint8_t>(reinterpret_cast<uint8_t*>(it->second.words.data()) + offset, size);
  }
  uint64_t redirected_accesses() const override { return redirected_; }
  // What redirected faulting writes left in the dummy page.
  void FillDummy(uint32_t word) {
    for (uint64_t i = 0; i < kWordsPerPage; ++i) std::memcpy(dummy_ + i * 4, &word, 4);
  }

 private:
  struct Page {
    std::vector<uint32_t> words;
    bool executable;
  };
  std::map<uint64_t, Page> pages_;
  uint8_t dummy_[kPage] = {};
  uint64_t redirected_ = 0;
};

constexpr uint64_t kEntry = 0x10000;

TEST(ProgramTest, TheStaticWalkStopsAtARedirectedPage) {
  RedirectingMemory memory;
  memory.FillDummy(kSNop0);
  // A whole page of s_nop that falls through into a page mapped without EXECUTABLE, and more such pages after it.
  memory.AddPage(kEntry, std::vector<uint32_t>(kWordsPerPage, kSNop0), /*executable=*/true);
  memory.AddPage(kEntry + kPage, {kSEndpgm}, /*executable=*/false);
  for (uint64_t page = kEntry + 2 * kPage; page < kEntry + 64 * kPage; page += kPage) {
    memory.AddPage(page, {}, /*executable=*/false);
  }
  absl::StatusOr<std::unique_ptr<Program>> program = Program::Load(memory, MemoryClient{}, kEntry);
  ASSERT_TRUE(program.ok()) << program.status();
  EXPECT_EQ((*program)->instruction_count(), kWordsPerPage) << "only the executable page is decoded ahead";
  EXPECT_EQ(memory.redirected_accesses(), 1u) << "one fetch of the second page, then the walk stopped";
  EXPECT_EQ((*program)->Find(kEntry + kPage), nullptr);
  // A wave that runs on fetches the dummy page's words there, as the hardware would: an s_nop, not the s_endpgm the
  // page really holds.
  absl::StatusOr<const DecodedSlot*> late = (*program)->At(kEntry + kPage, memory, MemoryClient{});
  ASSERT_TRUE(late.ok()) << late.status();
  ASSERT_TRUE((*late)->valid) << (*program)->ErrorAt(kEntry + kPage);
  EXPECT_EQ((*late)->inst.encoding, Encoding::kSopp);
  uint32_t words[3];
  EXPECT_EQ((*program)->WordsAt(kEntry + kPage, words), 1);
  EXPECT_EQ(words[0], kSNop0);
}

// The same code on executable pages is decoded across the page boundary up to its s_endpgm.
TEST(ProgramTest, TheStaticWalkCrossesExecutablePages) {
  RedirectingMemory memory;
  memory.AddPage(kEntry, std::vector<uint32_t>(kWordsPerPage, kSNop0), /*executable=*/true);
  memory.AddPage(kEntry + kPage, {kSNop0, kSEndpgm}, /*executable=*/true);
  absl::StatusOr<std::unique_ptr<Program>> program = Program::Load(memory, MemoryClient{}, kEntry);
  ASSERT_TRUE(program.ok()) << program.status();
  EXPECT_EQ((*program)->instruction_count(), kWordsPerPage + 2);
  EXPECT_EQ(memory.redirected_accesses(), 0u);
  ASSERT_NE((*program)->Find(kEntry + kPage + 4), nullptr);
  EXPECT_EQ((*program)->Find(kEntry + kPage + 4)->inst.encoding, Encoding::kSopp);
}

// A zeroed dummy page (as amdgpu_gart_dummy_page_init leaves it) holds v_illegal (llvm-objdump-19 -z --mcpu=gfx1100
// prints zero words so): a wave that fetches it stops with an illegal instruction.
TEST(ProgramTest, AZeroedDummyPageIsIllegalCode) {
  RedirectingMemory memory;
  memory.AddPage(kEntry, {kSNop0}, /*executable=*/false);
  absl::StatusOr<std::unique_ptr<Program>> program = Program::Load(memory, MemoryClient{}, kEntry);
  ASSERT_TRUE(program.ok()) << program.status();
  EXPECT_EQ((*program)->instruction_count(), 0u);
  absl::StatusOr<const DecodedSlot*> slot = (*program)->At(kEntry, memory, MemoryClient{});
  ASSERT_TRUE(slot.ok()) << slot.status();
  EXPECT_FALSE((*slot)->valid);
  uint32_t words[3];
  EXPECT_EQ((*program)->WordsAt(kEntry, words), 1);
  EXPECT_EQ(words[0], 0u);
  EXPECT_THAT((*program)->ErrorAt(kEntry),
              testing::HasSubstr("VOP2 opcode 0 (instruction 0000000000) is not defined on gfx1100"));
}

// The table keeps one slot per instruction, in address order (issue 24: not one per code word), and marks the slots
// whose successor in the table is the instruction that falls through from them: a branch's is not, nor is the last.
TEST(ProgramTest, OneSlotPerInstructionAndTheFallThroughChain) {
  RedirectingMemory memory;
  // 0 s_nop; 1 s_branch to 3; 2 a word nothing reaches; 3 s_nop; 4 s_endpgm.
  memory.AddPage(kEntry, {kSNop0, kSBranchPlus1, 0xffffffffu, kSNop0, kSEndpgm}, /*executable=*/true);
  absl::StatusOr<std::unique_ptr<Program>> program = Program::Load(memory, MemoryClient{}, kEntry);
  ASSERT_TRUE(program.ok()) << program.status();
  EXPECT_EQ((*program)->instruction_count(), 4u);
  const DecodedSlot* nop = (*program)->Find(kEntry);
  const DecodedSlot* branch = (*program)->Find(kEntry + 4);
  const DecodedSlot* second_nop = (*program)->Find(kEntry + 12);
  const DecodedSlot* end = (*program)->Find(kEntry + 16);
  ASSERT_NE(nop, nullptr);
  ASSERT_NE(branch, nullptr);
  ASSERT_NE(second_nop, nullptr);
  ASSERT_NE(end, nullptr);
  EXPECT_EQ((*program)->Find(kEntry + 8), nullptr) << "the skipped word is not decoded";
  EXPECT_EQ(branch, nop + 1);
  EXPECT_EQ(second_nop, branch + 1);
  EXPECT_EQ(end, second_nop + 1);
  EXPECT_TRUE(nop->next_follows);
  EXPECT_FALSE(branch->next_follows) << "PC + 4 holds no slot";
  EXPECT_TRUE(second_nop->next_follows);
  EXPECT_FALSE(end->next_follows) << "the last slot";
  uint32_t words[3];
  EXPECT_EQ((*program)->WordsAt(kEntry + 4, words), 1);
  EXPECT_EQ(words[0], kSBranchPlus1);
  EXPECT_EQ((*program)->ErrorAt(kEntry + 4), "");
}

}  // namespace
}  // namespace am::sim::isa
