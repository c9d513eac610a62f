#include "base/private_dir.h"

#include <fcntl.h>
#include <pwd.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/file.h"
#include "base/status_macros.h"

namespace base {
namespace {

// getpwuid_r's buffer: glibc's _SC_GETPW_R_SIZE_MAX suggestion is 1024, enough for a passwd line.
constexpr size_t kPasswdBufferBytes = 1024;
constexpr mode_t kPrivateDirectoryMode = 0700;

}  // namespace

std::string UserName(uid_t uid) {
  struct passwd entry;
  struct passwd* found = nullptr;
  char buffer[kPasswdBufferBytes];
  if (::getpwuid_r(uid, &entry, buffer, sizeof(buffer), &found) == 0 && found != nullptr) {
    return absl::StrFormat("uid %d (%s)", uid, found->pw_name);
  }
  return absl::StrFormat("uid %d", uid);
}

absl::Status CheckOwnerAndMode(const struct stat& st, const std::string& path, mode_t forbidden,
                               const PrivatePathPolicy& policy) {
  const uid_t me = ::geteuid();
  if (st.st_uid != me) {
    return absl::PermissionDeniedError(
        absl::StrFormat("%s %s belongs to %s (mode %04o), not to you (%s): its owner could %s; %s", policy.what, path,
                        UserName(st.st_uid), st.st_mode & 07777, UserName(me), policy.exposes, policy.fix));
  }
  if ((st.st_mode & forbidden) != 0) {
    return absl::PermissionDeniedError(
        absl::StrFormat("%s %s has mode %04o: other users may %s it; %s", policy.what, path, st.st_mode & 07777,
                        (st.st_mode & forbidden & 0022) != 0 ? "write" : "read", policy.fix));
  }
  return absl::OkStatus();
}

absl::StatusOr<ScopedFd> OpenPrivateDirectory(const std::string& path, bool create, const PrivatePathPolicy& policy) {
  if (create && ::mkdir(path.c_str(), kPrivateDirectoryMode) != 0 && errno != EEXIST) {
    const int error = errno;
    // EACCES: say whose the parent is and that it shuts us out, so the fix is plain.
    std::string owner;
    const std::string parent = std::filesystem::path(path).parent_path().string();
    struct stat parent_st;
    if (error == EACCES && ::stat(parent.c_str(), &parent_st) == 0) {
      owner = absl::StrFormat(": %s belongs to %s (mode %04o) and you (%s) may not create files in it", parent,
                              UserName(parent_st.st_uid), parent_st.st_mode & 07777, UserName(::geteuid()));
    }
    return ErrnoError(error, absl::StrFormat("creating %s %s%s (%s)", policy.what, path, owner, policy.fix));
  }
  ScopedFd fd(::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (!fd.valid()) {
    struct stat st;
    if (errno == EACCES && ::lstat(path.c_str(), &st) == 0) {
      // Another user's directory (the owner check says so and what to do), or one of ours whose mode shuts us out.
      BAREGPU_RETURN_IF_ERROR(CheckOwnerAndMode(st, path, S_IWGRP | S_IWOTH, policy));
      return absl::PermissionDeniedError(
          absl::StrFormat("%s %s has mode %04o, which denies you (%s) access: `chmod "
                          "700 %s`, or %s",
                          policy.what, path, st.st_mode & 07777, UserName(st.st_uid), path, policy.fix));
    }
    if (errno == ELOOP || errno == ENOTDIR) {
      return absl::PermissionDeniedError(
          absl::StrFormat("%s %s is a symbolic link or not a directory: baregpu never follows one there (another "
                          "user could point it at your files); %s",
                          policy.what, path, policy.fix));
    }
    return ErrnoError(errno, absl::StrCat("open ", policy.what, " ", path));
  }
  struct stat st;
  if (::fstat(fd.get(), &st) != 0) return ErrnoError(errno, absl::StrCat("stat ", path));
  BAREGPU_RETURN_IF_ERROR(CheckOwnerAndMode(st, path, S_IWGRP | S_IWOTH, policy));
  return fd;
}

}  // namespace base
