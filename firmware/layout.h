// Internal: the table-driven description of each amdgpu_ucode.h header version, shared by the family files
// (psp_layouts.cc, gfx_layouts.cc, ...) and the generic parser (container.cc).
#ifndef BAREGPU_FIRMWARE_LAYOUT_H_
#define BAREGPU_FIRMWARE_LAYOUT_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "firmware/byte_reader.h"
#include "firmware/container.h"

namespace firmware::layout {

enum class Base {
  kFile,        // offset field counts from the start of the file
  kUcodeArray,  // offset field counts from header.ucode_array_offset_bytes
};
enum class Unit { kBytes, kDwords };

// Stands for "the SDMA engine this file is for" in an SDMA v1 region's types (GFX_FW_TYPE_SDMA0 + n).
inline constexpr uint32_t kSdmaInstanceType = 0xffffffff;

// One range of the file named by header fields. Fields are named as in amdgpu_ucode.h; the common header's as
// "header.ucode_size_bytes".
struct Region {
  std::string name;
  Base base = Base::kUcodeArray;
  std::string offset_field;  // empty: the base itself
  Unit offset_unit = Unit::kBytes;
  std::string size_field;
  Unit size_unit = Unit::kBytes;
  LoadPath load = LoadPath::kDriver;
  std::vector<uint32_t> types;
  std::string version_field;  // optional
  std::string minus_dwords;   // optional: size is size_field minus this many dwords (MEC code without its JT)
};

struct State;

struct Layout {
  Family family;
  std::vector<FileKind> kinds;  // empty: every kind of the family
  uint16_t major;
  int minor;  // -1: any minor (the driver reads these as the .0 layout)
  std::string struct_name;
  std::vector<std::string> fields;  // the uint32_t members after the common header, in order
  std::vector<Region> regions;
  absl::Status (*extra)(State&) = nullptr;  // arrays and anything not expressible as regions
  uint32_t extra_header_bytes = 0;          // bytes beyond `fields` the struct has (for the fits-in-file check)
};

// Parse-time state handed to a layout's `extra`.
struct State {
  const ByteReader& reader;
  Container& out;
  absl::flat_hash_map<std::string, uint32_t> values;

  uint32_t Value(const std::string& field) const;
  uint64_t UcodeArray() const { return out.header.ucode_array_offset_bytes; }
  // Adds a component after checking it lies inside the file; `origin` names the fields that placed it.
  absl::Status Add(Component component, const std::string& origin);
};

// A legacy bin descriptor (struct psp_fw_legacy_bin_desc) as three field names: "sos.fw_version", ...
std::vector<std::string> LegacyDesc(const std::string& name);
std::vector<std::string> Concat(std::initializer_list<std::vector<std::string>> parts);

// Every known layout; each family file contributes its own.
const std::vector<Layout>& AllLayouts();
void AddPspLayouts(std::vector<Layout>& layouts);
void AddGfxLayouts(std::vector<Layout>& layouts);
void AddRlcLayouts(std::vector<Layout>& layouts);
void AddSdmaLayouts(std::vector<Layout>& layouts);
void AddSmcLayouts(std::vector<Layout>& layouts);
void AddMiscLayouts(std::vector<Layout>& layouts);   // IMU, MES, MC, gpu_info
void AddMediaLayouts(std::vector<Layout>& layouts);  // UVD, VCE, VCN, ISP, DMCU, DMCUB, VPE, UMSCH_MM

}  // namespace firmware::layout

#endif  // BAREGPU_FIRMWARE_LAYOUT_H_
