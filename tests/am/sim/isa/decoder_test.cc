// The decoder against the reference disassembler: every instruction of every corpus code object and every
// assembly snippet must decode to the same length and print the same text as llvm-objdump-19 --mcpu=gfx1100.
#include "am/sim/isa/decoder.h"

#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "am/sim/isa/operand_shape.h"
#include "gtest/gtest.h"
#include "tests/am/sim/isa/asm_snippets.h"
#include "tests/am/sim/isa/kernels/corpus.h"
#include "tests/am/sim/isa/objdump_listing.h"

namespace am::sim::isa {
namespace {

using ::am::sim::testing::ListedInstruction;
using ::am::sim::testing::ReadObjdumpListing;

// Compares one listing; returns how many instructions matched and records each mismatch.
int CompareListing(const std::string& path, bool wave64) {
  const std::vector<ListedInstruction> listing = ReadObjdumpListing(path);
  EXPECT_FALSE(listing.empty()) << path << ": no instructions (was it built?)";
  int matched = 0;
  for (const ListedInstruction& listed : listing) {
    absl::StatusOr<Instruction> inst = Decode(listed.words);
    if (!inst.ok()) {
      ADD_FAILURE() << path << " " << listed.symbol << "+" << std::hex << listed.address << ": '" << listed.text
                    << "': " << inst.status();
      continue;
    }
    EXPECT_EQ(inst->dwords, listed.words.size()) << path << ": " << listed.text;
    const std::string text = Disassemble(*inst, wave64);
    // In an unlinked object objdump names a branch target by its label; the decoder prints the offset.
    const bool label_target = absl::StartsWith(listed.text, "s_") && absl::StrContains(listed.text, "branch") &&
                              !listed.text.empty() && !absl::ascii_isdigit(listed.text.back());
    if (text == listed.text ||
        (label_target && text.substr(0, text.find(' ')) == listed.text.substr(0, listed.text.find(' ')))) {
      ++matched;
    } else {
      ADD_FAILURE() << path << " " << listed.symbol << "+0x" << std::hex << listed.address << " ("
                    << EncodingName(inst->encoding) << " op " << std::dec << inst->opcode
                    << ")\n  objdump: " << listed.text << "\n  decoder: " << text;
    }
  }
  return matched;
}

TEST(DecoderTest, SnippetsMatchObjdump) {
  for (const char* name : testing::kAsmSnippets) {
    if (std::string(name) == "illegal") continue;  // holds an undefined encoding on purpose
    SCOPED_TRACE(name);
    EXPECT_GT(CompareListing(testing::AsmSnippetPath(name, ".dis"), absl::EndsWith(name, "_wave64")), 0);
  }
}

TEST(DecoderTest, CorpusMatchesObjdump) {
  int total = 0;
  for (const testing::CorpusEntry& entry : testing::kCorpusEntries) {
    SCOPED_TRACE(entry.stem());
    total += CompareListing(entry.disassembly_path(), absl::StrContains(entry.name, "wave64"));
  }
  EXPECT_GT(total, 1000);
}

TEST(DecoderTest, UnknownEncodingIsAnErrorNotACrash) {
  // EXP (0b111110) is a graphics-only encoding.
  const uint32_t exp[] = {0xf8000000, 0};
  EXPECT_FALSE(Decode(exp).ok());
  // An SOPP opcode gfx1100 does not define (6).
  const uint32_t sopp[] = {0xbf860000};
  absl::StatusOr<Instruction> bad = Decode(sopp);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("0xbf860000"), std::string::npos) << bad.status();
  // A 64-bit encoding cut off after its first dword.
  const uint32_t cut[] = {0xdc520000};
  EXPECT_FALSE(Decode(cut).ok());
  EXPECT_FALSE(Decode({}).ok());
}

TEST(DecoderTest, LiteralExtendsTheInstruction) {
  // v_mov_b32_e32 v0, 0x1234 (llvm-mc-19 -show-encoding: 0x7e0002ff 0x00001234)
  const uint32_t words[] = {0x7e0002ff, 0x00001234};
  absl::StatusOr<Instruction> inst = Decode(words);
  ASSERT_TRUE(inst.ok()) << inst.status();
  EXPECT_EQ(inst->dwords, 2);
  EXPECT_EQ(inst->literal, 0x1234u);
  EXPECT_EQ(Disassemble(*inst), "v_mov_b32_e32 v0, 0x1234");
}

}  // namespace
}  // namespace am::sim::isa
