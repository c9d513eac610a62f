#include "am/code_object.h"

#include <elf.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <map>
#include <optional>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "base/msgpack.h"
#include "base/status_macros.h"

namespace am {
namespace {

// AMDGPUUsage, "AMDGPU EF_AMDGPU_MACH Values" (the amdgcn processors LLVM 19 knows).
constexpr std::array<std::pair<uint32_t, absl::string_view>, 49> kMachNames{{
    {0x020, "gfx600"},       {0x021, "gfx601"},          {0x022, "gfx700"},          {0x023, "gfx701"},
    {0x024, "gfx702"},       {0x025, "gfx703"},          {0x026, "gfx704"},          {0x028, "gfx801"},
    {0x029, "gfx802"},       {0x02a, "gfx803"},          {0x02b, "gfx810"},          {0x02c, "gfx900"},
    {0x02d, "gfx902"},       {0x02e, "gfx904"},          {0x02f, "gfx906"},          {0x030, "gfx908"},
    {0x031, "gfx909"},       {0x032, "gfx90c"},          {0x033, "gfx1010"},         {0x034, "gfx1011"},
    {0x035, "gfx1012"},      {0x036, "gfx1030"},         {0x037, "gfx1031"},         {0x038, "gfx1032"},
    {0x039, "gfx1033"},      {0x03a, "gfx602"},          {0x03b, "gfx705"},          {0x03c, "gfx805"},
    {0x03d, "gfx1035"},      {0x03e, "gfx1034"},         {0x03f, "gfx90a"},          {0x040, "gfx940"},
    {0x041, "gfx1100"},      {0x042, "gfx1013"},         {0x043, "gfx1150"},         {0x044, "gfx1103"},
    {0x045, "gfx1036"},      {0x046, "gfx1101"},         {0x047, "gfx1102"},         {0x048, "gfx1200"},
    {0x04a, "gfx1151"},      {0x04b, "gfx941"},          {0x04c, "gfx942"},          {0x04e, "gfx1201"},
    {0x051, "gfx9-generic"}, {0x052, "gfx10-1-generic"}, {0x053, "gfx10-3-generic"}, {0x054, "gfx11-generic"},
    {0x055, "gfx1152"},
}};

// AMDGPU.def's relocation names (see kRAmdgpuNone in code_object.h for the source); 12 is unassigned.
constexpr std::array<std::pair<uint32_t, absl::string_view>, 14> kRelocationNames{{
    {kRAmdgpuNone, "R_AMDGPU_NONE"},
    {kRAmdgpuAbs32Lo, "R_AMDGPU_ABS32_LO"},
    {kRAmdgpuAbs32Hi, "R_AMDGPU_ABS32_HI"},
    {kRAmdgpuAbs64, "R_AMDGPU_ABS64"},
    {kRAmdgpuRel32, "R_AMDGPU_REL32"},
    {kRAmdgpuRel64, "R_AMDGPU_REL64"},
    {kRAmdgpuAbs32, "R_AMDGPU_ABS32"},
    {kRAmdgpuGotPcRel, "R_AMDGPU_GOTPCREL"},
    {kRAmdgpuGotPcRel32Lo, "R_AMDGPU_GOTPCREL32_LO"},
    {kRAmdgpuGotPcRel32Hi, "R_AMDGPU_GOTPCREL32_HI"},
    {kRAmdgpuRel32Lo, "R_AMDGPU_REL32_LO"},
    {kRAmdgpuRel32Hi, "R_AMDGPU_REL32_HI"},
    {kRAmdgpuRelative64, "R_AMDGPU_RELATIVE64"},
    {kRAmdgpuRel16, "R_AMDGPU_REL16"},
}};

// The bytes a supported relocation type writes (0 for R_AMDGPU_NONE), or nullopt for a type it cannot apply.
std::optional<uint64_t> RelocationWidth(uint32_t type) {
  switch (type) {
    case kRAmdgpuNone:
      return 0;
    case kRAmdgpuAbs32Lo:
    case kRAmdgpuAbs32Hi:
    case kRAmdgpuRel32:
    case kRAmdgpuRel32Lo:
    case kRAmdgpuRel32Hi:
      return 4;
    case kRAmdgpuAbs64:
    case kRAmdgpuRel64:
      return 8;
    default:
      return std::nullopt;
  }
}

// Writes the `width` low bytes of `value`, little-endian, at image[offset] (the caller checked the range).
void Store(std::vector<uint8_t>& image, uint64_t offset, uint64_t value, uint64_t width) {
  if (width == 8) {
    std::memcpy(image.data() + offset, &value, 8);
  } else {
    const uint32_t word = static_cast<uint32_t>(value);
    std::memcpy(image.data() + offset, &word, 4);
  }
}

// What an absolute relocation writes for a symbol value S + A (relative to the image) when the image is loaded at
// `load_address`, and how many bytes.
std::pair<uint64_t, uint64_t> AbsoluteValue(uint32_t type, uint64_t load_address, uint64_t value) {
  const uint64_t address = load_address + value;
  switch (type) {
    case kRAmdgpuAbs32Lo:
      return {address & 0xffffffff, 4};
    case kRAmdgpuAbs32Hi:
      return {address >> 32, 4};
    default:  // kRAmdgpuAbs64
      return {address, 8};
  }
}

// An image larger than this is refused rather than allocated: real code objects are kilobytes to a few MiB, and a
// forged p_memsz must not make the parser allocate gigabytes.
constexpr uint64_t kMaxImageBytes = uint64_t{256} << 20;
constexpr uint64_t kDescriptorAlignment = 64;  // AMDGPUUsage: "CP microcode requires ... 64-byte alignment"
constexpr uint64_t kEntryAlignment = 256;      // KERNEL_CODE_ENTRY_BYTE_OFFSET: "must be 256 byte aligned"

// [offset, offset + size) lies inside [0, limit), without overflow.
bool Within(uint64_t offset, uint64_t size, uint64_t limit) { return offset <= limit && size <= limit - offset; }

template <typename T>
T Load(std::span<const uint8_t> bytes, uint64_t offset) {
  T value;
  std::memcpy(&value, bytes.data() + offset, sizeof(T));
  return value;
}

struct Segment {
  uint64_t file_offset, vaddr, file_size, mem_size;
  bool executable;
};

struct Symbol {
  uint64_t value = 0, size = 0;
  uint8_t type = STT_NOTYPE;
  std::string table;  // where it was found, for messages
};

class Parser {
 public:
  Parser(std::span<const uint8_t> elf, absl::string_view source) : elf_(elf), source_(source) {}

