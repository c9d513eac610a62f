// Issue 23 (defect 5): a process killed with SIGKILL at any point of cold boot, partial boot, `boot --reset` or a
// running workload leaves a device that the driver's own paths bring back (`baregpu boot`, and `boot --reset` if that
// fails) — never `baregpu sim reset`. Each try kills at a pseudo-random moment (fixed seed), recovers, and checks
// the recovered device with an SDMA copy.
#include <poll.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "am/device.h"
#include "am/memory_manager.h"
#include "am/sdma.h"
#include "gtest/gtest.h"
#include "pci/sim/persistent_state.h"
#include "tests/am/sim/sim_state_dir.h"
#include "tests/stress/cli_process.h"
#include "tests/stress/stress_report.h"

namespace {

using std::chrono::microseconds;
using std::chrono::milliseconds;

auto* const kStateDir = am::sim::testing::RegisterSimStateDir();

constexpr uint64_t kCopyBytes = 64 << 10;
constexpr milliseconds kCommandTimeout = std::chrono::seconds(60);  // a boot with a mode1 reset takes ~0.6 s

// One SDMA copy through a booted device; 0 when the copy arrived. Runs in a forked child, so the test process never
// holds a device (and has no threads when it forks).
int CopyOnce(const std::string& device_name, bool loop_forever, int started_fd) {
  auto device = am::Device::Open(device_name);
  if (!device.ok() || !(*device)->Boot().ok()) return 10;
  am::MemoryManager& memory = (*device)->memory();
  auto source = memory.AllocVram(kCopyBytes, 4096);
  auto destination = memory.AllocVram(kCopyBytes, 4096);
  if (!source.ok() || !destination.ok()) return 11;
  std::span<uint8_t> from = *memory.CpuView(*source, kCopyBytes);
  std::span<uint8_t> to = *memory.CpuView(*destination, kCopyBytes);
  for (uint32_t round = 1;; ++round) {
    std::memset(from.data(), static_cast<int>(round & 0xff), kCopyBytes);
    std::memset(to.data(), 0, kCopyBytes);
    am::Sdma& sdma = (*device)->sdma();
    if (!sdma.Copy((*device)->McAddress(*destination), (*device)->McAddress(*source), kCopyBytes).ok()) return 12;
    if (!sdma.WaitIdle().ok()) return 13;
    if (std::memcmp(from.data(), to.data(), kCopyBytes) != 0) return 14;
    if (started_fd >= 0 && round == 1) {
      const char byte = 1;
      if (::write(started_fd, &byte, 1) != 1) return 15;
    }
    if (!loop_forever) return 0;
  }
}

pid_t ForkCopy(const std::string& device, bool loop_forever, int started_fd) {
  const pid_t pid = ::fork();
  if (pid == 0) ::_exit(CopyOnce(device, loop_forever, started_fd));
  return pid;
}

struct Tally {
  uint64_t tried = 0;
  uint64_t survived = 0;
  uint64_t needed_reset = 0;  // `boot` failed, `boot --reset` recovered
  std::vector<std::string> failures;
};

// After a kill: the driver's paths only, then a copy on the recovered device. Since issue 23's PCI reset path, no
// state a kill leaves needs `baregpu sim reset` (the PSP's firmware started without the SMU's, the bootloader
// part-way through its components: Device::Boot resets those itself).
void Recover(const std::string& device, Tally& tally) {
  ++tally.tried;
  stress::Outcome boot = stress::RunBaregpu({"boot", device}, kCommandTimeout);
  if (boot.exit_status != 0) {
    stress::Outcome reset = stress::RunBaregpu({"boot", "--reset", device}, kCommandTimeout);
    if (reset.exit_status != 0) {
      tally.failures.push_back(absl::StrCat(device, ": boot: ", boot.err, " boot --reset: ", reset.err));
      // So that the next try starts from a working device.
      (void)stress::RunBaregpu({"sim", "reset", device});
      return;
    }
    ++tally.needed_reset;
  }
  stress::Child copy(ForkCopy(device, /*loop_forever=*/false, -1));
  stress::Outcome copied = copy.Wait(kCommandTimeout);
  if (copied.exit_status != 0) {
    tally.failures.push_back(absl::StrCat(device, ": recovered, but a copy failed (status ", copied.exit_status,
                                          copied.hung ? ", hung)" : ")"));
    return;
  }
  ++tally.survived;
}

void Finish(const std::string& what, const Tally& tally) {
  stress::Report(what, tally.tried, tally.survived, tally.tried - tally.survived);
  std::printf("  (%llu of them needed `boot --reset` after `boot` failed)\n",
              static_cast<unsigned long long>(tally.needed_reset));
  for (const std::string& failure : tally.failures) ADD_FAILURE() << failure;
  EXPECT_EQ(tally.survived, tally.tried);
}

// Kills a `baregpu ARGS` started now after `delay`.
void KillCli(const std::vector<std::string>& args, microseconds delay) {
  std::vector<std::string> argv = {stress::BaregpuPath()};
  argv.insert(argv.end(), args.begin(), args.end());
  stress::Child victim(argv);
  std::this_thread::sleep_for(delay);  // the kill point is the thing under test
  victim.Kill();
  (void)victim.Wait(std::chrono::seconds(10));
}

microseconds Uniform(std::mt19937_64& rng, microseconds max) {
  return microseconds(std::uniform_int_distribution<int64_t>(0, max.count())(rng));
}

TEST(KillStress, ColdBoot) {
  std::mt19937_64 rng(2301);  // fixed seed: every run kills at the same offsets
  Tally tally;
  const uint64_t tries = 8 * stress::Scale();
  for (uint64_t i = 0; i < tries; ++i) {
    const std::string device = absl::StrCat("sim:navi31:kill-cold-", i);  // never opened: the boot is cold
    KillCli({"boot", device}, Uniform(rng, milliseconds(120)));
    Recover(device, tally);
    (void)pci::sim::PersistentState::PowerCycle(device);  // clean-up of the test's files, not a recovery
  }
  Finish("kill -9 during cold boot, then boot", tally);
}

TEST(KillStress, PartialBoot) {
  std::mt19937_64 rng(2302);
  const std::string device = "sim:navi31:kill-partial";
  ASSERT_EQ(stress::RunBaregpu({"boot", device}).exit_status, 0);
  Tally tally;
  const uint64_t tries = 8 * stress::Scale();
  for (uint64_t i = 0; i < tries; ++i) {
    KillCli({"boot", device}, Uniform(rng, milliseconds(80)));
    Recover(device, tally);
  }
  Finish("kill -9 during partial boot, then boot", tally);
}

TEST(KillStress, BootWithReset) {
  std::mt19937_64 rng(2303);
  const std::string device = "sim:navi31:kill-reset";
  ASSERT_EQ(stress::RunBaregpu({"boot", device}).exit_status, 0);
  Tally tally;
  const uint64_t tries = 12 * stress::Scale();
  for (uint64_t i = 0; i < tries; ++i) {
    // Half the kills in the first 60 ms, where the model's mode1 reset runs (issue 23 saw 4 of 156 kills land
    // there), the rest anywhere in the ~600 ms command (the 500 ms wait after the reset, the full boot).
    KillCli({"boot", "--reset", device}, Uniform(rng, i % 2 == 0 ? milliseconds(60) : milliseconds(650)));
    Recover(device, tally);
  }
  Finish("kill -9 during boot --reset, then boot", tally);
}

TEST(KillStress, RunningWorkload) {
  std::mt19937_64 rng(2304);
  const std::string device = "sim:navi31:kill-work";
  Tally tally;
  const uint64_t tries = 8 * stress::Scale();
  for (uint64_t i = 0; i < tries; ++i) {
    int started[2];
    ASSERT_EQ(::pipe(started), 0);
    {
      stress::Child worker(ForkCopy(device, /*loop_forever=*/true, started[1]));
      ::close(started[1]);
      pollfd ready = {started[0], POLLIN, 0};
      const bool running = ::poll(&ready, 1, 30000) == 1;  // bounded: the worker's boot takes well under a second
      ::close(started[0]);
      if (!running) {
        ADD_FAILURE() << "try " << i << ": the workload did not start";
        continue;
      }
      std::this_thread::sleep_for(Uniform(rng, milliseconds(20)));  // the kill point is the thing under test
      worker.Kill();
      (void)worker.Wait(std::chrono::seconds(10));
    }
    Recover(device, tally);
  }
  Finish("kill -9 during an SDMA copy loop, then boot", tally);
}

}  // namespace
