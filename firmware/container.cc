#include "firmware/container.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "base/status_macros.h"
#include "firmware/layout.h"

namespace firmware {
namespace layout {

uint32_t State::Value(const std::string& field) const {
  auto it = values.find(field);
  return it == values.end() ? 0 : it->second;
}

absl::Status State::Add(Component component, const std::string& origin) {
  BAREGPU_RETURN_IF_ERROR(reader.CheckRange(component.offset, component.size,
                                            absl::StrCat("component '", component.name, "' (", origin, ")")));
  out.components.push_back(std::move(component));
  return absl::OkStatus();
}

std::vector<std::string> LegacyDesc(const std::string& name) {
  return {name + ".fw_version", name + ".offset_bytes", name + ".size_bytes"};
}

std::vector<std::string> Concat(std::initializer_list<std::vector<std::string>> parts) {
  std::vector<std::string> all;
  for (const auto& part : parts) all.insert(all.end(), part.begin(), part.end());
  return all;
}

const std::vector<Layout>& AllLayouts() {
  static const auto* layouts = [] {
    auto* all = new std::vector<Layout>();
    AddPspLayouts(*all);
    AddGfxLayouts(*all);
    AddRlcLayouts(*all);
    AddSdmaLayouts(*all);
    AddSmcLayouts(*all);
    AddMiscLayouts(*all);
    AddMediaLayouts(*all);
    return all;
  }();
  return *layouts;
}

}  // namespace layout

namespace {

using layout::Base;
using layout::Layout;
using layout::Region;
using layout::State;
using layout::Unit;

absl::StatusOr<CommonHeader> ReadCommonHeader(const ByteReader& r) {
  if (r.size() < kCommonHeaderSize) {
    return r.Malformed(absl::StrFormat(
        "the file is %d bytes, shorter than the %d-byte common_firmware_header every amdgpu firmware starts with; "
        "it is truncated or not an amdgpu firmware file",
        r.size(), kCommonHeaderSize));
  }
  CommonHeader h;
  BAREGPU_ASSIGN_OR_RETURN(h.size_bytes, r.U32(0, "header.size_bytes"));
  BAREGPU_ASSIGN_OR_RETURN(h.header_size_bytes, r.U32(4, "header.header_size_bytes"));
  BAREGPU_ASSIGN_OR_RETURN(h.header_version_major, r.U16(8, "header.header_version_major"));
  BAREGPU_ASSIGN_OR_RETURN(h.header_version_minor, r.U16(10, "header.header_version_minor"));
  BAREGPU_ASSIGN_OR_RETURN(h.ip_version_major, r.U16(12, "header.ip_version_major"));
  BAREGPU_ASSIGN_OR_RETURN(h.ip_version_minor, r.U16(14, "header.ip_version_minor"));
  BAREGPU_ASSIGN_OR_RETURN(h.ucode_version, r.U32(16, "header.ucode_version"));
  BAREGPU_ASSIGN_OR_RETURN(h.ucode_size_bytes, r.U32(20, "header.ucode_size_bytes"));
  BAREGPU_ASSIGN_OR_RETURN(h.ucode_array_offset_bytes, r.U32(24, "header.ucode_array_offset_bytes"));
  BAREGPU_ASSIGN_OR_RETURN(h.crc32, r.U32(28, "header.crc32"));
  return h;
}

absl::StatusOr<const Layout*> FindLayout(const ByteReader& r, FileRole role, const CommonHeader& h) {
  const Family family = FamilyOf(role.kind);
  std::vector<std::string> known;
  for (const Layout& layout : layout::AllLayouts()) {
    if (layout.family != family) continue;
    bool kind_matches = layout.kinds.empty();
    for (FileKind kind : layout.kinds) kind_matches |= kind == role.kind;
    if (!kind_matches) continue;
    known.push_back(layout.minor < 0 ? absl::StrFormat("%d.x", layout.major)
                                     : absl::StrFormat("%d.%d", layout.major, layout.minor));
    if (layout.major == h.header_version_major && (layout.minor < 0 || layout.minor == h.header_version_minor)) {
      return &layout;
    }
  }
  return absl::UnimplementedError(absl::StrFormat(
      "%s: header version %d.%d (header.header_version_major/minor) is not a %s layout baregpu knows "
      "(known: %s, from amdgpu_ucode.h); the file may be corrupt, or newer than this baregpu",
      r.file(), h.header_version_major, h.header_version_minor, FileKindName(role.kind), absl::StrJoin(known, ", ")));
}

absl::Status CheckCommonHeader(const ByteReader& r, const Layout& layout, Container& out) {
  const CommonHeader& h = out.header;
  const uint64_t struct_size = kCommonHeaderSize + 4 * layout.fields.size() + layout.extra_header_bytes;
  if (h.header_size_bytes < kCommonHeaderSize || h.header_size_bytes > r.size()) {
    return r.Malformed(absl::StrFormat(
        "header.header_size_bytes = %d is outside the valid range %d..%d (the common header's size .. the file "
        "size); the file is corrupt",
        h.header_size_bytes, kCommonHeaderSize, r.size()));
  }
  if (struct_size > r.size()) {
    return r.Malformed(absl::StrFormat("the %s header needs %d bytes but the file is only %d bytes; it is truncated",
                                       layout.struct_name, struct_size, r.size()));
  }
  if (h.header_size_bytes < struct_size) {
    out.notes.push_back(absl::StrFormat(
        "header.header_size_bytes = %d is smaller than %s (%d bytes); fields were read from the file as the driver "
        "does",
        h.header_size_bytes, layout.struct_name, struct_size));
  }
  if (h.size_bytes != r.size()) {
    const bool rlc_quirk = layout.family == Family::kRlc && h.header_version_major == 2 &&
                           h.header_version_minor == 2 && h.size_bytes < r.size();
    if (!rlc_quirk) {
      return r.Malformed(absl::StrFormat(
          "header.size_bytes = %d but the file is %d bytes; the amdgpu driver rejects such a file "
          "(amdgpu_ucode_validate); it is %s (reinstall it from linux-firmware)",
          h.size_bytes, r.size(), h.size_bytes > r.size() ? "truncated" : "followed by trailing bytes or corrupt"));
    }
    out.notes.push_back(absl::StrFormat(
        "header.size_bytes = 0x%x is smaller than the file (0x%x bytes): a known packaging quirk of RLC v2.2 files, "
        "whose size_bytes stops before the IRAM/DRAM images; every region was checked against the file length",
        h.size_bytes, r.size()));
  }
  if (h.ucode_array_offset_bytes < kCommonHeaderSize) {
    return r.Malformed(absl::StrFormat(
        "header.ucode_array_offset_bytes = %d points into the %d-byte common header; the file is corrupt",
        h.ucode_array_offset_bytes, kCommonHeaderSize));
  }
  return r.CheckRange(h.ucode_array_offset_bytes, h.ucode_size_bytes,
                      absl::StrFormat("the ucode array (header.ucode_array_offset_bytes = 0x%x, "
                                      "header.ucode_size_bytes = 0x%x)",
                                      h.ucode_array_offset_bytes, h.ucode_size_bytes));
}

uint32_t ResolveType(uint32_t type, FileRole role) {
  if (type != layout::kSdmaInstanceType) return type;
  // psp_gfx_if.h: SDMA0 = 9, SDMA1 = 10, SDMA2..SDMA7 = 52..57.
  if (role.instance == 0) return gfx_fw_type::kSdma0;
  if (role.instance == 1) return gfx_fw_type::kSdma1;
  return gfx_fw_type::kSdma2 + static_cast<uint32_t>(role.instance - 2);
}

absl::Status AddRegion(State& state, const Region& region) {
  const uint64_t scale_offset = region.offset_unit == Unit::kDwords ? 4 : 1;
  const uint64_t scale_size = region.size_unit == Unit::kDwords ? 4 : 1;
  uint64_t size = uint64_t{state.Value(region.size_field)} * scale_size;
  std::string origin = absl::StrFormat("%s = 0x%x%s", region.size_field, state.Value(region.size_field),
                                       region.size_unit == Unit::kDwords ? " dwords" : "");
  if (!region.minus_dwords.empty()) {
    const uint64_t minus = uint64_t{state.Value(region.minus_dwords)} * 4;
    if (minus > size) {
      return state.reader.Malformed(absl::StrFormat(
          "%s = 0x%x dwords (0x%x bytes) is larger than %s = 0x%x, so component '%s' would have a negative size; "
          "the file is corrupt",
          region.minus_dwords, state.Value(region.minus_dwords), minus, region.size_field, size, region.name));
    }
    size -= minus;
    absl::StrAppendFormat(&origin, " minus %s = 0x%x dwords", region.minus_dwords, state.Value(region.minus_dwords));
  }
  // A zero-sized range is an absent component (descriptors of unused components are zero-filled).
  if (size == 0) return absl::OkStatus();
  uint64_t offset = region.base == Base::kUcodeArray ? state.UcodeArray() : 0;
  if (!region.offset_field.empty()) {
    offset += uint64_t{state.Value(region.offset_field)} * scale_offset;
    absl::StrAppendFormat(&origin, ", %s = 0x%x%s", region.offset_field, state.Value(region.offset_field),
                          region.offset_unit == Unit::kDwords ? " dwords" : "");
  }
  if (region.base == Base::kUcodeArray) absl::StrAppend(&origin, ", from the ucode array");
  Component c{region.name, offset, size, std::nullopt, region.load, {}};
  if (!region.version_field.empty()) c.version = state.Value(region.version_field);
  for (uint32_t type : region.types) c.types.push_back(ResolveType(type, state.out.role));
  return state.Add(std::move(c), origin);
}

}  // namespace

const Component* Container::Find(LoadPath load, uint32_t type) const {
  for (const Component& c : components) {
    if (c.load != load) continue;
    for (uint32_t t : c.types) {
      if (t == type) return &c;
    }
  }
  return nullptr;
}

const Component* Container::FindByName(absl::string_view name) const {
  for (const Component& c : components) {
    if (c.name == name) return &c;
  }
  return nullptr;
}

std::optional<uint64_t> Container::Field(absl::string_view name) const {
  for (const HeaderField& f : fields) {
    if (f.name == name) return f.value;
  }
  return std::nullopt;
}

absl::string_view ComponentBytes(absl::string_view data, const Component& component) {
  if (component.offset > data.size()) return {};
  return data.substr(component.offset, component.size);
}

absl::StatusOr<Container> ParseContainer(absl::string_view file, absl::string_view data) {
  BAREGPU_ASSIGN_OR_RETURN(FileRole role, RoleFromFileName(file));
  return ParseContainer(file, data, role);
}

absl::StatusOr<Container> ParseContainer(absl::string_view file, absl::string_view data, FileRole role) {
  ByteReader r(file, data);
  Container out;
  out.file = std::string(file);
  out.role = role;
  out.file_size = data.size();
  BAREGPU_ASSIGN_OR_RETURN(out.header, ReadCommonHeader(r));
  BAREGPU_ASSIGN_OR_RETURN(const Layout* layout, FindLayout(r, role, out.header));
  out.layout = layout->struct_name;
  BAREGPU_RETURN_IF_ERROR(CheckCommonHeader(r, *layout, out));

  State state{r, out, {}};
  const CommonHeader& h = out.header;
  state.values["header.ucode_size_bytes"] = h.ucode_size_bytes;
  state.values["header.ucode_array_offset_bytes"] = h.ucode_array_offset_bytes;
  for (size_t i = 0; i < layout->fields.size(); ++i) {
    BAREGPU_ASSIGN_OR_RETURN(uint32_t value, r.U32(kCommonHeaderSize + 4 * i, layout->fields[i]));
    state.values[layout->fields[i]] = value;
    out.fields.push_back({layout->fields[i], value});
  }
  for (const Region& region : layout->regions) BAREGPU_RETURN_IF_ERROR(AddRegion(state, region));
  if (layout->extra != nullptr) BAREGPU_RETURN_IF_ERROR(layout->extra(state));
  return out;
}

}  // namespace firmware
