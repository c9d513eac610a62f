#include "tools/cli/regs_device.h"

#include <optional>
#include <ostream>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "am/discovery.h"
#include "am/register_io.h"
#include "am/regs/database.h"
#include "base/status_macros.h"
#include "nv/device.h"
#include "nv/regs/ad102.h"
#include "nv/regs/database.h"
#include "tools/cli/device_access.h"
#include "tools/cli/json.h"
#include "tools/cli/register_json.h"

namespace cli {
namespace {

namespace regs = am::regs;

absl::StatusOr<uint32_t> ParseNumber(const Invocation& inv, absl::string_view text) {
  uint64_t value = 0;
  const bool ok = absl::StartsWithIgnoreCase(text, "0x") ? absl::SimpleHexAtoi(text.substr(2), &value)
                                                         : absl::SimpleAtoi(text, &value);
  if (!ok || value > 0xffffffff) {
    return inv.UsageError(absl::StrCat("'", text, "' is not a 32-bit value; write it in hex (0x1f) or decimal"));
  }
  return static_cast<uint32_t>(value);
}

struct Located {
  regs::RegisterInfo reg;
  uint64_t address;
};

absl::StatusOr<Located> Locate(const regs::IpBases& bases, absl::string_view name) {
  BAREGPU_ASSIGN_OR_RETURN(regs::RegisterInfo reg, regs::Lookup(name));
  auto address = bases.Resolve(reg.ip(), 0, reg.segment(), reg.offset());
  if (!address.ok()) {
    return absl::FailedPreconditionError(
        absl::StrFormat("%s: this device's discovery table gives %s segment %d no "
                        "base",
                        reg.name(), regs::IpName(reg.ip()), reg.segment()));
  }
  return Located{reg, *address};
}

// "fields" has the shape `regs decode` prints (tools/cli/register_json.h).
Json AccessJson(const Located& at, uint32_t value) {
  const Json fields = FieldsJson(at.reg, value);
  return {{"name", std::string(at.reg.name())},
          {"ip", std::string(regs::IpName(at.reg.ip()))},
          {"address", Hex(at.address)},
          {"value", Hex(value, 8)},
          {"fields", fields}};
}

void PrintAccess(std::ostream& out, const Located& at, uint32_t value) {
  out << absl::StrFormat("%s = 0x%08x  (%s, dword %#x)\n", at.reg.name(), value, regs::IpName(at.reg.ip()), at.address);
  for (const regs::DecodedField& d : regs::Decode(at.reg, value)) {
    if (at.reg.field_count() > 1) out << absl::StrFormat("  %s = %#x\n", d.field.name, d.value);
  }
}

// An NVIDIA GPU's registers by name (nv/regs, AD102): an absolute register (NV_PMC_BOOT_42, an array element
// NV_PBUS_SW_SCRATCH(14)), an engine's falcon register with the engine first (gsp.NV_PFALCON_FALCON_CPUCTL,
// sec2.NV_PFALCON_FALCON_MAILBOX0), or a BAR0 byte address (0x110040).
struct NvLocated {
  std::optional<nv::regs::RegisterInfo> reg;  // none for a bare address nothing in the database names
  std::string label;
  uint32_t address = 0;
};

absl::StatusOr<NvLocated> LocateNv(const Invocation& inv, absl::string_view text) {
  namespace nr = nv::regs;
  if (absl::StartsWithIgnoreCase(text, "0x")) {
    BAREGPU_ASSIGN_OR_RETURN(const uint32_t address, ParseNumber(inv, text));
    const std::vector<nr::AddressMatch> matches = nr::FindByAddress(nr::Chip::kAd102, address);
    NvLocated at{.label = absl::StrFormat("%#x", address), .address = address};
    if (!matches.empty()) {
      at.reg = matches.front().reg;
      at.label = nr::Label(matches.front());
    }
    return at;
  }
  std::string name(text);
  std::optional<nr::EngineBases> engine;
  if (const size_t dot = name.find('.'); dot != std::string::npos) {
    const std::string prefix = absl::AsciiStrToLower(name.substr(0, dot));
    if (prefix == "gsp") {
      engine = nr::ad102::kGsp;
    } else if (prefix == "sec2") {
      engine = nr::ad102::kSec2;
    } else {
      return absl::InvalidArgumentError(absl::StrFormat("'%s': the engine is gsp or sec2", text));
    }
    name = name.substr(dot + 1);
  }
  uint32_t index = 0;
  if (const size_t paren = name.find('('); paren != std::string::npos && name.back() == ')') {
    if (!absl::SimpleAtoi(name.substr(paren + 1, name.size() - paren - 2), &index)) {
      return absl::InvalidArgumentError(absl::StrFormat("'%s': the index in NAME(i) must be a number", text));
    }
    name = name.substr(0, paren);
  }
  BAREGPU_ASSIGN_OR_RETURN(const nr::RegisterInfo reg, nr::Lookup(nr::Chip::kAd102, name));
  if (reg.count() != 0 && index >= reg.count()) {
    return absl::OutOfRangeError(
        absl::StrFormat("%s has %d elements; %d is past them", reg.name(), reg.count(), index));
  }
  if (reg.unit() == nr::Unit::kVirtualFunction) {
    return absl::UnimplementedError(absl::StrFormat(
        "%s is in the virtual function's window, whose BAR0 base the vendored headers do not give", reg.name()));
  }
  if (reg.unit() != nr::Unit::kAbsolute && !engine) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s is an engine's register (%s): name the engine, gsp.%s or sec2.%s", reg.name(),
                        nr::UnitName(reg.unit()), reg.name(), reg.name()));
  }
  const uint32_t base = engine ? engine->Base(reg.unit()) : 0;
  return NvLocated{reg, std::string(text), base + reg.offset() + index * reg.stride()};
}

