// Runs the built `baregpu` binary as a user would, capturing exit status, stdout and stderr. For CLI tests.
#ifndef BAREGPU_TESTS_TOOLS_RUN_CLI_H_
#define BAREGPU_TESTS_TOOLS_RUN_CLI_H_

#include <chrono>
#include <string>
#include <vector>

namespace cli::testing {

struct CliResult {
  int exit_status = -1;  // -1 when the process did not exit normally (e.g. crashed, or killed for its time)
  bool timed_out = false;
  std::string out;
  std::string err;
};

// Path of build/tools/baregpu, from BAREGPU_BUILD_ROOT (set by meson test).
std::string BaregpuPath();

// Under meson test's 300 s per binary: a command that blocks is killed here, and the test that ran it fails
// with timed_out set instead of the whole binary timing out without saying which command hung.
inline constexpr std::chrono::seconds kDefaultCliTimeout{120};

// Runs baregpu with `args` (no shell), with extra environment assignments "NAME=value". Past `timeout` the process
// is killed (SIGKILL) and the result says timed_out.
CliResult RunBaregpu(const std::vector<std::string>& args, const std::vector<std::string>& env = {},
                     std::chrono::milliseconds timeout = kDefaultCliTimeout);

}  // namespace cli::testing

#endif  // BAREGPU_TESTS_TOOLS_RUN_CLI_H_
