// BAREGPU_TRACE for a library client: a child process opens a device through the C API with the variable set, and
// its stderr holds the decoded register trace (or, for an unknown entry, hcq_device_open fails naming the variable).
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>

#include "absl/strings/match.h"
#include "gtest/gtest.h"
#include "hcq/hcq.h"
#include "tests/am/sim/sim_state_dir.h"

namespace {

auto* const kStateDir = am::sim::testing::RegisterSimStateDir();

struct ChildResult {
  int exit_status = -1;
  std::string err;
};

// Forks; the child sets BAREGPU_TRACE=`trace`, sends stderr to a file, opens and closes `device` with the C API and
// exits 0 on success, 3 on failure (after printing hcq_last_error()). No device is open in the parent, so the child
// inherits no engine threads.
ChildResult OpenInChild(const std::string& device, const std::string& trace) {
  // Per process: the test runs once per firmware set, side by side, in one TempDir.
  const std::string err_path = ::testing::TempDir() + "/trace_env." + std::to_string(::getpid()) + ".err";
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::setenv("BAREGPU_TRACE", trace.c_str(), 1);
    const int fd = ::open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (fd < 0 || ::dup2(fd, STDERR_FILENO) < 0) ::_exit(2);
    hcq_device* dev = nullptr;
    if (hcq_device_open(device.c_str(), &dev) != HCQ_OK) {
      std::fprintf(stderr, "open failed: %s\n", hcq_last_error());
      std::fflush(stderr);
      ::_exit(3);
    }
    hcq_device_close(dev);
    std::fflush(stderr);
    ::_exit(0);
  }
  ChildResult result;
  int status = 0;
  if (pid < 0 || ::waitpid(pid, &status, 0) != pid) return result;
  result.exit_status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  std::ifstream in(err_path);
  std::stringstream text;
  text << in.rdbuf();
  result.err = text.str();
  ::unlink(err_path.c_str());
  return result;
}

TEST(TraceEnvTest, RegsTracesEveryRegisterAccessToStderrByBootStep) {
  ChildResult r = OpenInChild("sim:navi31:trace-env", "regs");
  ASSERT_EQ(r.exit_status, 0) << r.err;
  EXPECT_TRUE(absl::StrContains(r.err, "== sim:navi31:trace-env: gmc init_hw\n")) << r.err.substr(0, 2000);
  EXPECT_TRUE(absl::StrContains(r.err, "\nW IH_RB_CNTL = 0x")) << r.err.substr(0, 2000);
  EXPECT_TRUE(absl::StrContains(r.err, "R MMMC_VM_FB_LOCATION_BASE = 0x00008000")) << r.err.substr(0, 2000);
}

TEST(TraceEnvTest, WithoutTheVariableNothingIsTraced) {
  ChildResult r = OpenInChild("sim:navi31:trace-env-off", "");
  ASSERT_EQ(r.exit_status, 0) << r.err;
  EXPECT_FALSE(absl::StrContains(r.err, "IH_RB_CNTL")) << r.err.substr(0, 2000);
}

TEST(TraceEnvTest, AnUnknownEntryFailsTheOpenNamingTheVariableAndTheAcceptedValues) {
  ChildResult r = OpenInChild("sim:navi31:trace-env-bad", "regs,everything");
  EXPECT_EQ(r.exit_status, 3) << r.err;
  EXPECT_TRUE(absl::StrContains(r.err, "BAREGPU_TRACE=regs,everything: unknown entry everything; accepted: regs"))
      << r.err;
}

}  // namespace
