#include "base/file.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <functional>
#include <string>
#include <thread>

#include "base/bits.h"
#include "gtest/gtest.h"

namespace base {
namespace {

class TempDir {
 public:
  TempDir() {
    char pattern[] = "/tmp/baregpu-file-test-XXXXXX";
    path_ = ::mkdtemp(pattern);
  }
  ~TempDir() { std::system(("rm -rf '" + path_ + "'").c_str()); }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

TEST(ParseNumberTest, AcceptsDecimalHexAndBinary) {
  EXPECT_EQ(*ParseNumber("42"), 42u);
  EXPECT_EQ(*ParseNumber("0x1002"), 0x1002u);
  EXPECT_EQ(*ParseNumber("0XfF"), 0xffu);
  EXPECT_EQ(*ParseNumber("0b101"), 5u);
  EXPECT_EQ(*ParseNumber("  7\n"), 7u);
  EXPECT_EQ(*ParseNumber("0xffffffffffffffff"), UINT64_MAX);
}

TEST(ParseNumberTest, RejectsGarbageWithTheTextInTheMessage) {
  for (const char* bad : {"", "0x", "12abc", "-1", "+3", "0b102", "0x1g", "18446744073709551616"}) {
    auto value = ParseNumber(bad);
    ASSERT_FALSE(value.ok()) << bad;
    EXPECT_NE(std::string(value.status().message()).find("is not a number"), std::string::npos);
  }
}

TEST(FileTest, ReadsAttributesWithoutTrailingWhitespace) {
  TempDir dir;
  const std::string path = dir.path() + "/vendor";
  FILE* f = std::fopen(path.c_str(), "w");
  ASSERT_NE(f, nullptr);
  std::fputs("0x1002\n", f);
  std::fclose(f);
  EXPECT_EQ(*ReadAttribute(path), "0x1002");
  EXPECT_EQ(*ReadNumberAttribute(path), 0x1002u);
  ASSERT_TRUE(WriteFile(path, "garbage").ok());
  auto bad = ReadNumberAttribute(path);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(std::string(bad.status().message()).find(path), std::string::npos);
}

TEST(FileTest, ReadFileRefusesFilesOverTheLimit) {
  TempDir dir;
  const std::string path = dir.path() + "/big";
  FILE* f = std::fopen(path.c_str(), "w");
  ASSERT_NE(f, nullptr);
  std::string data(100, 'x');
  std::fputs(data.c_str(), f);
  std::fclose(f);
  EXPECT_EQ(ReadFile(path, 100)->size(), 100u);
  auto over = ReadFile(path, 99);
  ASSERT_FALSE(over.ok());
  EXPECT_EQ(over.status().code(), absl::StatusCode::kOutOfRange);
}

TEST(FileTest, MissingFilesAreNotFoundAndNameThePath) {
  auto missing = ReadFile("/nonexistent/baregpu/file");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kNotFound);
  EXPECT_NE(std::string(missing.status().message()).find("/nonexistent/baregpu/file"), std::string::npos);
  EXPECT_NE(std::string(missing.status().message()).find("ENOENT"), std::string::npos);
  EXPECT_FALSE(PathExists("/nonexistent/baregpu/file"));
}

// Runs `body` in a child process and returns its exit status, or -1 when it ran past `limit` (then it is killed):
// a regression that blocks fails the test instead of hanging it.
int RunBounded(const std::function<int()>& body, std::chrono::seconds limit = std::chrono::seconds(10)) {
  const pid_t pid = ::fork();
  if (pid == 0) ::_exit(body());
  const auto deadline = std::chrono::steady_clock::now() + limit;
  int status = 0;
  while (::waitpid(pid, &status, WNOHANG) == 0) {
    if (std::chrono::steady_clock::now() > deadline) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, &status, 0);
      return -1;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

TEST(FileTest, ReadFileRefusesAFifoWithoutBlocking) {
  TempDir dir;
  const std::string fifo = dir.path() + "/fifo.bin";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  // No writer: a blocking open() would wait for one forever.
  EXPECT_EQ(RunBounded([&] {
              auto data = ReadFile(fifo);
              if (data.ok()) return 1;
              if (data.status().code() != absl::StatusCode::kFailedPrecondition) return 2;
              const std::string want = fifo + " is a FIFO, not a regular file";
              return std::string(data.status().message()).find(want) == std::string::npos ? 3 : 0;
            }),
            0);
  // A writer that never writes: a read() would wait for data forever.
  EXPECT_EQ(RunBounded([&] {
              const int writer = ::open(fifo.c_str(), O_RDWR);
              if (writer < 0) return 4;
              return ReadFile(fifo).ok() ? 1 : 0;
            }),
            0);
}

TEST(FileTest, ReadFileRefusesDevicesAndDirectories) {
  TempDir dir;
  auto directory = ReadFile(dir.path());
  ASSERT_FALSE(directory.ok());
  EXPECT_NE(std::string(directory.status().message()).find("is a directory, not a regular file"), std::string::npos)
      << directory.status();
  // /dev/zero never ends: without the check the read would run to the size limit.
  auto zero = ReadFile("/dev/zero");
  ASSERT_FALSE(zero.ok());
  EXPECT_NE(std::string(zero.status().message()).find("/dev/zero is a character device"), std::string::npos)
      << zero.status();
  // sysfs-style attributes (and /proc) are regular files and still read.
  EXPECT_TRUE(ReadAttribute("/proc/self/stat").ok());
}

TEST(FileTest, ListsDirectoriesSortedAndReadsLinkTargets) {
  TempDir dir;
  for (const char* name : {"b", "a", "c"}) {
    FILE* f = std::fopen((dir.path() + "/" + name).c_str(), "w");
    ASSERT_NE(f, nullptr);
    std::fclose(f);
  }
  ASSERT_EQ(::symlink("../../bus/pci/drivers/vfio-pci", (dir.path() + "/driver").c_str()), 0);
  auto names = ListDirectory(dir.path());
  ASSERT_TRUE(names.ok());
  EXPECT_EQ(*names, (std::vector<std::string>{"a", "b", "c", "driver"}));
  EXPECT_EQ(*ReadLinkBasename(dir.path() + "/driver"), "vfio-pci");
  EXPECT_FALSE(ReadLinkBasename(dir.path() + "/a").ok());
}

TEST(ErrnoErrorTest, MapsErrnoToStatusCodes) {
  EXPECT_EQ(ErrnoError(EACCES, "open").code(), absl::StatusCode::kPermissionDenied);
  EXPECT_EQ(ErrnoError(ENOMEM, "mmap").code(), absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(ErrnoError(EBUSY, "open").code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(std::string(ErrnoError(EACCES, "open /dev/vfio/7").message()),
            "open /dev/vfio/7: EACCES (Permission denied)");
}

TEST(BitsTest, AlignmentHelpers) {
  EXPECT_EQ(AlignUp(0, 4096), 0u);
  EXPECT_EQ(AlignUp(1, 4096), 4096u);
  EXPECT_EQ(AlignUp(4096, 4096), 4096u);
  EXPECT_EQ(AlignUp(UINT64_MAX - 5, 4096), UINT64_MAX & ~uint64_t{4095});  // saturates, never wraps to 0
  EXPECT_EQ(AlignDown(8191, 4096), 4096u);
  EXPECT_TRUE(IsPowerOfTwo(1));
  EXPECT_FALSE(IsPowerOfTwo(0));
  EXPECT_FALSE(IsPowerOfTwo(6));
  EXPECT_EQ(LowBitsMask(28), 0xfffffffu);
  EXPECT_EQ(LowBitsMask(64), UINT64_MAX);
  EXPECT_EQ(Log2Floor(4096), 12u);
}

}  // namespace
}  // namespace base
