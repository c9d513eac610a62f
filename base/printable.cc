#include "base/printable.h"

#include "absl/strings/str_format.h"

namespace base {
namespace {

// The length of the printable UTF-8 sequence at the start of `s` (2 to 4 bytes), or 0 when it is not valid UTF-8
// (RFC 3629: no overlong forms, no surrogates, nothing above U+10FFFF) or is a C1 control (U+0080..U+009F, which
// terminals may act on as they act on ESC sequences).
size_t Utf8Length(absl::string_view s) {
  const auto byte = [&](size_t i) { return static_cast<unsigned char>(s[i]); };
  const unsigned char lead = byte(0);
  size_t length;
  uint32_t code;
  if (lead >= 0xc2 && lead <= 0xdf) {
    length = 2, code = lead & 0x1f;
  } else if (lead >= 0xe0 && lead <= 0xef) {
    length = 3, code = lead & 0x0f;
  } else if (lead >= 0xf0 && lead <= 0xf4) {
    length = 4, code = lead & 0x07;
  } else {
    return 0;
  }
  if (s.size() < length) return 0;
  for (size_t i = 1; i < length; ++i) {
    if ((byte(i) & 0xc0) != 0x80) return 0;
    code = (code << 6) | (byte(i) & 0x3f);
  }
  const uint32_t smallest[] = {0, 0, 0x80, 0x800, 0x10000};
  if (code < smallest[length] || (code >= 0xd800 && code <= 0xdfff) || code > 0x10ffff) return 0;
  if (code <= 0x9f) return 0;  // C1 controls
  return length;
}

bool PrintsAsItself(absl::string_view name) {
  if (name.empty() || name.front() == '"') return false;
  for (size_t i = 0; i < name.size();) {
    const unsigned char c = static_cast<unsigned char>(name[i]);
    if (c >= 0x20 && c < 0x7f) {
      ++i;
      continue;
    }
    const size_t length = c >= 0x80 ? Utf8Length(name.substr(i)) : 0;
    if (length == 0) return false;
    i += length;
  }
  return true;
}

}  // namespace

std::string Printable(absl::string_view name) {
  if (PrintsAsItself(name)) return std::string(name);
  std::string out = "\"";
  for (size_t i = 0; i < name.size();) {
    const unsigned char c = static_cast<unsigned char>(name[i]);
    if (c >= 0x80) {
      // Valid UTF-8 stays readable inside the quotes; only what would not print is escaped.
      if (const size_t length = Utf8Length(name.substr(i)); length != 0) {
        out.append(name.data() + i, length);
        i += length;
        continue;
      }
    }
    switch (c) {
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      default:
        if (c < 0x20 || c >= 0x7f) {
          out += absl::StrFormat("\\x%02x", c);
        } else {
          out += static_cast<char>(c);
        }
    }
    ++i;
  }
  out += '"';
  return out;
}

}  // namespace base
