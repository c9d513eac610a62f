#include "pci/sim/persistent_state.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/strip.h"
#include "base/file.h"
#include "base/private_dir.h"
#include "base/status_macros.h"

namespace pci::sim {

// The header file's layout. Words that change while the device is held (open_state, power) are single aligned
// 32-bit stores, so a process killed at any instant leaves either the old or the new value; their values are
// distinct ASCII words rather than 0/1 so that a flipped bit reads as corruption instead of another valid state.
struct PersistentState::Header {
  static constexpr uint64_t kMagic = 0x54534d4955504742;  // "BGPUIMST" little-endian: baregpu sim state
  // 1: the first versioned layout (issue 23). Bump when Header or the meaning of a region changes.
  static constexpr uint32_t kVersion = 1;
  static constexpr size_t kMaxRegions = 8;
  static constexpr size_t kNameBytes = 16;
  static constexpr uint32_t kOpen = 0x4e45504f;        // "OPEN": held, or its holder died; checksums are stale
  static constexpr uint32_t kClosed = 0x534f4c43;      // "CLOS": closed cleanly; checksums are current
  static constexpr uint32_t kStable = 0x4c425453;      // "STBL"
  static constexpr uint32_t kTransition = 0x4e415254;  // "TRAN": a power-on or mode1 reset is under way

