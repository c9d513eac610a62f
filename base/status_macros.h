// Status propagation helpers used at every layer boundary (errors are values; see docs/ARCHITECTURE).
#ifndef BAREGPU_BASE_STATUS_MACROS_H_
#define BAREGPU_BASE_STATUS_MACROS_H_

#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

#define BAREGPU_CONCAT_INNER_(a, b) a##b
#define BAREGPU_CONCAT_(a, b) BAREGPU_CONCAT_INNER_(a, b)

// Returns from the enclosing function when `expr` (an absl::Status) is not OK.
#define BAREGPU_RETURN_IF_ERROR(expr)                                     \
  do {                                                                    \
    if (::absl::Status baregpu_status_ = (expr); !baregpu_status_.ok()) { \
      return baregpu_status_;                                             \
    }                                                                     \
  } while (0)

#define BAREGPU_ASSIGN_OR_RETURN_IMPL_(tmp, lhs, expr) \
  auto tmp = (expr);                                   \
  if (!tmp.ok()) return std::move(tmp).status();       \
  lhs = std::move(tmp).value()

// `BAREGPU_ASSIGN_OR_RETURN(auto x, MaybeX());` declares x from an absl::StatusOr or returns its error. __COUNTER__,
// not
// __LINE__, names the temporary: an invocation spanning lines may see several __LINE__ values.
#define BAREGPU_ASSIGN_OR_RETURN(lhs, expr) \
  BAREGPU_ASSIGN_OR_RETURN_IMPL_(BAREGPU_CONCAT_(baregpu_statusor_, __COUNTER__), lhs, expr)

namespace base {

// Prefixes a context ("sim:navi31: PSP") to an error's message, keeping its code.
inline absl::Status Annotate(const absl::Status& status, absl::string_view context) {
  if (status.ok()) return status;
  return absl::Status(status.code(), std::string(context) + ": " + std::string(status.message()));
}

}  // namespace base

#endif  // BAREGPU_BASE_STATUS_MACROS_H_
