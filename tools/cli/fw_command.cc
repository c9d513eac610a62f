// baregpu fw: inspect firmware files (`fw info`) and list what a device needs and where it was found (`fw need`).
#include <filesystem>
#include <fstream>
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
#include "firmware/nv/vbios.h"
#include "firmware/nv/virtual_vbios.h"
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

// ---- NVIDIA VBIOS (issue 21): `fw info` on a PCI expansion ROM, `fw vbios --virtual` ----

std::string TokenName(uint8_t id) {
  const bool printable = id >= 0x20 && id < 0x7f;
  return printable ? absl::StrFormat("'%c' (0x%02x)", id, id) : absl::StrFormat("0x%02x", id);
}

Json VbiosJson(const std::string& path, const firmware::nv::Vbios& v, absl::string_view data) {
  Json images = Json::array();
  for (const firmware::nv::RomImage& i : v.images) {
    Json npde = nullptr;
    if (i.npde) {
      npde = {{"offset", Hex(i.npde->offset)},
              {"revision", Hex(i.npde->revision)},
              {"size", i.npde->image_size},
              {"last", i.npde->last},
              {"flags", Hex(i.npde->flags)}};
    }
    images.push_back({{"offset", Hex(i.offset)},
                      {"size", i.size},
                      {"signature", Hex(i.signature, 4)},
                      {"code_type", Hex(i.code_type, 2)},
                      {"code_type_name", firmware::nv::CodeTypeName(i.code_type)},
                      {"vendor_id", Hex(i.vendor_id, 4)},
                      {"device_id", Hex(i.device_id, 4)},
                      {"class_code", Hex(i.class_code, 6)},
                      {"pcir_offset", Hex(i.pcir_offset)},
                      {"pcir_size", i.pcir_image_size},
                      {"pcir_last", i.pcir_last},
                      {"npde", npde},
                      {"last", i.last},
                      {"checksum_ok", i.checksum_ok ? Json(*i.checksum_ok) : Json(nullptr)}});
  }
  Json tokens = Json::array();
  for (const firmware::nv::BitToken& t : v.tokens) {
    tokens.push_back({{"id", Hex(t.id, 2)},
                      {"name", TokenName(t.id)},
                      {"version", t.data_version},
                      {"size", t.data_size},
                      {"pointer", Hex(t.data_pointer)},
                      {"data_offset", t.data_offset ? Json(Hex(*t.data_offset)) : Json(nullptr)}});
  }
  Json table = nullptr;
  if (v.ucode_table) {
    const firmware::nv::UcodeTable& u = *v.ucode_table;
    Json entries = Json::array();
    for (const firmware::nv::UcodeEntry& e : u.entries) {
      entries.push_back({{"application_id", Hex(e.application_id, 2)},
                         {"application", firmware::nv::ApplicationIdName(e.application_id)},
                         {"target_id", Hex(e.target_id, 2)},
                         {"desc_pointer", Hex(e.desc_pointer)},
                         {"desc_offset", Hex(e.desc_offset)},
                         {"desc_header", Hex(e.desc_header, 8)}});
    }
    table = {{"offset", Hex(u.offset)},      {"pointer", Hex(u.pointer)},  {"version", u.version},
             {"header_size", u.header_size}, {"entry_size", u.entry_size}, {"desc_version", u.desc_version},
             {"desc_size", u.desc_size},     {"entries", entries}};
  }
  Json fwsec = nullptr;
  if (v.fwsec) {
    const firmware::nv::FwsecDescriptor& d = v.fwsec->desc;
    Json desc = {{"offset", Hex(d.offset)},
                 {"header", Hex(d.header, 8)},
                 {"version", d.version},
                 {"size", d.size},
                 {"stored_size", Hex(d.stored_size)},
                 {"interface_offset", Hex(d.interface_offset)},
                 {"imem_phys_base", Hex(d.imem_phys_base)},
                 {"imem_load_size", Hex(d.imem_load_size)},
                 {"imem_virt_base", Hex(d.imem_virt_base)},
                 {"dmem_phys_base", Hex(d.dmem_phys_base)},
                 {"dmem_load_size", Hex(d.dmem_load_size)},
                 {"ucode_offset", Hex(d.ucode_offset)},
                 {"ucode_size", d.ucode_size},
                 {"ucode_sha256", base::Sha256::HexHash(data.substr(d.ucode_offset, d.ucode_size))},
                 {"dmem_image_offset", Hex(d.dmem_image_offset)}};
    if (d.version == 2) {
      desc.update({{"uncompressed_size", Hex(d.uncompressed_size)},
                   {"virtual_entry", Hex(d.virtual_entry)},
                   {"imem_sec_base", Hex(d.imem_sec_base)},
                   {"imem_sec_size", Hex(d.imem_sec_size)},
                   {"dmem_offset", Hex(d.dmem_offset)},
                   {"alt_imem_load_size", Hex(d.alt_imem_load_size)},
                   {"alt_dmem_load_size", Hex(d.alt_dmem_load_size)}});
    } else {
      desc.update({{"pkc_data_offset", Hex(d.pkc_data_offset)},
                   {"engine_id_mask", Hex(d.engine_id_mask, 4)},
                   {"ucode_id", d.ucode_id},
                   {"signature_count", d.signature_count},
                   {"signature_size", firmware::nv::kSignatureSize},
                   {"signature_versions", Hex(d.signature_versions, 4)},
                   {"signatures_offset", Hex(d.signatures_offset)}});
    }
    const firmware::nv::Appif& a = v.fwsec->appif;
    Json appif_entries = Json::array();
    for (const firmware::nv::AppifEntry& e : a.entries) {
      appif_entries.push_back({{"id", e.id}, {"dmem_offset", Hex(e.dmem_offset)}});
    }
    const firmware::nv::DmemMapper& m = v.fwsec->dmem_mapper;
    fwsec = {{"entry_index", v.fwsec->entry_index},
             {"descriptor", desc},
             {"appif",
              {{"offset", Hex(a.offset)},
               {"dmem_offset", Hex(a.dmem_offset)},
               {"version", a.version},
               {"header_size", a.header_size},
               {"entry_size", a.entry_size},
               {"entries", appif_entries}}},
             {"dmem_mapper",
              {{"offset", Hex(m.offset)},
               {"dmem_offset", Hex(m.dmem_offset)},
               {"signature", Hex(m.signature, 8)},
               {"version", m.version},
               {"size", m.size},
               {"cmd_in_buffer_offset", Hex(m.cmd_in_buffer_offset)},
               {"cmd_in_buffer_size", m.cmd_in_buffer_size},
               {"cmd_out_buffer_offset", Hex(m.cmd_out_buffer_offset)},
               {"cmd_out_buffer_size", m.cmd_out_buffer_size},
               {"init_cmd", Hex(m.init_cmd)},
               {"ucode_cmd_mask0", Hex(m.ucode_cmd_mask0, 8)},
               {"ucode_cmd_mask1", Hex(m.ucode_cmd_mask1, 8)},
               {"init_cmd_file_offset", Hex(m.init_cmd_file_offset)},
               {"cmd_in_buffer_file_offset", Hex(m.cmd_in_buffer_file_offset)}}}};
  }
  return Json{{"file", path},
              {"kind", "vbios"},
              {"file_size", data.size()},
              {"sha256", base::Sha256::HexHash(data)},
              {"rom_offset", Hex(v.rom_offset)},
              {"images", images},
              {"bit",
               {{"offset", Hex(v.bit.offset)},
                {"bcd_version", Hex(v.bit.bcd_version, 4)},
                {"header_size", v.bit.header_size},
                {"token_size", v.bit.token_size},
                {"tokens", tokens}}},
              {"ucode_table", table},
              {"fwsec", fwsec},
              {"notes", v.notes}};
}