  uint64_t magic;
  uint32_t version;
  uint32_t region_count;
  char region_names[kMaxRegions][kNameBytes];
  uint64_t region_sizes[kMaxRegions];
  uint64_t region_checksums[kMaxRegions];
  uint32_t open_state;
  uint32_t power;
  uint32_t holder_pid;  // informational: named in "in use by process N"
  uint32_t reserved;
};

namespace {

using Header = PersistentState::Header;

// The header file is one page, so it maps whole.
constexpr size_t kHeaderBytes = 4096;
constexpr uint64_t kPage = 4096;
static_assert(sizeof(Header) <= kHeaderBytes);

// Every open of a state file: never through a link, never blocking (a FIFO planted in the directory must not hang
// the driver), never inherited by a child.
constexpr int kOpenFlags = O_RDWR | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC;

bool ValidNamePart(absl::string_view text) {
  // The same rule as pci::OpenVirtual's (pci/virtual_registry.cc), so every name that opens has a state path.
  if (text.empty() || text.size() > 64) return false;
  for (char c : text) {
    if (!absl::ascii_isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '-') return false;
  }
  return true;
}

// What a state directory or file that another user owns or may write exposes.
constexpr absl::string_view kExposes = "read and overwrite the virtual device's VRAM and registers";

std::string DirectoryFix(const std::string& path) {
  return absl::StrFormat("remove it (rm -r %s) or set BAREGPU_SIM_DIR to a directory of your own (mode 0700)", path);
}

std::string FileFix(absl::string_view device) {
  return absl::StrFormat("`baregpu sim reset %s` removes the device's files (it never follows links)", device);
}

// The state directory, created 0700 when missing, opened without following a link and checked.
absl::StatusOr<base::ScopedFd> OpenDirectory(const std::string& path, bool create) {
  return base::OpenPrivateDirectory(path, create, {"the virtual device state directory", kExposes, DirectoryFix(path)});
}

struct OpenedFile {
  base::ScopedFd fd;
  bool created = false;
  uint64_t size = 0;
};

// A state file, relative to the checked directory: created 0600 and exclusively when missing; refused when it is a
// link, not a regular file, another user's, or readable or writable by others.
absl::StatusOr<OpenedFile> OpenStateFile(int dir, const std::string& dir_path, const std::string& name,
                                         absl::string_view device) {
  const std::string path = absl::StrCat(dir_path, "/", name);
  OpenedFile file;
  // Two tries: a file that another process creates between our two opens is opened as existing the second time.
  for (int attempt = 0; attempt < 2 && !file.fd.valid(); ++attempt) {
    file.fd.Reset(::openat(dir, name.c_str(), kOpenFlags));
    if (file.fd.valid() || errno != ENOENT) break;
    file.fd.Reset(::openat(dir, name.c_str(), kOpenFlags | O_CREAT | O_EXCL, 0600));
    file.created = file.fd.valid();
    if (!file.fd.valid() && errno != EEXIST) break;
  }
  if (!file.fd.valid()) {
    if (errno == ELOOP) {
      return absl::PermissionDeniedError(absl::StrFormat(
          "%s: state file %s is a symbolic link: baregpu never follows one there (it could point at any file of "
          "yours); %s",
          device, path, FileFix(device)));
    }
    return base::ErrnoError(errno, absl::StrFormat("%s: open state file %s", device, path));
  }
  struct stat st;
  if (::fstat(file.fd.get(), &st) != 0) return base::ErrnoError(errno, absl::StrCat("stat ", path));
  if (!S_ISREG(st.st_mode)) {
    return absl::PermissionDeniedError(absl::StrFormat("%s: state file %s is not a regular file (mode %06o); %s",
                                                       device, path, st.st_mode, FileFix(device)));
  }
  const std::string what = absl::StrCat(device, ": state file");
  BAREGPU_RETURN_IF_ERROR(base::CheckOwnerAndMode(st, path, S_IRWXG | S_IRWXO, {what, kExposes, FileFix(device)}));
  file.size = static_cast<uint64_t>(st.st_size);
  return file;
}

// The pid the header names as the holder, for messages; "(unknown)" when it cannot be read.
std::string HolderPid(int header_fd) {
  Header header;
  if (header_fd < 0 || ::pread(header_fd, &header, sizeof(header), 0) != static_cast<ssize_t>(sizeof(header)) ||
      header.magic != Header::kMagic || header.holder_pid == 0) {
    return "(unknown)";
  }
  return absl::StrCat(header.holder_pid);
}

// Takes a file's lock without waiting; the error names the process that holds the device.
absl::Status Lock(int fd, const std::string& path, absl::string_view device, int header_fd) {
  if (::flock(fd, LOCK_EX | LOCK_NB) == 0) return absl::OkStatus();
  if (errno != EWOULDBLOCK) return base::ErrnoError(errno, absl::StrCat("flock ", path));
  return absl::UnavailableError(
      absl::StrFormat("%s is in use by process %s: one process at a time holds a device; close it there first", device,
                      HolderPid(header_fd)));
}

// 64-bit FNV-1a over words (offset basis and prime from the FNV reference, isthe.com/chongo/tech/comp/fnv). Xor and
// multiplication by an odd number are both bijections modulo 2^64, so changing any one word always changes the
// result.
constexpr uint64_t kFnvOffsetBasis = 0xcbf29ce484222325;
constexpr uint64_t kFnvPrime = 0x100000001b3;
uint64_t Mix(uint64_t hash, uint64_t word) { return (hash ^ word) * kFnvPrime; }

}  // namespace

std::string StateDirectory() {
  if (const char* dir = std::getenv("BAREGPU_SIM_DIR"); dir != nullptr && *dir != '\0') return dir;
  if (const char* runtime = std::getenv("XDG_RUNTIME_DIR"); runtime != nullptr && *runtime != '\0') {
    return absl::StrCat(runtime, "/baregpu-sim");
  }
  return absl::StrCat("/dev/shm/baregpu-sim-", ::geteuid());
}

absl::StatusOr<std::string> StateFileBase(absl::string_view device) {
  constexpr absl::string_view kPrefix = "sim:";
  absl::string_view rest = device;
  bool valid = absl::ConsumePrefix(&rest, kPrefix);
  const size_t colon = rest.find(':');
  absl::string_view kind = rest.substr(0, colon);
  absl::string_view instance = colon == absl::string_view::npos ? "" : rest.substr(colon + 1);
  valid = valid && ValidNamePart(kind) && (colon == absl::string_view::npos || ValidNamePart(instance));
  if (!valid) {
    return absl::InvalidArgumentError(
        absl::StrCat("'", device,
                     "' is not a valid virtual device name: use sim:KIND or sim:KIND:INSTANCE, with letters, digits, "
                     "'-' and '_' (e.g. sim:navi31:0)"));
  }
  return instance.empty() ? std::string(kind) : absl::StrCat(kind, "-", instance);
}

PersistentState::Header& PersistentState::header() const { return *static_cast<Header*>(header_map_); }

absl::StatusOr<uint64_t> PersistentState::Checksum(const Region& region) const {
  // Only pages the file holds and that are not all zeros count, each with its offset: a hole and a page of zeros
  // hash alike, and a 512 MiB register file costs what the few pages a boot writes cost. SEEK_DATA/SEEK_HOLE find
  // the pages without faulting the holes in.
  const uint64_t end = std::min<uint64_t>(region.data.size(), region.checksum_bytes == StateRegion::kToEnd
                                                                  ? region.data.size()
                                                                  : region.checksum_from + region.checksum_bytes);
  uint64_t hash = kFnvOffsetBasis;
  uint64_t position = region.checksum_from;
  while (position < end) {
    off_t data = ::lseek(region.fd.get(), static_cast<off_t>(position), SEEK_DATA);
    off_t hole = static_cast<off_t>(end);
    if (data < 0) {
      if (errno == ENXIO) break;  // no data after `position`
      if (errno != EINVAL) return base::ErrnoError(errno, absl::StrCat("lseek(SEEK_DATA) in ", region.name));
      data = static_cast<off_t>(position);  // a file system without SEEK_DATA: every page counts
    } else {
      hole = ::lseek(region.fd.get(), data, SEEK_HOLE);
      if (hole < 0) hole = static_cast<off_t>(end);
    }
    const uint64_t stop = std::min<uint64_t>(static_cast<uint64_t>(hole), end);
    for (uint64_t page = std::max(position, static_cast<uint64_t>(data) / kPage * kPage); page < stop; page += kPage) {
      const uint64_t bytes = std::min(kPage, end - page);
      const uint8_t* at = region.data.data() + page;
      if (std::all_of(at, at + bytes, [](uint8_t b) { return b == 0; })) continue;
      hash = Mix(hash, page);
      for (uint64_t i = 0; i < bytes; i += 8) {
        uint64_t word = 0;
        std::memcpy(&word, at + i, std::min<uint64_t>(8, bytes - i));
        hash = Mix(hash, word);
      }
    }
    position = stop;
  }
  return hash;
}

absl::StatusOr<std::unique_ptr<PersistentState>> PersistentState::Open(absl::string_view device,
                                                                       const std::vector<StateRegion>& regions) {
  BAREGPU_ASSIGN_OR_RETURN(const std::string base_name, StateFileBase(device));
  if (regions.size() > Header::kMaxRegions) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s: %d state regions, at most %d", device, regions.size(), Header::kMaxRegions));
  }
  const std::string dir_path = StateDirectory();
  std::unique_ptr<PersistentState> state(new PersistentState());
  state->device_ = std::string(device);
  state->prefix_ = absl::StrCat(dir_path, "/", base_name);
  BAREGPU_ASSIGN_OR_RETURN(state->directory_, OpenDirectory(dir_path, /*create=*/true));
  const int dir = state->directory_.get();