  absl::Status Run(std::vector<uint8_t>& image, uint64_t& alignment, uint32_t& mach, uint8_t& abi_version,
                   std::vector<CodeObject::Kernel>& kernels, std::vector<CodeObject::AbsoluteRelocation>& absolute,
                   bool& relocatable) {
    BAREGPU_RETURN_IF_ERROR(ReadHeader());
    relocatable_ = ehdr_.e_type == ET_REL;
    // A relocatable object has no program headers: its sections are laid out instead (ReadSections).
    if (!relocatable_) BAREGPU_RETURN_IF_ERROR(ReadSegments());
    BAREGPU_RETURN_IF_ERROR(ReadSections());
    BAREGPU_RETURN_IF_ERROR(BuildImage(image));
    if (relocatable_) BAREGPU_RETURN_IF_ERROR(ApplyRelocations(image, absolute));
    BAREGPU_RETURN_IF_ERROR(FindKernels(image, kernels));
    BAREGPU_RETURN_IF_ERROR(ReadNotes(kernels));
    alignment = alignment_;
    mach = ehdr_.e_flags & kEfAmdgpuMachMask;
    abi_version = ehdr_.e_ident[EI_ABIVERSION];
    relocatable = relocatable_;
    return absl::OkStatus();
  }

 private:
  template <typename... Args>
  absl::Status Error(const absl::FormatSpec<Args...>& format, const Args&... args) const {
    return absl::InvalidArgumentError(absl::StrCat(source_, ": ", absl::StrFormat(format, args...)));
  }

  absl::Status ReadHeader() {
    static constexpr uint8_t kMagic[SELFMAG] = {ELFMAG0, ELFMAG1, ELFMAG2, ELFMAG3};
    if (elf_.size() < SELFMAG || std::memcmp(elf_.data(), kMagic, SELFMAG) != 0) {
      const size_t n = std::min<size_t>(elf_.size(), SELFMAG);
      std::string found;
      for (size_t i = 0; i < n; ++i) absl::StrAppendFormat(&found, "%s%02x", i ? " " : "", elf_[i]);
      return Error("not an ELF file: the first bytes are [%s], an ELF file starts 7f 45 4c 46 (\"\\x7fELF\")", found);
    }
    if (elf_.size() < sizeof(Elf64_Ehdr)) {
      return Error("truncated: %d bytes, shorter than the %d-byte ELF64 header", elf_.size(), sizeof(Elf64_Ehdr));
    }
    ehdr_ = Load<Elf64_Ehdr>(elf_, 0);
    const uint8_t* ident = ehdr_.e_ident;
    if (ident[EI_CLASS] != ELFCLASS64) {
      return Error("e_ident[EI_CLASS] at offset %d is %d, expected %d (ELFCLASS64): amdgcn code objects are 64-bit",
                   EI_CLASS, ident[EI_CLASS], ELFCLASS64);
    }
    if (ident[EI_DATA] != ELFDATA2LSB) {
      return Error("e_ident[EI_DATA] at offset %d is %d, expected %d (ELFDATA2LSB, little-endian)", EI_DATA,
                   ident[EI_DATA], ELFDATA2LSB);
    }
    if (ident[EI_OSABI] != kElfOsAbiAmdgpuHsa) {
      return Error(
          "e_ident[EI_OSABI] at offset %d is %d, expected %d (ELFOSABI_AMDGPU_HSA): compile for the amdhsa OS "
          "(-target amdgcn-amd-amdhsa)",
          EI_OSABI, ident[EI_OSABI], kElfOsAbiAmdgpuHsa);
    }
    const uint8_t abi = ident[EI_ABIVERSION];
    if (abi < kElfAbiVersionAmdgpuHsaV4 || abi > kElfAbiVersionAmdgpuHsaV6) {
      return Error(
          "e_ident[EI_ABIVERSION] at offset %d is %d (code object V%d), expected %d-%d (code object V4-V6, "
          "-mcode-object-version=4..6)",
          EI_ABIVERSION, abi, abi + 2, kElfAbiVersionAmdgpuHsaV4, kElfAbiVersionAmdgpuHsaV6);
    }
    if (ehdr_.e_type != ET_DYN && ehdr_.e_type != ET_REL) {
      return Error(
          "e_type at offset %d is %d, expected %d (ET_DYN, a linked code object) or %d (ET_REL, a relocatable object "
          "as LLVM writes it)",
          offsetof(Elf64_Ehdr, e_type), ehdr_.e_type, ET_DYN, ET_REL);
    }
    if (ehdr_.e_machine != EM_AMDGPU) {
      return Error("e_machine at offset %d is %d, expected %d (EM_AMDGPU)", offsetof(Elf64_Ehdr, e_machine),
                   ehdr_.e_machine, EM_AMDGPU);
    }
    const uint32_t mach = ehdr_.e_flags & kEfAmdgpuMachMask;
    if (mach != kEfAmdgpuMachAmdgcnGfx1100) {
      absl::string_view name = AmdgpuMachName(mach);
      return Error(
          "target is %s (EF_AMDGPU_MACH %#x in e_flags %#x at offset %d), expected gfx1100 (%#x): compile with "
          "-mcpu=gfx1100",
          name.empty() ? "unknown" : name, mach, ehdr_.e_flags, offsetof(Elf64_Ehdr, e_flags),
          kEfAmdgpuMachAmdgcnGfx1100);
    }
    // gfx1100 supports neither XNACK nor SRAMECC (their fields must say "unsupported"), and a processor-specific
    // target has no generic version: every other e_flags bit must be clear.
    if ((ehdr_.e_flags & ~kEfAmdgpuMachMask) != 0) {
      return Error(
          "e_flags %#x at offset %d sets bits %#x beyond EF_AMDGPU_MACH (XNACK 0x300, SRAMECC 0xc00, generic "
          "version 0xff000000): gfx1100 supports none of them",
          ehdr_.e_flags, offsetof(Elf64_Ehdr, e_flags), ehdr_.e_flags & ~kEfAmdgpuMachMask);
    }
    return absl::OkStatus();
  }

