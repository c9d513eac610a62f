// `baregpu co FILE`: the corpus's code objects described as hcq launches them. Expected values come from the
// kernels' sources (argument sizes), the code object ABI (where the dispatch packet goes) and llvm-objdump-19's
// listing of the same file, never from the command's own code.
#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "gtest/gtest.h"
#include "tests/tools/run_cli.h"

namespace cli {
namespace {

using ::cli::testing::RunBaregpu;

std::string Corpus(const std::string& file) {
  const char* build = std::getenv("BAREGPU_BUILD_ROOT");
  return std::string(build ? build : ".") + "/tests/am/sim/isa/kernels/" + file;
}

// The instruction texts llvm-objdump-19 printed for `function` (the text before each line's "//" comment).
std::vector<std::string> ObjdumpTexts(const std::string& listing, const std::string& function) {
  std::ifstream in(listing);
  std::vector<std::string> texts;
  bool inside = false;
  for (std::string line; std::getline(in, line);) {
    if (absl::EndsWith(line, "<" + function + ">:")) {
      inside = true;
      continue;
    }
    if (!inside) continue;
    if (line.empty() || line[0] != '\t') break;
    std::string text(absl::StripAsciiWhitespace(line.substr(0, line.find("//"))));
    texts.push_back(text);
  }
  return texts;
}

std::string Collapse(const std::string& text) {
  return absl::StrJoin(absl::StrSplit(text, ' ', absl::SkipEmpty()), " ");
}

TEST(CoCommandTest, JsonDescribesVectorAddAndDisassemblesItAsObjdumpDoes) {
  auto r = RunBaregpu({"co", Corpus("vector_add-O2.co"), "--disassemble", "--json"});
  ASSERT_EQ(r.exit_status, 0) << r.err;
  auto json = nlohmann::json::parse(r.out, nullptr, false);
  ASSERT_FALSE(json.is_discarded()) << r.out;
  EXPECT_EQ(json["target"], "gfx1100");
  EXPECT_EQ(json["code_object_version"], 5);
  ASSERT_EQ(json["kernels"].size(), 1u);
  const auto& kernel = json["kernels"][0];
  EXPECT_EQ(kernel["name"], "vector_add");
  EXPECT_EQ(kernel["wave_size"], 32);
  EXPECT_EQ(kernel["user_sgprs"], nlohmann::json::array({"kernarg_segment_ptr"}));
  EXPECT_EQ(kernel["kernarg_size"], 3 * 8 + 4);  // three pointers and a uint, no hidden arguments at -O2
  EXPECT_EQ(kernel["launch_argument_bytes"], 3 * 8 + 4);
  EXPECT_TRUE(kernel["dispatch_packet_offset"].is_null());
  ASSERT_EQ(kernel["arguments"].size(), 4u);
  EXPECT_EQ(kernel["arguments"][3]["value_kind"], "by_value");
  EXPECT_EQ(kernel["arguments"][3]["source"], "caller");

  // objdump goes on past the symbol's end into the section's s_code_end padding; the command stops at s_endpgm.
  const std::vector<std::string> listed = ObjdumpTexts(Corpus("vector_add-O2.dis"), "vector_add");
  std::vector<std::string> expected;
  for (const std::string& text : listed) {
    if (text == "s_code_end") break;
    expected.push_back(text);
  }
  ASSERT_FALSE(expected.empty());
  EXPECT_EQ(expected.back(), "s_endpgm");
  ASSERT_EQ(kernel["code"].size(), expected.size());
  for (size_t i = 0; i < expected.size(); ++i) {
    EXPECT_EQ(Collapse(kernel["code"][i]["text"].get<std::string>()), Collapse(expected[i])) << i;
  }
}

TEST(CoCommandTest, HiddenArgumentsSayWhatFillsThem) {
  auto r = RunBaregpu({"co", Corpus("launch_dims-O0.co")});
  ASSERT_EQ(r.exit_status, 0) << r.err;
  std::string block_count, hostcall, buffer;
  for (absl::string_view line : absl::StrSplit(r.out, '\n')) {
    if (absl::StrContains(line, "hidden_block_count_x")) block_count = std::string(line);
    if (absl::StrContains(line, "hidden_hostcall_buffer")) hostcall = std::string(line);
    if (absl::StrContains(line, "global_buffer")) buffer = std::string(line);
  }
  EXPECT_TRUE(absl::EndsWith(block_count, "launch")) << r.out;
  EXPECT_TRUE(absl::EndsWith(hostcall, "zero")) << r.out;
  EXPECT_TRUE(absl::EndsWith(buffer, "caller")) << r.out;
  // -O0 enables the dispatch pointer: the packet follows the kernel arguments, 64-byte aligned (AQL packets are).
  auto json = nlohmann::json::parse(RunBaregpu({"co", Corpus("launch_dims-O0.co"), "--json"}).out, nullptr, false);
  ASSERT_FALSE(json.is_discarded());
  const auto& kernel = json["kernels"][0];
  const uint64_t kernarg = kernel["kernarg_size"].get<uint64_t>();
  EXPECT_EQ(kernel["dispatch_packet_offset"].get<uint64_t>(), (kernarg + 63) / 64 * 64);
  EXPECT_EQ(kernel["launch_argument_bytes"].get<uint64_t>(), (kernarg + 63) / 64 * 64 + 64);
}

TEST(CoCommandTest, BadInputIsOneLineAndAnExitStatus) {
  const std::string not_elf = ::testing::TempDir() + "/not_a_code_object.co";
  std::ofstream(not_elf) << "hello, this is text";
  auto r = RunBaregpu({"co", not_elf});
  EXPECT_EQ(r.exit_status, 1);
  EXPECT_TRUE(absl::StrContains(r.err, "not an ELF file")) << r.err;
  EXPECT_TRUE(absl::StrContains(r.err, not_elf)) << r.err;

  auto missing = RunBaregpu({"co", Corpus("no_such_kernel.co")});
  EXPECT_EQ(missing.exit_status, 1);
  EXPECT_TRUE(absl::StrContains(missing.err, "no_such_kernel.co")) << missing.err;

  auto unknown = RunBaregpu({"co", Corpus("half-O2.co"), "--kernel=half3_ops"});
  EXPECT_EQ(unknown.exit_status, 1);
  EXPECT_TRUE(absl::StrContains(unknown.err, "half_ops")) << unknown.err;  // the kernels that exist

  EXPECT_EQ(RunBaregpu({"co"}).exit_status, 2);
}

}  // namespace
}  // namespace cli
