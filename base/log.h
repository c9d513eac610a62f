// Leveled logging to stderr, off unless asked for: `baregpu -v` (info) or `-vv` (debug), or BAREGPU_LOG=LEVEL for
// any program using the library. For what a person debugging bring-up wants to see happen (a device opened, a boot
// step begun and ended); errors that a caller handles are absl::Status values, not log lines.
#ifndef BAREGPU_BASE_LOG_H_
#define BAREGPU_BASE_LOG_H_

#include "absl/status/statusor.h"
#include "absl/strings/str_format.h"
#include "absl/strings/string_view.h"

namespace base {

// In increasing verbosity; a message is written when its level is at or below the threshold.
enum class LogLevel : int { kOff = 0, kError, kWarn, kInfo, kDebug };

// The environment variable that sets the threshold when the program does not.
inline constexpr absl::string_view kLogEnvironmentVariable = "BAREGPU_LOG";

// "off", "error", "warn", "info", "debug" (any case); the error names the accepted values.
absl::StatusOr<LogLevel> ParseLogLevel(absl::string_view text);
absl::string_view LogLevelName(LogLevel level);

// The threshold: set by SetLogLevel, else read once from BAREGPU_LOG (an unknown value is reported on stderr and
// leaves logging off), else off.
LogLevel GetLogLevel();
void SetLogLevel(LogLevel level);
inline bool LogEnabled(LogLevel level) { return level != LogLevel::kOff && level <= GetLogLevel(); }

// Writes "baregpu LEVEL: MESSAGE\n" to stderr in one write(2), so lines of concurrent threads do not interleave.
void Log(LogLevel level, absl::string_view message);

}  // namespace base

// BAREGPU_LOG(kInfo, "%s: opened", name): formats only when the level is enabled.
#define BAREGPU_LOG(level, ...)                                             \
  do {                                                                      \
    if (::base::LogEnabled(::base::LogLevel::level)) {                      \
      ::base::Log(::base::LogLevel::level, ::absl::StrFormat(__VA_ARGS__)); \
    }                                                                       \
  } while (false)

#endif  // BAREGPU_BASE_LOG_H_
