#include "firmware/file_kind.h"

#include <cstring>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "base/printable.h"

namespace firmware {
namespace {

struct KindInfo {
  FileKind kind;
  const char* name;
  Family family;
};

constexpr KindInfo kKinds[] = {
    {FileKind::kSos, "sos", Family::kPsp},    {FileKind::kTa, "ta", Family::kTa},
    {FileKind::kToc, "toc", Family::kPsp},    {FileKind::kAsd, "asd", Family::kPsp},
    {FileKind::kCap, "cap", Family::kPsp},    {FileKind::kPfp, "pfp", Family::kGfx},
    {FileKind::kMe, "me", Family::kGfx},      {FileKind::kCe, "ce", Family::kGfx},
    {FileKind::kMec, "mec", Family::kGfx},    {FileKind::kMec2, "mec2", Family::kGfx},
    {FileKind::kRlc, "rlc", Family::kRlc},    {FileKind::kSdma, "sdma", Family::kSdma},
    {FileKind::kSmc, "smc", Family::kSmc},    {FileKind::kImu, "imu", Family::kImu},
    {FileKind::kMes, "mes", Family::kMes},    {FileKind::kMesKiq, "mes_kiq", Family::kMes},
    {FileKind::kMc, "mc", Family::kMc},       {FileKind::kGpuInfo, "gpu_info", Family::kGpuInfo},
    {FileKind::kUvd, "uvd", Family::kUcode},  {FileKind::kVce, "vce", Family::kUcode},
    {FileKind::kVcn, "vcn", Family::kUcode},  {FileKind::kIsp, "isp", Family::kUcode},
    {FileKind::kDmcu, "dmcu", Family::kDmcu}, {FileKind::kDmcub, "dmcub", Family::kDmcub},
    {FileKind::kVpe, "vpe", Family::kVpe},    {FileKind::kUmschMm, "umsch_mm", Family::kUmsch},
};

// File-name endings, longest first where one is a suffix of another ("_mes_2" before "_mes").
struct Suffix {
  const char* suffix;
  FileKind kind;
  int instance;
};
constexpr Suffix kSuffixes[] = {
    {"_gpu_info", FileKind::kGpuInfo, 0},
    {"_uni_mes", FileKind::kMes, 0},
    {"_mes_2", FileKind::kMes, 0},
    {"_mes1", FileKind::kMesKiq, 0},
    {"_mes", FileKind::kMes, 0},
    {"_mec2", FileKind::kMec2, 0},
    {"_mec", FileKind::kMec, 0},
    {"_pfp", FileKind::kPfp, 0},
    {"_me", FileKind::kMe, 0},
    {"_ce", FileKind::kCe, 0},
    {"_rlc_1", FileKind::kRlc, 0},
    {"_rlc", FileKind::kRlc, 0},
    {"_imu", FileKind::kImu, 0},
    {"_sos", FileKind::kSos, 0},
    {"_ta", FileKind::kTa, 0},
    {"_toc", FileKind::kToc, 0},
    {"_asd", FileKind::kAsd, 0},
    {"_cap", FileKind::kCap, 0},
    {"_smc", FileKind::kSmc, 0},
    {"_mc", FileKind::kMc, 0},
    {"_sdma", FileKind::kSdma, 0},
    {"_sdma1", FileKind::kSdma, 1},
    {"_sdma2", FileKind::kSdma, 2},
    {"_sdma3", FileKind::kSdma, 3},
    {"_sdma4", FileKind::kSdma, 4},
    {"_sdma5", FileKind::kSdma, 5},
    {"_sdma6", FileKind::kSdma, 6},
    {"_sdma7", FileKind::kSdma, 7},
    {"_uvd", FileKind::kUvd, 0},
    {"_vce", FileKind::kVce, 0},
    {"_vcn", FileKind::kVcn, 0},
    {"_dmcu", FileKind::kDmcu, 0},
    {"_dmcub", FileKind::kDmcub, 0},
};

// IP-versioned names carry no role suffix: smu_13_0_0.bin, sdma_6_0_0.bin, vcn_4_0_0.bin, ...
struct VersionedPrefix {
  const char* prefix;
  FileKind kind;
};
constexpr VersionedPrefix kVersionedPrefixes[] = {
    {"smu_", FileKind::kSmc}, {"sdma_", FileKind::kSdma}, {"vcn_", FileKind::kVcn},
    {"isp_", FileKind::kIsp}, {"vpe_", FileKind::kVpe},   {"umsch_mm_", FileKind::kUmschMm},
};

// Variants of the same container the driver picks by board ("_kicker", navi14 "_wks", vega20 "_old", polaris
// "_2" and "_sk" (gfx_v8_0.c, smu7), picasso "_am4" (gfx_v9_0.c)).
constexpr const char* kVariantSuffixes[] = {"_kicker", "_wks", "_old", "_2", "_sk", "_am4"};

const KindInfo& Info(FileKind kind) {
  for (const KindInfo& info : kKinds) {
    if (info.kind == kind) return info;
  }
  return kKinds[0];
}

bool IsIpVersionPrefix(absl::string_view rest) {
  // "13_0_0": digits and underscores only.
  if (rest.empty()) return false;
  for (char c : rest) {
    if (!absl::ascii_isdigit(static_cast<unsigned char>(c)) && c != '_') return false;
  }
  return true;
}

}  // namespace

absl::string_view FileKindName(FileKind kind) { return Info(kind).name; }
Family FamilyOf(FileKind kind) { return Info(kind).family; }

absl::string_view FamilyName(Family family) {
  switch (family) {
    case Family::kPsp:
      return "psp";
    case Family::kTa:
      return "ta";
    case Family::kGfx:
      return "gfx";
    case Family::kRlc:
      return "rlc";
    case Family::kSdma:
      return "sdma";
    case Family::kSmc:
      return "smc";
    case Family::kImu:
      return "imu";
    case Family::kMes:
      return "mes";
    case Family::kMc:
      return "mc";
    case Family::kGpuInfo:
      return "gpu_info";
    case Family::kUcode:
      return "ucode";
    case Family::kDmcu:
      return "dmcu";
    case Family::kDmcub:
      return "dmcub";
    case Family::kVpe:
      return "vpe";
    case Family::kUmsch:
      return "umsch_mm";
  }
  return "?";
}

absl::StatusOr<FileRole> RoleFromFileName(absl::string_view path) {
  absl::string_view stem = path.substr(path.rfind('/') == absl::string_view::npos ? 0 : path.rfind('/') + 1);
  for (absl::string_view ext : {".zst", ".xz"}) absl::ConsumeSuffix(&stem, ext);
  absl::ConsumeSuffix(&stem, ".bin");
  for (bool stripped = true; stripped;) {
    stripped = false;
    for (const char* variant : kVariantSuffixes) stripped |= absl::ConsumeSuffix(&stem, variant);
  }
  for (const VersionedPrefix& versioned : kVersionedPrefixes) {
    absl::string_view rest = stem;
    if (absl::ConsumePrefix(&rest, versioned.prefix) && IsIpVersionPrefix(rest)) return FileRole{versioned.kind};
  }
  const Suffix* best = nullptr;
  for (const Suffix& s : kSuffixes) {
    if (absl::EndsWith(stem, s.suffix) && (best == nullptr || strlen(s.suffix) > strlen(best->suffix))) best = &s;
  }
  if (best == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat(base::Printable(path),
                     ": cannot tell the firmware kind from the file name (expected an amdgpu name such as "
                     "psp_13_0_0_sos.bin, gc_11_0_0_mec.bin, sdma_6_0_0.bin or navi10_rlc.bin); pass --kind=KIND"));
  }
  return FileRole{best->kind, best->instance};
}

absl::StatusOr<FileRole> RoleFromKindName(absl::string_view name) {
  for (const KindInfo& info : kKinds) {
    if (name == info.name) return FileRole{info.kind};
  }
  absl::string_view rest = name;
  if (absl::ConsumePrefix(&rest, "sdma") && rest.size() == 1 && rest[0] >= '0' && rest[0] <= '7') {
    return FileRole{FileKind::kSdma, rest[0] - '0'};
  }
  std::string known;
  for (const KindInfo& info : kKinds) absl::StrAppend(&known, known.empty() ? "" : ", ", info.name);
  return absl::InvalidArgumentError(
      absl::StrCat("unknown firmware kind '", name, "' (known: ", known, ", sdma0..sdma7)"));
}

}  // namespace firmware
