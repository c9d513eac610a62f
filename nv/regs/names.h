// Names of GSP-RM's numbers for messages and decoding: RPC functions and events (rpc_global_enums.h) and NV_STATUS
// codes (nvstatuscodes.h), generated into nv/regs/names.cc by tools/nv/generate.py.
#ifndef BAREGPU_NV_REGS_NAMES_H_
#define BAREGPU_NV_REGS_NAMES_H_

#include <cstdint>

#include "absl/strings/string_view.h"
#include "absl/types/span.h"

namespace nv::regs {

struct NamedValue {
  uint32_t value;
  const char* name;
  const char* message;  // the header's description (NV_STATUS codes only; empty otherwise)
};

absl::Span<const NamedValue> RpcFunctions();
absl::Span<const NamedValue> RpcEvents();
absl::Span<const NamedValue> StatusCodes();

// The entry of `table` with `value`, or nullptr.
inline const NamedValue* FindValue(absl::Span<const NamedValue> table, uint32_t value) {
  for (const NamedValue& v : table) {
    if (v.value == value) return &v;
  }
  return nullptr;
}

// "NV_ERR_INVALID_ARGUMENT"; "" for an unknown code.
inline absl::string_view StatusName(uint32_t status) {
  const NamedValue* v = FindValue(StatusCodes(), status);
  return v ? v->name : "";
}

// An RPC number as a function or an event name ("NV_VGPU_MSG_EVENT_GSP_INIT_DONE"); "" when unknown.
inline absl::string_view RpcName(uint32_t function) {
  const NamedValue* v = FindValue(RpcFunctions(), function);
  if (v == nullptr) v = FindValue(RpcEvents(), function);
  return v ? v->name : "";
}

}  // namespace nv::regs

#endif  // BAREGPU_NV_REGS_NAMES_H_
