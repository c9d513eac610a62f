// sizeof/offsetof of the GSP-RM 535.113.01 structures the project redefines (nv/gsp/layouts.h), as gcc lays
// them out from the vendored headers (generated into nv/regs/gsp_layouts.cc by tools/nv/layouts.py). The layout
// test checks the project's definitions against them; gsp_layouts.cc is compiled into that test only.
#ifndef BAREGPU_NV_REGS_GSP_LAYOUTS_H_
#define BAREGPU_NV_REGS_GSP_LAYOUTS_H_

#include <cstddef>

#include "absl/types/span.h"

namespace nv::regs {

struct MeasuredStruct {
  const char* type;    // as C names it: "GspFwWprMeta", "rpc_gsp_rm_alloc_v03_00"
  const char* header;  // where its definition was read
  size_t size;
};

struct MeasuredMember {
  const char* type;
  const char* member;  // members of anonymous unions/structs included
  size_t offset;
  size_t size;  // 0 for a flexible array
};

absl::Span<const MeasuredStruct> MeasuredStructs();
absl::Span<const MeasuredMember> MeasuredMembers();

}  // namespace nv::regs

#endif  // BAREGPU_NV_REGS_GSP_LAYOUTS_H_
