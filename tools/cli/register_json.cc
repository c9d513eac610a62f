#include "tools/cli/register_json.h"

#include <string>

namespace cli {

namespace regs = am::regs;

// Masks are printed with all eight digits, as the headers write them.
constexpr int kMaskDigits = 8;

Json FieldsJson(const regs::RegisterInfo& reg, uint32_t value) {
  Json fields = Json::array();
  for (const regs::DecodedField& d : regs::Decode(reg, value)) {
    fields.push_back({{"name", std::string(d.field.name)},
                      {"mask", Hex(d.field.mask, kMaskDigits)},
                      {"shift", d.field.shift},
                      {"value", d.value}});
  }
  return fields;
}

Json FieldLayoutJson(const regs::RegisterInfo& reg) {
  Json fields = Json::array();
  for (const regs::FieldInfo& f : reg.fields()) {
    fields.push_back({{"name", std::string(f.name)}, {"mask", Hex(f.mask, kMaskDigits)}, {"shift", f.shift}});
  }
  return fields;
}

}  // namespace cli
