// Issue 23 (defect 2): hostile state directories and files. A directory or file of another user, one that others may
// write, a symbolic link, a FIFO: `baregpu boot` refuses each with a message naming the owner or mode and the fix,
// touches nothing it points at, and the fix it names works. Runs as root (files are given to another uid with
// chown; the CLI runs as that uid with setpriv); skips without root.
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "tests/am/sim/sim_state_dir.h"
#include "tests/stress/cli_process.h"
#include "tests/stress/stress_report.h"

namespace {

auto* const kStateDir = am::sim::testing::RegisterSimStateDir();

constexpr uid_t kOther = 54321;  // no account: the "other user"
constexpr char kVictimText[] = "the victim's file";

std::string MakeTempDir(const char* tag) {
  std::string pattern = absl::StrCat("/tmp/baregpu-perm-", tag, "-XXXXXX");
  return ::mkdtemp(pattern.data());
}

void WriteText(const std::string& path, const std::string& text) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  ASSERT_GE(fd, 0) << path;
  ASSERT_EQ(::write(fd, text.data(), text.size()), static_cast<ssize_t>(text.size()));
  ::close(fd);
}

std::string ReadText(const std::string& path) {
  char buffer[256] = {};
  const int fd = ::open(path.c_str(), O_RDONLY);
  if (fd < 0) return "";
  const ssize_t n = ::read(fd, buffer, sizeof(buffer) - 1);
  ::close(fd);
  return n > 0 ? std::string(buffer, static_cast<size_t>(n)) : "";
}

void RemoveTree(const std::string& path) { std::system(("rm -rf '" + path + "'").c_str()); }

class Tally {
 public:
  // `ok` is the case's verdict; a failing case is reported with `detail`.
  void Count(const std::string& label, bool ok, const std::string& detail) {
    ++tried_;
    if (ok) {
      ++survived_;
    } else {
      ADD_FAILURE() << label << ": " << detail;
    }
  }
  void Finish(const std::string& what) {
    stress::Report(what, tried_, survived_, tried_ - survived_);
    EXPECT_EQ(survived_, tried_);
  }

 private:
  uint64_t tried_ = 0;
  uint64_t survived_ = 0;
};

// A refusal must name `must_name` and the fix, and leave the victim file as it was.
bool CleanRefusal(const stress::Outcome& boot, const std::string& must_name, absl::string_view fix) {
  return !boot.hung && boot.exit_status == 1 && absl::StrContains(boot.err, must_name) &&
         absl::StrContains(boot.err, fix);
}

class PermissionsStress : public ::testing::Test {
 protected:
  void SetUp() override {
    if (::geteuid() != 0) GTEST_SKIP() << "needs root: the cases give files to another uid and run the CLI as it";
  }
};

TEST_F(PermissionsStress, HostileStateFiles) {
  const std::string victim = kStateDir->dir() + "-victim";
  Tally tally;
  for (uint64_t round = 0; round < stress::Scale(); ++round) {
    for (const char* file : {"state", "vram", "regs", "model", "pci"}) {
      const std::string device = absl::StrCat("sim:navi31:perm-", file);
      const std::string path = absl::StrCat(kStateDir->dir(), "/navi31-perm-", file, ".", file);
      const std::string fix = absl::StrCat("baregpu sim reset ", device);
      struct Case {
        const char* what;
        std::function<void()> plant;
        std::string must_name;
      };
      const std::vector<Case> cases = {
          {"owned by another uid", [&] { ASSERT_EQ(::chown(path.c_str(), kOther, kOther), 0); }, "uid 54321"},
          {"world-writable", [&] { ASSERT_EQ(::chmod(path.c_str(), 0666), 0); }, "mode 0666"},
          {"a symbolic link to the victim's file",
           [&] {
             ASSERT_EQ(::unlink(path.c_str()), 0);
             ASSERT_EQ(::symlink(victim.c_str(), path.c_str()), 0);
           },
           "symbolic link"},
          {"a FIFO",
           [&] {
             ASSERT_EQ(::unlink(path.c_str()), 0);
             ASSERT_EQ(::mkfifo(path.c_str(), 0600), 0);
           },
           "not a regular file"},
      };
      for (const Case& c : cases) {
        const std::string label = absl::StrCat(file, " file ", c.what);
        WriteText(victim, kVictimText);
        ASSERT_EQ(stress::RunBaregpu({"boot", device}).exit_status, 0) << label;
        c.plant();
        const stress::Outcome refused = stress::RunBaregpu({"boot", device}, std::chrono::seconds(30));
        const bool refusal_ok = CleanRefusal(refused, c.must_name, fix) && absl::StrContains(refused.err, path);
        const stress::Outcome reset = stress::RunBaregpu({"sim", "reset", device});
        const stress::Outcome again = stress::RunBaregpu({"boot", device});
        tally.Count(label,
                    refusal_ok && ReadText(victim) == kVictimText && reset.exit_status == 0 && again.exit_status == 0,
                    absl::StrCat("boot: ", refused.err, " (status ", refused.exit_status, "); victim now '",
                                 ReadText(victim), "'; sim reset: ", reset.err, "; boot after it: ", again.err));
      }
    }
  }
  ::unlink(victim.c_str());
  tally.Finish("hostile state files (5 files x other owner, mode 0666, symlink, FIFO)");
}

