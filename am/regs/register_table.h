// The layout of the generated register tables (am/regs/*_table.cc, written by tools/regs/generate.py): plain
// constant data, names in one string table per header, so that thousands of registers compile in seconds.
// Code reads them through am/regs/database.h, not directly.
#ifndef BAREGPU_AM_REGS_REGISTER_TABLE_H_
#define BAREGPU_AM_REGS_REGISTER_TABLE_H_

#include <cstddef>
#include <cstdint>

#include "am/regs/ip.h"

namespace am::regs::internal {

struct RegisterEntry {
  uint32_t name;         // offset into the table's strings
  uint32_t offset;       // dwords from the segment base
  uint32_t first_field;  // index into the table's fields
  uint16_t field_count;
  uint8_t segment;  // BASE_IDX
  Ip ip;
};

struct FieldEntry {
  uint32_t name;  // offset into the table's strings
  uint32_t mask;
  uint8_t shift;
};

struct RegisterTable {
  const char* source;  // the kernel headers it was generated from
  const char* strings;
  size_t strings_size;
  const RegisterEntry* registers;
  size_t register_count;
  const FieldEntry* fields;
  size_t field_count;
};

extern const RegisterTable kGcTable;
extern const RegisterTable kMmhubTable;
extern const RegisterTable kMpTable;
extern const RegisterTable kNbioTable;
extern const RegisterTable kOsssysTable;
extern const RegisterTable kHdpTable;

}  // namespace am::regs::internal

#endif  // BAREGPU_AM_REGS_REGISTER_TABLE_H_
