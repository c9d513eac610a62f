#include "pci/sim/persistent_state.h"

#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <optional>
#include <string>

#include "absl/strings/match.h"
#include "am/device.h"
#include "am/sim/navi31.h"
#include "base/file.h"
#include "gtest/gtest.h"
#include "pci/open.h"
#include "tests/am/sim/sim_state_dir.h"
#include "tests/base/scoped_env.h"

namespace pci::sim {
namespace {

auto* const kStateDir = am::sim::testing::RegisterSimStateDir();

const std::vector<StateRegion> kRegions = {{"vram", 1 << 20}, {"regs", 64 << 10}};

// A uid no account on a test machine has: the "other user" whose files the tests plant.
constexpr uid_t kOtherUid = 54321;

using ::base::testing::ScopedEnv;

std::string MakeTempDir() {
  char pattern[] = "/tmp/baregpu-state-test-XXXXXX";
  return ::mkdtemp(pattern);
}

void FlipBit(const std::string& path, off_t offset, int bit) {
  int fd = ::open(path.c_str(), O_RDWR);
  ASSERT_GE(fd, 0) << path;
  uint8_t byte = 0;
  ASSERT_EQ(::pread(fd, &byte, 1, offset), 1);
  byte ^= static_cast<uint8_t>(1u << bit);
  ASSERT_EQ(::pwrite(fd, &byte, 1, offset), 1);
  ::close(fd);
}

// Runs `body` in a child process that ends without closing anything (as a killed process does) and waits for it.
template <typename Body>
void InAChildThatDies(Body body) {
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    body();
    ::_exit(0);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
}

TEST(PersistentStateTest, FirstOpenIsColdAndZeroFilled) {
  auto state = PersistentState::Open("sim:test:cold", kRegions);
  ASSERT_TRUE(state.ok()) << state.status();
  EXPECT_TRUE((*state)->cold());
  ASSERT_EQ((*state)->region(0).size(), 1u << 20);
  for (uint8_t b : (*state)->region(1)) ASSERT_EQ(b, 0);
  EXPECT_TRUE(absl::StartsWith((*state)->path_prefix(), kStateDir->dir()));
}

TEST(PersistentStateTest, StateOutlivesTheOpenThatWroteIt) {
  {
    auto state = PersistentState::Open("sim:test:warm", kRegions);
    ASSERT_TRUE(state.ok());
    (*state)->region(0)[12345] = 0xab;
    (*state)->region(1)[7] = 0xcd;
  }
  auto again = PersistentState::Open("sim:test:warm", kRegions);
  ASSERT_TRUE(again.ok());
  EXPECT_FALSE((*again)->cold());
  EXPECT_EQ((*again)->region(0)[12345], 0xab);
  EXPECT_EQ((*again)->region(1)[7], 0xcd);
}

TEST(PersistentStateTest, OneHolderAtATime) {
  auto first = PersistentState::Open("sim:test:busy", kRegions);
  ASSERT_TRUE(first.ok());
  auto second = PersistentState::Open("sim:test:busy", kRegions);
  ASSERT_FALSE(second.ok());
  EXPECT_EQ(second.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_TRUE(absl::StrContains(second.status().message(), std::to_string(::getpid()))) << second.status();
  EXPECT_FALSE(PersistentState::PowerCycle("sim:test:busy").ok());  // no power cycle under a running driver
  first->reset();
  EXPECT_TRUE(PersistentState::Open("sim:test:busy", kRegions).ok());
}

TEST(PersistentStateTest, PowerCycleDiscardsTheState) {
  {
    auto state = PersistentState::Open("sim:test:cycle", kRegions);
    ASSERT_TRUE(state.ok());
    (*state)->region(0)[0] = 1;
  }
  ASSERT_TRUE(PersistentState::PowerCycle("sim:test:cycle").ok());
  auto again = PersistentState::Open("sim:test:cycle", kRegions);
  ASSERT_TRUE(again.ok());
  EXPECT_TRUE((*again)->cold());
  EXPECT_EQ((*again)->region(0)[0], 0);
  EXPECT_TRUE(PersistentState::PowerCycle("sim:test:never-opened").ok());
}

TEST(PersistentStateTest, InstancesAreSeparate) {
  auto a = PersistentState::Open("sim:test:0", kRegions);
  auto b = PersistentState::Open("sim:test:1", kRegions);
  ASSERT_TRUE(a.ok() && b.ok());
  (*a)->region(0)[0] = 5;
  EXPECT_EQ((*b)->region(0)[0], 0);
}

// A region of another size (another configuration, or a truncated file) is not the device's state: it is discarded
// as a power cycle would, and the open says which file and why.
TEST(PersistentStateTest, AStateFileOfTheWrongSizeIsDiscardedAndNamed) {
  { ASSERT_TRUE(PersistentState::Open("sim:test:resized", kRegions).ok()); }
  auto bigger = PersistentState::Open("sim:test:resized", {{"vram", 2 << 20}, {"regs", 64 << 10}});
  ASSERT_TRUE(bigger.ok()) << bigger.status();
  EXPECT_TRUE((*bigger)->cold());
  EXPECT_TRUE(absl::StrContains((*bigger)->discarded(), "test-resized.state")) << (*bigger)->discarded();
  EXPECT_TRUE(absl::StrContains((*bigger)->discarded(), "treated as powered off")) << (*bigger)->discarded();
  bigger->reset();
  ASSERT_EQ(::truncate((kStateDir->dir() + "/test-resized.regs").c_str(), 4096), 0);
  auto truncated = PersistentState::Open("sim:test:resized", {{"vram", 2 << 20}, {"regs", 64 << 10}});
  ASSERT_TRUE(truncated.ok()) << truncated.status();
  EXPECT_TRUE((*truncated)->cold());
  EXPECT_TRUE(absl::StrContains((*truncated)->discarded(), "test-resized.regs has 4096 bytes"))
      << (*truncated)->discarded();
}

// Defect 10 (issue 23): a name is checked where the state path is made, so none reaches outside the directory.
TEST(PersistentStateTest, NamesThatWouldEscapeTheDirectoryAreRefused) {
  for (const char* name : {"sim:navi31:../x", "sim:../../etc/passwd", "sim:navi31:a/b", "sim:", "sim:navi31:", "navi31",
                           "sim:navi31:0:1", "sim:navi31:.."}) {
    auto state = PersistentState::Open(name, kRegions);
    ASSERT_FALSE(state.ok()) << name;
    EXPECT_EQ(state.status().code(), absl::StatusCode::kInvalidArgument) << name;
    EXPECT_TRUE(absl::StrContains(state.status().message(), "not a valid virtual device name")) << state.status();
    EXPECT_EQ(PersistentState::PowerCycle(name).code(), absl::StatusCode::kInvalidArgument) << name;
  }
  EXPECT_EQ(*StateFileBase("sim:navi31:a-1_B"), "navi31-a-1_B");
}

// Defect 2: a state directory that is not the user's own, private one is refused with its owner, mode and the fix.
TEST(PersistentStateTest, AWorldWritableDirectoryIsRefused) {
  const std::string dir = MakeTempDir();
  ASSERT_EQ(::chmod(dir.c_str(), 0777), 0);
  ScopedEnv env("BAREGPU_SIM_DIR", dir);
  auto state = PersistentState::Open("sim:test:open-dir", kRegions);
  ASSERT_FALSE(state.ok());
  EXPECT_EQ(state.status().code(), absl::StatusCode::kPermissionDenied);
  EXPECT_TRUE(absl::StrContains(state.status().message(), "mode 0777")) << state.status();
  EXPECT_TRUE(absl::StrContains(state.status().message(), "BAREGPU_SIM_DIR")) << state.status();
  EXPECT_FALSE(base::PathExists(dir + "/test-open-dir.state"));  // nothing was created in it
  std::system(("rm -rf '" + dir + "'").c_str());
}

TEST(PersistentStateTest, ADirectoryOfAnotherUserIsRefusedOnTheFallbackPath) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to give a directory to another uid";
  // $XDG_RUNTIME_DIR/baregpu-sim planted by another user (the same check guards /dev/shm/baregpu-sim-UID).
  const std::string runtime = MakeTempDir();
  const std::string planted = runtime + "/baregpu-sim";
  ASSERT_EQ(::mkdir(planted.c_str(), 0777), 0);
  ASSERT_EQ(::chmod(planted.c_str(), 0777), 0);
  ASSERT_EQ(::chown(planted.c_str(), kOtherUid, kOtherUid), 0);
  ScopedEnv sim_dir("BAREGPU_SIM_DIR", std::nullopt);
  ScopedEnv xdg("XDG_RUNTIME_DIR", runtime);
  EXPECT_EQ(StateDirectory(), planted);
  auto state = PersistentState::Open("sim:test:planted", kRegions);
  ASSERT_FALSE(state.ok());
  EXPECT_EQ(state.status().code(), absl::StatusCode::kPermissionDenied);
  EXPECT_TRUE(absl::StrContains(state.status().message(), "belongs to uid 54321")) << state.status();
  EXPECT_TRUE(absl::StrContains(state.status().message(), "rm -r " + planted)) << state.status();
  EXPECT_FALSE(base::PathExists(planted + "/test-planted.state"));
  std::system(("rm -rf '" + runtime + "'").c_str());
}

TEST(PersistentStateTest, ASymlinkedDirectoryIsNotFollowed) {
  const std::string target = MakeTempDir();
  const std::string link = target + "-link";
  ASSERT_EQ(::symlink(target.c_str(), link.c_str()), 0);
  ScopedEnv env("BAREGPU_SIM_DIR", link);
  auto state = PersistentState::Open("sim:test:linked-dir", kRegions);
  ASSERT_FALSE(state.ok());
  EXPECT_EQ(state.status().code(), absl::StatusCode::kPermissionDenied);
  EXPECT_TRUE(absl::StrContains(state.status().message(), "symbolic link")) << state.status();
  EXPECT_TRUE(base::ListDirectory(target)->empty());
  ::unlink(link.c_str());
  std::system(("rm -rf '" + target + "'").c_str());
}

// A state file that is a link to one of the user's files is never written through; `sim reset` removes the link.
TEST(PersistentStateTest, ASymlinkedStateFileIsNotFollowed) {
  const std::string victim = kStateDir->dir() + "-victim";
  {
    const int fd = ::open(victim.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    ASSERT_GE(fd, 0);
    ASSERT_EQ(::write(fd, "precious", 8), 8);
    ::close(fd);
  }
  for (const char* file : {"test-linked.state", "test-linked.regs"}) {
    const std::string link = kStateDir->dir() + "/" + file;
    ASSERT_EQ(::symlink(victim.c_str(), link.c_str()), 0);
    auto state = PersistentState::Open("sim:test:linked", kRegions);
    ASSERT_FALSE(state.ok()) << file;
    EXPECT_EQ(state.status().code(), absl::StatusCode::kPermissionDenied);
    EXPECT_TRUE(absl::StrContains(state.status().message(), "symbolic link")) << state.status();
    EXPECT_TRUE(absl::StrContains(state.status().message(), "baregpu sim reset sim:test:linked")) << state.status();
    EXPECT_EQ(*base::ReadFile(victim), "precious");
    ASSERT_TRUE(PersistentState::PowerCycle("sim:test:linked").ok());
    EXPECT_EQ(*base::ReadFile(victim), "precious");
    EXPECT_FALSE(base::PathExists(link));
  }
  EXPECT_TRUE(PersistentState::Open("sim:test:linked", kRegions).ok());
  ::unlink(victim.c_str());
}

TEST(PersistentStateTest, AStateFileOfAnotherUserOrOpenToOthersIsRefused) {
  const std::string vram = kStateDir->dir() + "/test-foreign.vram";
  { ASSERT_TRUE(PersistentState::Open("sim:test:foreign", kRegions).ok()); }
  ASSERT_EQ(::chmod(vram.c_str(), 0666), 0);
  auto open_to_all = PersistentState::Open("sim:test:foreign", kRegions);
  ASSERT_FALSE(open_to_all.ok());
  EXPECT_EQ(open_to_all.status().code(), absl::StatusCode::kPermissionDenied);
  EXPECT_TRUE(absl::StrContains(open_to_all.status().message(), "mode 0666")) << open_to_all.status();
  if (::geteuid() == 0) {
    ASSERT_EQ(::chmod(vram.c_str(), 0600), 0);
    ASSERT_EQ(::chown(vram.c_str(), kOtherUid, kOtherUid), 0);
    auto foreign = PersistentState::Open("sim:test:foreign", kRegions);
    ASSERT_FALSE(foreign.ok());
    EXPECT_TRUE(absl::StrContains(foreign.status().message(), "belongs to uid 54321")) << foreign.status();
    EXPECT_TRUE(absl::StrContains(foreign.status().message(), "baregpu sim reset sim:test:foreign"))
        << foreign.status();
  }
  ASSERT_TRUE(PersistentState::PowerCycle("sim:test:foreign").ok());
  auto again = PersistentState::Open("sim:test:foreign", kRegions);
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_TRUE((*again)->cold());
}

// Defect 9: the lock is on the state itself. Removing any one file leaves a second open facing a held lock; removing
// them all gives it a fresh device, never the holder's.
TEST(PersistentStateTest, RemovingAFileDoesNotHandTheDeviceToASecondProcess) {
  for (const char* file : {"state", "vram", "regs"}) {
    auto holder = PersistentState::Open("sim:test:unlinked", kRegions);
    ASSERT_TRUE(holder.ok()) << holder.status();
    ASSERT_EQ(::unlink((kStateDir->dir() + "/test-unlinked." + file).c_str()), 0);
    auto second = PersistentState::Open("sim:test:unlinked", kRegions);
    ASSERT_FALSE(second.ok()) << file;
    EXPECT_EQ(second.status().code(), absl::StatusCode::kUnavailable) << second.status();
    EXPECT_FALSE(PersistentState::PowerCycle("sim:test:unlinked").ok()) << file;
  }
  auto holder = PersistentState::Open("sim:test:unlinked", kRegions);
  ASSERT_TRUE(holder.ok());
  (*holder)->region(0)[100] = 7;
  for (const char* file : {"state", "vram", "regs"}) {
    ::unlink((kStateDir->dir() + "/test-unlinked." + file).c_str());
  }
  auto fresh = PersistentState::Open("sim:test:unlinked", kRegions);
  ASSERT_TRUE(fresh.ok()) << fresh.status();
  EXPECT_TRUE((*fresh)->cold());
  EXPECT_EQ((*fresh)->region(0)[100], 0);
  (*fresh)->region(0)[100] = 9;
  EXPECT_EQ((*holder)->region(0)[100], 7);  // the holder keeps its device
}

// Defect 7: after a clean close the state is checksummed; a flipped bit is named and the device powers on cold.
TEST(PersistentStateTest, AFlippedBitAfterACleanCloseIsReportedAndTheDeviceIsPoweredOff) {
  {
    auto state = PersistentState::Open("sim:test:flip", kRegions);
    ASSERT_TRUE(state.ok());
    (*state)->region(1)[100] = 0x5a;
  }
  FlipBit(kStateDir->dir() + "/test-flip.regs", 100, 3);
  auto state = PersistentState::Open("sim:test:flip", kRegions);
  ASSERT_TRUE(state.ok()) << state.status();
  EXPECT_TRUE((*state)->cold());
  EXPECT_EQ((*state)->region(1)[100], 0);
  EXPECT_TRUE(absl::StrContains((*state)->discarded(), "test-flip.regs fails its checksum")) << (*state)->discarded();
  EXPECT_TRUE(absl::StrContains((*state)->discarded(), "treated as powered off")) << (*state)->discarded();
  state->reset();
  // A bit in a page that was a hole counts too, and so does the header's own open/close word.
  FlipBit(kStateDir->dir() + "/test-flip.regs", 50000, 0);
  auto hole = PersistentState::Open("sim:test:flip", kRegions);
  ASSERT_TRUE(hole.ok());
  EXPECT_TRUE((*hole)->cold()) << "a flip in a hole went unnoticed";
  hole->reset();
  auto clean = PersistentState::Open("sim:test:flip", kRegions);
  ASSERT_TRUE(clean.ok());
  EXPECT_FALSE((*clean)->cold());
  EXPECT_TRUE((*clean)->discarded().empty()) << (*clean)->discarded();
}

// After an unclean exit the checksum cannot be current: the state is taken as the dead holder left it (NOTES.md).
TEST(PersistentStateTest, TheStateOfAHolderThatDiedIsKept) {
  InAChildThatDies([] {
    auto state = PersistentState::Open("sim:test:died", kRegions);
    if (!state.ok()) ::_exit(1);
    (*state)->region(1)[8] = 0x11;
    ::_exit(0);  // no destructor: the checksums are not written
  });
  auto state = PersistentState::Open("sim:test:died", kRegions);
  ASSERT_TRUE(state.ok()) << state.status();
  EXPECT_FALSE((*state)->cold());
  EXPECT_EQ((*state)->region(1)[8], 0x11);
}

// Defect 7 as the issue saw it: one flipped bit in navi31.model gave "partial boot, all steps ok" and then a
// timeout; now the open names the file, the device is cold and the boot is a full one that works.
TEST(PersistentStateTest, AFlippedModelBitMakesAColdDeviceThatBootsFully) {
  const std::string name = "sim:navi31:flip";
  {
    auto device = am::Device::Open(name);
    ASSERT_TRUE(device.ok()) << device.status();
    ASSERT_TRUE((*device)->Boot().ok());
  }
  const std::string model = kStateDir->dir() + "/navi31-flip.model";
  FlipBit(model, 0, 0);  // the first model block (the loaded-firmware list)
  auto pci = pci::Open(name);
  ASSERT_TRUE(pci.ok()) << pci.status();
  EXPECT_TRUE(static_cast<am::sim::Navi31&>(**pci).cold());
  const std::vector<std::string> notes = (*pci)->TakeDiagnostics();
  ASSERT_FALSE(notes.empty());
  EXPECT_TRUE(absl::StrContains(notes[0], "navi31-flip.model fails its checksum")) << notes[0];
  auto device = am::Device::Open(std::move(*pci));
  ASSERT_TRUE(device.ok()) << device.status();
  ASSERT_TRUE((*device)->Boot().ok());
  EXPECT_EQ((*device)->boot_kind(), am::BootKind::kFull);
}

// Defect 5: a process killed inside a mode1 reset left the registers cleared and the power-on values not yet back
// (RCC_CONFIG_MEMSIZE 0). The next open completes the reset, and the driver's own boot works.
TEST(PersistentStateTest, AResetThatAKilledProcessLeftHalfDoneIsCompletedByTheNextOpen) {
  const std::string name = "sim:navi31:half-reset";
  {
    auto device = am::Device::Open(name);
    ASSERT_TRUE(device.ok()) << device.status();
    ASSERT_TRUE((*device)->Boot().ok());
  }
  const std::vector<StateRegion> regions = am::sim::Navi31::StateRegions(am::sim::Navi31Config::FromEnvironment());
  // What am::sim::Navi31::Mode1Reset has done when the kill lands after it cleared the register file.
  InAChildThatDies([&] {
    auto state = PersistentState::Open(name, regions);
    if (!state.ok()) ::_exit(1);
    (*state)->BeginPowerTransition();
    if (!(*state)->Clear(am::sim::Navi31::kRegisterRegion).ok()) ::_exit(2);
    ::_exit(0);
  });
  auto device = am::Device::Open(name);
  ASSERT_TRUE(device.ok()) << device.status();
  const std::vector<std::string> notes = (*device)->pci().TakeDiagnostics();
  ASSERT_FALSE(notes.empty());
  EXPECT_TRUE(absl::StrContains(notes[0], "died during a power-on or mode1 reset")) << notes[0];
  ASSERT_TRUE((*device)->Boot({.full_reset = true}).ok());
}

// A state the driver cannot recover (registers wiped under a dead holder, outside any reset) names the fix.
TEST(PersistentStateTest, AnUnrecoverableDeviceNamesTheFix) {
  const std::string name = "sim:navi31:wiped";
  { ASSERT_TRUE(pci::Open(name).ok()); }
  const std::vector<StateRegion> regions = am::sim::Navi31::StateRegions(am::sim::Navi31Config::FromEnvironment());
  InAChildThatDies([&] {
    auto state = PersistentState::Open(name, regions);
    if (!state.ok() || !(*state)->Clear(am::sim::Navi31::kRegisterRegion).ok()) ::_exit(1);
    ::_exit(0);
  });
  auto device = am::Device::Open(name);
  ASSERT_FALSE(device.ok());
  EXPECT_TRUE(absl::StrContains(device.status().message(), "`baregpu sim reset sim:navi31:wiped`")) << device.status();
  ASSERT_TRUE(PersistentState::PowerCycle(name).ok());
  EXPECT_TRUE(am::Device::Open(name).ok());
}

}  // namespace
}  // namespace pci::sim
