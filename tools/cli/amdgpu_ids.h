// AMD GPU product names, as libdrm's amdgpu.ids lists them ("744C, C8, AMD Radeon RX 7900 XTX"): a device id and a
// PCI revision name a board.
#ifndef BAREGPU_TOOLS_CLI_AMDGPU_IDS_H_
#define BAREGPU_TOOLS_CLI_AMDGPU_IDS_H_

#include <cstdint>
#include <optional>
#include <string>

#include "absl/strings/string_view.h"

namespace cli {

struct ProductName {
  std::string name;    // "AMD Radeon RX 7900 XTX"
  std::string source;  // the file it came from, or "built-in (libdrm 2.4.124 data/amdgpu.ids)"
};

// Debian's libdrm-common installs the table here (libdrm's data/amdgpu.ids).
inline constexpr absl::string_view kSystemAmdgpuIds = "/usr/share/libdrm/amdgpu.ids";

// The product name of an AMD device id and revision: from `ids_file` (the system's libdrm table) when it lists
// them, else from a built-in copy of the entries of the GPUs baregpu drives (Debian 12's libdrm 2.4.114 predates
// Navi31's). nullopt when neither knows the pair.
std::optional<ProductName> LookupProductName(uint16_t device_id, uint8_t revision,
                                             absl::string_view ids_file = kSystemAmdgpuIds);

// "24 GiB", "256 MiB", "1.5 GiB": the largest binary unit the size reaches, one decimal when not whole.
std::string HumanBytes(uint64_t bytes);

}  // namespace cli

#endif  // BAREGPU_TOOLS_CLI_AMDGPU_IDS_H_
