#include "firmware/nv/requirements.h"

#include <unistd.h>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"

namespace firmware::nv {
namespace {

// firmware::ResolveDeviceName's prefix for virtual devices (requirements.cc's kVirtualPrefix).
constexpr absl::string_view kVirtualPrefix = "sim:";

std::string Family(absl::string_view section) {
  absl::ConsumePrefix(&section, ".fwsignature_");
  return std::string(section);
}

}  // namespace

const std::vector<ChipProfile>& ChipProfiles() {
  // r535.c's NVKM_GSP_FIRMWARE chips; the signature section from each family's nvkm_gsp_func.sig_section.
  static const auto* profiles = new std::vector<ChipProfile>{
      {"tu102", "TU102 (Turing)", ".fwsignature_tu10x"}, {"tu104", "TU104 (Turing)", ".fwsignature_tu10x"},
      {"tu106", "TU106 (Turing)", ".fwsignature_tu10x"}, {"tu116", "TU116 (Turing)", ".fwsignature_tu11x"},
      {"tu117", "TU117 (Turing)", ".fwsignature_tu11x"}, {"ga100", "GA100 (Ampere)", ".fwsignature_ga100"},
      {"ga102", "GA102 (Ampere)", ".fwsignature_ga10x"}, {"ga103", "GA103 (Ampere)", ".fwsignature_ga10x"},
      {"ga104", "GA104 (Ampere)", ".fwsignature_ga10x"}, {"ga106", "GA106 (Ampere)", ".fwsignature_ga10x"},
      {"ga107", "GA107 (Ampere)", ".fwsignature_ga10x"}, {"ad102", "AD102 (Ada)", ".fwsignature_ad10x"},
      {"ad103", "AD103 (Ada)", ".fwsignature_ad10x"},    {"ad104", "AD104 (Ada)", ".fwsignature_ad10x"},
      {"ad106", "AD106 (Ada)", ".fwsignature_ad10x"},    {"ad107", "AD107 (Ada)", ".fwsignature_ad10x"},
  };
  return *profiles;
}

absl::StatusOr<ChipProfile> FindChipProfile(absl::string_view name) {
  for (const ChipProfile& p : ChipProfiles()) {
    if (p.name == name) return p;
  }
  std::vector<std::string> names;
  for (const ChipProfile& p : ChipProfiles()) names.push_back(p.name);
  return absl::NotFoundError(
      absl::StrCat("no NVIDIA chip profile '", name, "' (known: ", absl::StrJoin(names, ", "), ")"));
}

absl::StatusOr<ChipTarget> ResolveChipName(absl::string_view device) {
  absl::string_view rest = device;
  const bool is_virtual = absl::ConsumePrefix(&rest, kVirtualPrefix);
  // "sim:ad102:test" names an instance; firmware depends on the chip only.
  rest = rest.substr(0, rest.find(':'));
  absl::StatusOr<ChipProfile> profile = FindChipProfile(rest);
  if (!profile.ok()) return profile.status();
  return ChipTarget{*std::move(profile), is_virtual};
}

std::vector<RequiredFile> RequiredFiles(const ChipProfile& chip) {
  struct Entry {
    const char* base;
    NvFileKind kind;
    const char* role;
  };
  // r535_gsp_load's order.
  constexpr Entry kEntries[] = {
      {"gsp", NvFileKind::kGspRm, "GSP-RM image (.fwimage) and its signature"},
      {"booter_load", NvFileKind::kBooterLoad, "SEC2 HS ucode that starts GSP-RM"},
      {"booter_unload", NvFileKind::kBooterUnload, "SEC2 HS ucode that stops GSP-RM"},
      {"bootloader", NvFileKind::kBootloader, "GSP RISC-V bootloader and monitor"},
  };
  std::vector<RequiredFile> files;
  for (const Entry& e : kEntries) {
    const std::string name = absl::StrCat(e.base, "-", kGspRmVersion, ".bin");
    files.push_back({name, absl::StrCat("nvidia/", chip.name, "/gsp/", name), e.kind, e.role});
  }
  return files;
}

Location Locate(const std::vector<std::string>& roots, absl::string_view relative_path) {
  Location location;
  for (const std::string& root : roots) {
    const std::string base = absl::StrCat(root, root.empty() || root.back() == '/' ? "" : "/", relative_path);
    for (const char* suffix : {"", ".zst", ".xz"}) {
      std::string path = base + suffix;
      location.tried.push_back(path);
      if (access(path.c_str(), F_OK) == 0) {
        location.path = std::move(path);
        return location;
      }
    }
  }
  return location;
}

absl::Status CheckForChip(const ChipProfile& chip, const RequiredFile& required, const NvFileInfo& info) {
  if (info.kind != required.kind) {
    return absl::FailedPreconditionError(absl::StrFormat("%s: is a %s file, not %s", info.file,
                                                         NvFileKindName(info.kind), NvFileKindName(required.kind)));
  }
  if (required.kind != NvFileKind::kGspRm) return absl::OkStatus();
  bool has_signature = false;
  std::vector<std::string> sections;
  for (const NvRegion& r : info.regions) {
    if (absl::StartsWith(r.name, ".fwsignature_")) sections.push_back(Family(r.name));
    if (r.name == chip.signature_section) has_signature = true;
  }
  if (!has_signature) {
    return absl::FailedPreconditionError(
        absl::StrFormat("%s: no %s section for %s (the image signs for %s); it is a GSP-RM image for other chips",
                        info.file, chip.signature_section, chip.name, absl::StrJoin(sections, ", ")));
  }
  if (info.fw_version != kGspRmVersion) {
    return absl::FailedPreconditionError(
        absl::StrFormat("%s: .fwversion says '%s', not %s", info.file, info.fw_version, kGspRmVersion));
  }
  return absl::OkStatus();
}

}  // namespace firmware::nv
