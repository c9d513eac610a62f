// A parsed amdgpu firmware container: the common header, the family header's fields, and the components
// (byte ranges) the driver hands to the PSP or reads itself. Layouts: Linux 6.12 amdgpu/amdgpu_ucode.h.
//
// Parsing never trusts the file: every field read and every region is bounds-checked, and a malformed file is
// an error naming the file, the field, its value and the limit it broke.
#ifndef BAREGPU_FIRMWARE_CONTAINER_H_
#define BAREGPU_FIRMWARE_CONTAINER_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "firmware/file_kind.h"
#include "firmware/fw_types.h"

namespace firmware {

// amdgpu_ucode.h: struct common_firmware_header, at offset 0 of every container.
struct CommonHeader {
  uint32_t size_bytes = 0;         // header + images
  uint32_t header_size_bytes = 0;  // this header and the family header
  uint16_t header_version_major = 0;
  uint16_t header_version_minor = 0;
  uint16_t ip_version_major = 0;
  uint16_t ip_version_minor = 0;
  uint32_t ucode_version = 0;
  uint32_t ucode_size_bytes = 0;
  uint32_t ucode_array_offset_bytes = 0;  // from the start of the file
  uint32_t crc32 = 0;
};
inline constexpr uint32_t kCommonHeaderSize = 32;

struct Component {
  std::string name;     // "sos", "sys_drv", "rs64_stack", "rlc_iram", "pptable 3"
  uint64_t offset = 0;  // from the start of the file
  uint64_t size = 0;
  std::optional<uint32_t> version;
  LoadPath load = LoadPath::kDriver;
  std::vector<uint32_t> types;  // in `load`'s numbering; several when the driver loads one range as many types
};

struct HeaderField {
  std::string name;
  uint64_t value;
};

struct Container {
  std::string file;
  FileRole role;
  CommonHeader header;
  uint64_t file_size = 0;
  std::string layout;  // the amdgpu_ucode.h struct, "rlc_firmware_header_v2_2"
  std::vector<HeaderField> fields;
  std::vector<Component> components;
  std::vector<std::string> notes;  // tolerated oddities, e.g. the RLC v2.2 size_bytes quirk

  const Component* Find(LoadPath load, uint32_t type) const;
  const Component* FindByName(absl::string_view name) const;
  std::optional<uint64_t> Field(absl::string_view name) const;
};

// Parses `data` (the bytes of `file`); the role comes from the file name unless given.
absl::StatusOr<Container> ParseContainer(absl::string_view file, absl::string_view data);
absl::StatusOr<Container> ParseContainer(absl::string_view file, absl::string_view data, FileRole role);

// The bytes of one component of a container parsed from `data`.
absl::string_view ComponentBytes(absl::string_view data, const Component& component);

}  // namespace firmware

#endif  // BAREGPU_FIRMWARE_CONTAINER_H_
