#include "nv/regs/database.h"

#include <algorithm>
#include <string>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "nv/regs/known_registers.h"

namespace nv::regs {
namespace {

const internal::RegisterTable& Table(Chip chip) {
  return chip == Chip::kAd102 ? internal::kAd102Table : internal::kGa102Table;
}

// The base a unit resolves against in `engine`, or nullopt for units no engine provides.
std::optional<uint32_t> UnitBase(Unit unit, const internal::EngineEntry& engine) {
  switch (unit) {
    case Unit::kFalcon:
      return engine.falcon;
    case Unit::kFalcon2:
    case Unit::kRiscv:
      return engine.falcon2;
    case Unit::kFbif:
      return engine.fbif;
    case Unit::kAbsolute:
    case Unit::kVirtualFunction:
      return std::nullopt;
  }
  return std::nullopt;
}

// Whether `reg` (relative to `base`) covers `address`; sets the element index.
bool Covers(const RegisterInfo& reg, uint32_t base, uint32_t address, uint32_t* index) {
  if (address < base + reg.offset()) return false;
  const uint32_t delta = address - base - reg.offset();
  if (!reg.is_array()) {
    *index = 0;
    return delta == 0;
  }
  if (delta % reg.stride() != 0) return false;
  *index = delta / reg.stride();
  return reg.count() == 0 ? *index == 0 : *index < reg.count();
}

}  // namespace

absl::string_view ChipName(Chip chip) { return chip == Chip::kAd102 ? "ad102" : "ga102"; }

absl::StatusOr<Chip> ParseChip(absl::string_view name) {
  for (Chip chip : {Chip::kGa102, Chip::kAd102}) {
    if (absl::EqualsIgnoreCase(name, ChipName(chip))) return chip;
  }
  return absl::InvalidArgumentError(absl::StrCat("unknown NVIDIA chip '", name, "' (known: ga102, ad102)"));
}

absl::string_view UnitName(Unit unit) {
  switch (unit) {
    case Unit::kAbsolute:
      return "BAR0";
    case Unit::kFalcon:
      return "falcon base";
    case Unit::kFalcon2:
      return "falcon2 base";
    case Unit::kFbif:
      return "FBIF base";
    case Unit::kRiscv:
      return "RISC-V base";
    case Unit::kVirtualFunction:
      return "virtual function window";
  }
  return "?";
}

std::vector<FieldInfo> RegisterInfo::fields() const {
  std::vector<FieldInfo> out;
  for (size_t i = 0; i < entry_->field_count; ++i) {
    const internal::FieldEntry& f = table_->fields[entry_->first_field + i];
    out.push_back({table_->strings + f.name, f.hi, f.lo});
  }
  return out;
}

std::vector<DecodedField> Decode(const RegisterInfo& reg, uint32_t value) {
  std::vector<DecodedField> out;
  for (const FieldInfo& f : reg.fields()) out.push_back({f, f.Extract(value)});
  return out;
}

namespace {

// The hand-written registers of nv/regs/known_registers.h as a register table of their own, per chip, so that they
// are found like the generated ones. Built once and never freed; the tables and their storage live in one object
// the static pointer holds (an interior pointer alone would read as a leak).
struct KnownTables {
  std::string strings[2];
  std::vector<internal::RegisterEntry> entries[2];
  internal::RegisterTable tables[2];
};

const internal::RegisterTable& KnownTable(Chip chip) {
  static const KnownTables* known = [] {
    auto* out = new KnownTables;
    for (Chip c : {Chip::kGa102, Chip::kAd102}) {
      const int i = static_cast<int>(c);
      const uint8_t bit = c == Chip::kAd102 ? known::kAd102 : known::kGa102;
      std::string& strings = out->strings[i];
      std::vector<internal::RegisterEntry>& entries = out->entries[i];
      for (const known::KnownRegister& k : known::kRegisters) {
        if ((k.chips & bit) == 0) continue;
        const auto name = static_cast<uint32_t>(strings.size());
        strings.append(k.name).push_back('\0');
        const auto source = static_cast<uint32_t>(strings.size());
        strings.append("nv/regs/known_registers.h: Linux 6.12 nouveau ").append(k.source).push_back('\0');
        entries.push_back({name, Unit::kAbsolute, k.offset, k.stride, k.count, 0, 0, source});
      }
      out->tables[i] = {
          ChipName(c).data(), strings.data(), strings.size(), entries.data(), entries.size(), nullptr, 0, nullptr, 0};
    }
    return out;
  }();
  return known->tables[static_cast<int>(chip)];
}

}  // namespace

const std::vector<RegisterInfo>& AllRegisters(Chip chip) {
  static const auto* all = [] {
    auto* lists = new std::vector<RegisterInfo>[2];
    for (Chip c : {Chip::kGa102, Chip::kAd102}) {
      for (const internal::RegisterTable* t : {&Table(c), &KnownTable(c)}) {
        for (size_t i = 0; i < t->register_count; ++i) lists[static_cast<int>(c)].emplace_back(t, &t->registers[i]);
      }
    }
    return lists;
  }();
  return all[static_cast<int>(chip)];
}

std::vector<RegisterInfo> Search(Chip chip, absl::string_view pattern) {
  // Debian's Abseil (20220623) has no StrContainsIgnoreCase.
  const std::string lower = absl::AsciiStrToLower(pattern);
  std::vector<RegisterInfo> out;
  for (const RegisterInfo& reg : AllRegisters(chip)) {
    if (absl::StrContains(absl::AsciiStrToLower(reg.name()), lower)) out.push_back(reg);
  }
  return out;
}

absl::StatusOr<RegisterInfo> Lookup(Chip chip, absl::string_view name) {
  for (const RegisterInfo& reg : AllRegisters(chip)) {
    if (absl::EqualsIgnoreCase(reg.name(), name)) return reg;
  }
  // Suggest registers sharing the name's last word (CPUCTL for NV_PFALCON_FALCON_CPUCTLX).
  absl::string_view word = name.substr(std::min(name.size(), name.rfind('_') + 1));
  std::vector<std::string> similar;
  for (const RegisterInfo& reg : Search(chip, word.size() >= 3 ? word : name)) {
    if (similar.size() < 5) similar.emplace_back(reg.name());
  }
  return absl::NotFoundError(absl::StrCat("no ", ChipName(chip), " register is named '", name, "'",
                                          similar.empty() ? "" : "; similar: " + absl::StrJoin(similar, ", ")));
}

std::vector<AddressMatch> FindByAddress(Chip chip, uint32_t byte_address) {
  const internal::RegisterTable& t = Table(chip);
  std::vector<AddressMatch> out;
  for (const RegisterInfo& reg : AllRegisters(chip)) {
    uint32_t index = 0;
    if (reg.unit() == Unit::kAbsolute) {
      if (Covers(reg, 0, byte_address, &index)) out.push_back({reg, "", index});
      continue;
    }
    for (size_t e = 0; e < t.engine_count; ++e) {
      std::optional<uint32_t> base = UnitBase(reg.unit(), t.engines[e]);
      if (base && Covers(reg, *base, byte_address, &index)) out.push_back({reg, t.engines[e].name, index});
    }
  }
  return out;
}

std::string Label(const AddressMatch& match) {
  std::string label = match.engine.empty() ? "" : absl::StrCat(absl::AsciiStrToLower(match.engine), ".");
  absl::StrAppend(&label, match.reg.name());
  if (match.reg.is_array()) absl::StrAppend(&label, "(", match.index, ")");
  return label;
}

}  // namespace nv::regs
