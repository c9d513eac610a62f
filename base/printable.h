// Rendering names that come from outside (file names, device names, command-line arguments) for a terminal or a
// log line. A name may hold any byte but NUL; printed raw, a newline forges a line of output and an escape
// sequence (ESC, CSI) reprograms the user's terminal.
#ifndef BAREGPU_BASE_PRINTABLE_H_
#define BAREGPU_BASE_PRINTABLE_H_

#include <string>

#include "absl/strings/string_view.h"

namespace base {

// `name` unchanged when every byte prints as itself (printable ASCII, or valid UTF-8 that is not a C1 control);
// otherwise the name in double quotes, C-escaped: "a\nb", "\x1b[31m", "caf\xe9". So names users see every day
// read as they always did, and a name that needed quoting cannot pass for one that did not (an unquoted name never
// starts with '"'; the empty name is "").
std::string Printable(absl::string_view name);

}  // namespace base

#endif  // BAREGPU_BASE_PRINTABLE_H_