  // Every file is locked, the header first: the lock is on the state itself, so removing a file gives a second
  // process a new file (and a fresh device) rather than the holder's device without its lock.
  const std::string header_name = base_name + ".state";
  BAREGPU_ASSIGN_OR_RETURN(OpenedFile header_file, OpenStateFile(dir, dir_path, header_name, device));
  BAREGPU_RETURN_IF_ERROR(Lock(header_file.fd.get(), state->prefix_ + ".state", device, header_file.fd.get()));
  std::vector<OpenedFile> files;
  for (const StateRegion& region : regions) {
    const std::string name = absl::StrCat(base_name, ".", region.name);
    BAREGPU_ASSIGN_OR_RETURN(OpenedFile file, OpenStateFile(dir, dir_path, name, device));
    BAREGPU_RETURN_IF_ERROR(Lock(file.fd.get(), absl::StrCat(dir_path, "/", name), device, header_file.fd.get()));
    files.push_back(std::move(file));
  }

  // What an earlier process left: a device never powered (no files), a state to resume, or a damaged one.
  const std::string header_path = state->prefix_ + ".state";
  const bool never_powered =
      header_file.size == 0 && std::all_of(files.begin(), files.end(), [](const OpenedFile& f) { return f.size == 0; });
  std::string& discarded = state->discarded_;
  Header saved{};
  if (never_powered) {
    // nothing to check
  } else if (header_file.size == 0) {
    discarded =
        absl::StrFormat("its header %s is missing or empty (removed, or left by an older baregpu)", header_path);
  } else if (header_file.size != kHeaderBytes ||
             ::pread(header_file.fd.get(), &saved, sizeof(saved), 0) != static_cast<ssize_t>(sizeof(saved))) {
    discarded = absl::StrFormat("its header %s has %d bytes, not %d", header_path, header_file.size, kHeaderBytes);
  } else if (saved.magic != Header::kMagic || saved.version != Header::kVersion) {
    discarded = absl::StrFormat("its header %s is not a layout-%d baregpu state header (magic %#x, version %d)",
                                header_path, Header::kVersion, saved.magic, saved.version);
  } else if ((saved.open_state != Header::kOpen && saved.open_state != Header::kClosed) ||
             (saved.power != Header::kStable && saved.power != Header::kTransition)) {
    discarded = absl::StrFormat("its header %s is corrupt (open state %#x, power state %#x)", header_path,
                                saved.open_state, saved.power);
  } else if (saved.region_count != regions.size()) {
    discarded = absl::StrFormat("its header %s lists %d regions, the device has %d (another configuration?)",
                                header_path, saved.region_count, regions.size());
  }
  for (size_t i = 0; i < regions.size() && discarded.empty() && !never_powered; ++i) {
    const std::string path = absl::StrCat(state->prefix_, ".", regions[i].name);
    if (std::strncmp(saved.region_names[i], regions[i].name.c_str(), Header::kNameBytes) != 0 ||
        saved.region_sizes[i] != regions[i].size) {
      discarded = absl::StrFormat(
          "its header %s describes region %d as '%.16s' of %d bytes, the device needs '%s' "
          "of %d (another configuration?)",
          header_path, i, saved.region_names[i], saved.region_sizes[i], regions[i].name, regions[i].size);
    } else if (files[i].size != regions[i].size) {
      discarded = absl::StrFormat("state file %s has %d bytes, the device needs %d (truncated or extended?)", path,
                                  files[i].size, regions[i].size);
    }
  }