void PrintVbios(std::ostream& out, const std::string& path, const firmware::nv::Vbios& v, absl::string_view data) {
  out << base::Printable(path) << "\n";
  out << absl::StrFormat("  NVIDIA VBIOS, %d bytes, ROM at 0x%x, %d images, sha256 %s\n", data.size(), v.rom_offset,
                         v.images.size(), base::Sha256::HexHash(data));
  out << absl::StrFormat("  %-10s %10s  %-26s %-9s %-9s %-9s %s\n", "image at", "size", "code type", "id", "PCIR last",
                         "NPDE last", "walk");
  for (const firmware::nv::RomImage& i : v.images) {
    out << absl::StrFormat("  %-10s %#10x  %-26s %04x:%04x %-9s %-9s %s%s\n", Hex(i.offset), i.size,
                           firmware::nv::CodeTypeName(i.code_type), i.vendor_id, i.device_id,
                           i.pcir_last ? "yes" : "no", i.npde ? (i.npde->last ? "yes" : "no") : "-",
                           i.last ? "last" : "continues",
                           i.checksum_ok ? (*i.checksum_ok ? ", checksum ok" : ", checksum BAD") : "");
  }
  out << absl::StrFormat("  BIT at 0x%x: version %x.%02x, header %d bytes, %d tokens of %d bytes\n", v.bit.offset,
                         v.bit.bcd_version >> 8, v.bit.bcd_version & 0xff, v.bit.header_size, v.tokens.size(),
                         v.bit.token_size);
  for (const firmware::nv::BitToken& t : v.tokens) {
    out << absl::StrFormat("    token %-11s version %d, %4d bytes, pointer 0x%04x -> %s\n", TokenName(t.id),
                           t.data_version, t.data_size, t.data_pointer,
                           t.data_offset ? absl::StrFormat("0x%x", *t.data_offset) : std::string("(none)"));
  }
  if (v.ucode_table) {
    const firmware::nv::UcodeTable& u = *v.ucode_table;
    out << absl::StrFormat("  falcon ucode table at 0x%x (pointer 0x%x): version %d, %d entries, descriptor v%d\n",
                           u.offset, u.pointer, u.version, u.entries.size(), u.desc_version);
    for (const firmware::nv::UcodeEntry& e : u.entries) {
      out << absl::StrFormat("    %-16s target 0x%02x, descriptor pointer 0x%x -> 0x%x (header 0x%08x)\n",
                             firmware::nv::ApplicationIdName(e.application_id), e.target_id, e.desc_pointer,
                             e.desc_offset, e.desc_header);
    }
  }
  if (v.fwsec) {
    const firmware::nv::FwsecDescriptor& d = v.fwsec->desc;
    out << absl::StrFormat("  FWSEC (entry %d): descriptor v%d at 0x%x, %d bytes", v.fwsec->entry_index, d.version,
                           d.offset, d.size);
    if (d.version == 3) {
      out << absl::StrFormat(" (%d signatures of %d bytes at 0x%x, fuse versions 0x%04x)", d.signature_count,
                             firmware::nv::kSignatureSize, d.signatures_offset, d.signature_versions);
    }
    out << "\n";
    out << absl::StrFormat("    IMEM phys 0x%x virt 0x%x load 0x%x; DMEM phys 0x%x load 0x%x; stored 0x%x\n",
                           d.imem_phys_base, d.imem_virt_base, d.imem_load_size, d.dmem_phys_base, d.dmem_load_size,
                           d.stored_size);
    if (d.version == 3) {
      out << absl::StrFormat("    engine mask 0x%04x, ucode id %d, PKC data at DMEM 0x%x\n", d.engine_id_mask,
                             d.ucode_id, d.pkc_data_offset);
    } else {
      out << absl::StrFormat("    IMEM secure base 0x%x size 0x%x, DMEM at image 0x%x\n", d.imem_sec_base,
                             d.imem_sec_size, d.dmem_offset);
    }
    out << absl::StrFormat("    ucode at 0x%x, %d bytes, sha256 %s\n", d.ucode_offset, d.ucode_size,
                           base::Sha256::HexHash(data.substr(d.ucode_offset, d.ucode_size)));
    const firmware::nv::Appif& a = v.fwsec->appif;
    out << absl::StrFormat("    APPIF at DMEM 0x%x (0x%x): version %d, %d entries\n", a.dmem_offset, a.offset,
                           a.version, a.entries.size());
    const firmware::nv::DmemMapper& m = v.fwsec->dmem_mapper;
    out << absl::StrFormat(
        "    DMEMMAPPER at DMEM 0x%x (0x%x): command in 0x%x (%d bytes), out 0x%x (%d bytes), init_cmd 0x%x at "
        "0x%x\n",
        m.dmem_offset, m.offset, m.cmd_in_buffer_offset, m.cmd_in_buffer_size, m.cmd_out_buffer_offset,
        m.cmd_out_buffer_size, m.init_cmd, m.init_cmd_file_offset);
  }
  for (const std::string& note : v.notes) out << "  note: " << note << "\n";
}

