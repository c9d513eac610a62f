// baregpu fw: inspect firmware files (`fw info`) and list what a device needs and where it was found (`fw need`).
#include <ostream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "base/printable.h"
#include "base/sha256.h"
#include "base/status_macros.h"
#include "firmware/container.h"
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

absl::Status RunInfo(Invocation& inv) {
  if (inv.positional().size() < 2) return inv.UsageError("'baregpu fw info' needs at least one FILE");
  std::optional<firmware::FileRole> role;
  if (auto kind = inv.value("kind")) {
    absl::StatusOr<firmware::FileRole> parsed = firmware::RoleFromKindName(*kind);
    if (!parsed.ok()) return inv.UsageError(parsed.status().message());
    role = *parsed;
  }
  Json files = Json::array();
  std::vector<std::string> failures;
  for (size_t i = 1; i < inv.positional().size(); ++i) {
    const std::string& path = inv.positional()[i];
    absl::StatusOr<std::string> data = firmware::ReadFirmwareFile(path);
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

absl::Status RunNeed(Invocation& inv) {
  if (inv.positional().size() != 2) return inv.UsageError("'baregpu fw need' takes one DEVICE (navi31, sim:navi31)");
  const std::string& device = inv.positional()[1];
  BAREGPU_ASSIGN_OR_RETURN(firmware::DeviceFirmwareTarget target, firmware::ResolveDeviceName(device));
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
            "inspect amdgpu firmware files and list the firmware a device needs",
            "baregpu fw info FILE... [--kind=KIND] [--json]\n       baregpu fw need DEVICE [--json]",
            "fw info parses amdgpu firmware containers (.bin, .bin.zst, .bin.xz): header version, IP and ucode\n"
            "versions, sizes, and every component with its offset, size, PSP firmware type and SHA-256. The kind\n"
            "(sos, ta, rlc, mec, ...) comes from the file name unless --kind gives it.\n"
            "fw need lists the files a device needs (DEVICE: an ASIC profile such as navi31, or sim:navi31), where\n"
            "each was found or every path tried. Search path: $BAREGPU_FIRMWARE_PATH (colon-separated), then\n"
            "/lib/firmware/updates, /lib/firmware, each holding amdgpu/; virtual devices search their virtual\n"
            "firmware first.",
            {{"json", false, "print a JSON document"},
             {"kind", true,
              "firmware kind for fw info (sos, ta, toc, asd, cap, pfp, me, ce, mec, mec2, rlc, sdma,\n"
              "                   sdma1.., smc, imu, mes, mes_kiq, mc, gpu_info)"}},
            RunFw});

}  // namespace
}  // namespace cli
