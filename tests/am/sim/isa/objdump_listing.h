// Reads llvm-objdump-19's disassembly listing: per instruction, the words it decoded and the text it printed.
#ifndef BAREGPU_TESTS_AM_SIM_ISA_OBJDUMP_LISTING_H_
#define BAREGPU_TESTS_AM_SIM_ISA_OBJDUMP_LISTING_H_

#include <cstdint>
#include <fstream>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"

namespace am::sim::testing {

struct ListedInstruction {
  uint64_t address = 0;
  std::vector<uint32_t> words;
  std::string text;    // mnemonic and operands, as objdump printed them
  std::string symbol;  // the function it belongs to
};

// Lines look like "\ts_load_b32 s2, s[0:1], 0x18   // 000000002A00: F4000080 F8000018". Empty when the file
// cannot be read.
inline std::vector<ListedInstruction> ReadObjdumpListing(const std::string& path) {
  std::vector<ListedInstruction> out;
  std::ifstream in(path);
  std::string line, symbol;
  while (std::getline(in, line)) {
    if (line.size() > 2 && line.back() == ':' && line.find('<') != std::string::npos) {
      symbol = line.substr(line.find('<') + 1, line.rfind('>') - line.find('<') - 1);
      continue;
    }
    if (line.empty() || line[0] != '\t') continue;
    const size_t comment = line.rfind("// ");
    if (comment == std::string::npos) continue;
    ListedInstruction inst;
    inst.symbol = symbol;
    inst.text = std::string(absl::StripAsciiWhitespace(absl::string_view(line).substr(0, comment)));
    absl::string_view tail = absl::string_view(line).substr(comment + 3);
    const size_t colon = tail.find(':');
    if (colon == absl::string_view::npos) continue;
    if (!absl::SimpleHexAtoi(tail.substr(0, colon), &inst.address)) continue;
    for (absl::string_view token : absl::StrSplit(tail.substr(colon + 1), ' ', absl::SkipEmpty())) {
      uint32_t word = 0;
      if (token.size() != 8 || !absl::SimpleHexAtoi(token, &word)) break;
      inst.words.push_back(word);
    }
    if (!inst.words.empty()) out.push_back(std::move(inst));
  }
  return out;
}

}  // namespace am::sim::testing

#endif  // BAREGPU_TESTS_AM_SIM_ISA_OBJDUMP_LISTING_H_