// `fw info` on one file known (or guessed from its first bytes) to be a VBIOS.
absl::Status InfoVbios(Invocation& inv, size_t index, const std::string& path, absl::string_view data, Json& files) {
  absl::StatusOr<firmware::nv::Vbios> v = firmware::nv::ParseVbios(path, data);
  if (!v.ok()) {
    if (inv.json()) files.push_back({{"file", path}, {"error", std::string(v.status().message())}});
    return v.status();
  }
  if (inv.json()) {
    files.push_back(VbiosJson(path, *v, data));
  } else {
    if (index > 1) inv.out() << "\n";
    PrintVbios(inv.out(), path, *v, data);
  }
  return absl::OkStatus();
}

// `fw vbios --virtual=CHIP --output=FILE`: what the virtual GPU's ROM holds, for inspection with `fw info`.
absl::Status RunVbios(Invocation& inv) {
  if (inv.positional().size() != 1) return inv.UsageError("'baregpu fw vbios' takes no arguments besides its options");
  const std::optional<std::string> chip = inv.value("virtual");
  const std::optional<std::string> output = inv.value("output");
  if (!chip || !output) return inv.UsageError("'baregpu fw vbios' needs --virtual=ad102 and --output=FILE");
  absl::StatusOr<std::string> rom = firmware::nv::BuildVirtualVbios(*chip);
  if (!rom.ok()) return inv.UsageError(rom.status().message());
  std::ofstream out(*output, std::ios::binary | std::ios::trunc);
  out.write(rom->data(), static_cast<std::streamsize>(rom->size()));
  out.close();
  if (!out.good()) {
    return absl::UnavailableError(
        absl::StrFormat("cannot write %s (check the directory exists and is writable)", base::Printable(*output)));
  }
  inv.out() << absl::StrFormat("%s: virtual %s VBIOS, %d bytes, sha256 %s\n", base::Printable(*output), *chip,
                               rom->size(), base::Sha256::HexHash(*rom));
  return absl::OkStatus();
}

