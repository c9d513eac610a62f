// A JSON string literal for text of any origin (a device name, an error message), for the few documents the library
// writes itself (the debug endpoint's holder status); the tools use nlohmann::json.
#ifndef BAREGPU_BASE_JSON_STRING_H_
#define BAREGPU_BASE_JSON_STRING_H_

#include <string>

#include "absl/strings/string_view.h"

namespace base {

// `text` in double quotes, with '"', '\\' and every byte below 0x20 or at 0x7f and above escaped as \u00XX, so the
// result is valid JSON (and ASCII) whatever the bytes were: a byte that is not ASCII reads as its Latin-1 character.
std::string JsonString(absl::string_view text);

}  // namespace base

#endif  // BAREGPU_BASE_JSON_STRING_H_
