// The register database at run time: every MMIO register of the Navi31 headers (see am/regs/ip.h) with its
// fields, looked up by name, by substring or by absolute address. Generated data (am/regs/*_table.cc, from the
// Linux headers by tools/regs/generate.py); for typed access in driver code use am/regs/<ip>.h instead.
#ifndef BAREGPU_AM_REGS_DATABASE_H_
#define BAREGPU_AM_REGS_DATABASE_H_

#include <cstdint>
#include <optional>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "am/regs/ip.h"
#include "am/regs/ip_bases.h"
#include "am/regs/register_table.h"

namespace am::regs {

struct FieldInfo {
  absl::string_view name;
  uint32_t mask;
  uint8_t shift;
  // As Linux's REG_GET_FIELD: (value & mask) >> shift.
  uint32_t Extract(uint32_t value) const { return (value & mask) >> shift; }
};

// A view of one register of the generated tables; cheap to copy.
class RegisterInfo {
 public:
  RegisterInfo(const internal::RegisterTable* table, const internal::RegisterEntry* entry)
      : table_(table), entry_(entry) {}

  Ip ip() const { return entry_->ip; }
  absl::string_view name() const { return table_->strings + entry_->name; }
  int segment() const { return entry_->segment; }
  uint32_t offset() const { return entry_->offset; }
  size_t field_count() const { return entry_->field_count; }
  FieldInfo field(size_t index) const;
  std::vector<FieldInfo> fields() const;
  // The kernel headers this register comes from ("asic_reg/gc/gc_11_0_0_{offset,sh_mask}.h").
  absl::string_view source() const { return table_->source; }

  friend bool operator==(const RegisterInfo& a, const RegisterInfo& b) { return a.entry_ == b.entry_; }

 private:
  const internal::RegisterTable* table_;
  const internal::RegisterEntry* entry_;
};

struct DecodedField {
  FieldInfo field;
  uint32_t value;
};

// Every field of `reg` with its value in `value`, in the header's order.
std::vector<DecodedField> Decode(const RegisterInfo& reg, uint32_t value);

// All registers, IP by IP, each in header order.
const std::vector<RegisterInfo>& AllRegisters();

// Registers with exactly this name (any case; a leading "reg" as in the kernel's macros is accepted), one per
// IP block that has it; only those of `ip` when given.
std::vector<RegisterInfo> FindByName(absl::string_view name, std::optional<Ip> ip = std::nullopt);

// The one register with this name: NotFound suggests similar names; InvalidArgument when several IP blocks
// have it and `ip` does not choose.
absl::StatusOr<RegisterInfo> Lookup(absl::string_view name, std::optional<Ip> ip = std::nullopt);

// The absolute dword address of register `name` of `ip` in one instance, with a device's bases: for registers
// that come in numbered families (VM contexts, invalidation engines) and the two hubs' twin names, where a typed
// register per name would not do. Errors name the register, or the segment without a base.
absl::StatusOr<uint64_t> ResolveAddress(const IpBases& bases, absl::string_view name, Ip ip, int instance = 0);

// Registers whose name contains `pattern` (any case), in AllRegisters() order.
std::vector<RegisterInfo> Search(absl::string_view pattern, std::optional<Ip> ip = std::nullopt);

struct AddressMatch {
  RegisterInfo reg;
  int instance;
  uint64_t address;  // absolute dword address
};

// The registers at an absolute dword address, given the device's bases (several when IP instances overlap).
std::vector<AddressMatch> FindByAddress(const IpBases& bases, uint64_t dword_address);

}  // namespace am::regs

#endif  // BAREGPU_AM_REGS_DATABASE_H_