  absl::Status ReadSegments() {
    if (ehdr_.e_phnum == 0) return Error("e_phnum is 0: no program headers, so nothing to load");
    if (ehdr_.e_phentsize != sizeof(Elf64_Phdr)) {
      return Error("e_phentsize at offset %d is %d, expected %d (Elf64_Phdr)", offsetof(Elf64_Ehdr, e_phentsize),
                   ehdr_.e_phentsize, sizeof(Elf64_Phdr));
    }
    if (!Within(ehdr_.e_phoff, uint64_t{ehdr_.e_phnum} * sizeof(Elf64_Phdr), elf_.size())) {
      return Error(
          "program header table (e_phoff %#x, %d entries of %d bytes) runs past the end of the file (%d bytes)",
          ehdr_.e_phoff, ehdr_.e_phnum, sizeof(Elf64_Phdr), elf_.size());
    }
    for (uint32_t i = 0; i < ehdr_.e_phnum; ++i) {
      const uint64_t at = ehdr_.e_phoff + uint64_t{i} * sizeof(Elf64_Phdr);
      const auto phdr = Load<Elf64_Phdr>(elf_, at);
      if (phdr.p_type != PT_LOAD) continue;
      if (!Within(phdr.p_offset, phdr.p_filesz, elf_.size())) {
        return Error(
            "PT_LOAD program header %d (at offset %#x): p_offset %#x + p_filesz %#x runs past the end of the "
            "file (%d bytes)",
            i, at, phdr.p_offset, phdr.p_filesz, elf_.size());
      }
      if (phdr.p_filesz > phdr.p_memsz) {
        return Error("PT_LOAD program header %d (at offset %#x): p_filesz %#x is larger than p_memsz %#x", i, at,
                     phdr.p_filesz, phdr.p_memsz);
      }
      if (!Within(phdr.p_vaddr, phdr.p_memsz, kMaxImageBytes)) {
        return Error(
            "PT_LOAD program header %d (at offset %#x): p_vaddr %#x + p_memsz %#x ends beyond the %d MiB a "
            "code object image may span",
            i, at, phdr.p_vaddr, phdr.p_memsz, kMaxImageBytes >> 20);
      }
      if (phdr.p_align > 1 && ((phdr.p_align & (phdr.p_align - 1)) != 0 || phdr.p_align > kMaxImageBytes)) {
        return Error("PT_LOAD program header %d (at offset %#x): p_align %#x is not a power of two up to %#x", i, at,
                     phdr.p_align, kMaxImageBytes);
      }
      for (size_t j = 0; j < segments_.size(); ++j) {
        const Segment& other = segments_[j];
        if (phdr.p_vaddr < other.vaddr + other.mem_size && other.vaddr < phdr.p_vaddr + phdr.p_memsz) {
          return Error(
              "PT_LOAD program header %d (at offset %#x): [%#x, %#x) overlaps an earlier PT_LOAD segment "
              "[%#x, %#x)",
              i, at, phdr.p_vaddr, phdr.p_vaddr + phdr.p_memsz, other.vaddr, other.vaddr + other.mem_size);
        }
      }
      alignment_ = std::max<uint64_t>(alignment_, phdr.p_align);
      segments_.push_back({phdr.p_offset, phdr.p_vaddr, phdr.p_filesz, phdr.p_memsz, (phdr.p_flags & PF_X) != 0});
    }
    if (segments_.empty()) return Error("no PT_LOAD program header among %d: nothing to load", ehdr_.e_phnum);
    return absl::OkStatus();
  }

  // Section headers carry the symbol tables that name the kernels, the sections a relocatable object loads and
  // its relocations (a linked object's dynamic relocations are refused here).
  absl::Status ReadSections() {
    if (ehdr_.e_shnum == 0) return Error("e_shnum is 0: no section headers, so no symbol table to find kernels in");
    if (ehdr_.e_shentsize != sizeof(Elf64_Shdr)) {
      return Error("e_shentsize at offset %d is %d, expected %d (Elf64_Shdr)", offsetof(Elf64_Ehdr, e_shentsize),
                   ehdr_.e_shentsize, sizeof(Elf64_Shdr));
    }
    if (!Within(ehdr_.e_shoff, uint64_t{ehdr_.e_shnum} * sizeof(Elf64_Shdr), elf_.size())) {
      return Error(
          "section header table (e_shoff %#x, %d entries of %d bytes) runs past the end of the file (%d bytes)",
          ehdr_.e_shoff, ehdr_.e_shnum, sizeof(Elf64_Shdr), elf_.size());
    }
    for (uint32_t i = 0; i < ehdr_.e_shnum; ++i) {
      sections_.push_back(Load<Elf64_Shdr>(elf_, ehdr_.e_shoff + uint64_t{i} * sizeof(Elf64_Shdr)));
    }
    if (ehdr_.e_shstrndx >= ehdr_.e_shnum) {
      return Error("e_shstrndx at offset %d is %d, but there are only %d sections", offsetof(Elf64_Ehdr, e_shstrndx),
                   ehdr_.e_shstrndx, ehdr_.e_shnum);
    }
    BAREGPU_ASSIGN_OR_RETURN(section_names_, StringTable(ehdr_.e_shstrndx, "e_shstrndx"));
    if (relocatable_) BAREGPU_RETURN_IF_ERROR(LayOutSections());
    for (uint32_t i = 0; i < sections_.size(); ++i) {
      const Elf64_Shdr& shdr = sections_[i];
      if ((shdr.sh_type == SHT_RELA || shdr.sh_type == SHT_REL) && (shdr.sh_flags & SHF_ALLOC) && shdr.sh_size != 0) {
        return Error(
            "section %d (%s) holds dynamic relocations (%d bytes): relocating a code object is not supported; "
            "kernels must not need load-time relocations",
            i, SectionName(i), shdr.sh_size);
      }
      if (shdr.sh_type == SHT_SYMTAB || shdr.sh_type == SHT_DYNSYM) BAREGPU_RETURN_IF_ERROR(ReadSymbols(i));
    }
    if (symbols_.empty()) return Error("no symbols: neither .symtab nor .dynsym names a kernel");
    return absl::OkStatus();
  }

  // The bytes of string-table section `index` (checked: in the file, SHT_STRTAB, NUL-terminated).
  absl::StatusOr<std::span<const uint8_t>> StringTable(uint32_t index, absl::string_view referrer) const {
    const Elf64_Shdr& shdr = sections_[index];
    if (shdr.sh_type != SHT_STRTAB) {
      return Error("section %d (named by %s) has sh_type %d, expected %d (SHT_STRTAB)", index, referrer, shdr.sh_type,
                   SHT_STRTAB);
    }
    if (!Within(shdr.sh_offset, shdr.sh_size, elf_.size())) {
      return Error(
          "string table section %d (named by %s): sh_offset %#x + sh_size %#x runs past the end of the file "
          "(%d bytes)",
          index, referrer, shdr.sh_offset, shdr.sh_size, elf_.size());
    }
    std::span<const uint8_t> table = elf_.subspan(shdr.sh_offset, shdr.sh_size);
    if (table.empty() || table.back() != 0) {
      return Error("string table section %d (named by %s, %d bytes at %#x) does not end with a NUL byte", index,
                   referrer, shdr.sh_size, shdr.sh_offset);
    }
    return table;
  }

