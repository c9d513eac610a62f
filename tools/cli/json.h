// JSON output for --json: nlohmann::json (Debian's nlohmann-json3-dev), printed one document per command.
#ifndef BAREGPU_TOOLS_CLI_JSON_H_
#define BAREGPU_TOOLS_CLI_JSON_H_

#include <cstdint>
#include <nlohmann/json.hpp>
#include <ostream>
#include <string>

#include "absl/strings/str_format.h"
#include "tools/cli/command.h"

namespace cli {

using Json = nlohmann::ordered_json;

// Every document carries its schema id as its first key, "schema": JsonSchema() (tools/cli/command.h).
// Control characters in strings come out as JSON escapes (\n, \u001b); bytes that are not UTF-8 (a Latin-1 file
// name, a code object's symbol) as U+FFFD, where nlohmann's default would throw and abort the command.
inline void PrintJson(std::ostream& out, const Json& json) {
  Json document = json;
  if (document.is_object() && !JsonSchema().empty()) {
    document = Json{{"schema", JsonSchema()}};
    for (const auto& [key, value] : json.items()) document[key] = value;
  }
  out << document.dump(2, ' ', /*ensure_ascii=*/false, Json::error_handler_t::replace) << "\n";
}

// Register values and addresses are printed as hex strings in JSON, as people read them ("0x1002").
// Zero is "0x0" (printf's %#x would drop the 0x for it).
inline std::string Hex(uint64_t value, int digits = 0) { return absl::StrFormat("0x%0*x", digits, value); }

}  // namespace cli

#endif  // BAREGPU_TOOLS_CLI_JSON_H_
