// baregpu fw: inspect firmware files (`fw info`) and list what a device needs and where it was found (`fw need`).
#include <filesystem>
#include <ostream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "base/printable.h"
#include "base/sha256.h"
#include "base/status_macros.h"
#include "firmware/container.h"
#include "firmware/nv/file_kind.h"
#include "firmware/nv/requirements.h"
#include "firmware/requirements.h"
#include "firmware/store.h"
#include "firmware/virtual_firmware.h"
#include "tools/cli/command.h"
#include "tools/cli/json.h"

namespace cli {
namespace {

std::string Types(const firmware::Component& c) {
  std::vector<std::string> names;
  for (uint32_t t : c.types) names.push_back(firmware::TypeName(c.load, t));
  return names.empty() ? "-" : absl::StrJoin(names, ", ");
}

std::string HeaderVersion(const firmware::CommonHeader& h) {
  return absl::StrFormat("%d.%d", h.header_version_major, h.header_version_minor);
}

Json ContainerJson(const firmware::Container& c, absl::string_view data) {
  const firmware::CommonHeader& h = c.header;
  Json fields = Json::object();
  for (const firmware::HeaderField& f : c.fields) fields[f.name] = Hex(f.value);
  Json components = Json::array();
  for (const firmware::Component& comp : c.components) {
    Json types = Json::array();
    for (uint32_t t : comp.types) types.push_back({{"value", t}, {"name", firmware::TypeName(comp.load, t)}});
    components.push_back({{"name", comp.name},
                          {"offset", Hex(comp.offset)},
                          {"size", comp.size},
                          {"version", comp.version ? Json(Hex(*comp.version)) : Json(nullptr)},
                          {"load", std::string(firmware::LoadPathName(comp.load))},
                          {"types", types},
                          {"sha256", base::Sha256::HexHash(firmware::ComponentBytes(data, comp))}});
  }
  return Json{{"file", c.file},
              {"kind", std::string(firmware::FileKindName(c.role.kind))},
              {"layout", c.layout},
              {"header_version", HeaderVersion(h)},
              {"ip_version", absl::StrFormat("%d.%d", h.ip_version_major, h.ip_version_minor)},
              {"ucode_version", Hex(h.ucode_version)},
              {"file_size", c.file_size},
              {"size_bytes", h.size_bytes},
              {"header_size_bytes", h.header_size_bytes},
              {"ucode_size_bytes", h.ucode_size_bytes},
              {"ucode_array_offset_bytes", Hex(h.ucode_array_offset_bytes)},
              {"crc32", Hex(h.crc32, 8)},
              {"sha256", base::Sha256::HexHash(data)},
              {"fields", fields},
              {"components", components},
              {"notes", c.notes}};
}

void PrintContainer(std::ostream& out, const std::string& path, const firmware::Container& c, absl::string_view data) {
  const firmware::CommonHeader& h = c.header;
  out << base::Printable(path) << "\n";
  out << absl::StrFormat("  %s firmware, %s (header %s), IP %d.%d, ucode version 0x%08x\n",
                         firmware::FileKindName(c.role.kind), c.layout, HeaderVersion(h), h.ip_version_major,
                         h.ip_version_minor, h.ucode_version);
  out << absl::StrFormat("  %d bytes (size_bytes %d), header %d bytes, ucode array at 0x%x, %d bytes, crc32 0x%08x\n",
                         c.file_size, h.size_bytes, h.header_size_bytes, h.ucode_array_offset_bytes, h.ucode_size_bytes,
                         h.crc32);
  std::vector<std::string> nonzero;
  for (const firmware::HeaderField& f : c.fields) {
    if (f.value != 0) nonzero.push_back(absl::StrFormat("%s=0x%x", f.name, f.value));
  }
  if (!nonzero.empty()) out << "  fields: " << absl::StrJoin(nonzero, " ") << "\n";
  // Types last: a stack shared by four pipes lists four of them.
  out << absl::StrFormat("  %-24s %10s %10s %10s %-10s %-64s %s\n", "component", "offset", "size", "version", "load",
                         "sha256", "type");
  for (const firmware::Component& comp : c.components) {
    out << absl::StrFormat("  %-24s %#10x %10d %10s %-10s %-64s %s\n", comp.name, comp.offset, comp.size,
                           comp.version ? absl::StrFormat("%#x", *comp.version) : "-",
                           firmware::LoadPathName(comp.load),
                           base::Sha256::HexHash(firmware::ComponentBytes(data, comp)), Types(comp));
  }
  for (const std::string& note : c.notes) out << "  note: " << note << "\n";
}

// NVIDIA files (firmware/nv): the structures' fields by their source names, byte ranges, and notes.
Json NvFileJson(const firmware::nv::NvFileInfo& info, absl::string_view data) {
  Json fields = Json::object();
  for (const firmware::nv::NvField& f : info.fields) fields[f.name] = Hex(f.value);
  Json regions = Json::array();
  for (const firmware::nv::NvRegion& r : info.regions) {
    regions.push_back({{"name", r.name},
                       {"offset", Hex(r.offset)},
                       {"size", r.size},
                       {"sha256", base::Sha256::HexHash(data.substr(r.offset, r.size))}});
  }
  return Json{{"file", info.file},
              {"vendor", "nvidia"},
              {"kind", std::string(firmware::nv::NvFileKindName(info.kind))},
              {"layout", info.layout},
              {"parsed", info.parsed},
              {"chip", info.chip.empty() ? Json(nullptr) : Json(info.chip)},
              {"version", info.version.empty() ? Json(nullptr) : Json(info.version)},
              {"fw_version", info.fw_version.empty() ? Json(nullptr) : Json(info.fw_version)},
              {"file_size", info.file_size},
              {"sha256", base::Sha256::HexHash(data)},
              {"fields", fields},
              {"regions", regions},
              {"notes", info.notes}};
}

void PrintNvFile(std::ostream& out, const std::string& path, const firmware::nv::NvFileInfo& info,
                 absl::string_view data) {
  out << base::Printable(path) << "\n";
  std::vector<std::string> what;
  if (!info.chip.empty()) what.push_back(base::Printable(info.chip));
  if (!info.version.empty()) what.push_back(base::Printable(info.version));
  out << absl::StrFormat("  NVIDIA %s firmware%s, %s\n", firmware::nv::NvFileKindName(info.kind),
                         what.empty() ? "" : " (" + absl::StrJoin(what, ", ") + ")", info.layout);
  out << absl::StrFormat("  %d bytes, sha256 %s%s\n", info.file_size, base::Sha256::HexHash(data),
                         info.fw_version.empty() ? "" : ", .fwversion " + base::Printable(info.fw_version));
  for (const firmware::nv::NvField& f : info.fields) out << absl::StrFormat("  %-44s 0x%x\n", f.name, f.value);
  if (!info.regions.empty()) {
    out << absl::StrFormat("  %-24s %10s %10s %s\n", "region", "offset", "size", "sha256");
    for (const firmware::nv::NvRegion& r : info.regions) {
      out << absl::StrFormat("  %-24s %#10x %10d %s\n", base::Printable(r.name), r.offset, r.size,
                             base::Sha256::HexHash(data.substr(r.offset, r.size)));
    }
  }
  for (const std::string& note : info.notes) out << "  note: " << note << "\n";
}

absl::Status RunInfo(Invocation& inv) {
  if (inv.positional().size() < 2) return inv.UsageError("'baregpu fw info' needs at least one FILE");
  std::optional<firmware::FileRole> role;
  std::optional<firmware::nv::NvFileKind> nv_role;  // --kind naming an NVIDIA kind (booter_load, gsp, ...)
  if (auto kind = inv.value("kind")) {
    nv_role = firmware::nv::NvFileKindFromName(*kind);
    if (!nv_role) {
      absl::StatusOr<firmware::FileRole> parsed = firmware::RoleFromKindName(*kind);
      if (!parsed.ok()) return inv.UsageError(parsed.status().message());
      role = *parsed;
    }
  }
  Json files = Json::array();
  std::vector<std::string> failures;
  for (size_t i = 1; i < inv.positional().size(); ++i) {
    const std::string& path = inv.positional()[i];
    absl::StatusOr<std::string> data = firmware::ReadFirmwareFile(path);
    // An NVIDIA name (or an nvidia/ path) goes to firmware/nv unless --kind names an amdgpu kind.
    if (std::optional<firmware::nv::NvFileKind> nv_kind = !data.ok() || role ? std::nullopt
                                                          : nv_role          ? nv_role
                                                                    : firmware::nv::DetectNvFile(path, *data)) {
      absl::StatusOr<firmware::nv::NvFileInfo> info = firmware::nv::DescribeNvFile(path, *data, *nv_kind);
      if (!info.ok()) {
        failures.emplace_back(info.status().message());
        if (inv.json()) files.push_back({{"file", path}, {"error", std::string(info.status().message())}});
      } else if (inv.json()) {
        files.push_back(NvFileJson(*info, *data));
      } else {
        if (i > 1) inv.out() << "\n";
        PrintNvFile(inv.out(), path, *info, *data);
      }
      continue;
    }
    absl::StatusOr<firmware::Container> parsed = !data.ok() ? absl::StatusOr<firmware::Container>(data.status())
                                                 : role     ? firmware::ParseContainer(path, *data, *role)
                                                            : firmware::ParseContainer(path, *data);
    if (!parsed.ok()) {
      failures.emplace_back(parsed.status().message());
      if (inv.json()) files.push_back({{"file", path}, {"error", std::string(parsed.status().message())}});
      continue;
    }
    if (inv.json()) {
      files.push_back(ContainerJson(*parsed, *data));
    } else {
      if (i > 1) inv.out() << "\n";
      PrintContainer(inv.out(), path, *parsed, *data);
    }
  }
  SetJsonSchema("baregpu.fw.info/1");
  if (inv.json()) PrintJson(inv.out(), Json{{"files", files}});
  if (failures.empty()) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrJoin(failures, "; "));
}

struct NeedResult {
  const firmware::RequiredFile* required;
  firmware::Location location;
  absl::Status status;  // missing, unreadable, malformed, wrong layout, or a virtual component rejected
  std::string layout;
};

// For a virtual device, also checks every component as the virtual PSP will.
absl::Status CheckVirtualComponents(const firmware::AsicProfile& profile, const firmware::RequiredFile& required,
                                    const firmware::Container& c, absl::string_view data) {
  for (const firmware::Component& comp : c.components) {
    if (comp.load == firmware::LoadPath::kDriver) continue;
    for (uint32_t type : comp.types) {
      firmware::VirtualFirmwareVerdict v = firmware::ValidateVirtualFirmware(
          firmware::ComponentBytes(data, comp), {profile.name, required.ip, comp.load, type});
      if (!v.ok()) {
        return absl::FailedPreconditionError(
            absl::StrFormat("%s: component '%s' fails the virtual PSP's check (%s: %s)", c.file, comp.name,
                            firmware::VirtualFirmwareCheckName(v.check), v.detail));
      }
    }
  }
  return absl::OkStatus();
}

NeedResult Resolve(const firmware::Store& store, const firmware::DeviceFirmwareTarget& target,
                   const firmware::RequiredFile& required) {
  NeedResult r{&required, {}, absl::OkStatus(), ""};
  std::vector<std::string> names = {required.name};
  names.insert(names.end(), required.fallbacks.begin(), required.fallbacks.end());
  for (const std::string& name : names) {
    firmware::Location l = store.Locate(name);
    r.location.tried.insert(r.location.tried.end(), l.tried.begin(), l.tried.end());
    if (l.path) {
      r.location.path = l.path;
      break;
    }
  }
  if (!r.location.path) {
    r.status = absl::NotFoundError(absl::StrCat(required.name, " not found"));
    return r;
  }
  absl::StatusOr<std::string> data = firmware::ReadFirmwareFile(*r.location.path);
  if (!data.ok()) {
    r.status = data.status();
    return r;
  }
  absl::StatusOr<firmware::Container> c = firmware::ParseContainer(*r.location.path, *data, required.role);
  if (!c.ok()) {
    r.status = c.status();
    return r;
  }
  r.layout = absl::StrCat(c->layout, " (", HeaderVersion(c->header), ")");
  r.status = firmware::CheckProvides(required, *c);
  if (r.status.ok() && target.is_virtual) r.status = CheckVirtualComponents(target.profile, required, *c, *data);
  return r;
}

// fw need for an NVIDIA chip: GSP-RM's four files (firmware/nv/requirements.h), each found, parsed and checked.
struct NvNeedResult {
  const firmware::nv::RequiredFile* required;
  firmware::Location location;
  std::string resolved;  // where a found path leads through links ("" when it is no link)
  std::optional<firmware::nv::NvFileInfo> info;
  absl::Status status;
};

NvNeedResult ResolveNv(const std::vector<std::string>& roots, const firmware::nv::ChipProfile& chip,
                       const firmware::nv::RequiredFile& required) {
  NvNeedResult r{&required, firmware::nv::Locate(roots, required.relative_path), "", std::nullopt, absl::OkStatus()};
  if (!r.location.path) {
    r.status = absl::NotFoundError(absl::StrCat(required.relative_path, " not found"));
    return r;
  }
  // firmware-nvidia-graphics links chips that share a file (ad102's gsp-*.bin is ga102's); say where it leads.
  std::error_code error;
  const std::filesystem::path real = std::filesystem::canonical(*r.location.path, error);
  const std::filesystem::path asked = std::filesystem::absolute(*r.location.path, error).lexically_normal();
  if (!real.empty() && real != asked) r.resolved = real.string();
  absl::StatusOr<std::string> data = firmware::ReadFirmwareFile(*r.location.path);
  if (!data.ok()) {
    r.status = data.status();
    return r;
  }
  absl::StatusOr<firmware::nv::NvFileInfo> info = firmware::nv::DescribeNvFile(*r.location.path, *data, required.kind);
  if (!info.ok()) {
    r.status = info.status();
    return r;
  }
  r.info = *std::move(info);
  r.status = firmware::nv::CheckForChip(chip, required, *r.info);
  return r;
}

// Version coherence across a chip's files: the version each found file's name says (through links: a link to
// another release's file would show here) and what the GSP-RM image's .fwversion says. Empty when coherent.
std::vector<std::string> VersionNotes(const std::vector<NvNeedResult>& results) {
  std::vector<std::string> notes;
  for (const NvNeedResult& r : results) {
    if (!r.location.path) continue;
    const std::string named = firmware::nv::VersionFromPath(r.resolved.empty() ? *r.location.path : r.resolved);
    if (named != firmware::nv::kGspRmVersion) {
      notes.push_back(absl::StrFormat("%s resolves to a file named for version '%s', not %s", r.required->name,
                                      base::Printable(named), firmware::nv::kGspRmVersion));
    }
    if (r.info && r.required->kind == firmware::nv::NvFileKind::kGspRm &&
        r.info->fw_version != firmware::nv::kGspRmVersion) {
      notes.push_back(absl::StrFormat("%s's .fwversion says '%s', the file names %s", r.required->name,
                                      base::Printable(r.info->fw_version), firmware::nv::kGspRmVersion));
    }
  }
  return notes;
}

absl::Status RunNeedNv(Invocation& inv, const std::string& device, const firmware::nv::ChipTarget& target) {
  const firmware::nv::ChipProfile& chip = target.profile;
  // No virtual NVIDIA firmware exists yet: a virtual chip is checked against the same roots as the real one.
  const std::vector<std::string> roots = firmware::DefaultSearchRoots();
  const std::vector<firmware::nv::RequiredFile> required = firmware::nv::RequiredFiles(chip);
  std::vector<NvNeedResult> results;
  int problems = 0;
  for (const firmware::nv::RequiredFile& file : required) {
    results.push_back(ResolveNv(roots, chip, file));
    problems += results.back().status.ok() ? 0 : 1;
  }
  if (inv.json()) {
    Json files = Json::array();
    for (const NvNeedResult& r : results) {
      files.push_back({{"name", r.required->name},
                       {"path", r.required->relative_path},
                       {"kind", std::string(firmware::nv::NvFileKindName(r.required->kind))},
                       {"role", r.required->role},
                       {"found", r.location.path ? Json(*r.location.path) : Json(nullptr)},
                       {"resolved", r.resolved.empty() ? Json(nullptr) : Json(r.resolved)},
                       {"layout", r.info ? Json(r.info->layout) : Json(nullptr)},
                       {"fw_version", r.info && !r.info->fw_version.empty() ? Json(r.info->fw_version) : Json(nullptr)},
                       {"notes", r.info ? Json(r.info->notes) : Json::array()},
                       {"tried", r.location.tried},
                       {"ok", r.status.ok()},
                       {"error", r.status.ok() ? Json(nullptr) : Json(std::string(r.status.message()))}});
    }
    SetJsonSchema("baregpu.fw.need_nv/1");
    PrintJson(inv.out(), Json{{"device", device},
                              {"profile", chip.name},
                              {"vendor", "nvidia"},
                              {"virtual", target.is_virtual},
                              {"gsp_rm_version", firmware::nv::kGspRmVersion},
                              {"signature_section", chip.signature_section},
                              {"search_path", roots},
                              {"files", files},
                              {"version_notes", VersionNotes(results)}});
  } else {
    std::ostream& out = inv.out();
    out << absl::StrFormat("Firmware for %s (%s: GSP-RM %s, signature section %s)\n", base::Printable(device),
                           chip.description, firmware::nv::kGspRmVersion, chip.signature_section);
    if (target.is_virtual) out << "the virtual " << chip.name << " has no firmware of its own yet: real files\n";
    out << "search path: " << absl::StrJoin(roots, ":", [](std::string* to, const std::string& root) {
      to->append(base::Printable(root));
    }) << "\n\n";
    for (const NvNeedResult& r : results) {
      out << "  " << r.required->relative_path << "  (" << r.required->role << ")\n";
      if (r.location.path) {
        out << "      found:    " << base::Printable(*r.location.path)
            << (r.resolved.empty() ? "" : " -> " + base::Printable(r.resolved)) << (r.info ? ", " + r.info->layout : "")
            << "\n";
        if (r.info && !r.info->fw_version.empty()) {
          out << "      .fwversion: " << base::Printable(r.info->fw_version) << "\n";
        }
        if (r.info) {
          for (const std::string& note : r.info->notes) out << "      note:     " << note << "\n";
        }
        if (!r.status.ok()) out << "      PROBLEM:  " << r.status.message() << "\n";
      } else {
        out << "      MISSING; tried:\n";
        for (const std::string& path : r.location.tried) out << "        " << base::Printable(path) << "\n";
      }
    }
    const std::vector<std::string> version_notes = VersionNotes(results);
    if (version_notes.empty() && results.front().info) {
      out << "\nversions: every file is named for " << firmware::nv::kGspRmVersion
          << " and the GSP-RM image's .fwversion says so too\n";
    }
    for (const std::string& note : version_notes) out << "\nnote: " << note << "\n";
  }
  if (problems == 0) return absl::OkStatus();
  return absl::NotFoundError(
      absl::StrFormat("%d of %d firmware files for %s are missing or unusable (see above); install Debian's "
                      "firmware-nvidia-graphics (non-free-firmware) or set %s to a directory holding nvidia/",
                      problems, results.size(), base::Printable(device), firmware::kFirmwarePathEnv));
}

absl::Status RunNeed(Invocation& inv) {
  if (inv.positional().size() != 2)
    return inv.UsageError("'baregpu fw need' takes one DEVICE (navi31, sim:navi31, ad102, ga102, sim:ad102)");
  const std::string& device = inv.positional()[1];
  if (absl::StatusOr<firmware::nv::ChipTarget> nv = firmware::nv::ResolveChipName(device); nv.ok()) {
    return RunNeedNv(inv, device, *nv);
  }
  absl::StatusOr<firmware::DeviceFirmwareTarget> resolved = firmware::ResolveDeviceName(device);
  if (!resolved.ok()) {
    std::vector<std::string> chips;
    for (const firmware::nv::ChipProfile& chip : firmware::nv::ChipProfiles()) chips.push_back(chip.name);
    return absl::Status(
        resolved.status().code(),
        absl::StrCat(resolved.status().message(), "; NVIDIA chips: ", absl::StrJoin(chips, ", "), ", sim:CHIP"));
  }
  const firmware::DeviceFirmwareTarget& target = *resolved;
  BAREGPU_ASSIGN_OR_RETURN(std::vector<firmware::RequiredFile> required, firmware::RequiredFiles(target.profile.ip));
  const firmware::Store store = firmware::StoreForDevice(target.is_virtual);
  const std::vector<std::string>& roots = store.roots();

  std::vector<NeedResult> results;
  int problems = 0;
  for (const firmware::RequiredFile& file : required) {
    results.push_back(Resolve(store, target, file));
    problems += results.back().status.ok() ? 0 : 1;
  }

  const firmware::IpVersions& ip = target.profile.ip;
  if (inv.json()) {
    Json files = Json::array();
    for (const NeedResult& r : results) {
      Json provides = Json::array();
      for (const firmware::ProvidedType& p : r.required->provides)
        provides.push_back(firmware::TypeName(p.load, p.type));
      files.push_back(
          {{"name", r.required->name},
           {"fallbacks", r.required->fallbacks},
           {"block", r.required->block},
           {"expected_header", absl::StrFormat("%d.%d", r.required->header_major, r.required->header_minor)},
           {"provides", provides},
           {"found", r.location.path ? Json(*r.location.path) : Json(nullptr)},
           {"layout", r.layout.empty() ? Json(nullptr) : Json(r.layout)},
           {"tried", r.location.tried},
           {"ok", r.status.ok()},
           {"error", r.status.ok() ? Json(nullptr) : Json(std::string(r.status.message()))}});
    }
    SetJsonSchema("baregpu.fw.need/1");
    PrintJson(inv.out(), Json{{"device", device},
                              {"profile", target.profile.name},
                              {"virtual", target.is_virtual},
                              {"ip_versions",
                               {{"gc", ip.gc.ToString()},
                                {"mp0", ip.mp0.ToString()},
                                {"mp1", ip.mp1.ToString()},
                                {"sdma", ip.sdma.ToString()}}},
                              {"search_path", roots},
                              {"files", files}});
  } else {
    std::ostream& out = inv.out();
    out << absl::StrFormat("Firmware for %s (%s: GC %s, MP0 %s, MP1 %s, SDMA %s)\n", device, target.profile.name,
                           ip.gc.ToString(), ip.mp0.ToString(), ip.mp1.ToString(), ip.sdma.ToString());
    out << "search path: " << absl::StrJoin(roots, ":", [](std::string* to, const std::string& root) {
      to->append(base::Printable(root));
    }) << "\n\n";
    for (const NeedResult& r : results) {
      std::vector<std::string> provides;
      for (const firmware::ProvidedType& p : r.required->provides)
        provides.push_back(firmware::TypeName(p.load, p.type));
      out << absl::StrFormat("  %-22s %-20s header %d.%d\n", r.required->name, r.required->block,
                             r.required->header_major, r.required->header_minor);
      out << "      provides: " << absl::StrJoin(provides, ", ") << "\n";
      if (r.location.path) {
        out << "      found:    " << base::Printable(*r.location.path) << (r.layout.empty() ? "" : ", " + r.layout)
            << "\n";
        if (!r.status.ok()) out << "      PROBLEM:  " << r.status.message() << "\n";
      } else {
        out << "      MISSING; tried:\n";
        for (const std::string& path : r.location.tried) out << "        " << base::Printable(path) << "\n";
      }
    }
  }
  if (problems == 0) return absl::OkStatus();
  const std::string hint = target.is_virtual
                               ? absl::StrFormat(
                                     "the build generates virtual firmware into BUILD/firmware/virtual (installed: "
                                     "share/baregpu/firmware); %s overrides where it is looked for",
                                     firmware::kVirtualFirmwareDirEnv)
                               : absl::StrFormat("set %s to a directory holding amdgpu/", firmware::kFirmwarePathEnv);
  return absl::NotFoundError(absl::StrFormat("%d of %d firmware files for %s are missing or unusable (see above); %s",
                                             problems, results.size(), device, hint));
}

absl::Status RunFw(Invocation& inv) {
  if (inv.positional().empty()) return inv.UsageError("'baregpu fw' needs a subcommand: info or need");
  const std::string& sub = inv.positional()[0];
  if (sub == "info") return RunInfo(inv);
  if (sub == "need") return RunNeed(inv);
  return inv.UsageError(absl::StrCat("unknown 'baregpu fw' subcommand '", sub, "' (info, need)"));
}

BAREGPU_REGISTER_COMMAND(
    kFwRegistered,
    Command{"fw",
            "inspect amdgpu and NVIDIA firmware files and list the firmware a device needs",
            "baregpu fw info FILE... [--kind=KIND] [--json]\n       baregpu fw need DEVICE [--json]",
            "fw info parses amdgpu firmware containers (.bin, .bin.zst, .bin.xz): header version, IP and ucode\n"
            "versions, sizes, and every component with its offset, size, PSP firmware type and SHA-256. The kind\n"
            "(sos, ta, rlc, mec, ...) comes from the file name unless --kind gives it.\n"
            "NVIDIA files (nvidia/CHIP/..., or GSP-RM's booter_load-, booter_unload-, bootloader- and gsp-VERSION.bin\n"
            "anywhere) show their nvfw_bin_hdr, nvfw_hs_header_v2, RM_RISCV_UCODE_DESC or ELF fields, byte ranges and\n"
            "notes; NVIDIA files without a container header are classified by name.\n"
            "fw need lists the files a device needs (DEVICE: an ASIC profile such as navi31, or sim:navi31; an\n"
            "NVIDIA chip such as ad102, ga102, tu102, or sim:ad102), where each was found or every path tried.\n"
            "Search path: $BAREGPU_FIRMWARE_PATH (colon-separated), then /lib/firmware/updates, /lib/firmware,\n"
            "each holding amdgpu/ or nvidia/; virtual AMD devices search their virtual firmware first.",
            {{"json", false, "print a JSON document"},
             {"kind", true,
              "firmware kind for fw info (sos, ta, toc, asd, cap, pfp, me, ce, mec, mec2, rlc, sdma,\n"
              "                   sdma1.., smc, imu, mes, mes_kiq, mc, gpu_info; NVIDIA: booter_load,\n"
              "                   booter_unload, bootloader, gsp, bin_container)"}},
            RunFw});

}  // namespace
}  // namespace cli
