// File helpers for small attribute files (sysfs, procfs) and whole-file reads, with errors that name the path.
#ifndef BAREGPU_BASE_FILE_H_
#define BAREGPU_BASE_FILE_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace base {

// Reads a whole regular file; refuses files larger than `max_size` bytes and anything that is not a regular file
// (a FIFO, a device, a directory): reading those can block forever or never end. Never blocks in open().
absl::StatusOr<std::string> ReadFile(const std::string& path, size_t max_size = size_t{1} << 30);

// Reads a small attribute file (sysfs style) and strips trailing whitespace.
absl::StatusOr<std::string> ReadAttribute(const std::string& path);

// Parses an attribute holding a number in C notation (0x prefix for hex, otherwise decimal).
absl::StatusOr<uint64_t> ReadNumberAttribute(const std::string& path);

absl::Status WriteFile(const std::string& path, absl::string_view contents);

// The last component of a symlink's target ("../../bus/pci/drivers/vfio-pci" -> "vfio-pci").
absl::StatusOr<std::string> ReadLinkBasename(const std::string& path);

bool PathExists(const std::string& path);

// Names of the entries of a directory, sorted, without "." and "..".
absl::StatusOr<std::vector<std::string>> ListDirectory(const std::string& path);

// Parses "0x1f", "31" or "0b11" style numbers; the whole string must be consumed.
absl::StatusOr<uint64_t> ParseNumber(absl::string_view text);

// An errno value as "ENOENT (No such file or directory)".
std::string ErrnoName(int err);

// A Status carrying errno, its name and the failed operation: "open /dev/vfio/7: EACCES (Permission denied)".
absl::Status ErrnoError(int err, absl::string_view what);

}  // namespace base

#endif  // BAREGPU_BASE_FILE_H_