  // A name at `offset` in a checked string table (it ends with a NUL, so the string does too).
  static absl::string_view StringAt(std::span<const uint8_t> table, uint64_t offset) {
    const char* begin = reinterpret_cast<const char*>(table.data()) + offset;
    return absl::string_view(begin, std::strlen(begin));
  }

  std::string SectionName(uint32_t index) const {
    const uint32_t name = sections_[index].sh_name;
    if (name >= section_names_.size()) return absl::StrFormat("unnamed: sh_name %#x is past .shstrtab", name);
    return std::string(StringAt(section_names_, name));
  }

  absl::Status ReadSymbols(uint32_t index) {
    const Elf64_Shdr& shdr = sections_[index];
    const std::string table_name = SectionName(index);
    if (shdr.sh_entsize != sizeof(Elf64_Sym)) {
      return Error("symbol table section %d (%s): sh_entsize is %d, expected %d (Elf64_Sym)", index, table_name,
                   shdr.sh_entsize, sizeof(Elf64_Sym));
    }
    if (!Within(shdr.sh_offset, shdr.sh_size, elf_.size()) || shdr.sh_size % sizeof(Elf64_Sym) != 0) {
      return Error(
          "symbol table section %d (%s): sh_offset %#x + sh_size %#x is not whole symbols inside the file "
          "(%d bytes)",
          index, table_name, shdr.sh_offset, shdr.sh_size, elf_.size());
    }
    if (shdr.sh_link >= sections_.size()) {
      return Error("symbol table section %d (%s): sh_link %d names no section (there are %d)", index, table_name,
                   shdr.sh_link, sections_.size());
    }
    BAREGPU_ASSIGN_OR_RETURN(std::span<const uint8_t> names, StringTable(shdr.sh_link, table_name + "'s sh_link"));
    for (uint64_t n = 0; n < shdr.sh_size / sizeof(Elf64_Sym); ++n) {
      const uint64_t at = shdr.sh_offset + n * sizeof(Elf64_Sym);
      const auto sym = Load<Elf64_Sym>(elf_, at);
      if (sym.st_name == 0) continue;  // the null symbol and unnamed ones
      if (sym.st_name >= names.size()) {
        return Error("symbol %d of %s (at offset %#x): st_name %#x is past the end of its string table (%d bytes)", n,
                     table_name, at, sym.st_name, names.size());
      }
      if (sym.st_shndx == SHN_UNDEF) continue;  // resolved only if a relocation uses it (ApplyRelocations)
      const std::string name(StringAt(names, sym.st_name));
      uint64_t value = sym.st_value;
      if (relocatable_) {
        // A symbol of a section that is not loaded (debug information) has no address in the image.
        if (sym.st_shndx < sections_.size() && !section_address_[sym.st_shndx].has_value()) continue;
        BAREGPU_ASSIGN_OR_RETURN(value, RelocatableSymbolAddress(sym, name, n, table_name));
      }
      Symbol symbol{value, sym.st_size, static_cast<uint8_t>(ELF64_ST_TYPE(sym.st_info)), table_name};
      auto [it, inserted] = symbols_.emplace(name, symbol);
      if (!inserted && (it->second.value != symbol.value || it->second.size != symbol.size)) {
        return Error("symbol %s is %#x (%d bytes) in %s but %#x (%d bytes) in %s", name, it->second.value,
                     it->second.size, it->second.table, symbol.value, symbol.size, table_name);
      }
    }
    return absl::OkStatus();
  }

  // "section 3 (.rodata)", for messages.
  std::string SectionLabel(uint32_t index) const {
    return absl::StrFormat("section %d (%s)", index, SectionName(index));
  }

  // A relocatable object's image (tinygrad's elf_loader lays it out the same way): the SHF_ALLOC sections in
  // section order, each at the next multiple of its sh_addralign. ET_REL sections have no addresses of their own
  // (sh_addr is 0 in LLVM's output and ignored). Each becomes a Segment, executable if SHF_EXECINSTR, so the
  // kernel checks are the ones of a linked object.
  absl::Status LayOutSections() {
    section_address_.assign(sections_.size(), std::nullopt);
    uint64_t end = 0;
    for (uint32_t i = 0; i < sections_.size(); ++i) {
      const Elf64_Shdr& shdr = sections_[i];
      if (shdr.sh_type == SHT_NULL || (shdr.sh_flags & SHF_ALLOC) == 0) continue;
      const uint64_t header_at = ehdr_.e_shoff + uint64_t{i} * sizeof(Elf64_Shdr);
      const uint64_t align = std::max<uint64_t>(shdr.sh_addralign, 1);
      if ((align & (align - 1)) != 0 || align > kMaxImageBytes) {
        return Error("%s (header at offset %#x): sh_addralign %#x is not a power of two up to %#x", SectionLabel(i),
                     header_at, shdr.sh_addralign, kMaxImageBytes);
      }
      const bool in_file = shdr.sh_type != SHT_NOBITS;
      if (in_file && !Within(shdr.sh_offset, shdr.sh_size, elf_.size())) {
        return Error("%s (header at offset %#x): sh_offset %#x + sh_size %#x runs past the end of the file (%d bytes)",
                     SectionLabel(i), header_at, shdr.sh_offset, shdr.sh_size, elf_.size());
      }
      const uint64_t address = (end + align - 1) & ~(align - 1);  // end and align are at most 256 MiB
      if (!Within(address, shdr.sh_size, kMaxImageBytes)) {
        return Error(
            "%s (header at offset %#x): placed at image offset %#x, its sh_size %#x ends beyond the %d MiB a "
            "code object image may span",
            SectionLabel(i), header_at, address, shdr.sh_size, kMaxImageBytes >> 20);
      }
      section_address_[i] = address;
      end = address + shdr.sh_size;
      alignment_ = std::max(alignment_, align);
      segments_.push_back(
          {shdr.sh_offset, address, in_file ? shdr.sh_size : 0, shdr.sh_size, (shdr.sh_flags & SHF_EXECINSTR) != 0});
    }
    if (segments_.empty()) return Error("no SHF_ALLOC section among %d: nothing to load", sections_.size());
    return absl::OkStatus();
  }