absl::Status RunNvRegsDevice(Invocation& inv, pci::Device& device) {
  const std::vector<std::string>& args = inv.positional();
  const std::string& action = args[1];
  if (action == "dump") return inv.UsageError("'dump' is for AMD GPUs; read an NVIDIA register by name or address");
  BAREGPU_ASSIGN_OR_RETURN(pci::Mmio bar0, device.MapMmio(0));
  std::string target = args[2];
  std::optional<uint32_t> value;
  if (action == "write") {
    const size_t equals = target.find('=');
    if (equals == std::string::npos) return inv.UsageError("write takes NAME=VALUE");
    BAREGPU_ASSIGN_OR_RETURN(value, ParseNumber(inv, target.substr(equals + 1)));
    target = target.substr(0, equals);
  }
  BAREGPU_ASSIGN_OR_RETURN(const NvLocated at, LocateNv(inv, target));
  if (value) {
    BAREGPU_RETURN_IF_ERROR(CheckWriteAllowed(inv, device, absl::StrFormat("write %#x to %s", *value, at.label)));
    bar0.Write32(at.address, *value);
  }
  const uint32_t read = bar0.Read32(at.address);
  BAREGPU_RETURN_IF_ERROR(TakeAccessError(device));
  if (inv.json()) {
    Json json{{"device", device.name()},
              {"register", at.reg ? Json(std::string(at.reg->name())) : Json(nullptr)},
              {"address", Hex(at.address)},
              {"value", Hex(read, 8)}};
    Json fields = Json::array();
    if (at.reg) {
      for (const nv::regs::DecodedField& d : nv::regs::Decode(*at.reg, read)) {
        fields.push_back({{"name", std::string(d.field.name)}, {"value", d.value}});
      }
    }
    json["fields"] = fields;
    SetJsonSchema("baregpu.regs.nv-access/1");
    PrintJson(inv.out(), json);
    return absl::OkStatus();
  }
  inv.out() << absl::StrFormat("%s = 0x%08x  (BAR0 %#x)\n", at.label, read, at.address);
  if (at.reg) {
    for (const nv::regs::DecodedField& d : nv::regs::Decode(*at.reg, read)) {
      inv.out() << absl::StrFormat("  %s = %#x\n", d.field.name, d.value);
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status RunRegsDevice(Invocation& inv) {
  const std::vector<std::string>& args = inv.positional();
  if (args.size() != 3) {
    return inv.UsageError("usage: baregpu regs DEVICE read NAME | write NAME=VALUE | write NAME.FIELD=VALUE | dump IP");
  }
  const std::string& action = args[1];
  if (action != "read" && action != "write" && action != "dump") {
    return inv.UsageError(absl::StrCat("'", action, "' is not read, write or dump"));
  }
  BAREGPU_ASSIGN_OR_RETURN(std::unique_ptr<pci::Device> device, OpenForInspection(inv, args[0]));
  if (nv::Device::IsNvidia(*device)) return RunNvRegsDevice(inv, *device);
  BAREGPU_ASSIGN_OR_RETURN(am::DeviceDiscovery found, am::ReadDiscovery(*device));
  const regs::IpBases bases = found.discovery.Bases();
  BAREGPU_ASSIGN_OR_RETURN(pci::Mmio bar5, device->MapMmio(5));
  am::RegisterIo io(bar5, bases);

  if (action == "dump") {
    BAREGPU_ASSIGN_OR_RETURN(regs::Ip ip, regs::ParseIp(args[2]));
    Json list = Json::array();
    for (const regs::RegisterInfo& reg : regs::AllRegisters()) {
      if (reg.ip() != ip) continue;
      auto address = bases.Resolve(ip, 0, reg.segment(), reg.offset());
      if (!address.ok()) continue;
      const uint32_t value = io.ReadDword(*address);
      BAREGPU_RETURN_IF_ERROR(TakeAccessError(*device));
      if (inv.json()) {
        list.push_back(AccessJson({reg, *address}, value));
      } else {
        inv.out() << absl::StrFormat("%-48s 0x%08x\n", reg.name(), value);
      }
    }
    SetJsonSchema("baregpu.regs.dump/1");
    if (inv.json()) PrintJson(inv.out(), Json{{"device", device->name()}, {"ip", args[2]}, {"registers", list}});
    return absl::OkStatus();
  }

  if (action == "read") {
    BAREGPU_ASSIGN_OR_RETURN(Located at, Locate(bases, args[2]));
    const uint32_t value = io.ReadDword(at.address);
    BAREGPU_RETURN_IF_ERROR(TakeAccessError(*device));
    if (inv.json()) {
      SetJsonSchema("baregpu.regs.read/1");
      PrintJson(inv.out(), AccessJson(at, value));
    } else {
      PrintAccess(inv.out(), at, value);
    }
    return absl::OkStatus();
  }

  // write NAME=VALUE or NAME.FIELD=VALUE (a read-modify-write of that field).
  const size_t equals = args[2].find('=');
  if (equals == std::string::npos) return inv.UsageError("write takes NAME=VALUE or NAME.FIELD=VALUE");
  std::string target = args[2].substr(0, equals);
  BAREGPU_ASSIGN_OR_RETURN(uint32_t value, ParseNumber(inv, args[2].substr(equals + 1)));
  std::optional<std::string> field_name;
  if (const size_t dot = target.find('.'); dot != std::string::npos) {
    field_name = target.substr(dot + 1);
    target = target.substr(0, dot);
  }
  BAREGPU_ASSIGN_OR_RETURN(Located at, Locate(bases, target));
  const uint32_t old = io.ReadDword(at.address);
  BAREGPU_RETURN_IF_ERROR(TakeAccessError(*device));
  uint32_t raw = value;
  if (field_name) {
    std::optional<regs::FieldInfo> field;
    for (const regs::FieldInfo& f : at.reg.fields()) {
      if (absl::EqualsIgnoreCase(f.name, *field_name)) field = f;
    }
    if (!field) {
      return absl::NotFoundError(absl::StrFormat("%s has no field %s (`baregpu regs find %s --json` lists them)",
                                                 at.reg.name(), *field_name, at.reg.name()));
    }
    const uint32_t limit = field->mask >> field->shift;
    if (value > limit) {
      return inv.UsageError(absl::StrFormat("%s.%s is %d bits wide: %#x does not fit (at most %#x)", at.reg.name(),
                                            field->name, std::popcount(field->mask), value, limit));
    }
    raw = (old & ~field->mask) | ((value << field->shift) & field->mask);
  }
  BAREGPU_RETURN_IF_ERROR(
      CheckWriteAllowed(inv, *device, absl::StrFormat("write %s: 0x%08x -> 0x%08x", at.reg.name(), old, raw)));
  io.WriteDword(at.address, raw);
  const uint32_t now = io.ReadDword(at.address);
  BAREGPU_RETURN_IF_ERROR(TakeAccessError(*device));
  if (inv.json()) {
    SetJsonSchema("baregpu.regs.write/1");
    Json j = AccessJson(at, now);
    j["old"] = Hex(old, 8);
    j["written"] = Hex(raw, 8);
    PrintJson(inv.out(), j);
  } else {
    inv.out() << absl::StrFormat("%s: 0x%08x -> 0x%08x; reads back:\n", at.reg.name(), old, raw);
    PrintAccess(inv.out(), at, now);
  }
  return absl::OkStatus();
}

}  // namespace cli
