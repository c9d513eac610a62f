// baregpu serve as a user runs it: arguments, the address it prints, a client's PING, Ctrl-C.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tests/serve/serve_client.h"
#include "tests/tools/run_cli.h"

namespace cli {
namespace {

using ::cli::testing::BaregpuPath;
using ::cli::testing::RunBaregpu;
using ::serve::Command;
using ::serve::ReplyStatus;
using ::serve::testing::Client;
using ::serve::testing::MakeRequest;

constexpr int kTimeoutMs = 60'000;

// `baregpu serve ARGS...` in the background, stdout and stderr on pipes.
class ServeProcess {
 public:
  explicit ServeProcess(const std::vector<std::string>& args) {
    int out[2], err[2];
    if (::pipe2(out, O_CLOEXEC) != 0 || ::pipe2(err, O_CLOEXEC) != 0) return;
    pid_ = ::fork();
    if (pid_ == 0) {
      ::dup2(out[1], STDOUT_FILENO);
      ::dup2(err[1], STDERR_FILENO);
      std::vector<std::string> argv_strings = {BaregpuPath(), "serve"};
      argv_strings.insert(argv_strings.end(), args.begin(), args.end());
      std::vector<char*> argv;
      for (std::string& s : argv_strings) argv.push_back(s.data());
      argv.push_back(nullptr);
      ::execv(argv[0], argv.data());
      ::_exit(127);
    }
    ::close(out[1]);
    ::close(err[1]);
    out_ = out[0];
    err_ = err[0];
  }
  ~ServeProcess() {
    if (pid_ > 0 && !reaped_) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
    }
    if (out_ >= 0) ::close(out_);
    if (err_ >= 0) ::close(err_);
  }
  // The first stdout line, or "" when none arrives in time.
  std::string FirstLine() {
    std::string line;
    char c;
    while (true) {
      pollfd pfd{out_, POLLIN, 0};
      if (::poll(&pfd, 1, kTimeoutMs) != 1 || ::read(out_, &c, 1) != 1) return "";
      if (c == '\n') return line;
      line += c;
    }
  }
  // Sends `signal` and waits for the exit status (-1 on timeout); stderr is collected meanwhile.
  int Stop(int signal) {
    ::kill(pid_, signal);
    return Wait();
  }
  int Wait() {
    char buffer[4096];
    while (true) {
      pollfd pfd{err_, POLLIN, 0};
      if (::poll(&pfd, 1, kTimeoutMs) != 1) return -1;
      const ssize_t n = ::read(err_, buffer, sizeof(buffer));
      if (n <= 0) break;
      stderr_.append(buffer, static_cast<size_t>(n));
    }
    int status = 0;
    ::waitpid(pid_, &status, 0);
    reaped_ = true;
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  }
  const std::string& err() const { return stderr_; }

 private:
  pid_t pid_ = -1;
  int out_ = -1, err_ = -1;
  bool reaped_ = false;
  std::string stderr_;
};

TEST(ServeCommandTest, HelpDocumentsTheProtocolAndItsSecurityModel) {
  auto r = RunBaregpu({"serve", "--help"});
  EXPECT_EQ(r.exit_status, 0);
  EXPECT_NE(r.out.find("Security model"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("no authentication"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("MAP_SYSMEM_FD"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("REMOTE=HOST:PORT"), std::string::npos) << r.out;
}

TEST(ServeCommandTest, BadArgumentsAreUsageErrors) {
  auto r = RunBaregpu({"serve"});
  EXPECT_EQ(r.exit_status, 2);
  EXPECT_NE(r.err.find("name the devices to serve"), std::string::npos) << r.err;
  r = RunBaregpu({"serve", "sim:edu", "--listen", "127.0.0.1:0", "--unix", "/tmp/x.sock"});
  EXPECT_EQ(r.exit_status, 2);
  EXPECT_NE(r.err.find("exclude each other"), std::string::npos) << r.err;
  r = RunBaregpu({"serve", "sim:edu", "--max-sysmem-mib", "lots"});
  EXPECT_EQ(r.exit_status, 2);
  r = RunBaregpu({"serve", "sim:edu", "sim:edu"});
  EXPECT_EQ(r.exit_status, 2);
  EXPECT_NE(r.err.find("named twice"), std::string::npos) << r.err;
  r = RunBaregpu({"serve", "sim:nosuchgpu"});
  EXPECT_EQ(r.exit_status, 1);
  EXPECT_NE(r.err.find("error:"), std::string::npos) << r.err;
  r = RunBaregpu({"serve", "sim:edu", "--listen", "0.0.0.0:0"});
  EXPECT_EQ(r.exit_status, 1);
  EXPECT_NE(r.err.find("--allow-remote"), std::string::npos) << r.err;
}

TEST(ServeCommandTest, ServesUntilCtrlC) {
  ServeProcess serve({"sim:edu", "--listen", "127.0.0.1:0"});
  const std::string line = serve.FirstLine();
  const std::string marker = "serving sim:edu as device 0 on ";
  ASSERT_EQ(line.rfind(marker, 0), 0u) << line;
  auto client = Client::ConnectTcp(line.substr(marker.size()));
  ASSERT_TRUE(client.has_value());
  auto reply = client->Call(MakeRequest(Command::kPing));
  ASSERT_TRUE(reply.has_value());
  EXPECT_EQ(reply->reply.status, ReplyStatus::kOk);
  // Ctrl-C with a client still connected: its session ends and the server exits 0.
  EXPECT_EQ(serve.Stop(SIGINT), 0) << serve.err();
  EXPECT_NE(serve.err().find("stopping"), std::string::npos) << serve.err();
  EXPECT_NE(serve.err().find("the server stopped"), std::string::npos) << serve.err();
  EXPECT_TRUE(client->ClosedByServer());
}

TEST(ServeCommandTest, RemoteAddressesWarn) {
  ServeProcess serve({"sim:edu", "--listen", "0.0.0.0:0", "--allow-remote"});
  ASSERT_NE(serve.FirstLine(), "");
  EXPECT_EQ(serve.Stop(SIGTERM), 0);
  EXPECT_NE(serve.err().find("warning: serving on 0.0.0.0:"), std::string::npos) << serve.err();
  EXPECT_NE(serve.err().find("anyone who can connect controls the GPU"), std::string::npos) << serve.err();
}

}  // namespace
}  // namespace cli