  // The image address of symbol `n` (`name`) of a relocatable object's symbol table `table`: its section's
  // address plus st_value, or st_value itself for SHN_ABS. An undefined symbol is an error: nothing is linked in.
  absl::StatusOr<uint64_t> RelocatableSymbolAddress(const Elf64_Sym& sym, absl::string_view name, uint64_t n,
                                                    absl::string_view table) const {
    const std::string what = absl::StrFormat("symbol %d (%s) of %s", n, name.empty() ? "unnamed" : name, table);
    if (sym.st_shndx == SHN_UNDEF) {
      return Error(
          "%s is undefined (SHN_UNDEF): a relocatable code object is loaded without linking, so nothing defines it; "
          "link the object with what does (ld.lld-19 -shared)",
          what);
    }
    if (sym.st_shndx == SHN_ABS) return sym.st_value;
    if (sym.st_shndx >= sections_.size()) {
      return Error("%s: st_shndx %#x names no section (there are %d; SHN_COMMON and SHN_XINDEX are not supported)",
                   what, sym.st_shndx, sections_.size());
    }
    const std::optional<uint64_t>& base = section_address_[sym.st_shndx];
    if (!base.has_value()) {
      return Error("%s is in %s, which is not loaded (no SHF_ALLOC)", what, SectionLabel(sym.st_shndx));
    }
    if (sym.st_value > sections_[sym.st_shndx].sh_size) {
      return Error("%s: st_value %#x is past the end of %s (%d bytes)", what, sym.st_value, SectionLabel(sym.st_shndx),
                   sections_[sym.st_shndx].sh_size);
    }
    return *base + sym.st_value;
  }

  // The SHT_RELA sections of a relocatable object that relocate a loaded section, applied to the image (the
  // arithmetic of each type: AMDGPUUsage "Relocation Records"). Absolute ones are applied as if the image were
  // loaded at address 0 and listed in `absolute` for CodeObject::ImageAt.
  absl::Status ApplyRelocations(std::vector<uint8_t>& image,
                                std::vector<CodeObject::AbsoluteRelocation>& absolute) const {
    for (uint32_t i = 0; i < sections_.size(); ++i) {
      const Elf64_Shdr& shdr = sections_[i];
      if (shdr.sh_type != SHT_RELA && shdr.sh_type != SHT_REL) continue;
      if (shdr.sh_info >= sections_.size()) {
        return Error("relocation %s: sh_info %d names no section to relocate (there are %d)", SectionLabel(i),
                     shdr.sh_info, sections_.size());
      }
      const uint32_t target = shdr.sh_info;
      // Relocations of sections that are not loaded (debug information) do not change the image.
      if (!section_address_[target].has_value() || shdr.sh_size == 0) continue;
      if (shdr.sh_type == SHT_REL) {
        return Error(
            "relocation %s for %s is SHT_REL (relocations without addends): only SHT_RELA, which LLVM's AMDGPU "
            "backend writes, is supported",
            SectionLabel(i), SectionLabel(target));
      }
      if (shdr.sh_entsize != sizeof(Elf64_Rela)) {
        return Error("relocation %s: sh_entsize is %d, expected %d (Elf64_Rela)", SectionLabel(i), shdr.sh_entsize,
                     sizeof(Elf64_Rela));
      }
      if (!Within(shdr.sh_offset, shdr.sh_size, elf_.size()) || shdr.sh_size % sizeof(Elf64_Rela) != 0) {
        return Error("relocation %s: sh_offset %#x + sh_size %#x is not whole relocations inside the file (%d bytes)",
                     SectionLabel(i), shdr.sh_offset, shdr.sh_size, elf_.size());
      }
      if (shdr.sh_link >= sections_.size() || sections_[shdr.sh_link].sh_type != SHT_SYMTAB) {
        return Error("relocation %s: sh_link %d is not a symbol table section (SHT_SYMTAB)", SectionLabel(i),
                     shdr.sh_link);
      }
      // ReadSymbols checked the table, its size and its string table.
      const Elf64_Shdr& symtab = sections_[shdr.sh_link];
      const std::string symtab_name = SectionName(shdr.sh_link);
      BAREGPU_ASSIGN_OR_RETURN(std::span<const uint8_t> names, StringTable(symtab.sh_link, symtab_name + "'s sh_link"));
      const uint64_t symbol_count = symtab.sh_size / sizeof(Elf64_Sym);
      const Elf64_Shdr& section = sections_[target];
      for (uint64_t n = 0; n < shdr.sh_size / sizeof(Elf64_Rela); ++n) {
        const uint64_t at = shdr.sh_offset + n * sizeof(Elf64_Rela);
        const auto rela = Load<Elf64_Rela>(elf_, at);
        const uint32_t type = ELF64_R_TYPE(rela.r_info);
        const uint64_t symbol_index = ELF64_R_SYM(rela.r_info);
        const std::string where = absl::StrFormat("relocation %d of %s (file offset %#x), at offset %#x of %s", n,
                                                  SectionLabel(i), at, rela.r_offset, SectionLabel(target));
        const std::optional<uint64_t> width = RelocationWidth(type);
        if (!width.has_value()) {
          const absl::string_view name = AmdgpuRelocationName(type);
          return Error(
              "%s: relocation type %d (%s) is not supported; supported are R_AMDGPU_ABS32_LO/HI, R_AMDGPU_ABS64, "
              "R_AMDGPU_REL32, R_AMDGPU_REL32_LO/HI and R_AMDGPU_REL64",
              where, type, name.empty() ? "not an AMDGPU relocation type" : name);
        }
        if (*width == 0) continue;  // R_AMDGPU_NONE
        if (!Within(rela.r_offset, *width, section.sh_size)) {
          return Error("%s: the %d bytes of %s run past the end of the section (%d bytes)", where, *width,
                       AmdgpuRelocationName(type), section.sh_size);
        }
        uint64_t s = 0;  // symbol index 0 (STN_UNDEF) means S = 0
        if (symbol_index != 0) {
          if (symbol_index >= symbol_count) {
            return Error("%s: symbol index %d is past the end of %s (%d symbols)", where, symbol_index, symtab_name,
                         symbol_count);
          }
          const auto sym = Load<Elf64_Sym>(elf_, symtab.sh_offset + symbol_index * sizeof(Elf64_Sym));
          std::string name;
          if (sym.st_name != 0 && sym.st_name < names.size()) {
            name = std::string(StringAt(names, sym.st_name));
          } else if (ELF64_ST_TYPE(sym.st_info) == STT_SECTION && sym.st_shndx < sections_.size()) {
            name = SectionName(sym.st_shndx);
          }
          absl::StatusOr<uint64_t> address = RelocatableSymbolAddress(sym, name, symbol_index, symtab_name);
          if (!address.ok()) {
            return absl::Status(address.status().code(), absl::StrCat(address.status().message(), " (", where, ")"));
          }
          s = *address;
        }
        const uint64_t a = static_cast<uint64_t>(rela.r_addend);
        const uint64_t p = *section_address_[target] + rela.r_offset;
        const uint64_t pc_relative = s + a - p;  // modulo 2^64, as the relocation's arithmetic is
        switch (type) {
          case kRAmdgpuRel64:
          case kRAmdgpuRel32Lo:
            Store(image, p, pc_relative, *width);
            break;
          case kRAmdgpuRel32Hi:
            Store(image, p, pc_relative >> 32, *width);
            break;
          case kRAmdgpuRel32: {
            const auto value = static_cast<int64_t>(pc_relative);
            if (value < INT32_MIN || value > INT32_MAX) {
              return Error("%s: R_AMDGPU_REL32 value %d (S %#x + A %d - P %#x) does not fit in 32 bits", where, value,
                           s, rela.r_addend, p);
            }
            Store(image, p, pc_relative, *width);
            break;
          }
          default: {  // kRAmdgpuAbs64, kRAmdgpuAbs32Lo, kRAmdgpuAbs32Hi
            const auto [value, bytes] = AbsoluteValue(type, /*load_address=*/0, s + a);
            Store(image, p, value, bytes);
            absolute.push_back({p, type, s + a});
            break;
          }
        }
      }
    }
    return absl::OkStatus();
  }