TEST_F(PermissionsStress, HostileStateDirectories) {
  Tally tally;
  const std::string directory_fix = "BAREGPU_SIM_DIR";
  for (uint64_t round = 0; round < stress::Scale(); ++round) {
    // The /dev/shm attack, through the XDG_RUNTIME_DIR fallback: another user created baregpu-sim 0777 first.
    {
      const std::string runtime = MakeTempDir("xdg");
      const std::string planted = runtime + "/baregpu-sim";
      ASSERT_EQ(::mkdir(planted.c_str(), 0777), 0);
      ASSERT_EQ(::chmod(planted.c_str(), 0777), 0);
      ASSERT_EQ(::chown(planted.c_str(), kOther, kOther), 0);
      const std::string saved = kStateDir->dir();
      ::unsetenv("BAREGPU_SIM_DIR");
      ::setenv("XDG_RUNTIME_DIR", runtime.c_str(), 1);
      const stress::Outcome boot = stress::RunBaregpu({"boot", "sim:navi31:planted"});
      ::unsetenv("XDG_RUNTIME_DIR");
      ::setenv("BAREGPU_SIM_DIR", saved.c_str(), 1);
      struct stat st;
      const bool untouched = ::stat((planted + "/navi31-planted.state").c_str(), &st) != 0;
      tally.Count("fallback directory of another uid, mode 0777",
                  CleanRefusal(boot, "uid 54321", directory_fix) && absl::StrContains(boot.err, "0777") && untouched,
                  boot.err);
      RemoveTree(runtime);
    }
    // BAREGPU_SIM_DIR cases: a directory of another uid, one of ours that everyone may write, a link to ours.
    struct Case {
      const char* what;
      std::function<std::string(const std::string&)> plant;  // returns the directory to use
      std::string must_name;
    };
    const std::vector<Case> cases = {
        {"directory of another uid (0700)",
         [](const std::string& dir) {
           EXPECT_EQ(::chown(dir.c_str(), kOther, kOther), 0);
           return dir;
         },
         "uid 54321"},
        {"own directory with mode 0777",
         [](const std::string& dir) {
           EXPECT_EQ(::chmod(dir.c_str(), 0777), 0);
           return dir;
         },
         "mode 0777"},
        {"own directory with mode 0770",
         [](const std::string& dir) {
           EXPECT_EQ(::chmod(dir.c_str(), 0770), 0);
           return dir;
         },
         "mode 0770"},
        {"symbolic link to a directory",
         [](const std::string& dir) {
           const std::string link = dir + "-link";
           EXPECT_EQ(::symlink(dir.c_str(), link.c_str()), 0);
           return link;
         },
         "symbolic link"},
    };
    for (const Case& c : cases) {
      const std::string dir = MakeTempDir("dir");
      const std::string use = c.plant(dir);
      const std::string saved = kStateDir->dir();
      ::setenv("BAREGPU_SIM_DIR", use.c_str(), 1);
      const stress::Outcome boot = stress::RunBaregpu({"boot", "sim:navi31:dir"});
      ::setenv("BAREGPU_SIM_DIR", saved.c_str(), 1);
      struct stat st;
      const bool untouched = ::stat((dir + "/navi31-dir.state").c_str(), &st) != 0;
      tally.Count(c.what, CleanRefusal(boot, c.must_name, directory_fix) && untouched, boot.err);
      if (use != dir) ::unlink(use.c_str());
      RemoveTree(dir);
    }
    // The other side: another user runs the CLI against root's state directory (0700): it cannot get in, and
    // root's device is unchanged.
    {
      ASSERT_EQ(stress::RunBaregpu({"boot", "sim:navi31:roots"}).exit_status, 0);
      stress::Child intruder({"setpriv", "--reuid=54321", "--regid=54321", "--clear-groups", stress::BaregpuPath(),
                              "sim", "reset", "sim:navi31:roots"});
      const stress::Outcome reset = intruder.Wait(std::chrono::seconds(30));
      const stress::Outcome again = stress::RunBaregpu({"boot", "sim:navi31:roots"});
      tally.Count("another uid resets root's device",
                  reset.exit_status != 0 && !reset.hung && absl::StrContains(reset.err, kStateDir->dir()) &&
                      again.exit_status == 0,
                  absl::StrCat("intruder: ", reset.err, "; root's boot after it: ", again.err));
    }
  }
  tally.Finish("hostile state directories (other owner, group/world-writable, symlink, fallback path, other uid)");
}

}  // namespace
