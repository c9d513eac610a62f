// The GSP-RM firmware (nvidia/CHIP/gsp/gsp-VERSION.bin): an ELF64 relocatable file whose sections carry the RISC-V
// image GSP runs (.fwimage), the version string (.fwversion) and one signature section per chip family
// (.fwsignature_tu10x, _tu11x, _ga100, _ga10x, _ad10x, ...). nouveau finds sections by name through the section
// header table and copies .fwimage and the chip's signature section (Linux 6.12 nvkm/subdev/gsp/r535.c,
// r535_gsp_elf_section and r535_gsp_oneinit; the section per chip: .sig_section in tu102.c, tu116.c, ga100.c,
// ga102.c, ad102.c). ELF layouts: Linux include/uapi/linux/elf.h (Elf64_Ehdr, Elf64_Shdr).
//
// The real files' sections after .fwimage start at odd offsets (.fwversion 0x2448040 + 0xb = 0x244804b for the
// next one): everything is read byte-wise through ByteReader, never by casting a pointer into the file.
#ifndef BAREGPU_FIRMWARE_NV_GSP_ELF_H_
#define BAREGPU_FIRMWARE_NV_GSP_ELF_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace firmware::nv {

// elf.h: e_ident[EI_CLASS] ELFCLASS64, e_ident[EI_DATA] ELFDATA2LSB, sizeof(Elf64_Ehdr), sizeof(Elf64_Shdr),
// SHT_NOBITS (a section that occupies no file bytes), EM_RISCV (include/uapi/linux/elf-em.h).
inline constexpr uint8_t kElfClass64 = 2;
inline constexpr uint8_t kElfData2Lsb = 1;
inline constexpr uint32_t kElf64HeaderSize = 64;
inline constexpr uint32_t kElf64SectionHeaderSize = 64;
inline constexpr uint32_t kShtNobits = 8;
inline constexpr uint16_t kEmRiscv = 243;

inline constexpr char kFwImageSection[] = ".fwimage";
inline constexpr char kFwVersionSection[] = ".fwversion";
inline constexpr char kFwSignaturePrefix[] = ".fwsignature_";

// elf.h: Elf64_Shdr, the fields used here.
struct ElfSection {
  std::string name;  // from the section-header string table (e_shstrndx)
  uint32_t type = 0;
  uint64_t offset = 0;  // sh_offset, from the start of the file
  uint64_t size = 0;    // sh_size
};

struct GspImage {
  uint16_t machine = 0;                         // e_machine: EM_RISCV in the real files
  uint16_t elf_type = 0;                        // e_type: ET_REL (1) in the real files
  uint64_t section_header_offset = 0;           // e_shoff
  uint16_t section_count = 0;                   // e_shnum
  uint16_t string_table_index = 0;              // e_shstrndx
  std::vector<ElfSection> sections;             // in table order
  std::string fw_version;                       // .fwversion up to its NUL ("535.113.01")
  std::vector<std::string> signature_families;  // the suffixes of .fwsignature_* ("ad10x", ...), in table order
  uint64_t file_size = 0;
  std::vector<std::string> notes;

  const ElfSection* Find(absl::string_view name) const;
};

// Parses the ELF header and section table and requires .fwimage, .fwversion and at least one .fwsignature_*
// section, each inside the file.
absl::StatusOr<GspImage> ParseGspImage(absl::string_view file, absl::string_view data);

// True when `data` starts with the ELF magic (cheap sniffing; ParseGspImage decides).
bool HasElfMagic(absl::string_view data);

}  // namespace firmware::nv

#endif  // BAREGPU_FIRMWARE_NV_GSP_ELF_H_
