#include "am/sim/persistent_state.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_replace.h"
#include "base/file.h"
#include "base/status_macros.h"

namespace am::sim {
namespace {

// "sim:navi31:0" -> "<dir>/navi31-0"; the registry already restricted names to [A-Za-z0-9_-].
std::string PathPrefix(absl::string_view device) {
  absl::string_view name = device;
  if (name.substr(0, 4) == "sim:") name.remove_prefix(4);
  return absl::StrCat(StateDirectory(), "/", absl::StrReplaceAll(name, {{":", "-"}, {"/", "_"}}));
}

absl::Status MakeDirectory(const std::string& path) {
  if (::mkdir(path.c_str(), 0700) == 0 || errno == EEXIST) return absl::OkStatus();
  return base::ErrnoError(errno, absl::StrCat("creating the virtual device state directory ", path,
                                              " (set BAREGPU_SIM_DIR to a writable directory)"));
}

// Takes the device's lock without waiting; the error names the process that holds it.
absl::StatusOr<base::ScopedFd> Lock(absl::string_view device, const std::string& prefix) {
  const std::string path = prefix + ".lock";
  base::ScopedFd fd(::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600));
  if (!fd.valid()) return base::ErrnoError(errno, absl::StrCat("open ", path));
  if (::flock(fd.get(), LOCK_EX | LOCK_NB) != 0) {
    if (errno != EWOULDBLOCK) return base::ErrnoError(errno, absl::StrCat("flock ", path));
    auto holder = base::ReadAttribute(path);
    return absl::UnavailableError(
        absl::StrFormat("%s is in use by process %s: one process at a time holds a device; close it there first",
                        device, holder.ok() && !holder->empty() ? *holder : "(unknown)"));
  }
  std::string pid = absl::StrCat(::getpid(), "\n");
  if (::ftruncate(fd.get(), 0) != 0 || ::pwrite(fd.get(), pid.data(), pid.size(), 0) < 0) {
    return base::ErrnoError(errno, absl::StrCat("write ", path));
  }
  return fd;
}

}  // namespace

std::string StateDirectory() {
  if (const char* dir = std::getenv("BAREGPU_SIM_DIR"); dir != nullptr && *dir != '\0') return dir;
  if (const char* runtime = std::getenv("XDG_RUNTIME_DIR"); runtime != nullptr && *runtime != '\0') {
    return absl::StrCat(runtime, "/baregpu-sim");
  }
  return absl::StrCat("/dev/shm/baregpu-sim-", ::getuid());
}

absl::StatusOr<std::unique_ptr<PersistentState>> PersistentState::Open(absl::string_view device,
                                                                       const std::vector<StateRegion>& regions) {
  BAREGPU_RETURN_IF_ERROR(MakeDirectory(StateDirectory()));
  std::unique_ptr<PersistentState> state(new PersistentState());
  state->prefix_ = PathPrefix(device);
  BAREGPU_ASSIGN_OR_RETURN(state->lock_, Lock(device, state->prefix_));
  for (const StateRegion& region : regions) {
    const std::string path = absl::StrCat(state->prefix_, ".", region.name);
    base::ScopedFd fd(::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600));
    if (!fd.valid()) return base::ErrnoError(errno, absl::StrCat("open ", path));
    struct stat st;
    if (::fstat(fd.get(), &st) != 0) return base::ErrnoError(errno, absl::StrCat("stat ", path));
    if (st.st_size == 0) {
      // Sparse: untouched pages cost nothing, so a 24 GiB VRAM file is free until written.
      if (::ftruncate(fd.get(), static_cast<off_t>(region.size)) != 0) {
        return base::ErrnoError(errno, absl::StrFormat("sizing %s to %d bytes", path, region.size));
      }
      state->cold_ = true;
    } else if (static_cast<uint64_t>(st.st_size) != region.size) {
      return absl::DataLossError(absl::StrFormat(
          "%s: state file %s has %d bytes, the device needs %d (left by another configuration?); power-cycle the "
          "device with `baregpu sim reset %s`",
          device, path, st.st_size, region.size, device));
    }
    void* data = ::mmap(nullptr, region.size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_NORESERVE, fd.get(), 0);
    if (data == MAP_FAILED) return base::ErrnoError(errno, absl::StrFormat("mmap of %s", path));
    state->regions_.emplace_back(static_cast<uint8_t*>(data), region.size);
  }
  return state;
}

absl::Status PersistentState::Clear(size_t index) {
  std::span<uint8_t> region = regions_[index];
  // Punching the pages out of the shared file zeroes them without touching (and so allocating) each one.
  if (::madvise(region.data(), region.size(), MADV_REMOVE) != 0) {
    return base::ErrnoError(errno, absl::StrFormat("clearing %d bytes of state under %s", region.size(), prefix_));
  }
  return absl::OkStatus();
}

PersistentState::~PersistentState() {
  for (std::span<uint8_t> region : regions_) ::munmap(region.data(), region.size());
}

absl::Status PersistentState::PowerCycle(absl::string_view device) {
  const std::string prefix = PathPrefix(device);
  if (!base::PathExists(prefix + ".lock")) return absl::OkStatus();  // never powered: nothing to discard
  BAREGPU_ASSIGN_OR_RETURN(base::ScopedFd lock, Lock(device, prefix));
  auto names = base::ListDirectory(StateDirectory());
  if (!names.ok()) return names.status();
  const std::string base_name = prefix.substr(prefix.rfind('/') + 1) + ".";
  for (const std::string& name : *names) {
    if (name.rfind(base_name, 0) == 0 && name != base_name + "lock") {
      const std::string path = StateDirectory() + "/" + name;
      if (::unlink(path.c_str()) != 0) return base::ErrnoError(errno, absl::StrCat("remove ", path));
    }
  }
  return absl::OkStatus();
}

}  // namespace am::sim
