// BAREGPU_TRACE for a library client: a child process opens a device through the C API with the variable set, and
// its stderr holds the decoded register or packet trace (or, for an unknown entry, hcq_device_open fails naming the
// variable).
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
// With `work`, the child also runs one bound compute queue (submitted as an indirect buffer): a memory barrier and a
// signal, waited for.
ChildResult OpenInChild(const std::string& device, const std::string& trace, bool work = false) {
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
    if (work) {
      hcq_queue* queue = nullptr;
      hcq_signal* signal = nullptr;
      if (hcq_queue_new_compute(dev, &queue) != HCQ_OK || hcq_signal_new(dev, 0, &signal) != HCQ_OK) ::_exit(4);
      hcq_queue_memory_barrier(queue);
      hcq_queue_signal(queue, signal, 1);
      if (hcq_queue_bind(queue) != HCQ_OK || hcq_queue_submit(queue, nullptr, 0) != HCQ_OK ||
          hcq_signal_wait(signal, 1, 10'000) != HCQ_OK) {
        std::fprintf(stderr, "work failed: %s\n", hcq_last_error());
        ::_exit(5);
      }
      hcq_signal_free(signal);
      hcq_queue_free(queue);
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

// Every packet given to a ring, decoded: the bound queue's INDIRECT_BUFFER on the ring, then the IB's own packets,
// registers by name (the HDP flush's write-wait names NBIO's registers).
TEST(TraceEnvTest, PacketsTracesEveryRingWriteWithItsIndirectBuffer) {
  ChildResult r = OpenInChild("sim:navi31:trace-packets", "packets", /*work=*/true);
  ASSERT_EQ(r.exit_status, 0) << r.err;
  EXPECT_TRUE(absl::StrContains(r.err, "== sim:navi31:trace-packets: compute queue (MEC1 pipe 0 queue 0) at "))
      << r.err.substr(0, 4000);
  EXPECT_TRUE(absl::StrContains(r.err, "] INDIRECT_BUFFER ")) << r.err.substr(0, 4000);
  EXPECT_TRUE(absl::StrContains(r.err, "    indirect buffer at 0x")) << r.err.substr(0, 4000);
  EXPECT_TRUE(absl::StrContains(r.err, "      [ib     0] ")) << r.err.substr(0, 4000);
  EXPECT_TRUE(absl::StrContains(r.err, "] RELEASE_MEM ")) << r.err.substr(0, 4000);
  EXPECT_TRUE(absl::StrContains(r.err, "reg BIF_BX_PF0_GPU_HDP_FLUSH_DONE after writing BIF_BX_PF0_GPU_HDP_FLUSH_REQ"))
      << r.err.substr(0, 4000);
  EXPECT_FALSE(absl::StrContains(r.err, "IH_RB_CNTL")) << "packets only: no register trace";
}

TEST(TraceEnvTest, WithoutTheVariableNothingIsTraced) {
  ChildResult r = OpenInChild("sim:navi31:trace-env-off", "", /*work=*/true);
  ASSERT_EQ(r.exit_status, 0) << r.err;
  EXPECT_FALSE(absl::StrContains(r.err, "IH_RB_CNTL")) << r.err.substr(0, 2000);
  EXPECT_FALSE(absl::StrContains(r.err, "RELEASE_MEM")) << r.err.substr(0, 2000);
}

TEST(TraceEnvTest, AnUnknownEntryFailsTheOpenNamingTheVariableAndTheAcceptedValues) {
  ChildResult r = OpenInChild("sim:navi31:trace-env-bad", "regs,everything");
  EXPECT_EQ(r.exit_status, 3) << r.err;
  EXPECT_TRUE(absl::StrContains(
      r.err,
      "BAREGPU_TRACE=regs,everything: unknown entry everything; accepted: regs (every register access, "
      "decoded), packets"))
      << r.err;
}

}  // namespace