// ---- end NVIDIA VBIOS ----

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
  const bool vbios_kind = inv.value("kind") == "vbios";  // NVIDIA VBIOS (issue 21)
  std::optional<firmware::nv::NvFileKind> nv_role;       // --kind naming an NVIDIA kind (booter_load, gsp, ...)
  if (auto kind = inv.value("kind"); kind && !vbios_kind) {
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
    // An NVIDIA firmware file's name (or an nvidia/ path), or --kind naming its kind, goes to firmware/nv; an
    // amdgpu or vbios --kind keeps its own parser.
    if (std::optional<firmware::nv::NvFileKind> nv_kind = !data.ok() || role || vbios_kind ? std::nullopt
                                                          : nv_role                        ? nv_role
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
    // NVIDIA VBIOS (issue 21): asked for, or a PCI expansion ROM when no kind was given.
    if (data.ok() && (vbios_kind || (!role && firmware::nv::LooksLikeRom(*data)))) {
      if (absl::Status status = InfoVbios(inv, i, path, *data, files); !status.ok()) {
        failures.emplace_back(status.message());
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
  if (inv.positional().empty()) return inv.UsageError("'baregpu fw' needs a subcommand: info, need or vbios");
  const std::string& sub = inv.positional()[0];
  if (sub == "info") return RunInfo(inv);
  if (sub == "need") return RunNeed(inv);
  if (sub == "vbios") return RunVbios(inv);
  return inv.UsageError(absl::StrCat("unknown 'baregpu fw' subcommand '", sub, "' (info, need, vbios)"));
}

BAREGPU_REGISTER_COMMAND(
    kFwRegistered,
    Command{"fw",
            "inspect amdgpu and NVIDIA firmware files and VBIOS images; list the firmware a device needs",
            "baregpu fw info FILE... [--kind=KIND] [--json]\n       baregpu fw need DEVICE [--json]\n"
            "       baregpu fw vbios --virtual=ad102 --output=FILE",
            "fw info parses amdgpu firmware containers (.bin, .bin.zst, .bin.xz): header version, IP and ucode\n"
            "versions, sizes, and every component with its offset, size, PSP firmware type and SHA-256. The kind\n"
            "(sos, ta, rlc, mec, ...) comes from the file name unless --kind gives it.\n"
            "NVIDIA files (nvidia/CHIP/..., or GSP-RM's booter_load-, booter_unload-, bootloader- and gsp-VERSION.bin\n"
            "anywhere) show their nvfw_bin_hdr, nvfw_hs_header_v2, RM_RISCV_UCODE_DESC or ELF fields, byte ranges and\n"
            "notes; NVIDIA files without a container header are classified by name.\n"
            "fw need lists the files a device needs (DEVICE: an ASIC profile such as navi31, or sim:navi31; an\n"
            "NVIDIA chip such as ad102, ga102, tu102, or sim:ad102), where each was found or every path tried.\n"
            "Search path: $BAREGPU_FIRMWARE_PATH (colon-separated), then /lib/firmware/updates, /lib/firmware,\n"
            "each holding amdgpu/ or nvidia/; virtual AMD devices search their virtual firmware first.\n"
            "fw info also reads NVIDIA VBIOS images (a PCI expansion ROM, or --kind=vbios): the image chain, the BIT\n"
            "tokens, the falcon ucode table and the FWSEC descriptor with its DMEMMAPPER interface.\n"
            "fw vbios writes the virtual GPU's VBIOS (--virtual=ad102) to --output for inspection.",
            {{"json", false, "print a JSON document"},
             {"kind", true,
              "firmware kind for fw info (sos, ta, toc, asd, cap, pfp, me, ce, mec, mec2, rlc, sdma,\n"
              "                   sdma1.., smc, imu, mes, mes_kiq, mc, gpu_info, vbios; NVIDIA: booter_load,\n"
              "                   booter_unload, bootloader, gsp, bin_container)"},
             {"virtual", true, "fw vbios: the virtual chip whose VBIOS to write (ad102)"},
             {"output", true, "fw vbios: the file to write"}},
            RunFw});

}  // namespace
}  // namespace cli
