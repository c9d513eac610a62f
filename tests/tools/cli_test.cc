// The baregpu command line as a user meets it: exit codes, help, errors on one line, JSON that parses.
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>

#include "absl/strings/match.h"
#include "absl/strings/str_join.h"
#include "gtest/gtest.h"
#include "tests/am/sim/sim_state_dir.h"
#include "tests/firmware/nv/nv_firmware.h"
#include "tests/tools/run_cli.h"

namespace cli {
namespace {

using ::cli::testing::RunBaregpu;

auto* const kStateDir = am::sim::testing::RegisterSimStateDir();

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

// Logging is off unless asked for; -v shows the boot steps, -vv (or BAREGPU_LOG=debug) their starts too.
TEST(CliTest, VerboseLogsToStderrAndIsOffByDefault) {
  auto quiet = RunBaregpu({"boot", "sim:navi31:log"});
  ASSERT_EQ(quiet.exit_status, 0) << quiet.err;
  EXPECT_FALSE(absl::StrContains(quiet.err, "baregpu info:")) << quiet.err;
  auto verbose = RunBaregpu({"-v", "boot", "sim:navi31:log", "--reset"});
  ASSERT_EQ(verbose.exit_status, 0) << verbose.err;
  EXPECT_TRUE(absl::StrContains(verbose.err, "baregpu info: sim:navi31:log: opened (virtual backend)")) << verbose.err;
  EXPECT_TRUE(absl::StrContains(verbose.err, "baregpu info: sim:navi31:log: gmc init_hw: ok in ")) << verbose.err;
  EXPECT_FALSE(absl::StrContains(verbose.err, "baregpu debug:")) << verbose.err;
  EXPECT_FALSE(absl::StrContains(verbose.out, "baregpu info:"));  // stdout stays the command's
  auto debug = RunBaregpu({"boot", "sim:navi31:log", "-vv"});
  EXPECT_TRUE(absl::StrContains(debug.err, "baregpu debug: sim:navi31:log: psp init_sw: start")) << debug.err;
  auto env = RunBaregpu({"boot", "sim:navi31:log"}, {"BAREGPU_LOG=debug"});
  EXPECT_TRUE(absl::StrContains(env.err, "baregpu debug: ")) << env.err;
  auto bad = RunBaregpu({"boot", "sim:navi31:log"}, {"BAREGPU_LOG=loud"});
  EXPECT_EQ(bad.exit_status, 0) << bad.err;
  EXPECT_TRUE(absl::StrContains(bad.err, "BAREGPU_LOG: log level loud is not one of off, error, warn, info, debug"))
      << bad.err;
}

struct ShellResult {
  int exit_status;
  std::string err;
};

// Runs `command` with sh, its stderr captured (for redirections and setpriv, which RunBaregpu does not do).
ShellResult Shell(const std::string& command) {
  const std::string err_path = ::testing::TempDir() + "/shell.err";
  const int status = std::system((command + " 2> '" + err_path + "'").c_str());
  std::ifstream in(err_path);
  std::stringstream err;
  err << in.rdbuf();
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, err.str()};
}

TEST(CliTest, OutputThatCannotBeWrittenIsAnError) {
  auto r = Shell(cli::testing::BaregpuPath() + " list > /dev/full");
  EXPECT_EQ(r.exit_status, 1);
  EXPECT_TRUE(absl::StartsWith(r.err, "error: writing the output failed: No space left on device")) << r.err;
}

TEST(CliTest, MissingFirmwarePathEntriesAreReported) {
  auto r = RunBaregpu({"boot", "sim:navi31:fw-path"}, {"BAREGPU_FIRMWARE_PATH=/nonexistent-baregpu-firmware"});
  EXPECT_EQ(r.exit_status, 0) << r.err;  // the virtual firmware still boots it
  EXPECT_TRUE(absl::StrContains(
      r.err, "note: BAREGPU_FIRMWARE_PATH entry /nonexistent-baregpu-firmware does not exist; it is skipped"))
      << r.err;
}

// A state directory the user cannot open names its owner and the fix (the tests run as root, which no mode stops:
// the command runs as nobody through setpriv).
TEST(CliTest, AStateDirectoryOfAnotherUserNamesItsOwnerAndTheFix) {
  if (::geteuid() != 0 || Shell("command -v setpriv > /dev/null").exit_status != 0) {
    GTEST_SKIP() << "needs root and setpriv to run baregpu as another user";
  }
  const std::string dir = ::testing::TempDir() + "/eacces";
  ASSERT_EQ(std::system(("rm -rf '" + dir + "' && mkdir -p '" + dir + "/state' && chmod 755 '" + dir +
                         "' && chmod 700 '" + dir + "/state'")
                            .c_str()),
            0);
  const std::string as_nobody = "setpriv --reuid=65534 --regid=65534 --clear-groups env BAREGPU_SIM_DIR=";
  auto theirs = Shell(as_nobody + dir + "/state " + cli::testing::BaregpuPath() + " info sim:navi31:eacces");
  EXPECT_EQ(theirs.exit_status, 1);
  EXPECT_TRUE(absl::StrContains(theirs.err, "belongs to uid 0 (root)")) << theirs.err;
  EXPECT_TRUE(absl::StrContains(theirs.err, "set BAREGPU_SIM_DIR to a directory of your own")) << theirs.err;
  auto create = Shell(as_nobody + dir + "/new " + cli::testing::BaregpuPath() + " info sim:navi31:eacces");
  EXPECT_EQ(create.exit_status, 1);
  EXPECT_TRUE(absl::StrContains(create.err, dir + " belongs to uid 0 (root) (mode 0755) and you (uid 65534"))
      << create.err;
}

// An installed tree (here: the binary and the virtual firmware copied into PREFIX/bin and PREFIX/share, as
// `meson install --destdir` lays them out) boots the virtual GPU from its own files.
TEST(CliTest, AMovedInstallFindsItsVirtualFirmware) {
  const std::string build = std::getenv("BAREGPU_BUILD_ROOT");
  std::string tmp = ::testing::TempDir();
  if (!tmp.empty() && tmp.back() == '/') tmp.pop_back();  // messages name the normalised path
  const std::string prefix = tmp + "/installed/usr/local";
  ASSERT_EQ(
      std::system(("rm -rf '" + prefix + "' && mkdir -p '" + prefix + "/bin' '" + prefix +
                   "/share/baregpu/firmware' && cp '" + cli::testing::BaregpuPath() + "' '" + prefix +
                   "/bin/' && cp -r '" + build + "/firmware/virtual/amdgpu' '" + prefix + "/share/baregpu/firmware/'")
                      .c_str()),
      0);
  auto r = Shell("cd / && '" + prefix + "/bin/baregpu' fw need sim:navi31:installed > /dev/null && '" + prefix +
                 "/bin/baregpu' boot sim:navi31:installed > /dev/null");
  EXPECT_EQ(r.exit_status, 0) << r.err;
  // Without the installed copy of one file the boot fails naming the installed path: it was the one in use.
  ASSERT_EQ(std::remove((prefix + "/share/baregpu/firmware/amdgpu/psp_13_0_0_sos.bin").c_str()), 0);
  auto missing = Shell("'" + prefix + "/bin/baregpu' boot sim:navi31:installed-2 > /dev/null");
  EXPECT_EQ(missing.exit_status, 1);
  EXPECT_TRUE(absl::StrContains(missing.err, prefix + "/share/baregpu/firmware/amdgpu/psp_13_0_0_sos.bin"))
      << missing.err;
}

// `baregpu completion bash` is valid bash that completes command names and a command's options.
TEST(CliTest, BashCompletionCompletesCommandsAndOptions) {
  const std::string script = ::testing::TempDir() + "/baregpu.bash";
  ASSERT_EQ(std::system((cli::testing::BaregpuPath() + " completion bash > '" + script + "'").c_str()), 0);
  EXPECT_EQ(Shell("bash -n '" + script + "'").exit_status, 0);
  // Completes the words given after `baregpu` with the cursor on the last one; prints the candidates.
  const auto complete = [&](const std::string& words) {
    const std::string out = ::testing::TempDir() + "/completion.out";
    const std::string command = "bash -c 'source \"" + script + "\"; COMP_WORDS=(baregpu " + words +
                                "); COMP_CWORD=$((${#COMP_WORDS[@]} - 1)); _baregpu; echo \"${COMPREPLY[*]}\"' > '" +
                                out + "'";
    EXPECT_EQ(Shell(command).exit_status, 0) << command;
    std::ifstream in(out);
    std::string line;
    std::getline(in, line);
    return line;
  };
  EXPECT_EQ(complete("bo"), "boot");
  EXPECT_EQ(complete("-v re"), "regs");
  EXPECT_EQ(complete("boot sim:navi31 --tr"), "--trace=");
  EXPECT_EQ(complete("regs find --by"), "--byte");
  EXPECT_EQ(Shell(cli::testing::BaregpuPath() + " completion zsh > /dev/null").exit_status, 2);
}

// `baregpu help --man` is a man(7) page groff accepts without a warning, naming every command.
TEST(CliTest, ManPageIsValidRoffWithEveryCommand) {
  const std::string page = ::testing::TempDir() + "/baregpu.1";
  ASSERT_EQ(std::system((cli::testing::BaregpuPath() + " help --man > '" + page + "'").c_str()), 0);
  if (Shell("command -v groff > /dev/null").exit_status != 0) GTEST_SKIP() << "groff is not installed";
  auto check = Shell("groff -man -Tutf8 -ww -z '" + page + "'");
  EXPECT_EQ(check.exit_status, 0);
  EXPECT_TRUE(check.err.empty()) << check.err;
  const std::string text = ::testing::TempDir() + "/baregpu.txt";
  ASSERT_EQ(Shell("groff -man -Tascii -P-cbou '" + page + "' > '" + text + "'").exit_status, 0);
  std::ifstream in(text);
  std::stringstream rendered;
  rendered << in.rdbuf();
  for (const char* expected : {"BAREGPU(1)", "boot", "regs", "completion", "--trace=VALUE", "BAREGPU_TRACE"}) {
    EXPECT_TRUE(absl::StrContains(rendered.str(), expected)) << expected;
  }
}

// The commands `baregpu --help` lists, and the --help text of each.
std::map<std::string, std::string> CommandHelps() {
  std::map<std::string, std::string> helps;
  const std::string top = RunBaregpu({"--help"}).out;
  std::istringstream lines(top.substr(top.find("commands:")));
  std::string line;
  std::getline(lines, line);
  while (std::getline(lines, line) && absl::StartsWith(line, "  ")) {
    std::istringstream words(line);
    std::string name;
    words >> name;
    helps[name] = RunBaregpu({name, "--help"}).out;
  }
  return helps;
}

// docs/json.md: every --json document parses and carries "schema": "baregpu.<command>[.<action>]/<version>" first.
// A command that takes --json must have an entry here (and a section in docs/json.md).
TEST(CliTest, EveryJsonDocumentParsesAndNamesItsSchema) {
  const std::string build = std::getenv("BAREGPU_BUILD_ROOT");
  const std::string firmware = build + "/firmware/virtual/amdgpu/psp_13_0_0_sos.bin";
  const std::string code_object = build + "/tests/am/sim/isa/kernels/vector_add-O2.co";
  ASSERT_EQ(RunBaregpu({"boot", "sim:navi31:schema"}).exit_status, 0);
  struct Case {
    std::vector<std::string> args;
    std::string schema;
  };
  const std::map<std::string, std::vector<Case>> cases = {
      {"list", {{{"list"}, "baregpu.list/1"}}},
      {"info", {{{"info", "sim:navi31:schema"}, "baregpu.info/1"}}},
      {"boot", {{{"boot", "sim:navi31:schema"}, "baregpu.boot/1"}}},
      {"fw",
       {{{"fw", "info", firmware}, "baregpu.fw.info/1"}, {{"fw", "need", "sim:navi31:schema"}, "baregpu.fw.need/1"}}},
      {"regs",
       {{{"regs", "find", "IH_RB_CNTL"}, "baregpu.regs.find/1"},
        {{"regs", "find", "0x28e8"}, "baregpu.regs.find-address/1"},
        {{"regs", "decode", "IH_RB_CNTL", "0x1"}, "baregpu.regs.decode/1"},
        {{"regs", "find", "MAILBOX", "--chip=ga102"}, "baregpu.regs.nv-find/1"},
        {{"regs", "decode", "--chip=ad102", "NV_PMC_BOOT_0", "0x0"}, "baregpu.regs.nv-decode/1"},
        {{"regs", "sim:navi31:schema", "read", "IH_RB_CNTL"}, "baregpu.regs.read/1"},
        {{"regs", "sim:navi31:schema", "write", "SCRATCH_REG3=0x5"}, "baregpu.regs.write/1"},
        {{"regs", "sim:navi31:schema", "dump", "hdp"}, "baregpu.regs.dump/1"},
        {{"regs", "sim:ad102:schema", "read", "NV_PMC_BOOT_42"}, "baregpu.regs.nv-access/1"}}},
      {"ih", {{{"ih", "sim:navi31:schema"}, "baregpu.ih/1"}}},
      {"pt", {{{"pt", "sim:navi31:schema", "walk", "0x0"}, "baregpu.pt/1"}}},
      {"mem",
       {{{"mem", "sim:navi31:schema", "read", "--phys=0x0", "--bytes=16"}, "baregpu.mem.read/1"},
        {{"mem", "sim:navi31:schema", "write", "--phys=0x0", "0x0", "--force"}, "baregpu.mem.write/1"}}},
      {"co", {{{"co", code_object}, "baregpu.co/1"}}},
      {"sim", {{{"sim", "reset", "sim:navi31:schema-reset"}, "baregpu.sim/1"}}},
      {"rings", {{{"rings", "sim:navi31:schema"}, "baregpu.rings/1"}}},
      {"waves", {{{"waves", "sim:navi31:schema"}, "baregpu.waves/1"}}},
      {"smi", {{{"smi", "sim:navi31:schema"}, "baregpu.smi/1"}}},
  };
  for (const auto& [name, help] : CommandHelps()) {
    if (!absl::StrContains(help, "--json")) continue;
    auto it = cases.find(name);
    ASSERT_NE(it, cases.end()) << "'" << name << "' takes --json: add it to this test's table and docs/json.md";
    for (const Case& c : it->second) {
      std::vector<std::string> args = c.args;
      args.push_back("--json");
      auto r = RunBaregpu(args);
      EXPECT_EQ(r.exit_status, 0) << absl::StrJoin(args, " ") << ": " << r.err;
      auto json = nlohmann::ordered_json::parse(r.out, nullptr, /*allow_exceptions=*/false);
      ASSERT_FALSE(json.is_discarded()) << absl::StrJoin(args, " ") << ": " << r.out;
      ASSERT_TRUE(json.is_object());
      EXPECT_EQ(json.begin().key(), "schema") << absl::StrJoin(args, " ");
      EXPECT_EQ(json["schema"], c.schema) << absl::StrJoin(args, " ");
    }
  }
  // The NVIDIA shapes of boot and info, with the real GSP-RM files when they were fetched (tools/fetch_firmware.sh).
  const std::string nvidia = firmware::nv::testing::NvidiaFirmwareRoot();
  if (nvidia.empty()) return;
  ::setenv("BAREGPU_FIRMWARE_PATH", nvidia.c_str(), 1);
  for (const Case& c : std::vector<Case>{{{"boot", "sim:ad102:schema", "--json"}, "baregpu.boot.nv/1"},
                                         {{"info", "sim:ad102:schema", "--json"}, "baregpu.info.nv/1"}}) {
    auto r = RunBaregpu(c.args);
    EXPECT_EQ(r.exit_status, 0) << absl::StrJoin(c.args, " ") << ": " << r.err;
    auto json = nlohmann::ordered_json::parse(r.out, nullptr, /*allow_exceptions=*/false);
    ASSERT_FALSE(json.is_discarded()) << absl::StrJoin(c.args, " ") << ": " << r.out;
    EXPECT_EQ(json.begin().key(), "schema") << absl::StrJoin(c.args, " ");
    EXPECT_EQ(json["schema"], c.schema) << absl::StrJoin(c.args, " ");
  }
  ::unsetenv("BAREGPU_FIRMWARE_PATH");
}

}  // namespace
}  // namespace cli
