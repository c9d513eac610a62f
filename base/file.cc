#include "base/file.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/fd.h"
#include "base/printable.h"

namespace base {

std::string ErrnoName(int err) {
  const char* name = strerrorname_np(err);
  return absl::StrFormat("%s (%s)", name ? name : absl::StrCat("errno ", err), std::strerror(err));
}

absl::Status ErrnoError(int err, absl::string_view what) {
  std::string message = absl::StrCat(what, ": ", ErrnoName(err));
  switch (err) {
    case ENOENT:
      return absl::NotFoundError(message);
    case EACCES:
    case EPERM:
      return absl::PermissionDeniedError(message);
    case EBUSY:
      return absl::UnavailableError(message);
    case ENOMEM:
    case ENOSPC:
      return absl::ResourceExhaustedError(message);
    case EINVAL:
      return absl::InvalidArgumentError(message);
    default:
      return absl::InternalError(message);
  }
}

namespace {

// What a stat mode names, for "PATH is a FIFO, not a regular file".
absl::string_view FileTypeName(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a plain file";
}

}  // namespace

absl::StatusOr<std::string> ReadFile(const std::string& path, size_t max_size) {
  // O_NONBLOCK: opening a FIFO with no writer would otherwise wait for one forever; it does nothing for the regular
  // files read below. O_NOCTTY: a terminal named by mistake must not become the process's controlling terminal.
  ScopedFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY));
  if (!fd.valid()) return ErrnoError(errno, absl::StrCat("open ", Printable(path)));
  // Only regular files (sysfs and procfs attributes are regular files too): a FIFO or a terminal can block a read
  // forever, and /dev/zero never ends.
  struct stat st;
  if (::fstat(fd.get(), &st) != 0) return ErrnoError(errno, absl::StrCat("stat ", Printable(path)));
  if (!S_ISREG(st.st_mode)) {
    return absl::FailedPreconditionError(
        absl::StrCat(Printable(path), " is ", FileTypeName(st.st_mode),
                     ", not a regular file; copy what it holds into a file and give that file's path"));
  }
  std::string data;
  char chunk[65536];
  while (true) {
    ssize_t n = ::read(fd.get(), chunk, sizeof(chunk));
    if (n < 0) {
      if (errno == EINTR) continue;
      return ErrnoError(errno, absl::StrCat("read ", Printable(path)));
    }
    if (n == 0) break;
    if (data.size() + static_cast<size_t>(n) > max_size) {
      return absl::OutOfRangeError(
          absl::StrFormat("%s: larger than the %d-byte limit for this file", Printable(path), max_size));
    }
    data.append(chunk, static_cast<size_t>(n));
  }
  return data;
}

absl::StatusOr<std::string> ReadAttribute(const std::string& path) {
  auto data = ReadFile(path, 1 << 20);
  if (!data.ok()) return data.status();
  absl::string_view trimmed = absl::StripTrailingAsciiWhitespace(*data);
  return std::string(trimmed);
}

absl::StatusOr<uint64_t> ParseNumber(absl::string_view text) {
  text = absl::StripAsciiWhitespace(text);
  uint64_t value = 0;
  bool ok = false;
  if (text.size() > 2 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X')) {
    ok = absl::SimpleHexAtoi(text.substr(2), &value);
  } else if (text.size() > 2 && text[0] == '0' && (text[1] == 'b' || text[1] == 'B')) {
    ok = text.size() <= 66;
    for (char c : text.substr(2)) {
      if (c != '0' && c != '1') ok = false;
      value = (value << 1) | static_cast<uint64_t>(c == '1');
    }
  } else {
    ok = !text.empty() && text[0] != '-' && text[0] != '+' && absl::SimpleAtoi(text, &value);
  }
  if (!ok) {
    return absl::InvalidArgumentError(absl::StrCat("'", text, "' is not a number (decimal, 0x hex or 0b binary)"));
  }
  return value;
}

absl::StatusOr<uint64_t> ReadNumberAttribute(const std::string& path) {
  auto text = ReadAttribute(path);
  if (!text.ok()) return text.status();
  auto value = ParseNumber(*text);
  if (!value.ok()) return absl::InvalidArgumentError(absl::StrCat(Printable(path), ": ", value.status().message()));
  return value;
}

absl::Status WriteFile(const std::string& path, absl::string_view contents) {
  ScopedFd fd(::open(path.c_str(), O_WRONLY | O_CLOEXEC));
  if (!fd.valid()) return ErrnoError(errno, absl::StrCat("open ", Printable(path), " for writing"));
  while (!contents.empty()) {
    ssize_t n = ::write(fd.get(), contents.data(), contents.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      return ErrnoError(errno, absl::StrCat("write ", Printable(path)));
    }
    contents.remove_prefix(static_cast<size_t>(n));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::string> ReadLinkBasename(const std::string& path) {
  char target[4096];
  ssize_t n = ::readlink(path.c_str(), target, sizeof(target) - 1);
  if (n < 0) return ErrnoError(errno, absl::StrCat("readlink ", Printable(path)));
  absl::string_view link(target, static_cast<size_t>(n));
  while (!link.empty() && link.back() == '/') link.remove_suffix(1);
  size_t slash = link.rfind('/');
  return std::string(slash == absl::string_view::npos ? link : link.substr(slash + 1));
}

bool PathExists(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0;
}

absl::StatusOr<std::vector<std::string>> ListDirectory(const std::string& path) {
  DIR* dir = ::opendir(path.c_str());
  if (dir == nullptr) return ErrnoError(errno, absl::StrCat("opendir ", Printable(path)));
  std::vector<std::string> names;
  while (struct dirent* entry = ::readdir(dir)) {
    absl::string_view name = entry->d_name;
    if (name != "." && name != "..") names.emplace_back(name);
  }
  ::closedir(dir);
  std::sort(names.begin(), names.end());
  return names;
}

}  // namespace base
