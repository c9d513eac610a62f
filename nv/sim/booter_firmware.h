// The real GSP-RM 535.113.01 files the virtual chip's booter judges a driver's work against: booter_load and
// booter_unload (what IMEM and DMEM must hold when SEC2 starts them), the GSP-RM ELF's .fwimage and the chip's
// .fwsignature_* section, and the RISC-V bootloader (what the WPR meta's system-memory members must point at).
//
// The files are found the way the driver finds them (firmware::nv::Locate over the firmware roots, nvidia/CHIP/gsp/
// NAME-535.113.01.bin, .zst, .xz), and each file's SHA-256 must be the one pinned in booter_firmware.cc: the model
// knows one release, and a file that is not it is refused with both hashes. Reading and hashing (38 MiB for the
// GSP-RM ELF) happens once per process per set of paths; models share the result.
#ifndef BAREGPU_NV_SIM_BOOTER_FIRMWARE_H_
#define BAREGPU_NV_SIM_BOOTER_FIRMWARE_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "firmware/nv/hs_header.h"
#include "firmware/nv/riscv_desc.h"

namespace nv::sim {

// One booter file as SEC2's BROM sees it after the driver loaded it (nouveau ga102_gsp_booter_ctor and
// ga102_flcn_fw_load: IMEM from 0 holds app[0], DMEM from 0 holds the OS data with the fuse-selected signature at
// patch_loc - os_data_offset; BOOTVEC is app[0].offset).
struct BooterUcodeFile {
  std::string path;  // where it was found
  std::string sha256;
  firmware::nv::Booter header;
  std::string code;               // payload [app[0].offset, + app[0].size)
  std::string data;               // payload [os_data_offset, + os_data_size), as in the file (signature slot unpatched)
  uint32_t signature_offset = 0;  // in `data`: patch_loc - os_data_offset
  std::vector<std::string> signatures;  // the num_sig production signatures, sig_size bytes each, in file order
};

struct BooterFirmware {
  std::string chip;  // "ad102"
  BooterUcodeFile load;
  BooterUcodeFile unload;
  // GSP-RM (r535_gsp_oneinit: .fwimage and the chip's signature section).
  std::string gsp_path;
  std::string gsp_sha256;
  std::string fwimage;
  std::string signature_section;  // ".fwsignature_ad10x"
  std::string signature;
  // The bootloader (r535_gsp_rm_boot_ctor: the payload, and the descriptor's monitor offsets).
  std::string bootloader_path;
  std::string bootloader_sha256;
  std::string bootloader;  // payload [data_offset, + data_size)
  firmware::nv::RiscvUcodeDesc bootloader_desc;
  // How long reading, hashing and parsing took when the process first loaded this set.
  double load_seconds = 0;
};

// The pinned SHA-256 (lower-case hex, as sha256sum prints it) of CHIP's FILE ("booter_load", "booter_unload",
// "bootloader", "gsp"); empty when the chip or file is not pinned.
absl::string_view PinnedSha256(absl::string_view chip, absl::string_view file);

// Finds, reads, checks against the pins and parses CHIP's four files under `roots` (firmware::DefaultSearchRoots()
// for the driver's search). NotFound names every path tried; DataLoss a file whose hash is not the pinned one, or
// that does not parse. Chips: "ad102", "ga102".
absl::StatusOr<std::shared_ptr<const BooterFirmware>> LoadBooterFirmware(absl::string_view chip,
                                                                         const std::vector<std::string>& roots);

}  // namespace nv::sim

#endif  // BAREGPU_NV_SIM_BOOTER_FIRMWARE_H_
