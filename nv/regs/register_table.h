// The layout of the generated register tables (nv/regs/<chip>_table.cc, written by tools/nv/generate.py): plain
// constant data with the names in one string table. Code reads them through nv/regs/database.h.
#ifndef BAREGPU_NV_REGS_REGISTER_TABLE_H_
#define BAREGPU_NV_REGS_REGISTER_TABLE_H_

#include <cstddef>
#include <cstdint>

#include "nv/regs/register.h"

namespace nv::regs::internal {

struct RegisterEntry {
  uint32_t name;  // offset into the table's strings
  Unit unit;
  uint32_t offset;  // bytes from the unit's base
  uint32_t stride;  // bytes between elements of an array register (0: not an array)
  uint32_t count;   // elements (0: the header gives no count)
  uint32_t first_field;
  uint16_t field_count;
  uint32_t source;  // offset into the strings: the header it was defined in
};

struct FieldEntry {
  uint32_t name;  // an indexed field F(i) appears once per element, named "F(i)"
  uint8_t hi;
  uint8_t lo;
};

// An engine's bases, which the falcon-relative units resolve against.
struct EngineEntry {
  const char* name;
  uint32_t falcon;
  uint32_t falcon2;  // also the RISC-V registers' base
  uint32_t fbif;
};

struct RegisterTable {
  const char* chip;
  const char* strings;
  size_t strings_size;
  const RegisterEntry* registers;
  size_t register_count;
  const FieldEntry* fields;
  size_t field_count;
  const EngineEntry* engines;
  size_t engine_count;
};

extern const RegisterTable kGa102Table;
extern const RegisterTable kAd102Table;

}  // namespace nv::regs::internal

#endif  // BAREGPU_NV_REGS_REGISTER_TABLE_H_