  absl::Status BuildImage(std::vector<uint8_t>& image) const {
    uint64_t size = 0;
    for (const Segment& s : segments_) size = std::max(size, s.vaddr + s.mem_size);
    image.assign(size, 0);
    for (const Segment& s : segments_) {
      std::copy_n(elf_.begin() + s.file_offset, s.file_size, image.begin() + s.vaddr);
    }
    return absl::OkStatus();
  }

  // What the image is made of, for messages.
  absl::string_view RegionKind() const { return relocatable_ ? "SHF_ALLOC section" : "PT_LOAD segment"; }

  // The segment whose file-backed bytes hold [vaddr, vaddr + size), or null.
  const Segment* FileBacked(uint64_t vaddr, uint64_t size) const {
    for (const Segment& s : segments_) {
      if (vaddr >= s.vaddr && Within(vaddr - s.vaddr, size, s.file_size)) return &s;
    }
    return nullptr;
  }

  absl::Status FindKernels(const std::vector<uint8_t>& image, std::vector<CodeObject::Kernel>& kernels) const {
    static constexpr absl::string_view kSuffix = ".kd";
    for (const auto& [symbol_name, symbol] : symbols_) {
      if (symbol_name.size() <= kSuffix.size() || !absl::EndsWith(symbol_name, kSuffix)) continue;
      CodeObject::Kernel kernel;
      kernel.name = symbol_name.substr(0, symbol_name.size() - kSuffix.size());
      BAREGPU_RETURN_IF_ERROR(ReadKernel(image, symbol_name, symbol, kernel));
      kernels.push_back(std::move(kernel));
    }
    if (kernels.empty()) return Error("no kernel descriptors: no symbol is called NAME.kd");
    return absl::OkStatus();
  }

  absl::Status ReadKernel(const std::vector<uint8_t>& image, const std::string& kd_name, const Symbol& kd,
                          CodeObject::Kernel& kernel) const {
    if (kd.size != sizeof(KernelDescriptor)) {
      return Error("kernel descriptor %s (%s) is %d bytes, a kernel descriptor is %d", kd_name, kd.table, kd.size,
                   sizeof(KernelDescriptor));
    }
    const Segment* segment = FileBacked(kd.value, sizeof(KernelDescriptor));
    if (segment == nullptr) {
      return Error("kernel descriptor %s at %#x (%d bytes) is not inside the file bytes of any %s", kd_name, kd.value,
                   sizeof(KernelDescriptor), RegionKind());
    }
    if (kd.value % kDescriptorAlignment != 0) {
      return Error("kernel descriptor %s at %#x is not %d-byte aligned (the CP requires it)", kd_name, kd.value,
                   kDescriptorAlignment);
    }
    const uint64_t file_offset = segment->file_offset + (kd.value - segment->vaddr);
    const auto d = Load<KernelDescriptor>(image, kd.value);
    auto field_error = [&](absl::string_view field, size_t offset, absl::string_view problem) {
      return Error("kernel descriptor %s: %s at file offset %#x %s", kd_name, field, file_offset + offset, problem);
    };
    auto all_zero = [](const auto& bytes) {
      return std::all_of(std::begin(bytes), std::end(bytes), [](uint8_t b) { return b == 0; });
    };
    if (!all_zero(d.reserved0)) return field_error("reserved bits 127:96", 12, "are not 0");
    if (!all_zero(d.reserved1)) return field_error("reserved bits 351:192", 24, "are not 0");
    if (!all_zero(d.reserved2)) return field_error("reserved bits 511:480", 60, "are not 0");
    if (d.kernel_code_properties & KernelDescriptor::kReservedPropertyBits) {
      return field_error("kernel_code_properties", offsetof(KernelDescriptor, kernel_code_properties),
                         absl::StrFormat("is %#x: reserved bits %#x are set", d.kernel_code_properties,
                                         d.kernel_code_properties & KernelDescriptor::kReservedPropertyBits));
    }
    if (d.kernarg_preload != 0) {
      return field_error("kernarg_preload", offsetof(KernelDescriptor, kernarg_preload),
                         absl::StrFormat("is %#x: kernel argument preloading exists only on GFX90A/GFX940, not gfx1100",
                                         d.kernarg_preload));
    }
    if (d.group_segment_fixed_size > kMaxLdsBytes) {
      return field_error("group_segment_fixed_size", 0,
                         absl::StrFormat("asks for %d bytes of LDS; a gfx1100 workgroup has at most %d",
                                         d.group_segment_fixed_size, kMaxLdsBytes));
    }
    if (d.enabled_user_sgprs() > d.user_sgpr_count()) {
      return field_error("compute_pgm_rsrc2", offsetof(KernelDescriptor, compute_pgm_rsrc2),
                         absl::StrFormat("has USER_SGPR_COUNT %d, fewer than the %d user SGPRs kernel_code_properties "
                                         "%#x enables",
                                         d.user_sgpr_count(), d.enabled_user_sgprs(), d.kernel_code_properties));
    }
    // The entry may lie before the descriptor (the offset is signed); compute it without wrapping.
    const int64_t offset = d.kernel_code_entry_byte_offset;
    const bool fits = offset >= 0 ? kd.value + static_cast<uint64_t>(offset) >= kd.value
                                  : static_cast<uint64_t>(-(offset + 1)) < kd.value;
    const uint64_t entry = kd.value + static_cast<uint64_t>(offset);
    const Segment* code = fits ? FileBacked(entry, 4) : nullptr;
    if (code == nullptr || !code->executable) {
      return field_error(
          "kernel_code_entry_byte_offset", offsetof(KernelDescriptor, kernel_code_entry_byte_offset),
          absl::StrFormat("is %d: the entry %#x is not inside an executable %s", offset, entry, RegionKind()));
    }
    if (entry % kEntryAlignment != 0) {
      return field_error(
          "kernel_code_entry_byte_offset", offsetof(KernelDescriptor, kernel_code_entry_byte_offset),
          absl::StrFormat("is %d: the entry %#x is not %d-byte aligned", offset, entry, kEntryAlignment));
    }
    if (auto it = symbols_.find(kernel.name); it != symbols_.end()) {
      const Symbol& code_symbol = it->second;
      if (code_symbol.value != entry) {
        return field_error("kernel_code_entry_byte_offset", offsetof(KernelDescriptor, kernel_code_entry_byte_offset),
                           absl::StrFormat("is %d: the entry %#x is not symbol %s at %#x", offset, entry, kernel.name,
                                           code_symbol.value));
      }
      if (FileBacked(entry, code_symbol.size) != code) {
        return Error("kernel %s: its code [%#x, %#x) runs past the end of its segment", kernel.name, entry,
                     entry + code_symbol.size);
      }
      kernel.code_size = code_symbol.size;
    }
    kernel.descriptor_offset = kd.value;
    kernel.entry_offset = entry;
    kernel.descriptor = d;
    return absl::OkStatus();
  }

