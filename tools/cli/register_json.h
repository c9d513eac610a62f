// The JSON shape of registers, shared by every command that prints them (regs find/decode/read/write/dump, the
// boot trace), so a consumer parses one shape: docs/json.md describes it.
#ifndef BAREGPU_TOOLS_CLI_REGISTER_JSON_H_
#define BAREGPU_TOOLS_CLI_REGISTER_JSON_H_

#include <cstdint>

#include "am/regs/database.h"
#include "tools/cli/json.h"

namespace cli {

// [{"name", "mask" (0x%08x), "shift", "value" (a number)}], one per field in the header's order.
Json FieldsJson(const am::regs::RegisterInfo& reg, uint32_t value);

// [{"name", "mask", "shift"}]: a register's fields without a value.
Json FieldLayoutJson(const am::regs::RegisterInfo& reg);

}  // namespace cli

#endif  // BAREGPU_TOOLS_CLI_REGISTER_JSON_H_
