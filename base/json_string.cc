#include "base/json_string.h"

#include "absl/strings/str_format.h"

namespace base {

std::string JsonString(absl::string_view text) {
  // The first byte that needs no escape and the one past the last (RFC 8259: control characters must be escaped;
  // bytes from 0x7f are escaped too so that the result never holds half a UTF-8 sequence).
  constexpr unsigned char kFirstPlain = 0x20, kPastPlain = 0x7f;
  std::string out = "\"";
  for (const char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\' || byte < kFirstPlain || byte >= kPastPlain) {
      absl::StrAppendFormat(&out, "\\u%04x", byte);
    } else {
      out += c;
    }
  }
  out += '"';
  return out;
}

}  // namespace base
