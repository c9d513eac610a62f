#include "base/log.h"

#include <unistd.h>

#include <array>
#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <string>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/printable.h"

namespace base {
namespace {

constexpr std::array<absl::string_view, 5> kNames = {"off", "error", "warn", "info", "debug"};
// -1: not decided yet (BAREGPU_LOG is read on first use).
constexpr int kUndecided = -1;
std::atomic<int> threshold{kUndecided};

void WriteAll(absl::string_view text) {
  while (!text.empty()) {
    const ssize_t n = ::write(STDERR_FILENO, text.data(), text.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;  // stderr closed or full: logging must not fail the program
    text.remove_prefix(static_cast<size_t>(n));
  }
}

LogLevel FromEnvironment() {
  const char* value = std::getenv(std::string(kLogEnvironmentVariable).c_str());
  if (value == nullptr || *value == '\0') return LogLevel::kOff;
  absl::StatusOr<LogLevel> level = ParseLogLevel(value);
  if (level.ok()) return *level;
  WriteAll(
      absl::StrCat("baregpu warn: ", kLogEnvironmentVariable, ": ", level.status().message(), "; logging stays off\n"));
  return LogLevel::kOff;
}

}  // namespace

absl::StatusOr<LogLevel> ParseLogLevel(absl::string_view text) {
  const std::string lower = absl::AsciiStrToLower(text);
  for (size_t i = 0; i < kNames.size(); ++i) {
    if (lower == kNames[i]) return static_cast<LogLevel>(i);
  }
  return absl::InvalidArgumentError(
      absl::StrCat("log level ", Printable(text), " is not one of ", absl::StrJoin(kNames, ", ")));
}

absl::string_view LogLevelName(LogLevel level) { return kNames[static_cast<size_t>(level)]; }

LogLevel GetLogLevel() {
  int value = threshold.load(std::memory_order_relaxed);
  if (value == kUndecided) {
    int expected = kUndecided;
    threshold.compare_exchange_strong(expected, static_cast<int>(FromEnvironment()));
    value = threshold.load(std::memory_order_relaxed);
  }
  return static_cast<LogLevel>(value);
}

void SetLogLevel(LogLevel level) { threshold.store(static_cast<int>(level), std::memory_order_relaxed); }

void Log(LogLevel level, absl::string_view message) {
  WriteAll(absl::StrCat("baregpu ", LogLevelName(level), ": ", message, "\n"));
}

}  // namespace base
