// Directories and files only the effective user may touch: the virtual GPUs' state directory (am/sim/
// persistent_state.cc) and the runtime directory of debug endpoints (serve/debug_endpoint.cc). Another user who owns
// or may write such a path could swap a file under us or read what it holds, so each is checked before use: owned by
// the effective user, without the forbidden mode bits, and never reached through a symbolic link.
#ifndef BAREGPU_BASE_PRIVATE_DIR_H_
#define BAREGPU_BASE_PRIVATE_DIR_H_

#include <sys/stat.h>
#include <sys/types.h>

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "base/fd.h"

namespace base {

// "uid 1000 (alice)", or "uid 1000" when the name cannot be found.
std::string UserName(uid_t uid);

// What a path that fails the check lets another user do, and how to fix it: both become part of the error.
struct PrivatePathPolicy {
  absl::string_view what;     // "the virtual device state directory"
  absl::string_view exposes;  // "read and overwrite the virtual device's VRAM and registers"
  std::string fix;            // "remove it (rm -r DIR) or set BAREGPU_SIM_DIR to ..."
};

// PermissionDenied when `st` is not the effective user's, or has any of the `forbidden` mode bits (e.g. S_IWGRP |
// S_IWOTH): the message names the path, its owner and mode, what that exposes and the fix.
absl::Status CheckOwnerAndMode(const struct stat& st, const std::string& path, mode_t forbidden,
                               const PrivatePathPolicy& policy);

// Opens directory `path` (created mode 0700 when missing and `create`) without following a symbolic link, and checks
// that it is the effective user's and not writable by group or others.
absl::StatusOr<ScopedFd> OpenPrivateDirectory(const std::string& path, bool create, const PrivatePathPolicy& policy);

}  // namespace base

#endif  // BAREGPU_BASE_PRIVATE_DIR_H_
