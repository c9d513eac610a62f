// baregpu regs: the AMD register database (and, with --chip, the NVIDIA one of nv/regs/database.h) from the command
// line. `find` lists registers by part of their name, `decode` splits a value into its fields; `baregpu regs DEVICE
// read|write|dump` reads and writes a device's (AMD only).
#include <algorithm>
#include <bit>
#include <optional>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "am/discovery.h"
#include "am/regs/database.h"
#include "am/sim/navi31_ip_offsets.h"
#include "am/soc.h"
#include "base/status_macros.h"
#include "nv/regs/database.h"
#include "pci/open.h"
#include "tools/cli/command.h"
#include "tools/cli/device_access.h"
#include "tools/cli/json.h"
#include "tools/cli/register_json.h"
#include "tools/cli/regs_device.h"

namespace cli {
namespace {

namespace regs = am::regs;

// "0x0" for zero too (printf's %#x drops the prefix for zero).
std::string HexValue(uint64_t value, int digits = 1) { return absl::StrFormat("0x%0*x", digits, value); }

// "[13:8]" for a contiguous field, the mask otherwise (a few header fields have holes or disagree with their
// shift; they are printed as the header gives them).
std::string BitRange(const regs::FieldInfo& f) {
  const int low = std::countr_zero(f.mask);
  const int high = 31 - std::countl_zero(f.mask);
  const uint32_t contiguous = static_cast<uint32_t>((uint64_t{1} << (high + 1)) - (uint64_t{1} << low));
  if (f.mask != contiguous || low != f.shift) return absl::StrFormat("mask 0x%x >> %d", f.mask, f.shift);
  return high == low ? absl::StrFormat("[%d]", low) : absl::StrFormat("[%d:%d]", high, low);
}

Json RegisterJson(const regs::RegisterInfo& reg, bool with_fields) {
  Json json = {{"name", std::string(reg.name())},  {"ip", std::string(regs::IpName(reg.ip()))},
               {"segment", reg.segment()},         {"offset", HexValue(reg.offset())},
               {"field_count", reg.field_count()}, {"source", std::string(reg.source())}};
  if (with_fields) json["fields"] = FieldLayoutJson(reg);
  return json;
}

// Register bases of the Navi31 (the segment bases its IP discovery table lists, which the virtual Navi31's table
// reproduces), for looking addresses up without a device.
regs::IpBases Navi31Bases() {
  regs::IpBases bases;
  for (const am::sim::IpOffsets& block : am::sim::kNavi31IpOffsets) {
    absl::StatusOr<regs::Ip> ip = regs::ParseIp(block.block);
    if (!ip.ok()) continue;  // a block the register database does not cover (DCN, VCN, ...)
    for (int segment = 0; segment < block.count; ++segment) {
      (void)bases.SetBase(*ip, block.instance, segment, block.segments[segment]);
    }
  }
  return bases;
}

// `regs find 0x1fc00`: the registers at an absolute dword address (as the boot trace and `regs DEVICE read` print
// them; amdgpu's RREG32 takes the same unit), or with --byte at a BAR5 byte offset.
absl::Status RunFindAddress(Invocation& inv, absl::string_view text) {
  uint64_t number = 0;
  if (!absl::SimpleHexAtoi(text.substr(2), &number)) {
    return inv.UsageError(absl::StrCat("'", text, "' is not a hex address (0x1fc00)"));
  }
  constexpr uint64_t kDwordBytes = 4;
  const bool bytes = inv.has("byte");
  if (bytes && number % kDwordBytes != 0) {
    return inv.UsageError(absl::StrFormat("byte address %#x is not dword aligned (registers are 32 bits)", number));
  }
  const uint64_t address = bytes ? number / kDwordBytes : number;
  regs::IpBases bases = Navi31Bases();
  std::string bases_from = "Navi31";
  if (std::optional<std::string> device_name = inv.value("device")) {
    BAREGPU_ASSIGN_OR_RETURN(std::unique_ptr<pci::Device> device, pci::Open(*device_name));
    BAREGPU_ASSIGN_OR_RETURN(am::DeviceDiscovery found, am::ReadDiscovery(*device));
    bases = found.discovery.Bases();
    bases_from = device->name();
  }
  std::vector<regs::AddressMatch> found = regs::FindByAddress(bases, address);
  // The page the driver remaps HDP's flush registers to is the driver's choice (am/soc.h), not a register of the
  // database; the boot trace names it the same way.
  std::optional<std::string> driver_name;
  if (address * kDwordBytes == am::Soc::kRemapMemFlush) driver_name = "REMAP_HDP_MEM_FLUSH_CNTL";
  if (address * kDwordBytes == am::Soc::kRemapRegFlush) driver_name = "REMAP_HDP_REG_FLUSH_CNTL";
  if (found.empty() && !driver_name) {
    std::string where;
    if (std::optional<regs::SegmentLocation> at = bases.Locate(address)) {
      where = absl::StrFormat("; the nearest segment base below it is %s instance %d segment %d (offset %#x)",
                              regs::IpName(at->ip), at->instance, at->segment, at->offset);
    }
    return absl::NotFoundError(
        absl::StrFormat("no register of the database is at dword %#x (byte %#x) with %s's bases%s", address,
                        address * kDwordBytes, bases_from, where));
  }
  if (inv.json()) {
    SetJsonSchema("baregpu.regs.find-address/1");
    Json list = Json::array();
    for (const regs::AddressMatch& match : found) {
      Json reg = RegisterJson(match.reg, /*with_fields=*/true);
      reg["instance"] = match.instance;
      list.push_back(reg);
    }
    PrintJson(inv.out(), Json{{"address", Hex(address)},
                              {"byte_address", Hex(address * kDwordBytes)},
                              {"bases", bases_from},
                              {"driver_name", driver_name ? Json(*driver_name) : Json(nullptr)},
                              {"registers", list}});
    return absl::OkStatus();
  }
  inv.out() << absl::StrFormat("dword %#x (byte %#x), %s's bases:\n", address, address * kDwordBytes, bases_from);
  if (driver_name) {
    inv.out() << absl::StrFormat("  %s  the BAR5 page the driver remaps HDP's flush registers to (soc init_hw)\n",
                                 *driver_name);
  }
  for (const regs::AddressMatch& match : found) {
    inv.out() << absl::StrFormat("  %s  %s instance %d, segment %d, offset %s, %d fields\n", match.reg.name(),
                                 regs::IpName(match.reg.ip()), match.instance, match.reg.segment(),
                                 HexValue(match.reg.offset()), match.reg.field_count());
  }
  return absl::OkStatus();
}

absl::StatusOr<uint32_t> ParseValue(const Invocation& inv, absl::string_view text) {
  uint64_t value = 0;
  bool ok = absl::StartsWithIgnoreCase(text, "0x") ? absl::SimpleHexAtoi(text.substr(2), &value)
                                                   : absl::SimpleAtoi(text, &value);
  if (!ok || value > 0xffffffff) {
    return inv.UsageError(
        absl::StrCat("value '", text, "' is not a 32-bit register value; write it in hex (0x1f) or decimal"));
  }
  return static_cast<uint32_t>(value);
}

// --chip=ga102|ad102 selects the NVIDIA database; nullopt without it (the AMD database, as before).
absl::StatusOr<std::optional<nv::regs::Chip>> NvChip(const Invocation& inv) {
  std::optional<std::string> name = inv.value("chip");
  if (!name) return std::nullopt;
  if (inv.value("ip") || inv.value("device") || inv.has("byte")) {
    return inv.UsageError("--chip (NVIDIA) does not combine with --ip, --device or --byte (AMD)");
  }
  absl::StatusOr<nv::regs::Chip> chip = nv::regs::ParseChip(*name);
  if (!chip.ok()) return inv.UsageError(chip.status().message());
  return *chip;
}

// "[5:4]" for an NVIDIA field (always contiguous: the headers write hi:lo).
std::string NvBitRange(const nv::regs::FieldInfo& f) {
  return f.hi == f.lo ? absl::StrFormat("[%d]", f.lo) : absl::StrFormat("[%d:%d]", f.hi, f.lo);
}

// "0x110804 + i*0x4 (4)" for an array register, the offset alone otherwise.
std::string NvOffset(const nv::regs::RegisterInfo& reg) {
  if (!reg.is_array()) return HexValue(reg.offset());
  return absl::StrFormat("%s+i*%#x (%s)", HexValue(reg.offset()), reg.stride(),
                         reg.count() ? absl::StrCat(reg.count()) : "?");
}

// The fields in docs/json.md's shared shape (name, mask, shift, and value where known), with hi and lo added.
Json NvFieldJson(const nv::regs::FieldInfo& f) {
  return Json{
      {"name", std::string(f.name)}, {"mask", HexValue(f.mask(), 8)}, {"shift", f.lo}, {"hi", f.hi}, {"lo", f.lo}};
}

Json NvRegisterJson(const nv::regs::RegisterInfo& reg, bool with_fields) {
  Json json = {{"name", std::string(reg.name())},
               {"unit", std::string(nv::regs::UnitName(reg.unit()))},
               {"offset", HexValue(reg.offset())},
               {"stride", reg.stride()},
               {"count", reg.count()},
               {"field_count", reg.field_count()},
               {"source", std::string(reg.source())}};
  if (with_fields) {
    Json fields = Json::array();
    for (const nv::regs::FieldInfo& f : reg.fields()) fields.push_back(NvFieldJson(f));
    json["fields"] = fields;
  }
  return json;
}

// `regs find --chip=ga102 PATTERN|0xADDRESS`: NVIDIA registers by name, or at a BAR0 byte address (engine-relative
// registers resolved with each engine's bases).
absl::Status RunNvFind(Invocation& inv, nv::regs::Chip chip, const std::string& pattern) {
  std::vector<nv::regs::RegisterInfo> found;
  std::vector<nv::regs::AddressMatch> at;
  if (absl::StartsWithIgnoreCase(pattern, "0x")) {
    uint64_t address = 0;
    if (!absl::SimpleHexAtoi(pattern.substr(2), &address) || address > 0xffffffff) {
      return inv.UsageError(absl::StrCat("'", pattern, "' is not a BAR0 byte address (0x110040)"));
    }
    at = nv::regs::FindByAddress(chip, static_cast<uint32_t>(address));
    if (at.empty()) {
      return absl::NotFoundError(
          absl::StrFormat("no %s register is at BAR0 byte %#x", nv::regs::ChipName(chip), address));
    }
    for (const nv::regs::AddressMatch& m : at) found.push_back(m.reg);
  } else {
    found = nv::regs::Search(chip, pattern);
    if (found.empty()) {
      return absl::NotFoundError(
          absl::StrCat("no ", nv::regs::ChipName(chip), " register name contains '", pattern, "'"));
    }
  }
  if (inv.json()) {
    SetJsonSchema("baregpu.regs.nv-find/1");
    Json list = Json::array();
    for (size_t i = 0; i < found.size(); ++i) {
      Json reg = NvRegisterJson(found[i], /*with_fields=*/true);
      if (!at.empty()) {
        reg["engine"] = std::string(at[i].engine);
        reg["index"] = at[i].index;
      }
      list.push_back(reg);
    }
    PrintJson(inv.out(),
              Json{{"chip", std::string(nv::regs::ChipName(chip))}, {"pattern", pattern}, {"registers", list}});
    return absl::OkStatus();
  }
  std::vector<std::string> units, names;
  size_t unit_width = 11, width = 8;
  for (size_t i = 0; i < found.size(); ++i) {
    std::string unit(nv::regs::UnitName(found[i].unit()));
    if (!at.empty() && !at[i].engine.empty()) unit = absl::StrCat(at[i].engine, " ", unit);
    std::string name(found[i].name());
    if (!at.empty() && found[i].is_array()) absl::StrAppend(&name, "(", at[i].index, ")");
    unit_width = std::max(unit_width, unit.size());
    width = std::max(width, name.size());
    units.push_back(std::move(unit));
    names.push_back(std::move(name));
  }
  inv.out() << absl::StrFormat("%-*s %-18s %-*s %s\n", unit_width, "RELATIVE TO", "OFFSET", width, "REGISTER",
                               "FIELDS");
  for (size_t i = 0; i < found.size(); ++i) {
    inv.out() << absl::StrFormat("%-*s %-18s %-*s %d\n", unit_width, units[i], NvOffset(found[i]), width, names[i],
                                 found[i].field_count());
  }
  return absl::OkStatus();
}

absl::Status RunNvDecode(Invocation& inv, nv::regs::Chip chip) {
  const std::vector<std::string>& args = inv.positional();
  if (args.size() != 3) return inv.UsageError("usage: baregpu regs decode --chip=CHIP NAME VALUE [--json]");
  BAREGPU_ASSIGN_OR_RETURN(uint32_t value, ParseValue(inv, args[2]));
  BAREGPU_ASSIGN_OR_RETURN(nv::regs::RegisterInfo reg, nv::regs::Lookup(chip, args[1]));
  std::vector<nv::regs::DecodedField> fields = nv::regs::Decode(reg, value);
  uint32_t covered = 0;
  for (const nv::regs::DecodedField& d : fields) covered |= d.field.mask();
  const uint32_t stray = value & ~covered;
  if (inv.json()) {
    SetJsonSchema("baregpu.regs.nv-decode/1");
    Json json = NvRegisterJson(reg, /*with_fields=*/false);
    json["chip"] = std::string(nv::regs::ChipName(chip));
    json["value"] = HexValue(value, 8);
    Json list = Json::array();
    for (const nv::regs::DecodedField& d : fields) {
      Json field = NvFieldJson(d.field);
      field["value"] = d.value;
      list.push_back(field);
    }
    json["fields"] = list;
    json["bits_outside_fields"] = HexValue(stray, 8);
    PrintJson(inv.out(), json);
    return absl::OkStatus();
  }
  std::ostream& out = inv.out();
  out << absl::StrFormat("%s %s = 0x%08x  (%s %s)\n", nv::regs::ChipName(chip), reg.name(), value,
                         nv::regs::UnitName(reg.unit()), NvOffset(reg));
  size_t width = 4;
  for (const nv::regs::DecodedField& d : fields) width = std::max(width, d.field.name.size());
  for (const nv::regs::DecodedField& d : fields) {
    out << absl::StrFormat("  %-*s %-9s = %s (%u)\n", width, d.field.name, NvBitRange(d.field), HexValue(d.value),
                           d.value);
  }
  if (fields.empty()) out << "  (the header defines no fields for this register)\n";
  if (stray != 0) out << absl::StrFormat("  bits outside every field: 0x%08x\n", stray);
  return absl::OkStatus();
}

absl::Status RunFind(Invocation& inv) {
  if (inv.positional().size() != 2) {
    return inv.UsageError(
        "usage: baregpu regs find PATTERN|0xADDRESS [--ip=IP | --chip=CHIP] [--byte] [--device=DEVICE] [--json]");
  }
  const std::string& pattern = inv.positional()[1];
  BAREGPU_ASSIGN_OR_RETURN(std::optional<nv::regs::Chip> chip, NvChip(inv));
  if (chip) return RunNvFind(inv, *chip, pattern);
  if (absl::StartsWithIgnoreCase(pattern, "0x")) return RunFindAddress(inv, pattern);
  std::optional<regs::Ip> ip;
  if (std::optional<std::string> name = inv.value("ip")) {
    absl::StatusOr<regs::Ip> parsed = regs::ParseIp(*name);
    if (!parsed.ok()) return inv.UsageError(parsed.status().message());
    ip = *parsed;
  }
  std::vector<regs::RegisterInfo> found = regs::Search(pattern, ip);
  if (found.empty()) {
    return absl::NotFoundError(
        absl::StrCat("no register name contains '", pattern, "'", ip ? absl::StrCat(" in ", regs::IpName(*ip)) : ""));
  }
  if (inv.json()) {
    SetJsonSchema("baregpu.regs.find/1");
    Json list = Json::array();
    for (const regs::RegisterInfo& reg : found) list.push_back(RegisterJson(reg, /*with_fields=*/true));
    PrintJson(inv.out(), Json{{"pattern", pattern}, {"registers", list}});
    return absl::OkStatus();
  }
  size_t width = 8;
  for (const regs::RegisterInfo& reg : found) width = std::max(width, reg.name().size());
  inv.out() << absl::StrFormat("%-7s %-3s %-8s %-*s %s\n", "IP", "SEG", "OFFSET", width, "REGISTER", "FIELDS");
  for (const regs::RegisterInfo& reg : found) {
    inv.out() << absl::StrFormat("%-7s %-3d %-8s %-*s %d\n", regs::IpName(reg.ip()), reg.segment(),
                                 HexValue(reg.offset()), width, reg.name(), reg.field_count());
  }
  return absl::OkStatus();
}

absl::Status RunDecode(Invocation& inv) {
  BAREGPU_ASSIGN_OR_RETURN(std::optional<nv::regs::Chip> chip, NvChip(inv));
  if (chip) return RunNvDecode(inv, *chip);
  const std::vector<std::string>& args = inv.positional();
  if (args.size() != 3 && args.size() != 4) {
    return inv.UsageError("usage: baregpu regs decode [IP] NAME VALUE [--json]");
  }
  std::optional<regs::Ip> ip;
  if (args.size() == 4) {
    absl::StatusOr<regs::Ip> parsed = regs::ParseIp(args[1]);
    if (!parsed.ok()) return inv.UsageError(parsed.status().message());
    ip = *parsed;
  }
  BAREGPU_ASSIGN_OR_RETURN(uint32_t value, ParseValue(inv, args.back()));
  BAREGPU_ASSIGN_OR_RETURN(regs::RegisterInfo reg, regs::Lookup(args[args.size() - 2], ip));
  std::vector<regs::DecodedField> fields = regs::Decode(reg, value);
  uint32_t covered = 0;
  for (const regs::DecodedField& d : fields) covered |= d.field.mask;
  const uint32_t stray = value & ~covered;

  if (inv.json()) {
    SetJsonSchema("baregpu.regs.decode/1");
    Json json = RegisterJson(reg, /*with_fields=*/false);
    json["value"] = HexValue(value, 8);
    json["fields"] = FieldsJson(reg, value);
    json["bits_outside_fields"] = HexValue(stray, 8);
    PrintJson(inv.out(), json);
    return absl::OkStatus();
  }
  std::ostream& out = inv.out();
  out << absl::StrFormat("%s %s = 0x%08x  (segment %d, offset %#x)\n", regs::IpName(reg.ip()), reg.name(), value,
                         reg.segment(), reg.offset());
  size_t width = 4;
  for (const regs::DecodedField& d : fields) width = std::max(width, d.field.name.size());
  for (const regs::DecodedField& d : fields) {
    out << absl::StrFormat("  %-*s %-9s = %s (%u)\n", width, d.field.name, BitRange(d.field), HexValue(d.value),
                           d.value);
  }
  if (fields.empty()) out << "  (the header defines no fields for this register)\n";
  if (stray != 0) out << absl::StrFormat("  bits outside every field: 0x%08x\n", stray);
  return absl::OkStatus();
}

absl::Status RunRegs(Invocation& inv) {
  BAREGPU_ASSIGN_OR_RETURN(std::string action, inv.Positional(0, "an action: find or decode"));
  if (action == "find") return RunFind(inv);
  if (action == "decode") return RunDecode(inv);
  // Anything else names a device.
  return RunRegsDevice(inv);
}

BAREGPU_REGISTER_COMMAND(
    kRegsRegistered,
    Command{"regs",
            "look up AMD and NVIDIA registers and decode register values",
            "baregpu regs find PATTERN [--ip=IP] [--json]\n"
            "       baregpu regs find 0xADDRESS [--byte] [--device=DEVICE] [--json]\n       baregpu regs decode [IP] "
            "NAME VALUE [--json]\n"
            "       baregpu regs find PATTERN|0xBYTE_ADDRESS --chip=ga102|ad102 [--json]\n"
            "       baregpu regs decode --chip=ga102|ad102 NAME VALUE [--json]\n"
            "       baregpu regs DEVICE read NAME | write NAME=VALUE | write NAME.FIELD=VALUE | dump IP [--json]\n"
            "           [--force]",
            "The database holds every MMIO register of the Navi31 (RX 7900 XTX) IP blocks gc, mmhub, mp0, mp1,\n"
            "nbio, osssys and hdp, generated from the Linux 6.12 amdgpu headers, with segment (BASE_IDX), dword\n"
            "offset and fields.\n"
            "  find PATTERN       registers whose name contains PATTERN (any case)\n"
            "  find 0xADDRESS     the registers at an absolute dword address (the unit of the boot trace and of\n"
            "                     amdgpu's RREG32; --byte: a BAR5 byte offset), with their IP block and instance;\n"
            "                     Navi31's register bases, or those DEVICE's discovery table gives with --device\n"
            "  decode [IP] NAME VALUE\n"
            "                     every field of VALUE (hex 0x... or decimal); IP is needed only when several\n"
            "                     blocks have a register of that name\n"
            "  DEVICE read NAME   read a register of DEVICE (located through its discovery table), decoded\n"
            "  DEVICE write NAME=VALUE, DEVICE write NAME.FIELD=VALUE\n"
            "                     write a register or one field of it (read-modify-write), then read it back\n"
            "  DEVICE dump IP     every register of one IP block with its value\n"
            "With --chip=ga102 or --chip=ad102 find and decode use the NVIDIA registers of that chip, generated\n"
            "from NVIDIA's published 535.113.01 headers (docs/nv-sources.md): offsets are BAR0 bytes, either\n"
            "absolute or relative to an engine's falcon, falcon2/RISC-V or FBIF base (find 0xADDRESS resolves\n"
            "them for the GSP, SEC2 and NVDEC0). On an NVIDIA DEVICE (sim:ad102), read and write take an AD102\n"
            "register by name (NV_PMC_BOOT_42, an element NV_PBUS_SW_SCRATCH(14)), an engine's register with the\n"
            "engine first (gsp.NV_PFALCON_FALCON_CPUCTL, sec2.NV_PFALCON_FALCON_MAILBOX0), or a BAR0 byte address\n"
            "(0x1fa828), and decode what they read.\n"
            "A device another process holds is reached through that process's debug endpoint, read-only: a write\n"
            "needs --force and prints the old and new value.",
            {{"json", false, "print a JSON document"},
             {"ip", true, "find: only registers of this IP block"},
             {"chip", true, "find, decode: the NVIDIA registers of this chip (ga102, ad102) instead of AMD's"},
             {"byte", false, "find 0xADDRESS: the address is a BAR5 byte offset, not a dword address"},
             {"device", true, "find 0xADDRESS: use this device's register bases (default: Navi31's)"},
             ForceOptionSpec()},
            RunRegs});

}  // namespace
}  // namespace cli
