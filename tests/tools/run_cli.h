// Runs the built `baregpu` binary as a user would, capturing exit status, stdout and stderr. For CLI tests.
#ifndef BAREGPU_TESTS_TOOLS_RUN_CLI_H_
#define BAREGPU_TESTS_TOOLS_RUN_CLI_H_

#include <string>
#include <vector>

namespace cli::testing {

struct CliResult {
  int exit_status = -1;  // -1 when the process did not exit normally (e.g. crashed)
  std::string out;
  std::string err;
};

// Path of build/tools/baregpu, from BAREGPU_BUILD_ROOT (set by meson test).
std::string BaregpuPath();

// Runs baregpu with `args` (no shell), with extra environment assignments "NAME=value".
CliResult RunBaregpu(const std::vector<std::string>& args, const std::vector<std::string>& env = {});

}  // namespace cli::testing

#endif  // BAREGPU_TESTS_TOOLS_RUN_CLI_H_