  // Map the regions (sizes are right, or are made right first when the state is discarded anyway).
  const bool sizes_ok = !never_powered && discarded.empty();
  auto map_regions = [&]() -> absl::Status {
    for (size_t i = 0; i < regions.size(); ++i) {
      const std::string path = absl::StrCat(state->prefix_, ".", regions[i].name);
      void* data =
          ::mmap(nullptr, regions[i].size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_NORESERVE, files[i].fd.get(), 0);
      if (data == MAP_FAILED) return base::ErrnoError(errno, absl::StrFormat("mmap of %s", path));
      state->regions_.push_back(Region{regions[i].name, std::move(files[i].fd),
                                       std::span<uint8_t>(static_cast<uint8_t*>(data), regions[i].size),
                                       regions[i].checksum_from, regions[i].checksum_bytes});
    }
    return absl::OkStatus();
  };
  if (sizes_ok) {
    BAREGPU_RETURN_IF_ERROR(map_regions());
    if (saved.open_state == Header::kClosed) {
      // After a clean close the checksums are current: a mismatch is damage, not the device's doing. (After an
      // unclean exit they cannot be: the state is taken as the dead holder left it, as a GPU keeps running when
      // its driver dies, and the driver's reset path must cope; NOTES.md.)
      for (size_t i = 0; i < state->regions_.size() && discarded.empty(); ++i) {
        BAREGPU_ASSIGN_OR_RETURN(const uint64_t sum, state->Checksum(state->regions_[i]));
        if (sum != saved.region_checksums[i]) {
          discarded = absl::StrFormat("state file %s.%s fails its checksum after a clean close (corrupted)",
                                      state->prefix_, regions[i].name);
        }
      }
    }
  }
  state->cold_ = never_powered || !discarded.empty();
  if (!discarded.empty()) {
    discarded =
        absl::StrFormat("%s: %s; the device is treated as powered off (its state discarded)", device, discarded);
  }

