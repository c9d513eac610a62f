// The QMD (queue meta data, the compute launch descriptor) field tables of open-gpu-doc's class headers,
// generated into nv/regs/qmd_tables.cc by tools/nv/generate.py: QMD 03_00 as AMPERE_COMPUTE_B (clc7c0qmd.h) and
// ADA_COMPUTE_A (clc9c0qmd.h) define it, and 04_00 (clcbc0qmd.h).
#ifndef BAREGPU_NV_REGS_QMD_H_
#define BAREGPU_NV_REGS_QMD_H_

#include <cstdint>

#include "absl/types/span.h"

namespace nv::regs {

struct QmdField {
  const char* name;  // without the NVC9C0_QMDV03_00_ prefix
  uint32_t hi;       // bit positions within the QMD, as MW(hi:lo) gives them (element 0 of an indexed field)
  uint32_t lo;
  uint32_t stride;  // bits between elements of an indexed field F(i); 0 for a plain field
};

absl::Span<const QmdField> QmdC7c0V03_00Fields();
absl::Span<const QmdField> QmdC9c0V03_00Fields();
absl::Span<const QmdField> QmdCbc0V04_00Fields();

}  // namespace nv::regs

#endif  // BAREGPU_NV_REGS_QMD_H_
