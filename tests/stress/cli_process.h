// Runs the `baregpu` CLI (build/tools/baregpu) as a child process with bounded waits, for the stress tests that kill
// it, corrupt what it left, or run it as another user.
#ifndef BAREGPU_TESTS_STRESS_CLI_PROCESS_H_
#define BAREGPU_TESTS_STRESS_CLI_PROCESS_H_

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

extern char** environ;

namespace stress {

inline std::string BaregpuPath() {
  const char* root = std::getenv("BAREGPU_BUILD_ROOT");
  return std::string(root ? root : "build") + "/tools/baregpu";
}

struct Outcome {
  int exit_status = -1;  // -1: killed by a signal, or still running at the deadline (then `hung`)
  bool hung = false;
  std::string err;  // stderr (stdout is discarded: the stress tests judge exit status and messages)
};

// A started child: `argv` (argv[0] a path), stdin /dev/null, stdout discarded, stderr to a temporary file.
class Child {
 public:
  explicit Child(const std::vector<std::string>& args) {
    char err_path[] = "/tmp/baregpu-stress-err-XXXXXX";
    const int err_fd = ::mkstemp(err_path);
    err_path_ = err_path;
    std::vector<std::string> storage = args;
    std::vector<char*> argv;
    for (std::string& a : storage) argv.push_back(a.data());
    argv.push_back(nullptr);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_adddup2(&actions, err_fd, STDERR_FILENO);
    if (posix_spawnp(&pid_, argv[0], &actions, nullptr, argv.data(), environ) != 0) pid_ = -1;
    posix_spawn_file_actions_destroy(&actions);
    ::close(err_fd);
  }
  explicit Child(pid_t forked) : pid_(forked) {}
  ~Child() {
    if (pid_ > 0 && !reaped_) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
    }
    if (!err_path_.empty()) ::unlink(err_path_.c_str());
  }
  Child(const Child&) = delete;
  Child& operator=(const Child&) = delete;

  pid_t pid() const { return pid_; }
  void Kill() const {
    if (pid_ > 0) ::kill(pid_, SIGKILL);
  }
  // Waits up to `timeout` (polling waitpid, 1 ms apart); a child still running then is killed and reported hung.
  Outcome Wait(std::chrono::milliseconds timeout) {
    Outcome outcome;
    if (pid_ <= 0) return outcome;
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    int status = 0;
    pid_t done = 0;
    while ((done = ::waitpid(pid_, &status, WNOHANG)) == 0 && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    if (done == 0) {
      outcome.hung = true;
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, &status, 0);
    }
    reaped_ = true;
    if (!outcome.hung && WIFEXITED(status)) outcome.exit_status = WEXITSTATUS(status);
    if (!err_path_.empty()) {
      std::ifstream in(err_path_);
      std::stringstream text;
      text << in.rdbuf();
      outcome.err = text.str();
    }
    return outcome;
  }

 private:
  pid_t pid_ = -1;
  bool reaped_ = false;
  std::string err_path_;
};

// Runs `baregpu ARGS...` to completion (at most `timeout`).
inline Outcome RunBaregpu(const std::vector<std::string>& args,
                          std::chrono::milliseconds timeout = std::chrono::seconds(60)) {
  std::vector<std::string> argv = {BaregpuPath()};
  argv.insert(argv.end(), args.begin(), args.end());
  Child child(argv);
  return child.Wait(timeout);
}

}  // namespace stress

#endif  // BAREGPU_TESTS_STRESS_CLI_PROCESS_H_