  // Note sections: the NT_AMDGPU_METADATA note gives each kernel's arguments. Notes are 4-byte aligned on AMDGPU
  // (LLVM writes them so; AMDGPUUsage "Note Records").
  absl::Status ReadNotes(std::vector<CodeObject::Kernel>& kernels) const {
    auto align4 = [](uint64_t n) { return (n + 3) & ~uint64_t{3}; };
    for (uint32_t i = 0; i < sections_.size(); ++i) {
      const Elf64_Shdr& shdr = sections_[i];
      if (shdr.sh_type != SHT_NOTE) continue;
      if (!Within(shdr.sh_offset, shdr.sh_size, elf_.size())) {
        return Error("note section %d (%s): sh_offset %#x + sh_size %#x runs past the end of the file (%d bytes)", i,
                     SectionName(i), shdr.sh_offset, shdr.sh_size, elf_.size());
      }
      std::span<const uint8_t> notes = elf_.subspan(shdr.sh_offset, shdr.sh_size);
      for (uint64_t at = 0; at < notes.size();) {
        if (notes.size() - at < sizeof(Elf64_Nhdr)) {
          return Error("note section %d (%s): %d bytes at file offset %#x are too few for a note header (%d)", i,
                       SectionName(i), notes.size() - at, shdr.sh_offset + at, sizeof(Elf64_Nhdr));
        }
        const auto nhdr = Load<Elf64_Nhdr>(notes, at);
        const uint64_t name_at = at + sizeof(Elf64_Nhdr);
        const uint64_t desc_at = name_at + align4(nhdr.n_namesz);
        const uint64_t end = desc_at + align4(nhdr.n_descsz);
        if (end > notes.size()) {
          return Error(
              "note at file offset %#x: n_namesz %d and n_descsz %d run past the end of note section %d (%s, %d "
              "bytes)",
              shdr.sh_offset + at, nhdr.n_namesz, nhdr.n_descsz, i, SectionName(i), notes.size());
        }
        absl::string_view name(reinterpret_cast<const char*>(notes.data() + name_at), nhdr.n_namesz);
        if (!name.empty() && name.back() == '\0') name.remove_suffix(1);
        if (name == kNoteOwnerAmdgpu && nhdr.n_type == kNtAmdgpuMetadata) {
          BAREGPU_RETURN_IF_ERROR(
              ReadMetadata(notes.subspan(desc_at, nhdr.n_descsz), shdr.sh_offset + desc_at, kernels));
        }
        at = end;
      }
    }
    return absl::OkStatus();
  }

