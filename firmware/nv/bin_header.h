// nvfw_bin_hdr: the container NVIDIA's falcon and RISC-V firmware files share (GSP-RM's booter_load/booter_unload and
// bootloader, ACR ucode, the NVDEC scrubber). Layout: Linux 6.12 drivers/gpu/drm/nouveau/include/nvfw/fw.h, struct
// nvfw_bin_hdr; nouveau reads it in nvkm/nvfw/fw.c (nvfw_bin_hdr) and uses header_offset, data_offset and data_size
// (nvkm/subdev/gsp/ga102.c ga102_gsp_booter_ctor, r535.c r535_gsp_rm_boot_ctor).
#ifndef BAREGPU_FIRMWARE_NV_BIN_HEADER_H_
#define BAREGPU_FIRMWARE_NV_BIN_HEADER_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "firmware/byte_reader.h"

namespace firmware::nv {

// nvfw_bin_hdr.bin_magic in every such file of firmware-nvidia-graphics 20250410: NVIDIA's PCI vendor id
// (PCI_VENDOR_ID_NVIDIA, include/linux/pci_ids.h). nouveau prints it without checking; we check it, since a file
// without it is not this container.
inline constexpr uint32_t kBinMagic = 0x10de;
// sizeof(struct nvfw_bin_hdr): six u32.
inline constexpr uint32_t kBinHeaderSize = 24;

// include/nvfw/fw.h: struct nvfw_bin_hdr. Offsets are from the start of the file.
struct BinHeader {
  uint32_t bin_magic = 0;
  uint32_t bin_ver = 0;
  uint32_t bin_size = 0;       // not the file's length in the real files (see BinFile::notes); shown, not checked
  uint32_t header_offset = 0;  // the file-specific header (nvfw_hs_header_v2, RM_RISCV_UCODE_DESC, ...)
  uint32_t data_offset = 0;    // the payload nouveau copies to the falcon or to memory
  uint32_t data_size = 0;
};

struct BinFile {
  BinHeader header;
  uint64_t file_size = 0;
  std::vector<std::string> notes;  // tolerated oddities
};

// Parses the header at offset 0 and checks what nouveau relies on: the magic, the payload [data_offset,
// data_offset + data_size) inside the file and header_offset inside it. What header_offset points at is the caller's.
absl::StatusOr<BinFile> ParseBinFile(const ByteReader& reader);

// True when `data` starts with kBinMagic (cheap sniffing; ParseBinFile decides).
bool HasBinMagic(absl::string_view data);

}  // namespace firmware::nv

#endif  // BAREGPU_FIRMWARE_NV_BIN_HEADER_H_
