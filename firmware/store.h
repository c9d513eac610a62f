// The firmware store: where amdgpu firmware files are looked for, in order, and loading them (plain, .zst or
// .xz). The search path is BAREGPU_FIRMWARE_PATH (colon-separated roots), then the device's own (a virtual GPU's
// virtual firmware), then /lib/firmware/updates and /lib/firmware, as the kernel's loader does; each root holds the
// files under amdgpu/.
#ifndef BAREGPU_FIRMWARE_STORE_H_
#define BAREGPU_FIRMWARE_STORE_H_

#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace firmware {

inline constexpr char kFirmwarePathEnv[] = "BAREGPU_FIRMWARE_PATH";

// BAREGPU_FIRMWARE_PATH's entries (empty ones skipped): the directories the user named.
std::vector<std::string> UserSearchRoots();
// One line per BAREGPU_FIRMWARE_PATH entry that is not a directory ("BAREGPU_FIRMWARE_PATH entry /fw/typo does not
// exist; it is skipped"): a typo there would otherwise go unnoticed while another root's files are used.
std::vector<std::string> UserSearchRootProblems();
// The user's roots, then /lib/firmware/updates, /lib/firmware.
std::vector<std::string> DefaultSearchRoots();
// The roots for a device that brings its own (a virtual GPU's virtual firmware): the user's first, so that
// BAREGPU_FIRMWARE_PATH=/lib/firmware boots a virtual GPU with real firmware, then the device's, then the system's
// (which a virtual GPU thus never reaches while its own set is complete: /lib/firmware may hold any release).
std::vector<std::string> DeviceSearchRoots(const std::vector<std::string>& device_roots);

struct LoadedFile {
  std::string name;  // as asked: "psp_13_0_0_sos.bin"
  std::string path;  // where it was found: "/lib/firmware/amdgpu/psp_13_0_0_sos.bin.zst"
  std::string data;  // decompressed
};

struct Location {
  std::optional<std::string> path;  // the first candidate that exists
  std::vector<std::string> tried;   // every candidate looked at, in order, up to and including `path`
};

class Store {
 public:
  explicit Store(std::vector<std::string> roots) : roots_(std::move(roots)) {}
  static Store Default() { return Store(DefaultSearchRoots()); }

  const std::vector<std::string>& roots() const { return roots_; }

  // ROOT/amdgpu/NAME, NAME.zst, NAME.xz for each root in order: a user's root wins over the system's whatever
  // the compression.
  std::vector<std::string> Candidates(absl::string_view name) const;
  Location Locate(absl::string_view name) const;
  // Reads and decompresses the first candidate that exists; NotFound lists every path tried.
  absl::StatusOr<LoadedFile> Load(absl::string_view name) const;
  // A file that has older names (gc_11_0_0_mes_2.bin, else gc_11_0_0_mes.bin): root by root, the first of `name`
  // and `fallbacks` the root holds, so that one release's files are never completed from a later root's (a user's
  // real firmware from the virtual set).
  absl::StatusOr<LoadedFile> Load(absl::string_view name, const std::vector<std::string>& fallbacks) const;

 private:
  std::vector<std::string> roots_;
};

// The store a device uses: DeviceSearchRoots with, for a virtual device (sim:navi31), its virtual firmware
// (VirtualFirmwareDir()).
Store StoreForDevice(bool is_virtual);

// Reads (and decompresses, by suffix) one firmware file given by path.
absl::StatusOr<std::string> ReadFirmwareFile(const std::string& path);

}  // namespace firmware

#endif  // BAREGPU_FIRMWARE_STORE_H_
