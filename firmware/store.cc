#include "firmware/store.h"

#include <cstdlib>
#include <filesystem>
#include <system_error>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "base/file.h"
#include "base/printable.h"
#include "base/status_macros.h"
#include "firmware/decompress.h"
#include "firmware/virtual_firmware.h"

namespace firmware {

std::vector<std::string> UserSearchRoots() {
  std::vector<std::string> roots;
  if (const char* env = std::getenv(kFirmwarePathEnv)) {
    for (absl::string_view root : absl::StrSplit(env, ':', absl::SkipEmpty())) roots.emplace_back(root);
  }
  return roots;
}

std::vector<std::string> UserSearchRootProblems() {
  std::vector<std::string> problems;
  for (const std::string& root : UserSearchRoots()) {
    std::error_code error;
    const bool exists = std::filesystem::exists(root, error);
    if (exists && std::filesystem::is_directory(root, error)) continue;
    problems.push_back(absl::StrCat(kFirmwarePathEnv, " entry ", base::Printable(root),
                                    exists ? " is not a directory" : " does not exist", "; it is skipped"));
  }
  return problems;
}

std::vector<std::string> DefaultSearchRoots() {
  std::vector<std::string> roots = UserSearchRoots();
  roots.push_back("/lib/firmware/updates");
  roots.push_back("/lib/firmware");
  return roots;
}

std::vector<std::string> DeviceSearchRoots(const std::vector<std::string>& device_roots) {
  std::vector<std::string> roots = UserSearchRoots();
  roots.insert(roots.end(), device_roots.begin(), device_roots.end());
  roots.push_back("/lib/firmware/updates");
  roots.push_back("/lib/firmware");
  return roots;
}

Store StoreForDevice(bool is_virtual) {
  return Store(
      DeviceSearchRoots(is_virtual ? std::vector<std::string>{VirtualFirmwareDir()} : std::vector<std::string>{}));
}

std::vector<std::string> Store::Candidates(absl::string_view name) const {
  std::vector<std::string> paths;
  for (const std::string& root : roots_) {
    const std::string base = absl::StrCat(root, root.empty() || root.back() == '/' ? "" : "/", "amdgpu/", name);
    for (absl::string_view suffix : {"", ".zst", ".xz"}) paths.push_back(absl::StrCat(base, suffix));
  }
  return paths;
}

Location Store::Locate(absl::string_view name) const {
  Location location;
  for (std::string& path : Candidates(name)) {
    location.tried.push_back(path);
    if (base::PathExists(path)) {
      location.path = std::move(path);
      break;
    }
  }
  return location;
}

absl::StatusOr<std::string> ReadFirmwareFile(const std::string& path) {
  // Compressed files are small; the decompressor enforces the limit on what they expand to.
  BAREGPU_ASSIGN_OR_RETURN(std::string raw, base::ReadFile(path, kMaxFirmwareSize));
  return Decompress(path, std::move(raw), CompressionOf(path));
}

absl::StatusOr<LoadedFile> Store::Load(absl::string_view name) const { return Load(name, {}); }

absl::StatusOr<LoadedFile> Store::Load(absl::string_view name, const std::vector<std::string>& fallbacks) const {
  std::vector<std::string> names = {std::string(name)};
  names.insert(names.end(), fallbacks.begin(), fallbacks.end());
  std::vector<std::string> tried;
  for (const std::string& root : roots_) {
    const Store one_root({root});
    for (const std::string& candidate : names) {
      Location location = one_root.Locate(candidate);
      tried.insert(tried.end(), location.tried.begin(), location.tried.end());
      if (!location.path) continue;
      BAREGPU_ASSIGN_OR_RETURN(std::string data, ReadFirmwareFile(*location.path));
      return LoadedFile{candidate, *location.path, std::move(data)};
    }
  }
  const auto printable = [](std::string* out, const std::string& path) { out->append(base::Printable(path)); };
  std::string problems;
  for (const std::string& problem : UserSearchRootProblems()) absl::StrAppend(&problems, " (", problem, ")");
  return absl::NotFoundError(absl::StrCat(
      "firmware amdgpu/", absl::StrJoin(names, " or amdgpu/", printable), " not found; tried ",
      absl::StrJoin(tried, ", ", printable), ". Install linux-firmware (Debian: firmware-amd-graphics) or point ",
      kFirmwarePathEnv, " at a directory that holds amdgpu/", base::Printable(name), problems));
}

}  // namespace firmware