  // The metadata map: amdhsa.kernels lists each kernel's .symbol, .kernarg_segment_size and .args.
  absl::Status ReadMetadata(std::span<const uint8_t> bytes, uint64_t file_offset,
                            std::vector<CodeObject::Kernel>& kernels) const {
    namespace mp = base::msgpack;
    absl::StatusOr<mp::Value> root = mp::Decode(bytes);
    if (!root.ok())
      return Error("NT_AMDGPU_METADATA note at file offset %#x: %s", file_offset, root.status().message());
    const mp::Value* list = root->Find("amdhsa.kernels");
    if (list == nullptr || list->kind != mp::Value::Kind::kArray) {
      return Error("NT_AMDGPU_METADATA note at file offset %#x: %s", file_offset,
                   root->kind != mp::Value::Kind::kMap
                       ? absl::StrFormat("the metadata is a %s, expected a map", mp::KindName(*root))
                       : std::string("no amdhsa.kernels array"));
    }
    for (size_t k = 0; k < list->array.size(); ++k) {
      const mp::Value& entry = list->array[k];
      auto error = [&](absl::string_view problem) {
        return Error("NT_AMDGPU_METADATA note at file offset %#x: amdhsa.kernels[%d] %s", file_offset, k, problem);
      };
      auto field = [&](const mp::Value& map, absl::string_view key, auto as, absl::string_view expected,
                       absl::string_view where) -> absl::StatusOr<typename decltype((map.*as)())::value_type> {
        const mp::Value* value = map.Find(key);
        if (value == nullptr) return error(absl::StrFormat("%shas no %s", where, key));
        auto typed = ((*value).*as)();
        if (!typed.has_value()) {
          return error(absl::StrFormat("%s%s is a %s, expected %s", where, key, mp::KindName(*value), expected));
        }
        return *typed;
      };
      if (entry.kind != mp::Value::Kind::kMap)
        return error(absl::StrFormat("is a %s, expected a map", mp::KindName(entry)));
      BAREGPU_ASSIGN_OR_RETURN(absl::string_view symbol, field(entry, ".symbol", &mp::Value::AsString, "a string", ""));
      auto kernel = std::find_if(kernels.begin(), kernels.end(),
                                 [&](const CodeObject::Kernel& kk) { return absl::StrCat(kk.name, ".kd") == symbol; });
      if (kernel == kernels.end()) {
        return error(
            absl::StrFormat("describes %s, which is not a kernel descriptor symbol of this code object", symbol));
      }
      BAREGPU_ASSIGN_OR_RETURN(uint64_t segment_size, field(entry, ".kernarg_segment_size", &mp::Value::AsUnsigned,
                                                            "an unsigned integer", ""));
      if (segment_size != kernel->descriptor.kernarg_size) {
        return error(absl::StrFormat("(%s): .kernarg_segment_size is %d but the kernel descriptor's kernarg_size is %d",
                                     symbol, segment_size, kernel->descriptor.kernarg_size));
      }
      kernel->has_metadata = true;
      if (const mp::Value* reqd = entry.Find(".reqd_workgroup_size"); reqd != nullptr) {
        // AMDGPUUsage "Code Object V3 to V6 Metadata": a sequence of 3 integers, each a dimension's size.
        if (reqd->kind != mp::Value::Kind::kArray || reqd->array.size() != kernel->required_workgroup_size.size()) {
          return error(absl::StrFormat(
              "(%s): .reqd_workgroup_size is %s, expected an array of 3 unsigned integers", symbol,
              reqd->kind == mp::Value::Kind::kArray ? absl::StrFormat("an array of %d", reqd->array.size())
                                                    : absl::StrCat("a ", mp::KindName(*reqd))));
        }
        for (size_t d = 0; d < reqd->array.size(); ++d) {
          const std::optional<uint64_t> size = reqd->array[d].AsUnsigned();
          // A workgroup holds at most 1024 work-items (AMDGPUUsage: .max_flat_workgroup_size's largest value), so
          // a dimension outside 1..1024 is no size a kernel can require.
          if (!size.has_value() || *size == 0 || *size > kMaxWorkgroupSize) {
            return error(absl::StrFormat(
                "(%s): .reqd_workgroup_size[%d] is %s, expected an unsigned integer in 1..%d", symbol, d,
                size.has_value() ? absl::StrCat(*size) : absl::StrCat("a ", mp::KindName(reqd->array[d])),
                kMaxWorkgroupSize));
          }
          kernel->required_workgroup_size[d] = static_cast<uint32_t>(*size);
        }
      }
      const mp::Value* args = entry.Find(".args");
      if (args == nullptr) continue;  // a kernel without arguments
      if (args->kind != mp::Value::Kind::kArray) {
        return error(absl::StrFormat("(%s): .args is a %s, expected an array", symbol, mp::KindName(*args)));
      }
      kernel->arguments.clear();
      for (size_t a = 0; a < args->array.size(); ++a) {
        const mp::Value& arg = args->array[a];
        const std::string where = absl::StrFormat("(%s): .args[%d]", symbol, a);
        if (arg.kind != mp::Value::Kind::kMap) {
          return error(absl::StrFormat("%s is a %s, expected a map", where, mp::KindName(arg)));
        }
        BAREGPU_ASSIGN_OR_RETURN(absl::string_view kind,
                                 field(arg, ".value_kind", &mp::Value::AsString, "a string", where + " "));
        BAREGPU_ASSIGN_OR_RETURN(uint64_t offset,
                                 field(arg, ".offset", &mp::Value::AsUnsigned, "an unsigned integer", where + " "));
        BAREGPU_ASSIGN_OR_RETURN(uint64_t size,
                                 field(arg, ".size", &mp::Value::AsUnsigned, "an unsigned integer", where + " "));
        if (!Within(offset, size, segment_size)) {
          return error(absl::StrFormat("%s (%s): .offset %d + .size %d runs past the %d-byte kernarg segment", where,
                                       kind, offset, size, segment_size));
        }
        kernel->arguments.push_back({std::string(kind), static_cast<uint32_t>(offset), static_cast<uint32_t>(size)});
      }
    }
    return absl::OkStatus();
  }

  std::span<const uint8_t> elf_;
  absl::string_view source_;
  Elf64_Ehdr ehdr_{};
  std::vector<Segment> segments_;
  uint64_t alignment_ = 1;
  std::vector<Elf64_Shdr> sections_;
  std::span<const uint8_t> section_names_;
  std::map<std::string, Symbol> symbols_;
  bool relocatable_ = false;                              // ET_REL
  std::vector<std::optional<uint64_t>> section_address_;  // ET_REL: each loaded section's image offset
};

}  // namespace

absl::string_view AmdgpuRelocationName(uint32_t type) {
  for (const auto& [value, name] : kRelocationNames) {
    if (value == type) return name;
  }
  return "";
}

absl::string_view AmdgpuMachName(uint32_t mach) {
  for (const auto& [value, name] : kMachNames) {
    if (value == mach) return name;
  }
  return "";
}

uint32_t KernelDescriptor::enabled_user_sgprs() const {
  // AMDGPUUsage "SGPR Register Set Up Order": how many SGPRs each enabled user value takes.
  static constexpr std::array<std::pair<uint16_t, uint32_t>, 7> kSizes{{
      {kEnableSgprPrivateSegmentBuffer, 4},
      {kEnableSgprDispatchPtr, 2},
      {kEnableSgprQueuePtr, 2},
      {kEnableSgprKernargSegmentPtr, 2},
      {kEnableSgprDispatchId, 2},
      {kEnableSgprFlatScratchInit, 2},
      {kEnableSgprPrivateSegmentSize, 1},
  }};
  uint32_t count = 0;
  for (const auto& [bit, sgprs] : kSizes) count += has(bit) ? sgprs : 0;
  return count;
}

absl::StatusOr<CodeObject> CodeObject::Parse(std::span<const uint8_t> elf, absl::string_view source) {
  CodeObject object;
  object.source_ = std::string(source);
  Parser parser(elf, object.source_);
  BAREGPU_RETURN_IF_ERROR(parser.Run(object.image_, object.alignment_, object.mach_, object.abi_version_,
                                     object.kernels_, object.absolute_relocations_, object.relocatable_));
  return object;
}

std::vector<uint8_t> CodeObject::ImageAt(uint64_t load_address) const {
  std::vector<uint8_t> image = image_;
  for (const AbsoluteRelocation& r : absolute_relocations_) {
    const auto [value, bytes] = AbsoluteValue(r.type, load_address, r.value);
    Store(image, r.offset, value, bytes);
  }
  return image;
}

absl::StatusOr<const CodeObject::Kernel*> CodeObject::FindKernel(absl::string_view name) const {
  for (const Kernel& kernel : kernels_) {
    if (kernel.name == name) return &kernel;
  }
  std::vector<absl::string_view> names;
  for (const Kernel& kernel : kernels_) names.push_back(kernel.name);
  return absl::NotFoundError(absl::StrFormat("%s: no kernel descriptor %s.kd; the kernels here are %s", source_, name,
                                             absl::StrJoin(names, ", ")));
}

}  // namespace am