  // The header first (a power-on under way), then the regions: a process killed anywhere in between leaves a
  // header that says so, or none that is valid; either way the next open powers the device on again.
  Header fresh{};
  if (state->cold_) {
    fresh.magic = Header::kMagic;
    fresh.version = Header::kVersion;
    fresh.region_count = static_cast<uint32_t>(regions.size());
    for (size_t i = 0; i < regions.size(); ++i) {
      std::memcpy(fresh.region_names[i], regions[i].name.data(), std::min(regions[i].name.size(), Header::kNameBytes));
      fresh.region_sizes[i] = regions[i].size;
    }
    fresh.open_state = Header::kOpen;
    fresh.power = Header::kTransition;
  } else {
    fresh = saved;
    fresh.open_state = Header::kOpen;
  }
  fresh.holder_pid = static_cast<uint32_t>(::getpid());
  char page[kHeaderBytes] = {};
  std::memcpy(page, &fresh, sizeof(fresh));
  if (::ftruncate(header_file.fd.get(), kHeaderBytes) != 0 ||
      ::pwrite(header_file.fd.get(), page, sizeof(page), 0) != static_cast<ssize_t>(sizeof(page))) {
    return base::ErrnoError(errno, absl::StrCat("write ", header_path));
  }
  if (state->cold_) {
    for (size_t i = 0; i < regions.size(); ++i) {
      // Sparse: untouched pages cost nothing, so a 24 GiB VRAM file is free until written. Truncating to 0 first
      // drops whatever a discarded state held.
      const int fd = sizes_ok ? state->regions_[i].fd.get() : files[i].fd.get();
      if (::ftruncate(fd, 0) != 0 || ::ftruncate(fd, static_cast<off_t>(regions[i].size)) != 0) {
        return base::ErrnoError(
            errno, absl::StrFormat("sizing %s.%s to %d bytes", state->prefix_, regions[i].name, regions[i].size));
      }
    }
    if (!sizes_ok) BAREGPU_RETURN_IF_ERROR(map_regions());
  }
  state->header_fd_ = std::move(header_file.fd);
  void* header_map = ::mmap(nullptr, kHeaderBytes, PROT_READ | PROT_WRITE, MAP_SHARED, state->header_fd_.get(), 0);
  if (header_map == MAP_FAILED) return base::ErrnoError(errno, absl::StrCat("mmap of ", header_path));
  state->header_map_ = header_map;
  state->interrupted_transition_ = !state->cold_ && fresh.power == Header::kTransition;
  return state;
}

void PersistentState::BeginPowerTransition() { std::atomic_ref<uint32_t>(header().power).store(Header::kTransition); }

void PersistentState::EndPowerTransition() { std::atomic_ref<uint32_t>(header().power).store(Header::kStable); }

absl::Status PersistentState::Clear(size_t index) {
  std::span<uint8_t> region = regions_[index].data;
  // Punching the pages out of the shared file zeroes them without touching (and so allocating) each one.
  if (::madvise(region.data(), region.size(), MADV_REMOVE) != 0) {
    return base::ErrnoError(errno, absl::StrFormat("clearing %d bytes of state under %s", region.size(), prefix_));
  }
  return absl::OkStatus();
}

PersistentState::~PersistentState() {
  if (header_map_ != nullptr) {
    // Checksums first, then the word that says they are current: a process killed in between leaves "open", which
    // the next open takes as an unclean exit.
    bool all = true;
    for (size_t i = 0; i < regions_.size(); ++i) {
      absl::StatusOr<uint64_t> sum = Checksum(regions_[i]);
      all = all && sum.ok();
      if (sum.ok()) header().region_checksums[i] = *sum;
    }
    if (all) std::atomic_ref<uint32_t>(header().open_state).store(Header::kClosed);
    ::munmap(header_map_, kHeaderBytes);
  }
  for (const Region& region : regions_) ::munmap(region.data.data(), region.data.size());
}

