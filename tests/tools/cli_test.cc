// The baregpu command line as a user meets it: exit codes, help, errors on one line, JSON that parses.
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>

#include "absl/strings/match.h"
#include "gtest/gtest.h"
#include "tests/tools/run_cli.h"

namespace cli {
namespace {

using ::cli::testing::RunBaregpu;

int CountLines(const std::string& text) { return static_cast<int>(std::count(text.begin(), text.end(), '\n')); }

TEST(CliTest, ListWorksWithoutAGpuAndShowsTheVirtualDevices) {
  auto r = RunBaregpu({"list"});
  EXPECT_EQ(r.exit_status, 0) << r.err;
  EXPECT_TRUE(absl::StrContains(r.out, "sim:edu")) << r.out;
  EXPECT_TRUE(r.err.empty()) << r.err;
}

TEST(CliTest, ListJsonParsesAndIncludesVirtualDevices) {
  auto r = RunBaregpu({"list", "--json"});
  ASSERT_EQ(r.exit_status, 0) << r.err;
  auto json = nlohmann::json::parse(r.out, nullptr, /*allow_exceptions=*/false);
  ASSERT_FALSE(json.is_discarded()) << r.out;
  ASSERT_TRUE(json["devices"].is_array());
  bool saw_virtual = false;
  for (const auto& device : json["devices"]) {
    ASSERT_TRUE(device["name"].is_string());
    ASSERT_TRUE(device["kind"].is_string());
    if (device["kind"] == "virtual") {
      EXPECT_TRUE(absl::StartsWith(device["name"].get<std::string>(), "sim:"));
      saw_virtual = true;
    } else {
      EXPECT_EQ(device["kind"], "pci");
    }
  }
  EXPECT_TRUE(saw_virtual);
}

TEST(CliTest, HelpExitsZeroForTheProgramAndEveryCommand) {
  auto top = RunBaregpu({"--help"});
  EXPECT_EQ(top.exit_status, 0);
  EXPECT_TRUE(absl::StrContains(top.out, "usage: baregpu COMMAND"));
  // Every command listed in the program help answers --help with its own usage line.
  std::vector<std::string> commands;
  std::istringstream lines(top.out.substr(top.out.find("commands:")));
  std::string line;
  std::getline(lines, line);
  while (std::getline(lines, line) && absl::StartsWith(line, "  ")) {
    commands.push_back(line.substr(2, line.find(' ', 2) - 2));
  }
  ASSERT_FALSE(commands.empty());
  for (const std::string& command : commands) {
    auto r = RunBaregpu({command, "--help"});
    EXPECT_EQ(r.exit_status, 0) << command;
    EXPECT_TRUE(absl::StartsWith(r.out, "usage: baregpu " + command)) << command << ": " << r.out;
  }
}

TEST(CliTest, UsageErrorsExitTwoWithOneErrorLine) {
  for (const std::vector<std::string>& args : std::vector<std::vector<std::string>>{
           {"frobnicate"}, {"list", "--bogus"}, {"list", "extra-argument"}, {"list", "--json=yes"}}) {
    auto r = RunBaregpu(args);
    EXPECT_EQ(r.exit_status, 2) << args[0];
    EXPECT_TRUE(absl::StartsWith(r.err, "error: ")) << r.err;
    EXPECT_EQ(CountLines(r.err), 1) << r.err;
  }
  auto bare = RunBaregpu({});
  EXPECT_EQ(bare.exit_status, 2);
}

// The version comes from meson.build's project(version:), read here from the source, not from the build.
TEST(CliTest, VersionIsTheProjectVersion) {
  const char* source_root = std::getenv("BAREGPU_SOURCE_ROOT");
  ASSERT_NE(source_root, nullptr);
  std::ifstream meson_build(std::string(source_root) + "/meson.build");
  std::stringstream text;
  text << meson_build.rdbuf();
  std::smatch match;
  const std::string contents = text.str();
  ASSERT_TRUE(std::regex_search(contents, match, std::regex(R"(version:\s*'([0-9]+\.[0-9]+\.[0-9]+)')")))
      << "no version: in meson.build";
  auto r = RunBaregpu({"--version"});
  EXPECT_EQ(r.exit_status, 0) << r.err;
  EXPECT_EQ(r.out, "baregpu " + match[1].str() + "\n");
  EXPECT_TRUE(r.err.empty()) << r.err;
}

// A name that holds a newline or an escape sequence reaches the terminal quoted and escaped: it can neither forge a
// line of output nor recolour or retitle the user's terminal.
TEST(CliTest, NamesWithControlCharactersAreQuoted) {
  const std::string hostile = "/nonexistent/x\x1b]0;owned\x07\nerror: forged\x1b[31m.bin";
  const std::string quoted = R"("/nonexistent/x\x1b]0;owned\x07\nerror: forged\x1b[31m.bin")";
  const std::vector<std::vector<std::string>> commands = {{"fw", "info", hostile},  // file names in errors
                                                          {"fw", "info", hostile, "--kind=sos"},  // the reader's error
                                                          {"co", hostile},                 // the code-object reader
                                                          {"info", "sim:navi31:\x1b[2J"},  // device names
                                                          {"info", "0000:03:00.0\n"},      //
                                                          {"\x1b[2Jfrobnicate"},           // an unknown command
                                                          {"list", "--\x1b[2Jbogus"},      // an unknown option
                                                          {"pt", "sim:navi31", "walk", "0x\x1b[2J"}};  // an argument
  for (const std::vector<std::string>& args : commands) {
    auto r = RunBaregpu(args);
    EXPECT_NE(r.exit_status, 0) << args[1];
    EXPECT_EQ(r.err.find('\x1b'), std::string::npos) << r.err;
    EXPECT_EQ(r.out.find('\x1b'), std::string::npos) << r.out;
    EXPECT_EQ(CountLines(r.err), 1) << r.err;
    EXPECT_FALSE(absl::StrContains(r.err, "\nerror: forged")) << r.err;
  }
  auto file = RunBaregpu({"fw", "info", hostile});
  EXPECT_TRUE(absl::StrContains(file.err, quoted)) << file.err;
}

// Every command that reads a file refuses a FIFO at once: without a writer, open() would wait for one forever.
TEST(CliTest, FilesThatAreNotRegularAreRefusedWithoutBlocking) {
  char pattern[] = "/tmp/baregpu-cli-fifo-XXXXXX";
  const std::string dir = ::mkdtemp(pattern);
  const std::string fifo = dir + "/psp_13_0_0_sos.bin";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  for (const std::vector<std::string>& args : std::vector<std::vector<std::string>>{
           {"fw", "info", fifo}, {"fw", "info", fifo, "--kind=sos"}, {"fw", "info", fifo, "--json"}, {"co", fifo}}) {
    auto r = RunBaregpu(args, {}, std::chrono::seconds(20));
    EXPECT_FALSE(r.timed_out) << args[1] << " " << fifo << " blocked";
    EXPECT_EQ(r.exit_status, 1) << r.err;
    EXPECT_TRUE(absl::StrContains(r.out + r.err, fifo + " is a FIFO, not a regular file")) << r.out << r.err;
  }
  ::unlink(fifo.c_str());
  ::rmdir(dir.c_str());
}

// JSON output carries any name: control characters as JSON escapes, bytes that are not UTF-8 replaced (nlohmann
// would otherwise throw out of dump() and abort the command).
TEST(CliTest, JsonOutputSurvivesNamesThatAreNotUtf8) {
  auto r = RunBaregpu({"fw", "info", "/nonexistent/caf\xe9\x1b.bin", "--json"});
  EXPECT_EQ(r.exit_status, 1) << r.err;
  auto json = nlohmann::json::parse(r.out, nullptr, /*allow_exceptions=*/false);
  ASSERT_FALSE(json.is_discarded()) << r.out;
  EXPECT_EQ(json["files"][0]["file"], "/nonexistent/caf\xef\xbf\xbd\x1b.bin") << r.out;
}

}  // namespace
}  // namespace cli
