#include "firmware/nv/gsp_elf.h"

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"
#include "base/printable.h"
#include "base/status_macros.h"
#include "firmware/byte_reader.h"

namespace firmware::nv {
namespace {

// elf.h: ELFMAG, e_ident's first four bytes; EI_CLASS and EI_DATA are e_ident[4] and [5].
constexpr absl::string_view kElfMagic(
    "\x7f"
    "ELF",
    4);
constexpr uint64_t kEiClass = 4;
constexpr uint64_t kEiData = 5;

absl::StatusOr<uint64_t> U64(const ByteReader& r, uint64_t offset, absl::string_view field) {
  BAREGPU_ASSIGN_OR_RETURN(uint32_t lo, r.U32(offset, field));
  BAREGPU_ASSIGN_OR_RETURN(uint32_t hi, r.U32(offset + 4, field));
  return uint64_t{lo} | uint64_t{hi} << 32;
}

absl::StatusOr<uint8_t> U8(const ByteReader& r, uint64_t offset, absl::string_view field) {
  BAREGPU_ASSIGN_OR_RETURN(absl::string_view b, r.Bytes(offset, 1, field));
  return static_cast<uint8_t>(b[0]);
}

}  // namespace

bool HasElfMagic(absl::string_view data) { return absl::StartsWith(data, kElfMagic); }

const ElfSection* GspImage::Find(absl::string_view name) const {
  for (const ElfSection& s : sections) {
    if (s.name == name) return &s;
  }
  return nullptr;
}

absl::StatusOr<GspImage> ParseGspImage(absl::string_view file, absl::string_view data) {
  const ByteReader r(file, data);
  GspImage g;
  g.file_size = r.size();
  if (!HasElfMagic(data)) {
    return r.Malformed(
        "does not start with the ELF magic 7f 45 4c 46: not a GSP-RM firmware image (a different "
        "file, or corrupt)");
  }
  BAREGPU_RETURN_IF_ERROR(r.CheckRange(0, kElf64HeaderSize, "the ELF64 header (Elf64_Ehdr, 64 bytes)"));
  BAREGPU_ASSIGN_OR_RETURN(uint8_t elf_class, U8(r, kEiClass, "e_ident[EI_CLASS]"));
  BAREGPU_ASSIGN_OR_RETURN(uint8_t elf_data, U8(r, kEiData, "e_ident[EI_DATA]"));
  if (elf_class != kElfClass64 || elf_data != kElfData2Lsb) {
    return r.Malformed(absl::StrFormat(
        "ELF class %d, data encoding %d at offsets 4 and 5: GSP-RM images are 64-bit little-endian (class %d, data "
        "%d)",
        elf_class, elf_data, kElfClass64, kElfData2Lsb));
  }
  BAREGPU_ASSIGN_OR_RETURN(g.elf_type, r.U16(16, "Elf64_Ehdr.e_type"));
  BAREGPU_ASSIGN_OR_RETURN(g.machine, r.U16(18, "Elf64_Ehdr.e_machine"));
  BAREGPU_ASSIGN_OR_RETURN(g.section_header_offset, U64(r, 40, "Elf64_Ehdr.e_shoff"));
  BAREGPU_ASSIGN_OR_RETURN(uint16_t entry_size, r.U16(58, "Elf64_Ehdr.e_shentsize"));
  BAREGPU_ASSIGN_OR_RETURN(g.section_count, r.U16(60, "Elf64_Ehdr.e_shnum"));
  BAREGPU_ASSIGN_OR_RETURN(g.string_table_index, r.U16(62, "Elf64_Ehdr.e_shstrndx"));
  if (entry_size != kElf64SectionHeaderSize) {
    return r.Malformed(absl::StrFormat("Elf64_Ehdr.e_shentsize is %d, not sizeof(Elf64_Shdr) = %d", entry_size,
                                       kElf64SectionHeaderSize));
  }
  // e_shnum 0 would mean the count lives in section 0 (more than 0xff00 sections); no GSP image has that many.
  if (g.section_count == 0 || g.string_table_index >= g.section_count) {
    return r.Malformed(absl::StrFormat(
        "Elf64_Ehdr.e_shnum %d / e_shstrndx %d: the image needs a section table with its string table inside it",
        g.section_count, g.string_table_index));
  }
  BAREGPU_RETURN_IF_ERROR(r.CheckRange(g.section_header_offset, uint64_t{g.section_count} * kElf64SectionHeaderSize,
                                       absl::StrFormat("the section header table (e_shoff, %d entries of %d bytes)",
                                                       g.section_count, kElf64SectionHeaderSize)));
  std::vector<uint32_t> name_offsets;
  for (uint16_t i = 0; i < g.section_count; ++i) {
    const uint64_t at = g.section_header_offset + uint64_t{i} * kElf64SectionHeaderSize;
    ElfSection s;
    BAREGPU_ASSIGN_OR_RETURN(uint32_t name, r.U32(at + 0, absl::StrCat("section ", i, " sh_name")));
    BAREGPU_ASSIGN_OR_RETURN(s.type, r.U32(at + 4, absl::StrCat("section ", i, " sh_type")));
    BAREGPU_ASSIGN_OR_RETURN(s.offset, U64(r, at + 24, absl::StrCat("section ", i, " sh_offset")));
    BAREGPU_ASSIGN_OR_RETURN(s.size, U64(r, at + 32, absl::StrCat("section ", i, " sh_size")));
    if (s.type != kShtNobits) {
      BAREGPU_RETURN_IF_ERROR(r.CheckRange(s.offset, s.size, absl::StrFormat("section %d (sh_offset, sh_size)", i)));
    }
    name_offsets.push_back(name);
    g.sections.push_back(std::move(s));
  }
  // Names: NUL-terminated strings inside the string table section.
  const ElfSection& strtab = g.sections[g.string_table_index];
  if (strtab.type == kShtNobits) return r.Malformed("the section-name string table (e_shstrndx) has no file bytes");
  const absl::string_view names = data.substr(strtab.offset, strtab.size);
  bool unaligned = false;
  for (uint16_t i = 0; i < g.section_count; ++i) {
    const uint32_t at = name_offsets[i];
    const size_t end = at < names.size() ? names.find('\0', at) : absl::string_view::npos;
    if (end == absl::string_view::npos) {
      return r.Malformed(absl::StrFormat(
          "section %d's name (sh_name 0x%x) is not a NUL-terminated string inside the section-name string table "
          "(section %d, 0x%x bytes)",
          i, at, g.string_table_index, names.size()));
    }
    g.sections[i].name = std::string(names.substr(at, end - at));
    if (g.sections[i].size != 0 && g.sections[i].offset % 4 != 0) unaligned = true;
  }

  const ElfSection* image = g.Find(kFwImageSection);
  const ElfSection* version = g.Find(kFwVersionSection);
  if (image == nullptr || version == nullptr || image->type == kShtNobits || version->type == kShtNobits) {
    return r.Malformed(absl::StrFormat(
        "no %s section with contents: not a GSP-RM firmware image (nouveau's r535_gsp_oneinit needs .fwimage; "
        "the version is in .fwversion)",
        image == nullptr || image->type == kShtNobits ? kFwImageSection : kFwVersionSection));
  }
  for (const ElfSection& s : g.sections) {
    absl::string_view name = s.name;
    if (absl::ConsumePrefix(&name, kFwSignaturePrefix) && s.type != kShtNobits) {
      g.signature_families.emplace_back(name);
    }
  }
  if (g.signature_families.empty()) {
    return r.Malformed(
        "no .fwsignature_* section: the image carries no signature for any chip (nouveau copies "
        "the chip's .fwsignature_<family> next to .fwimage)");
  }
  const absl::string_view text = data.substr(version->offset, version->size);
  g.fw_version = std::string(text.substr(0, text.find('\0')));
  if (unaligned) {
    g.notes.push_back(
        "sections start at offsets that are not 4-byte aligned (after .fwversion's odd size); read "
        "byte-wise");
  }
  if (g.machine != kEmRiscv) {
    g.notes.push_back(
        absl::StrFormat("e_machine is %d, not EM_RISCV (%d) as in the 535.113.01 images", g.machine, kEmRiscv));
  }
  return g;
}

}  // namespace firmware::nv