absl::StatusOr<std::optional<uint32_t>> PersistentState::Holder(absl::string_view device) {
  BAREGPU_ASSIGN_OR_RETURN(const std::string base_name, StateFileBase(device));
  const std::string path = absl::StrCat(StateDirectory(), "/", base_name, ".state");
  base::ScopedFd header(::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
  if (!header.valid()) {
    if (errno == ENOENT) return std::nullopt;  // never powered, or power-cycled: nobody holds it
    return base::ErrnoError(errno, absl::StrCat("open ", path));
  }
  if (::flock(header.get(), LOCK_SH | LOCK_NB) == 0) {
    ::flock(header.get(), LOCK_UN);
    return std::nullopt;
  }
  if (errno != EWOULDBLOCK) return base::ErrnoError(errno, absl::StrCat("flock ", path));
  Header fields;
  if (::pread(header.get(), &fields, sizeof(fields), 0) != static_cast<ssize_t>(sizeof(fields)) ||
      fields.magic != Header::kMagic) {
    return uint32_t{0};
  }
  return fields.holder_pid;
}

absl::StatusOr<std::vector<StateSummary>> ListStates() {
  const std::string dir_path = StateDirectory();
  struct stat st;
  if (::lstat(dir_path.c_str(), &st) != 0 && errno == ENOENT) return std::vector<StateSummary>{};
  BAREGPU_ASSIGN_OR_RETURN(base::ScopedFd dir, OpenDirectory(dir_path, /*create=*/false));
  std::vector<std::string> bases;
  {
    DIR* listing = ::fdopendir(::dup(dir.get()));
    if (listing == nullptr) return base::ErrnoError(errno, absl::StrCat("opendir ", dir_path));
    ::rewinddir(listing);
    while (const dirent* entry = ::readdir(listing)) {
      absl::string_view name(entry->d_name);
      if (absl::ConsumeSuffix(&name, ".state") && ValidNamePart(name.substr(0, name.find('-')))) {
        bases.emplace_back(name);
      }
    }
    ::closedir(listing);
  }
  std::sort(bases.begin(), bases.end());
  std::vector<StateSummary> states;
  for (const std::string& base_name : bases) {
    StateSummary summary;
    summary.file_base = base_name;
    // Read-only, no lock: a listing must never make a holder's next open fail.
    base::ScopedFd fd(
        ::openat(dir.get(), (base_name + ".state").c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
    struct stat file;
    Header header;
    if (fd.valid() && ::fstat(fd.get(), &file) == 0 && S_ISREG(file.st_mode) && file.st_uid == ::geteuid() &&
        ::pread(fd.get(), &header, sizeof(header), 0) == static_cast<ssize_t>(sizeof(header)) &&
        header.magic == Header::kMagic && header.version == Header::kVersion) {
      summary.valid_header = true;
      summary.open = header.open_state == Header::kOpen;
      summary.in_power_transition = header.power == Header::kTransition;
      summary.holder_pid = header.holder_pid;
      // kill(pid, 0) asks whether the process exists (ESRCH when not); EPERM means it exists but is another user's.
      summary.holder_alive = summary.open && header.holder_pid != 0 &&
                             (::kill(static_cast<pid_t>(header.holder_pid), 0) == 0 || errno == EPERM);
    }
    states.push_back(std::move(summary));
  }
  return states;
}

absl::Status PersistentState::PowerCycle(absl::string_view device) {
  BAREGPU_ASSIGN_OR_RETURN(const std::string base_name, StateFileBase(device));
  const std::string dir_path = StateDirectory();
  struct stat st;
  if (::lstat(dir_path.c_str(), &st) != 0 && errno == ENOENT) return absl::OkStatus();  // never powered
  BAREGPU_ASSIGN_OR_RETURN(base::ScopedFd dir, OpenDirectory(dir_path, /*create=*/false));
  std::vector<std::string> names;
  {
    DIR* listing = ::fdopendir(::dup(dir.get()));
    if (listing == nullptr) return base::ErrnoError(errno, absl::StrCat("opendir ", dir_path));
    ::rewinddir(listing);
    const std::string prefix = base_name + ".";
    while (const dirent* entry = ::readdir(listing)) {
      if (absl::StartsWith(entry->d_name, prefix)) names.emplace_back(entry->d_name);
    }
    ::closedir(listing);
  }
  std::sort(names.begin(), names.end());
  // Lock every file that is ours, so no holder loses its device; anything else (a link, another user's file) is
  // only removed, never opened.
  base::ScopedFd header(
      ::openat(dir.get(), (base_name + ".state").c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
  std::vector<base::ScopedFd> locks;
  for (const std::string& name : names) {
    base::ScopedFd fd(::openat(dir.get(), name.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
    struct stat file;
    if (!fd.valid() || ::fstat(fd.get(), &file) != 0 || !S_ISREG(file.st_mode) || file.st_uid != ::geteuid()) {
      continue;
    }
    BAREGPU_RETURN_IF_ERROR(Lock(fd.get(), absl::StrCat(dir_path, "/", name), device, header.get()));
    locks.push_back(std::move(fd));
  }
  for (const std::string& name : names) {
    if (::unlinkat(dir.get(), name.c_str(), 0) != 0 && errno != ENOENT) {
      return base::ErrnoError(errno, absl::StrFormat("remove %s/%s", dir_path, name));
    }
  }
  return absl::OkStatus();
}

}  // namespace pci::sim
