#include "am/regs/database.h"

#include <array>
#include <string>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/mutex.h"

namespace am::regs {
namespace {

constexpr std::array<const internal::RegisterTable*, 6> kTables = {
    &internal::kGcTable,   &internal::kMmhubTable,  &internal::kMpTable,
    &internal::kNbioTable, &internal::kOsssysTable, &internal::kHdpTable,
};

// Registers by name, as positions in AllRegisters(): the first register of each name, then through `next` the others
// spelt alike (other IPs), in AllRegisters' order. A chain instead of a vector per name: the index is built at the
// first lookup by name, which every device open makes (in the library and again in the virtual GPU's), and 11911
// vectors cost ~2 ms there.
struct NameIndex {
  static constexpr uint32_t kEnd = UINT32_MAX;
  absl::flat_hash_map<absl::string_view, uint32_t> first;
  std::vector<uint32_t> next;
};

const NameIndex& ByName() {
  static const NameIndex* index = [] {
    const std::vector<RegisterInfo>& all = AllRegisters();
    auto* built = new NameIndex();
    built->first.reserve(all.size());
    built->next.assign(all.size(), NameIndex::kEnd);
    // Back to front, each register going to the head of its chain, so that a chain runs in AllRegisters' order.
    for (size_t i = all.size(); i-- > 0;) {
      auto [it, inserted] = built->first.try_emplace(all[i].name(), static_cast<uint32_t>(i));
      if (!inserted) {
        built->next[i] = it->second;
        it->second = static_cast<uint32_t>(i);
      }
    }
    return built;
  }();
  return *index;
}

// Register names are upper case in the headers; people type them in any case.
std::string Canonical(absl::string_view name) { return absl::AsciiStrToUpper(name); }

}  // namespace

FieldInfo RegisterInfo::field(size_t index) const {
  const internal::FieldEntry& f = table_->fields[entry_->first_field + index];
  return FieldInfo{table_->strings + f.name, f.mask, f.shift};
}

std::vector<FieldInfo> RegisterInfo::fields() const {
  std::vector<FieldInfo> result;
  result.reserve(field_count());
  for (size_t i = 0; i < field_count(); ++i) result.push_back(field(i));
  return result;
}

std::vector<DecodedField> Decode(const RegisterInfo& reg, uint32_t value) {
  std::vector<DecodedField> result;
  result.reserve(reg.field_count());
  for (size_t i = 0; i < reg.field_count(); ++i) {
    FieldInfo f = reg.field(i);
    result.push_back({f, f.Extract(value)});
  }
  return result;
}

const std::vector<RegisterInfo>& AllRegisters() {
  static const std::vector<RegisterInfo>* all = [] {
    auto* regs = new std::vector<RegisterInfo>();
    for (Ip ip : kAllIps) {
      for (const internal::RegisterTable* table : kTables) {
        for (size_t i = 0; i < table->register_count; ++i) {
          if (table->registers[i].ip == ip) regs->emplace_back(table, &table->registers[i]);
        }
      }
    }
    return regs;
  }();
  return *all;
}

std::vector<RegisterInfo> FindByName(absl::string_view name, std::optional<Ip> ip) {
  std::string key = Canonical(name);
  const NameIndex& index = ByName();
  auto it = index.first.find(key);
  // The kernel spells offsets regNAME; that spelling is tried only when the name as given is no register.
  if (it == index.first.end() && absl::StartsWith(key, "REG")) it = index.first.find(absl::string_view(key).substr(3));
  std::vector<RegisterInfo> result;
  if (it == index.first.end()) return result;
  const std::vector<RegisterInfo>& all = AllRegisters();
  for (uint32_t i = it->second; i != NameIndex::kEnd; i = index.next[i]) {
    if (!ip || all[i].ip() == *ip) result.push_back(all[i]);
  }
  return result;
}

absl::StatusOr<RegisterInfo> Lookup(absl::string_view name, std::optional<Ip> ip) {
  std::vector<RegisterInfo> found = FindByName(name, ip);
  if (found.size() == 1) return found[0];
  const std::string where = ip ? absl::StrCat(" in ", IpName(*ip)) : "";
  if (found.empty()) {
    std::vector<RegisterInfo> similar = Search(name, ip);
    std::vector<std::string> names;
    for (size_t i = 0; i < similar.size() && i < 5; ++i) names.push_back(std::string(similar[i].name()));
    std::string hint =
        similar.empty()
            ? absl::StrCat("; `baregpu regs find` lists registers by part of their name")
            : absl::StrCat("; names containing it: ", absl::StrJoin(names, ", "),
                           similar.size() > names.size() ? absl::StrCat(" (", similar.size(), " in all)") : "");
    return absl::NotFoundError(absl::StrCat("no register named '", name, "'", where, hint));
  }
  std::vector<std::string> ips;
  for (const RegisterInfo& reg : found) ips.push_back(std::string(IpName(reg.ip())));
  return absl::InvalidArgumentError(absl::StrCat("register '", name, "' exists in ", absl::StrJoin(ips, " and "),
                                                 "; name the IP block (for example '", ips[0], " ", name, "')"));
}

absl::StatusOr<uint64_t> ResolveAddress(const IpBases& bases, absl::string_view name, Ip ip, int instance) {
  // The drivers resolve the same few hundred names at every device open (the GMC's hub registers: 20% of a partial
  // boot's CPU in FindByName's case folding and index walk, issue 24): a name found once is kept, by the exact
  // spelling asked for, for the process.
  struct Found {
    int segment;
    uint32_t offset;
  };
  static base::Mutex mu;
  static auto* found = new absl::flat_hash_map<std::pair<std::string, Ip>, Found>();
  {
    base::MutexLock lock(&mu);
    if (auto it = found->find(std::make_pair(std::string(name), ip)); it != found->end()) {
      return bases.Resolve(ip, instance, it->second.segment, it->second.offset);
    }
  }
  absl::StatusOr<RegisterInfo> reg = Lookup(name, ip);
  if (!reg.ok()) return reg.status();
  {
    base::MutexLock lock(&mu);
    found->try_emplace(std::make_pair(std::string(name), ip), Found{reg->segment(), reg->offset()});
  }
  return bases.Resolve(ip, instance, reg->segment(), reg->offset());
}

std::vector<RegisterInfo> Search(absl::string_view pattern, std::optional<Ip> ip) {
  std::vector<RegisterInfo> result;
  const std::string key = Canonical(pattern);
  for (const RegisterInfo& reg : AllRegisters()) {
    if ((!ip || reg.ip() == *ip) && absl::StrContains(reg.name(), key)) result.push_back(reg);
  }
  return result;
}

std::vector<AddressMatch> FindByAddress(const IpBases& bases, uint64_t dword_address) {
  std::vector<AddressMatch> result;
  for (const RegisterInfo& reg : AllRegisters()) {
    for (int instance : bases.Instances(reg.ip())) {
      absl::StatusOr<uint64_t> address = bases.Resolve(reg.ip(), instance, reg.segment(), reg.offset());
      if (address.ok() && *address == dword_address) result.push_back({reg, instance, *address});
    }
  }
  return result;
}

}  // namespace am::regs
