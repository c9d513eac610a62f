// The code-object parser on the real gfx1100 corpus the build compiles (tests/am/sim/isa/kernels), on copies of it
// damaged field by field, and under random mutation. Expected values come from the kernels' sources (argument
// sizes, LDS arrays, wave size flags) and from llvm-objdump-19's disassembly, never from the parser itself.
#include "am/code_object.h"

#include <elf.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "base/file.h"
#include "gtest/gtest.h"
#include "tests/am/sim/isa/kernels/corpus.h"

namespace am {
namespace {

using ::am::sim::testing::CorpusEntry;
using ::am::sim::testing::kCorpusDir;
using ::am::sim::testing::kCorpusEntries;

std::vector<uint8_t> ReadCorpusFile(const std::string& path) {
  absl::StatusOr<std::string> bytes = base::ReadFile(path);
  EXPECT_TRUE(bytes.ok()) << bytes.status() << " (the build makes the corpus: ninja -C BUILD)";
  if (!bytes.ok()) return {};
  return std::vector<uint8_t>(bytes->begin(), bytes->end());
}

std::vector<uint8_t> VectorAddO2() { return ReadCorpusFile(std::string(kCorpusDir) + "/vector_add-O2.co"); }
// The relocatable object vector_add-O2.co was linked from (ld.lld-19 -shared), as LLVM wrote it.
std::vector<uint8_t> VectorAddO2Relocatable() { return ReadCorpusFile(std::string(kCorpusDir) + "/vector_add-O2.o"); }

absl::StatusOr<CodeObject> Parse(const std::vector<uint8_t>& bytes) { return CodeObject::Parse(bytes, "test.co"); }

// Reads headers, sections and symbols with <elf.h> directly, to find the bytes a test damages.
class ElfEditor {
 public:
  explicit ElfEditor(std::vector<uint8_t>& bytes) : bytes_(bytes) {}

  template <typename T>
  T Get(size_t offset) const {
    T value;
    std::memcpy(&value, bytes_.data() + offset, sizeof(T));
    return value;
  }
  template <typename T>
  void Set(size_t offset, T value) {
    std::memcpy(bytes_.data() + offset, &value, sizeof(T));
  }

  Elf64_Ehdr header() const { return Get<Elf64_Ehdr>(0); }
  size_t SectionHeaderOffset(size_t index) const { return header().e_shoff + index * sizeof(Elf64_Shdr); }
  Elf64_Shdr Section(size_t index) const { return Get<Elf64_Shdr>(SectionHeaderOffset(index)); }
  std::string SectionName(size_t index) const {
    const Elf64_Shdr names = Section(header().e_shstrndx);
    return reinterpret_cast<const char*>(bytes_.data() + names.sh_offset + Section(index).sh_name);
  }
  size_t FindSection(const std::string& name) const {
    for (size_t i = 0; i < header().e_shnum; ++i) {
      if (SectionName(i) == name) return i;
    }
    ADD_FAILURE() << "no section " << name;
    return 0;
  }
  // File offset of the Elf64_Sym called `name` in symbol table section `table` ("" -> not found: 0).
  size_t SymbolOffset(const std::string& table, const std::string& name) const {
    const Elf64_Shdr symtab = Section(FindSection(table));
    const Elf64_Shdr strtab = Section(symtab.sh_link);
    for (size_t at = symtab.sh_offset; at < symtab.sh_offset + symtab.sh_size; at += sizeof(Elf64_Sym)) {
      const auto sym = Get<Elf64_Sym>(at);
      if (name == reinterpret_cast<const char*>(bytes_.data() + strtab.sh_offset + sym.st_name)) return at;
    }
    ADD_FAILURE() << "no symbol " << name << " in " << table;
    return 0;
  }
  // File offset of a kernel descriptor (its symbol's value is a virtual address inside a PT_LOAD segment).
  size_t DescriptorOffset(const std::string& kernel) const {
    const uint64_t vaddr = Get<Elf64_Sym>(SymbolOffset(".dynsym", kernel + ".kd")).st_value;
    for (size_t i = 0; i < header().e_phnum; ++i) {
      const auto phdr = Get<Elf64_Phdr>(header().e_phoff + i * sizeof(Elf64_Phdr));
      if (phdr.p_type == PT_LOAD && vaddr >= phdr.p_vaddr && vaddr < phdr.p_vaddr + phdr.p_filesz) {
        return phdr.p_offset + (vaddr - phdr.p_vaddr);
      }
    }
    ADD_FAILURE() << "descriptor of " << kernel << " is not in a segment";
    return 0;
  }
  // Renames every occurrence of `from` in the string tables to `to` (same length).
  void RenameSymbol(const std::string& from, const std::string& to) {
    ASSERT_EQ(from.size(), to.size());
    for (const char* table : {".dynstr", ".strtab"}) {
      const Elf64_Shdr shdr = Section(FindSection(table));
      for (size_t at = shdr.sh_offset; at + from.size() < shdr.sh_offset + shdr.sh_size; ++at) {
        if (std::memcmp(bytes_.data() + at, from.c_str(), from.size() + 1) == 0) {
          std::memcpy(bytes_.data() + at, to.c_str(), to.size());
        }
      }
    }
  }

 private:
  std::vector<uint8_t>& bytes_;
};

TEST(CodeObjectTest, EveryCorpusObjectIsAGfx1100CodeObject) {
  ASSERT_GT(kCorpusEntries.size(), 0u);
  for (const CorpusEntry& entry : kCorpusEntries) {
    SCOPED_TRACE(entry.stem());
    std::vector<uint8_t> bytes = ReadCorpusFile(entry.code_object_path());
    absl::StatusOr<CodeObject> object = CodeObject::Parse(bytes, entry.stem());
    ASSERT_TRUE(object.ok()) << object.status();
    EXPECT_EQ(object->target(), "gfx1100");
    // clang-19's default is code object V5 (ELFABIVERSION_AMDGPU_HSA_V5); the _v4 variant asks for V4.
    EXPECT_EQ(object->abi_version(), absl::EndsWith(entry.name, "_v4") ? 2 : 3);
    EXPECT_EQ(object->image_alignment(), 0x1000u);
    ASSERT_FALSE(object->kernels().empty());
    for (const CodeObject::Kernel& kernel : object->kernels()) {
      SCOPED_TRACE(kernel.name);
      EXPECT_EQ(kernel.entry_offset % 256, 0u);
      EXPECT_EQ(kernel.descriptor_offset % 64, 0u);
      EXPECT_GT(kernel.code_size, 0u);
      EXPECT_LE(kernel.entry_offset + kernel.code_size, object->image().size());
      // The descriptor in the image is the descriptor the parser returns.
      EXPECT_EQ(std::memcmp(object->image().data() + kernel.descriptor_offset, &kernel.descriptor, 64), 0);
    }
  }
}

// Each kernel's entry is where llvm-objdump-19 puts its label, and the image holds the instruction words objdump
// printed there; every kernel has its label.
TEST(CodeObjectTest, EntriesAndCodeMatchObjdump) {
  for (const CorpusEntry& entry : kCorpusEntries) {
    SCOPED_TRACE(entry.stem());
    absl::StatusOr<std::string> dis = base::ReadFile(entry.disassembly_path());
    ASSERT_TRUE(dis.ok()) << dis.status();
    absl::StatusOr<CodeObject> object = CodeObject::Parse(ReadCorpusFile(entry.code_object_path()), entry.stem());
    ASSERT_TRUE(object.ok()) << object.status();
    std::vector<std::string> lines = absl::StrSplit(*dis, '\n');
    int labels = 0;
    for (size_t i = 0; i + 1 < lines.size(); ++i) {
      // "0000000000001700 <vector_add>:" then "\ts_load_b32 s2, s[0:1], 0x18   // 000000001700: F4000080 F8000018"
      const std::string& line = lines[i];
      const size_t open = line.find(" <"), close = line.find(">:");
      if (open == std::string::npos || close == std::string::npos || close < open) continue;
      const std::string name = line.substr(open + 2, close - open - 2);
      uint64_t address = 0;
      ASSERT_TRUE(absl::SimpleHexAtoi(line.substr(0, open), &address)) << line;
      absl::StatusOr<const CodeObject::Kernel*> kernel = object->FindKernel(name);
      // Functions the kernels call (generic.cl's noinline callees) have labels too, and no descriptor.
      if (absl::IsNotFound(kernel.status()) && name.find('.') == std::string::npos) continue;
      ASSERT_TRUE(kernel.ok()) << kernel.status();
      EXPECT_EQ((*kernel)->entry_offset, address) << name;
      const std::string& first = lines[i + 1];
      const size_t comment = first.find("// ");
      ASSERT_NE(comment, std::string::npos) << first;
      std::vector<std::string> words = absl::StrSplit(first.substr(first.find(": ", comment) + 2), ' ');
      uint32_t word = 0;
      ASSERT_TRUE(absl::SimpleHexAtoi(words[0], &word)) << first;
      uint32_t in_image;
      std::memcpy(&in_image, object->image().data() + address, 4);
      EXPECT_EQ(in_image, word) << name << ": " << first;
      ++labels;
    }
    EXPECT_EQ(labels, static_cast<int>(object->kernels().size()));
  }
}

// What each kernel's source implies: explicit argument bytes at -O2 (no hidden arguments are used, so LLVM adds
// none), its __local arrays, its wave size flag, and scratch for the private array (and for everything at -O0).
TEST(CodeObjectTest, DescriptorsSayWhatTheSourcesAskFor) {
  struct Expected {
    const char* file;
    const char* kernel;
    uint32_t kernarg_bytes;  // explicit arguments, with alignment padding
    uint32_t lds_bytes;
    bool wave32;
    uint32_t min_scratch_at_o2;
  };
  const Expected kExpected[] = {
      {"vector_add", "vector_add", 3 * 8 + 4, 0, true, 0},
      {"vector_add_wave64", "vector_add", 3 * 8 + 4, 0, false, 0},
      {"saxpy", "saxpy", 4 + 4 + 8 + 8 + 4, 0, true, 0},  // float a, then 8-byte aligned pointers
      {"fill", "fill", 8 + 3 * 4, 0, true, 0},
      {"grid3d", "grid3d", 8 + 4 * 4, 0, true, 0},
      {"int64", "int64_ops", 3 * 8 + 4, 0, true, 0},
      {"reduction", "reduce_sum", 2 * 8 + 4, 256 * 4, true, 0},
      {"matmul", "matmul", 3 * 8 + 3 * 4, 2 * 16 * 16 * 4, true, 0},
      {"histogram", "histogram", 3 * 8 + 4, 64 * 4, true, 0},
      {"divergence", "divergence", 2 * 8 + 4, 0, true, 0},
      {"half", "half_ops", 4 * 8 + 4, 0, true, 0},
      {"half", "half2_ops", 3 * 8 + 4, 0, true, 0},
      {"scratch", "scratch", 2 * 8 + 4, 0, true, 48 * 4},
  };
  for (const Expected& e : kExpected) {
    for (const char* opt : {"O0", "O2"}) {
      const std::string stem = std::string(e.file) + "-" + opt;
      SCOPED_TRACE(stem + " " + e.kernel);
      absl::StatusOr<CodeObject> object =
          CodeObject::Parse(ReadCorpusFile(std::string(kCorpusDir) + "/" + stem + ".co"), stem);
      ASSERT_TRUE(object.ok()) << object.status();
      absl::StatusOr<const CodeObject::Kernel*> kernel = object->FindKernel(e.kernel);
      ASSERT_TRUE(kernel.ok()) << kernel.status();
      const KernelDescriptor& d = (*kernel)->descriptor;
      EXPECT_EQ((*kernel)->lds_size(), e.lds_bytes);
      EXPECT_EQ((*kernel)->wave32(), e.wave32);
      EXPECT_TRUE(d.has(KernelDescriptor::kEnableSgprKernargSegmentPtr));
      EXPECT_EQ(d.enabled_user_sgprs() <= d.user_sgpr_count(), true);
      if (std::string(opt) == "O2") {
        EXPECT_EQ((*kernel)->kernarg_size(), e.kernarg_bytes);
        EXPECT_GE((*kernel)->scratch_size(), e.min_scratch_at_o2);
        EXPECT_EQ(d.enable_private_segment(), e.min_scratch_at_o2 > 0);
      } else {
        // -O0 keeps every local variable on the stack, and adds the hidden arguments of code object V5.
        EXPECT_GT((*kernel)->kernarg_size(), e.kernarg_bytes);
        EXPECT_GT((*kernel)->scratch_size(), 0u);
        EXPECT_TRUE(d.enable_private_segment());
      }
    }
  }
}

// The metadata note's .args: explicit arguments end where the source's parameters end; -O0 adds the hidden
// arguments of code object V5 (the launch dimensions a launcher fills) after them, -O2 drops the unused ones.
TEST(CodeObjectTest, MetadataListsExplicitAndHiddenArguments) {
  struct Expected {
    const char* file;
    const char* kernel;
    uint32_t explicit_arguments, explicit_bytes;
  };
  const Expected kExpected[] = {
      {"vector_add", "vector_add", 4, 3 * 8 + 4},
      {"saxpy", "saxpy", 4, 4 + 4 + 8 + 8 + 4},  // float a, then 8-byte aligned pointers
      {"grid3d", "grid3d", 5, 8 + 4 * 4},
      {"matmul", "matmul", 6, 3 * 8 + 3 * 4},
  };
  for (const Expected& e : kExpected) {
    for (const char* opt : {"O0", "O2"}) {
      const std::string stem = std::string(e.file) + "-" + opt;
      SCOPED_TRACE(stem);
      absl::StatusOr<CodeObject> object =
          CodeObject::Parse(ReadCorpusFile(std::string(kCorpusDir) + "/" + stem + ".co"), stem);
      ASSERT_TRUE(object.ok()) << object.status();
      const CodeObject::Kernel& kernel = **object->FindKernel(e.kernel);
      uint32_t explicit_count = 0, explicit_end = 0, hidden_start = UINT32_MAX;
      std::vector<std::string> hidden;
      for (const CodeObject::Kernel::Argument& a : kernel.arguments) {
        EXPECT_LE(a.offset + a.size, kernel.kernarg_size()) << a.value_kind;
        if (absl::StartsWith(a.value_kind, "hidden_")) {
          hidden.push_back(a.value_kind);
          hidden_start = std::min(hidden_start, a.offset);
        } else {
          ++explicit_count;
          explicit_end = std::max(explicit_end, a.offset + a.size);
          EXPECT_TRUE(a.value_kind == "global_buffer" || a.value_kind == "by_value") << a.value_kind;
        }
      }
      EXPECT_EQ(explicit_count, e.explicit_arguments);
      EXPECT_EQ(explicit_end, e.explicit_bytes);
      if (std::string(opt) == "O0") {
        EXPECT_GE(hidden_start, explicit_end);
        for (const char* kind :
             {"hidden_block_count_x", "hidden_block_count_y", "hidden_block_count_z", "hidden_group_size_x",
              "hidden_group_size_y", "hidden_group_size_z", "hidden_remainder_x", "hidden_grid_dims"}) {
          EXPECT_NE(std::find(hidden.begin(), hidden.end(), kind), hidden.end()) << kind;
        }
      } else {
        EXPECT_TRUE(hidden.empty()) << hidden.front();
      }
    }
  }
}

// Damaged metadata: the note's size, its MessagePack, and a value that contradicts the kernel descriptor.
TEST(CodeObjectTest, DamagedMetadataIsRefusedWithAnErrorNamingIt) {
  const std::vector<uint8_t> original = VectorAddO2();
  ASSERT_FALSE(original.empty());
  std::vector<uint8_t> bytes = original;
  ElfEditor elf(bytes);
  size_t note_section = 0;
  for (size_t i = 0; i < elf.header().e_shnum; ++i) {
    if (elf.Section(i).sh_type == SHT_NOTE) note_section = i;
  }
  ASSERT_NE(note_section, 0u);
  const Elf64_Shdr notes = elf.Section(note_section);
  const size_t nhdr_at = notes.sh_offset;  // the metadata is the section's only note
  const auto nhdr = elf.Get<Elf64_Nhdr>(nhdr_at);
  ASSERT_EQ(nhdr.n_type, kNtAmdgpuMetadata);
  const size_t desc_at = nhdr_at + sizeof(Elf64_Nhdr) + ((nhdr.n_namesz + 3) & ~3u);

  elf.Set<uint32_t>(nhdr_at + offsetof(Elf64_Nhdr, n_descsz), 0x10000);
  auto oversized = Parse(bytes);
  ASSERT_FALSE(oversized.ok());
  EXPECT_TRUE(absl::StrContains(oversized.status().message(), "n_descsz 65536 run past the end of note section"))
      << oversized.status();

  bytes = original;
  bytes[desc_at] = 0xc1;
  auto reserved = Parse(bytes);
  ASSERT_FALSE(reserved.ok());
  EXPECT_TRUE(absl::StrContains(reserved.status().message(), "NT_AMDGPU_METADATA note at file offset"))
      << reserved.status();
  EXPECT_TRUE(absl::StrContains(reserved.status().message(), "reserved")) << reserved.status();

  // ".kernarg_segment_size" is followed by its value, a positive fixint (28) in this kernel.
  bytes = original;
  const std::string key = ".kernarg_segment_size";
  auto found = std::search(bytes.begin() + desc_at, bytes.begin() + desc_at + nhdr.n_descsz, key.begin(), key.end());
  ASSERT_NE(found, bytes.begin() + desc_at + nhdr.n_descsz);
  uint8_t& size_value = *(found + key.size());
  ASSERT_EQ(size_value, 28);
  size_value = 29;
  auto contradicts = Parse(bytes);
  ASSERT_FALSE(contradicts.ok());
  EXPECT_TRUE(absl::StrContains(contradicts.status().message(),
                                ".kernarg_segment_size is 29 but the kernel descriptor's kernarg_size is 28"))
      << contradicts.status();
}

// .reqd_workgroup_size as each source's reqd_work_group_size attribute states it (tests/am/sim/isa/kernels).
TEST(CodeObjectTest, RequiredWorkgroupSizeComesFromTheMetadata) {
  struct Expected {
    const char* file;
    const char* kernel;
    std::array<uint32_t, 3> size;
  };
  const Expected kExpected[] = {
      {"vector_add", "vector_add", {64, 1, 1}},
      {"fill", "fill", {16, 8, 1}},
      {"grid3d", "grid3d", {4, 4, 4}},
      {"launch_dims", "launch_dims", {0, 0, 0}},  // none
  };
  for (const Expected& e : kExpected) {
    for (const char* opt : {"O0", "O2"}) {
      const std::string stem = std::string(e.file) + "-" + opt;
      SCOPED_TRACE(stem);
      absl::StatusOr<CodeObject> object =
          CodeObject::Parse(ReadCorpusFile(std::string(kCorpusDir) + "/" + stem + ".co"), stem);
      ASSERT_TRUE(object.ok()) << object.status();
      const CodeObject::Kernel& kernel = **object->FindKernel(e.kernel);
      EXPECT_TRUE(kernel.has_metadata);
      EXPECT_EQ(kernel.required_workgroup_size, e.size);
    }
  }
}

// A .reqd_workgroup_size that is not 3 sizes in 1..1024 is refused, naming the kernel and the field.
TEST(CodeObjectTest, DamagedRequiredWorkgroupSizeIsRefused) {
  const std::vector<uint8_t> original = VectorAddO2();
  ASSERT_FALSE(original.empty());
  const std::string key = ".reqd_workgroup_size";
  auto found = std::search(original.begin(), original.end(), key.begin(), key.end());
  ASSERT_NE(found, original.end());
  const size_t value_at = static_cast<size_t>(found - original.begin()) + key.size();
  // MessagePack: a fixarray of 3 (0x93), then the positive fixints 64, 1, 1.
  ASSERT_EQ(original[value_at], 0x93);
  ASSERT_EQ(original[value_at + 1], 64);
  struct Damage {
    size_t at;
    uint8_t byte;
    const char* message;
  };
  const Damage kDamage[] = {
      {value_at + 1, 0x00, ".reqd_workgroup_size[0] is 0, expected an unsigned integer in 1..1024"},
      {value_at + 1, 0xc0, ".reqd_workgroup_size[0] is a nil, expected an unsigned integer in 1..1024"},
      {value_at + 1, 0xe0, ".reqd_workgroup_size[0] is a negative integer"},  // fixint -32
      {value_at, 0xa3, "(vector_add.kd): .reqd_workgroup_size is a string, expected an array of 3"},
  };
  for (const Damage& d : kDamage) {
    std::vector<uint8_t> bytes = original;
    bytes[d.at] = d.byte;
    auto parsed = Parse(bytes);
    ASSERT_FALSE(parsed.ok()) << d.message;
    EXPECT_TRUE(absl::StrContains(parsed.status().message(), d.message)) << parsed.status();
  }
}

TEST(CodeObjectTest, FindKernelNamesTheKernelsThere) {
  absl::StatusOr<CodeObject> object =
      CodeObject::Parse(ReadCorpusFile(std::string(kCorpusDir) + "/half-O2.co"), "half-O2.co");
  ASSERT_TRUE(object.ok()) << object.status();
  ASSERT_EQ(object->kernels().size(), 2u);
  absl::StatusOr<const CodeObject::Kernel*> missing = object->FindKernel("half3_ops");
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(missing.status().message(),
            "half-O2.co: no kernel descriptor half3_ops.kd; the kernels here are half2_ops, half_ops");
}

// One damaged copy of vector_add-O2.co per case, and the words its error must contain.
struct Damage {
  const char* what;
  void (*apply)(std::vector<uint8_t>&);
  std::vector<const char*> expected;
};

class CodeObjectDamageTest : public ::testing::TestWithParam<Damage> {};

TEST_P(CodeObjectDamageTest, IsRefusedWithAnErrorNamingIt) {
  std::vector<uint8_t> bytes = VectorAddO2();
  ASSERT_FALSE(bytes.empty());
  GetParam().apply(bytes);
  absl::StatusOr<CodeObject> object = Parse(bytes);
  ASSERT_FALSE(object.ok()) << GetParam().what;
  EXPECT_EQ(object.status().code(), absl::StatusCode::kInvalidArgument);
  const std::string message(object.status().message());
  EXPECT_TRUE(absl::StartsWith(message, "test.co: ")) << message;
  for (const char* word : GetParam().expected) EXPECT_TRUE(absl::StrContains(message, word)) << message;
}

INSTANTIATE_TEST_SUITE_P(
    Fields, CodeObjectDamageTest,
    ::testing::Values(
        Damage{"empty", [](std::vector<uint8_t>& b) { b.clear(); }, {"not an ELF file", "[]"}},
        Damage{"bad magic", [](std::vector<uint8_t>& b) { b[3] = 'G'; }, {"not an ELF file", "[7f 45 4c 47]"}},
        Damage{"header cut", [](std::vector<uint8_t>& b) { b.resize(40); }, {"truncated: 40 bytes", "64-byte"}},
        Damage{"32-bit", [](std::vector<uint8_t>& b) { b[EI_CLASS] = ELFCLASS32; }, {"EI_CLASS", "offset 4", "is 1"}},
        Damage{"big-endian", [](std::vector<uint8_t>& b) { b[EI_DATA] = ELFDATA2MSB; }, {"EI_DATA", "is 2"}},
        Damage{"PAL", [](std::vector<uint8_t>& b) { b[EI_OSABI] = 65; },
               {"EI_OSABI", "offset 7 is 65", "ELFOSABI_AMDGPU_HSA", "amdgcn-amd-amdhsa"}},
        Damage{"code object V3", [](std::vector<uint8_t>& b) { b[EI_ABIVERSION] = 1; },
               {"EI_ABIVERSION", "code object V3", "V4-V6"}},
        Damage{"executable", [](std::vector<uint8_t>& b) { ElfEditor(b).Set<uint16_t>(16, ET_EXEC); },
               {"e_type at offset 16 is 2", "ET_DYN"}},
        Damage{"x86", [](std::vector<uint8_t>& b) { ElfEditor(b).Set<uint16_t>(18, EM_X86_64); },
               {"e_machine at offset 18 is 62", "224 (EM_AMDGPU)"}},
        Damage{"gfx1030", [](std::vector<uint8_t>& b) { ElfEditor(b).Set<uint32_t>(48, 0x36); },
               {"target is gfx1030", "EF_AMDGPU_MACH 0x36", "expected gfx1100 (0x41)", "-mcpu=gfx1100"}},
        Damage{"unknown target", [](std::vector<uint8_t>& b) { ElfEditor(b).Set<uint32_t>(48, 0x7f); },
               {"target is unknown", "0x7f"}},
        Damage{"xnack on", [](std::vector<uint8_t>& b) { ElfEditor(b).Set<uint32_t>(48, 0x341); },
               {"e_flags 0x341", "bits 0x300"}},
        Damage{"program headers past the end",
               [](std::vector<uint8_t>& b) { ElfEditor(b).Set<uint64_t>(32, b.size() - 100); },
               {"program header table", "runs past the end of the file"}},
        Damage{"program header size",
               [](std::vector<uint8_t>& b) { ElfEditor(b).Set<uint16_t>(offsetof(Elf64_Ehdr, e_phentsize), 32); },
               {"e_phentsize at offset 54 is 32, expected 56"}},
        Damage{"no program headers",
               [](std::vector<uint8_t>& b) { ElfEditor(b).Set<uint16_t>(offsetof(Elf64_Ehdr, e_phnum), 0); },
               {"e_phnum is 0"}},
        Damage{"segment past the end",
               [](std::vector<uint8_t>& b) {
                 // The second program header is the first PT_LOAD (after PT_PHDR).
                 ElfEditor e(b);
                 const size_t load = e.header().e_phoff + sizeof(Elf64_Phdr);
                 ASSERT_EQ(e.Get<Elf64_Phdr>(load).p_type, static_cast<uint32_t>(PT_LOAD));
                 e.Set<uint64_t>(load + offsetof(Elf64_Phdr, p_filesz), b.size() + 1);
                 e.Set<uint64_t>(load + offsetof(Elf64_Phdr, p_memsz), b.size() + 1);
               },
               {"PT_LOAD program header 1", "p_filesz", "runs past the end of the file"}},
        Damage{"huge segment",
               [](std::vector<uint8_t>& b) {
                 ElfEditor e(b);
                 e.Set<uint64_t>(e.header().e_phoff + sizeof(Elf64_Phdr) + offsetof(Elf64_Phdr, p_memsz),
                                 uint64_t{1} << 40);
               },
               {"p_memsz 0x10000000000", "256 MiB"}},
        Damage{"file bytes beyond memory",
               [](std::vector<uint8_t>& b) {
                 ElfEditor e(b);
                 e.Set<uint64_t>(e.header().e_phoff + sizeof(Elf64_Phdr) + offsetof(Elf64_Phdr, p_memsz), 4);
               },
               {"p_filesz", "is larger than p_memsz 0x4"}},
        Damage{"overlapping segments",
               [](std::vector<uint8_t>& b) {
                 ElfEditor e(b);  // the code segment moved onto the read-only one
                 e.Set<uint64_t>(e.header().e_phoff + 2 * sizeof(Elf64_Phdr) + offsetof(Elf64_Phdr, p_vaddr), 0x100);
               },
               {"overlaps an earlier PT_LOAD segment"}},
        Damage{"section headers past the end",
               [](std::vector<uint8_t>& b) { ElfEditor(b).Set<uint64_t>(offsetof(Elf64_Ehdr, e_shoff), b.size()); },
               {"section header table", "runs past the end of the file"}},
        Damage{"cut before the section headers", [](std::vector<uint8_t>& b) { b.resize(b.size() - 1); },
               {"section header table", "runs past the end of the file"}},
        Damage{"bad e_shstrndx",
               [](std::vector<uint8_t>& b) { ElfEditor(b).Set<uint16_t>(offsetof(Elf64_Ehdr, e_shstrndx), 99); },
               {"e_shstrndx at offset 62 is 99", "only 14 sections"}},
        Damage{"section names not a string table",
               [](std::vector<uint8_t>& b) {
                 ElfEditor e(b);
                 e.Set<uint32_t>(e.SectionHeaderOffset(e.header().e_shstrndx) + offsetof(Elf64_Shdr, sh_type),
                                 SHT_PROGBITS);
               },
               {"named by e_shstrndx", "expected 3 (SHT_STRTAB)"}},
        Damage{"symbol size field",
               [](std::vector<uint8_t>& b) {
                 ElfEditor e(b);
                 e.Set<uint64_t>(e.SectionHeaderOffset(e.FindSection(".dynsym")) + offsetof(Elf64_Shdr, sh_entsize),
                                 16);
               },
               {"(.dynsym): sh_entsize is 16, expected 24"}},
        Damage{"symbol name out of bounds",
               [](std::vector<uint8_t>& b) {
                 ElfEditor e(b);
                 e.Set<uint32_t>(e.SymbolOffset(".symtab", "vector_add.kd") + offsetof(Elf64_Sym, st_name), 0x7fffff);
               },
               {"of .symtab", "st_name 0x7fffff is past the end of its string table"}},
        Damage{"unterminated string table",
               [](std::vector<uint8_t>& b) {
                 ElfEditor e(b);
                 const Elf64_Shdr dynstr = e.Section(e.FindSection(".dynstr"));
                 b[dynstr.sh_offset + dynstr.sh_size - 1] = 'x';
               },
               {".dynsym's sh_link", "does not end with a NUL byte"}},
        Damage{"tables disagree",
               [](std::vector<uint8_t>& b) {
                 ElfEditor e(b);
                 e.Set<uint64_t>(e.SymbolOffset(".dynsym", "vector_add.kd") + offsetof(Elf64_Sym, st_value), 0x640);
               },
               {"symbol vector_add.kd is", "in .dynsym but", "in .symtab"}},
        Damage{"no descriptor",
               [](std::vector<uint8_t>& b) { ElfEditor(b).RenameSymbol("vector_add.kd", "vector_add.kx"); },
               {"no kernel descriptors", "NAME.kd"}},
        Damage{"descriptor size",
               [](std::vector<uint8_t>& b) {
                 ElfEditor e(b);
                 for (const char* table : {".dynsym", ".symtab"}) {
                   e.Set<uint64_t>(e.SymbolOffset(table, "vector_add.kd") + offsetof(Elf64_Sym, st_size), 32);
                 }
               },
               {"kernel descriptor vector_add.kd", "is 32 bytes", "is 64"}},
        Damage{"descriptor outside the file",
               [](std::vector<uint8_t>& b) {
                 ElfEditor e(b);
                 for (const char* table : {".dynsym", ".symtab"}) {
                   e.Set<uint64_t>(e.SymbolOffset(table, "vector_add.kd") + offsetof(Elf64_Sym, st_value), 0x7fffc0);
                 }
               },
               {"vector_add.kd at 0x7fffc0", "not inside the file bytes of any PT_LOAD segment"}},
        Damage{"descriptor misaligned",
               [](std::vector<uint8_t>& b) {
                 ElfEditor e(b);
                 for (const char* table : {".dynsym", ".symtab"}) {
                   const size_t at = e.SymbolOffset(table, "vector_add.kd") + offsetof(Elf64_Sym, st_value);
                   e.Set<uint64_t>(at, e.Get<uint64_t>(at) - 8);
                 }
               },
               {"not 64-byte aligned"}},
        Damage{"entry misaligned",
               [](std::vector<uint8_t>& b) {
                 ElfEditor e(b);
                 const size_t at = e.DescriptorOffset("vector_add") + 16;
                 e.Set<int64_t>(at, e.Get<int64_t>(at) + 4);
               },
               {"kernel_code_entry_byte_offset at file offset", "not 256-byte aligned"}},
        Damage{"entry elsewhere",
               [](std::vector<uint8_t>& b) {
                 ElfEditor e(b);
                 const size_t at = e.DescriptorOffset("vector_add") + 16;
                 e.Set<int64_t>(at, e.Get<int64_t>(at) + 256);
               },
               {"is not symbol vector_add at 0x1700"}},
        Damage{"entry outside code",
               [](std::vector<uint8_t>& b) { ElfEditor(b).Set<int64_t>(ElfEditor(b).DescriptorOffset("vector_add") + 16, -0x600); },
               {"is -1536", "not inside an executable PT_LOAD segment"}},
        Damage{"entry before address 0",
               [](std::vector<uint8_t>& b) {
                 ElfEditor(b).Set<int64_t>(ElfEditor(b).DescriptorOffset("vector_add") + 16, INT64_MIN);
               },
               {"not inside an executable PT_LOAD segment"}},
        Damage{"reserved descriptor bits",
               [](std::vector<uint8_t>& b) { b[ElfEditor(b).DescriptorOffset("vector_add") + 30] = 1; },
               {"reserved bits 351:192", "are not 0"}},
        Damage{"reserved property bits",
               [](std::vector<uint8_t>& b) {
                 ElfEditor e(b);
                 const size_t at = e.DescriptorOffset("vector_add") + 56;
                 e.Set<uint16_t>(at, e.Get<uint16_t>(at) | 0x1000);
               },
               {"kernel_code_properties", "reserved bits 0x1000 are set"}},
        Damage{"kernarg preload",
               [](std::vector<uint8_t>& b) {
                 ElfEditor(b).Set<uint16_t>(ElfEditor(b).DescriptorOffset("vector_add") + 58, 2);
               },
               {"kernarg_preload", "is 0x2", "GFX90A/GFX940, not gfx1100"}},
        Damage{"too much LDS",
               [](std::vector<uint8_t>& b) {
                 ElfEditor(b).Set<uint32_t>(ElfEditor(b).DescriptorOffset("vector_add"), 65537);
               },
               {"group_segment_fixed_size", "65537 bytes of LDS", "at most 65536"}},
        Damage{"user SGPR count",
               [](std::vector<uint8_t>& b) {
                 ElfEditor e(b);
                 const size_t at = e.DescriptorOffset("vector_add") + 52;
                 e.Set<uint32_t>(at, (e.Get<uint32_t>(at) & ~0x3eu) | (1 << 1));
               },
               {"USER_SGPR_COUNT 1", "fewer than the 2 user SGPRs"}}),
    [](const ::testing::TestParamInfo<Damage>& info) {
      std::string name;
      for (const char* c = info.param.what; *c; ++c) name += std::isalnum(static_cast<unsigned char>(*c)) ? *c : '_';
      return name;
    });

// The unlinked object (ET_REL) of every corpus kernel, laid out and relocated by the parser, gives the kernels
// ld.lld-19 made of it: the same names, descriptors (but for the entry offset, which depends on the layout),
// metadata and code. generic's calls (R_AMDGPU_REL32_LO/HI within .text) make its code bytes a check of the
// relocation arithmetic too; every descriptor's entry offset is an R_AMDGPU_REL64.
TEST(CodeObjectTest, RelocatableObjectsGiveTheKernelsOfTheirLinkedCodeObjects) {
  for (const CorpusEntry& entry : kCorpusEntries) {
    SCOPED_TRACE(entry.stem());
    absl::StatusOr<CodeObject> linked = CodeObject::Parse(ReadCorpusFile(entry.code_object_path()), entry.stem());
    ASSERT_TRUE(linked.ok()) << linked.status();
    const std::vector<uint8_t> bytes = ReadCorpusFile(entry.relocatable_object_path());
    ASSERT_EQ(ElfEditor(const_cast<std::vector<uint8_t>&>(bytes)).header().e_type, ET_REL);
    absl::StatusOr<CodeObject> object = CodeObject::Parse(bytes, entry.stem() + ".o");
    ASSERT_TRUE(object.ok()) << object.status();
    EXPECT_TRUE(object->relocatable());
    EXPECT_FALSE(linked->relocatable());
    EXPECT_EQ(object->target(), "gfx1100");
    EXPECT_EQ(object->abi_version(), linked->abi_version());
    EXPECT_EQ(object->image_alignment(), 256u);  // .text's sh_addralign, the largest
    EXPECT_TRUE(object->absolute_relocations().empty());
    EXPECT_EQ(object->ImageAt(0x7fff'0000'0000), object->image());
    ASSERT_EQ(object->kernels().size(), linked->kernels().size());
    for (size_t k = 0; k < object->kernels().size(); ++k) {
      const CodeObject::Kernel& got = object->kernels()[k];
      const CodeObject::Kernel& want = linked->kernels()[k];
      SCOPED_TRACE(want.name);
      EXPECT_EQ(got.name, want.name);
      EXPECT_EQ(got.entry_offset % 256, 0u);
      EXPECT_EQ(got.descriptor_offset % 64, 0u);
      EXPECT_EQ(got.entry_offset, got.descriptor_offset + got.descriptor.kernel_code_entry_byte_offset);
      KernelDescriptor got_descriptor = got.descriptor, want_descriptor = want.descriptor;
      got_descriptor.kernel_code_entry_byte_offset = want_descriptor.kernel_code_entry_byte_offset = 0;
      EXPECT_EQ(std::memcmp(&got_descriptor, &want_descriptor, sizeof(KernelDescriptor)), 0);
      EXPECT_EQ(std::memcmp(object->image().data() + got.descriptor_offset, &got.descriptor, 64), 0);
      EXPECT_EQ(got.kernarg_size(), want.kernarg_size());
      EXPECT_EQ(got.has_metadata, want.has_metadata);
      EXPECT_EQ(got.required_workgroup_size, want.required_workgroup_size);
      ASSERT_EQ(got.arguments.size(), want.arguments.size());
      for (size_t a = 0; a < got.arguments.size(); ++a) {
        EXPECT_EQ(got.arguments[a].value_kind, want.arguments[a].value_kind) << a;
        EXPECT_EQ(got.arguments[a].offset, want.arguments[a].offset) << a;
        EXPECT_EQ(got.arguments[a].size, want.arguments[a].size) << a;
      }
      ASSERT_GT(want.code_size, 0u);
      ASSERT_EQ(got.code_size, want.code_size);
      ASSERT_LE(got.entry_offset + got.code_size, object->image().size());
      EXPECT_TRUE(std::equal(object->image().begin() + got.entry_offset,
                             object->image().begin() + got.entry_offset + got.code_size,
                             linked->image().begin() + want.entry_offset))
          << "code bytes at the entry differ";
    }
  }
}

// relocations.ll, compiled by llc-19 and not linked: its code reaches @table through s_getpc_b64 and an
// R_AMDGPU_REL32_LO/HI pair, and @table holds @values' address (R_AMDGPU_ABS64), which depends on where the image
// is loaded: image() has it for address 0, ImageAt for any other.
TEST(CodeObjectTest, RelocatableObjectWithDataRelocations) {
  const std::vector<uint8_t> bytes = ReadCorpusFile(std::string(kCorpusDir) + "/relocations.elf");
  ASSERT_FALSE(bytes.empty());
  absl::StatusOr<CodeObject> object = CodeObject::Parse(bytes, "relocations.elf");
  ASSERT_TRUE(object.ok()) << object.status();
  ASSERT_EQ(object->kernels().size(), 1u);
  const CodeObject::Kernel& kernel = object->kernels()[0];
  EXPECT_EQ(kernel.name, "indirect");
  ASSERT_EQ(kernel.arguments.size() > 0, true);
  EXPECT_EQ(kernel.arguments[0].value_kind, "global_buffer");
  const std::vector<uint8_t>& image = object->image();
  auto word = [&](const std::vector<uint8_t>& from, uint64_t at) {
    uint32_t w;
    std::memcpy(&w, from.data() + at, 4);
    return w;
  };
  // s_getpc_b64 s[0:1] (BE804700); s_add_u32 s0, s0, lit (8000FF00 lit); s_addc_u32 s1, s1, lit (8201FF01 lit):
  // s[0:1] = entry + 4 + the 64-bit sum of the literals, @table's address.
  ASSERT_EQ(word(image, kernel.entry_offset), 0xBE804700u);
  ASSERT_EQ(word(image, kernel.entry_offset + 4), 0x8000FF00u);
  ASSERT_EQ(word(image, kernel.entry_offset + 12), 0x8201FF01u);
  const uint64_t displacement = word(image, kernel.entry_offset + 8) | uint64_t{word(image, kernel.entry_offset + 16)}
                                                                           << 32;
  const uint64_t table = kernel.entry_offset + 4 + displacement;
  ASSERT_LE(table + 8, image.size());
  const std::array<uint32_t, 4> kValues = {11, 22, 33, 44};
  const auto values_bytes = reinterpret_cast<const uint8_t*>(kValues.data());
  const auto found = std::search(image.begin(), image.end(), values_bytes, values_bytes + sizeof(kValues));
  ASSERT_NE(found, image.end());
  const uint64_t values = static_cast<uint64_t>(found - image.begin());
  uint64_t pointer;
  std::memcpy(&pointer, image.data() + table, 8);
  EXPECT_EQ(pointer, values);
  ASSERT_EQ(object->absolute_relocations().size(), 1u);
  EXPECT_EQ(object->absolute_relocations()[0].offset, table);
  EXPECT_EQ(object->absolute_relocations()[0].type, kRAmdgpuAbs64);
  const uint64_t load_address = 0x7fff'1234'5000;
  const std::vector<uint8_t> loaded = object->ImageAt(load_address);
  std::memcpy(&pointer, loaded.data() + table, 8);
  EXPECT_EQ(pointer, load_address + values);
  // Nothing else changes with the address.
  std::vector<uint8_t> rest = loaded;
  std::memcpy(rest.data() + table, image.data() + table, 8);
  EXPECT_EQ(rest, image);
}

// One damaged copy of vector_add-O2.o (ET_REL: .text is section 2, .rodata 3, .rela.rodata 4 with one
// R_AMDGPU_REL64 at .rodata offset 0x10 against symbol 1, vector_add) per case, and the words its error must contain.
class RelocatableDamageTest : public ::testing::TestWithParam<Damage> {};

// The file offset of the only relocation of .rela.rodata.
size_t RelocationAt(const std::vector<uint8_t>& b) {
  ElfEditor e(const_cast<std::vector<uint8_t>&>(b));
  return e.Section(e.FindSection(".rela.rodata")).sh_offset;
}
size_t SectionField(std::vector<uint8_t>& b, const std::string& section, size_t field) {
  ElfEditor e(b);
  return e.SectionHeaderOffset(e.FindSection(section)) + field;
}

TEST_P(RelocatableDamageTest, IsRefusedWithAnErrorNamingIt) {
  std::vector<uint8_t> bytes = VectorAddO2Relocatable();
  ASSERT_FALSE(bytes.empty());
  {
    // The layout the cases assume.
    ElfEditor e(bytes);
    ASSERT_EQ(e.FindSection(".text"), 2u);
    ASSERT_EQ(e.FindSection(".rodata"), 3u);
    ASSERT_EQ(e.FindSection(".rela.rodata"), 4u);
    const auto rela = e.Get<Elf64_Rela>(RelocationAt(bytes));
    ASSERT_EQ(rela.r_offset, 0x10u);
    ASSERT_EQ(rela.r_info, ELF64_R_INFO(1, kRAmdgpuRel64));
  }
  GetParam().apply(bytes);
  absl::StatusOr<CodeObject> object = Parse(bytes);
  ASSERT_FALSE(object.ok()) << GetParam().what;
  EXPECT_EQ(object.status().code(), absl::StatusCode::kInvalidArgument);
  const std::string message(object.status().message());
  EXPECT_TRUE(absl::StartsWith(message, "test.co: ")) << message;
  for (const char* word : GetParam().expected) EXPECT_TRUE(absl::StrContains(message, word)) << message;
}

INSTANTIATE_TEST_SUITE_P(
    Fields, RelocatableDamageTest,
    ::testing::Values(
        Damage{"undefined symbol",
               [](std::vector<uint8_t>& b) {
                 ElfEditor e(b);
                 e.Set<uint16_t>(e.SymbolOffset(".symtab", "vector_add") + offsetof(Elf64_Sym, st_shndx), SHN_UNDEF);
               },
               {"symbol 1 (vector_add) of .symtab is undefined (SHN_UNDEF)", "nothing defines it",
                "relocation 0 of section 4 (.rela.rodata)", "at offset 0x10 of section 3 (.rodata)"}},
        Damage{"symbol in a section that is not loaded",
               [](std::vector<uint8_t>& b) {
                 ElfEditor e(b);
                 e.Set<uint16_t>(e.SymbolOffset(".symtab", "vector_add") + offsetof(Elf64_Sym, st_shndx),
                                 e.FindSection(".comment"));
               },
               {"symbol 1 (vector_add) of .symtab is in section 5 (.comment), which is not loaded"}},
        Damage{"symbol past its section",
               [](std::vector<uint8_t>& b) {
                 ElfEditor e(b);
                 e.Set<uint64_t>(e.SymbolOffset(".symtab", "vector_add") + offsetof(Elf64_Sym, st_value), 0x1000);
               },
               {"symbol 1 (vector_add) of .symtab: st_value 0x1000 is past the end of section 2 (.text) (640 bytes)"}},
        Damage{"symbol section index",
               [](std::vector<uint8_t>& b) {
                 ElfEditor e(b);
                 e.Set<uint16_t>(e.SymbolOffset(".symtab", "vector_add") + offsetof(Elf64_Sym, st_shndx), 99);
               },
               {"symbol 1 (vector_add) of .symtab: st_shndx 0x63 names no section (there are 10"}},
        Damage{"unsupported relocation type",
               [](std::vector<uint8_t>& b) {
                 ElfEditor(b).Set<uint64_t>(RelocationAt(b) + offsetof(Elf64_Rela, r_info),
                                            ELF64_R_INFO(1, kRAmdgpuGotPcRel));
               },
               {"relocation 0 of section 4 (.rela.rodata) (file offset 0x770), at offset 0x10 of section 3 (.rodata)",
                "relocation type 7 (R_AMDGPU_GOTPCREL) is not supported"}},
        Damage{"unknown relocation type",
               [](std::vector<uint8_t>& b) {
                 ElfEditor(b).Set<uint64_t>(RelocationAt(b) + offsetof(Elf64_Rela, r_info), ELF64_R_INFO(1, 200));
               },
               {"relocation type 200 (not an AMDGPU relocation type) is not supported"}},
        Damage{"relocation past its section",
               [](std::vector<uint8_t>& b) {
                 ElfEditor(b).Set<uint64_t>(RelocationAt(b) + offsetof(Elf64_Rela, r_offset), 0x40);
               },
               {"at offset 0x40 of section 3 (.rodata)",
                "the 8 bytes of R_AMDGPU_REL64 run past the end of the section (68 bytes)"}},
        Damage{"relocation offset wraps",
               [](std::vector<uint8_t>& b) {
                 ElfEditor(b).Set<uint64_t>(RelocationAt(b) + offsetof(Elf64_Rela, r_offset), ~uint64_t{3});
               },
               {"at offset 0xfffffffffffffffc of section 3 (.rodata)", "run past the end of the section"}},
        Damage{"relocation symbol index",
               [](std::vector<uint8_t>& b) {
                 ElfEditor(b).Set<uint64_t>(RelocationAt(b) + offsetof(Elf64_Rela, r_info),
                                            ELF64_R_INFO(99, kRAmdgpuRel64));
               },
               {"symbol index 99 is past the end of .symtab (4 symbols)"}},
        Damage{"relocated entry outside the code",
               [](std::vector<uint8_t>& b) {
                 ElfEditor e(b);  // vector_add + 0x410 - (kd + 0x10): past .text (0x280 bytes) and .rodata
                 e.Set<int64_t>(RelocationAt(b) + offsetof(Elf64_Rela, r_addend), 0x410);
               },
               {"kernel_code_entry_byte_offset", "not inside an executable SHF_ALLOC section"}},
        Damage{"REL32 overflow",
               [](std::vector<uint8_t>& b) {
                 ElfEditor e(b);
                 e.Set<uint64_t>(RelocationAt(b) + offsetof(Elf64_Rela, r_info), ELF64_R_INFO(1, kRAmdgpuRel32));
                 e.Set<int64_t>(RelocationAt(b) + offsetof(Elf64_Rela, r_addend), int64_t{1} << 40);
               },
               {"R_AMDGPU_REL32 value", "does not fit in 32 bits"}},
        Damage{"relocations without addends",
               [](std::vector<uint8_t>& b) {
                 ElfEditor(b).Set<uint32_t>(SectionField(b, ".rela.rodata", offsetof(Elf64_Shdr, sh_type)), SHT_REL);
               },
               {"relocation section 4 (.rela.rodata) for section 3 (.rodata) is SHT_REL"}},
        Damage{"relocation target",
               [](std::vector<uint8_t>& b) {
                 ElfEditor(b).Set<uint32_t>(SectionField(b, ".rela.rodata", offsetof(Elf64_Shdr, sh_info)), 99);
               },
               {"relocation section 4 (.rela.rodata): sh_info 99 names no section to relocate (there are 10)"}},
        Damage{"relocation entry size",
               [](std::vector<uint8_t>& b) {
                 ElfEditor(b).Set<uint64_t>(SectionField(b, ".rela.rodata", offsetof(Elf64_Shdr, sh_entsize)), 16);
               },
               {"relocation section 4 (.rela.rodata): sh_entsize is 16, expected 24"}},
        Damage{"relocations past the end of the file",
               [](std::vector<uint8_t>& b) {
                 ElfEditor(b).Set<uint64_t>(SectionField(b, ".rela.rodata", offsetof(Elf64_Shdr, sh_size)),
                                            0x1000 * sizeof(Elf64_Rela));
               },
               {"relocation section 4 (.rela.rodata): sh_offset 0x770 + sh_size 0x18000 is not whole relocations"}},
        Damage{"relocation symbol table",
               [](std::vector<uint8_t>& b) {
                 ElfEditor(b).Set<uint32_t>(SectionField(b, ".rela.rodata", offsetof(Elf64_Shdr, sh_link)), 2);
               },
               {"relocation section 4 (.rela.rodata): sh_link 2 is not a symbol table section"}},
        Damage{"section past the end of the file",
               [](std::vector<uint8_t>& b) {
                 ElfEditor(b).Set<uint64_t>(SectionField(b, ".text", offsetof(Elf64_Shdr, sh_offset)), b.size() - 8);
               },
               {"section 2 (.text) (header at offset", "sh_size 0x280 runs past the end of the file"}},
        Damage{"section size wraps",
               [](std::vector<uint8_t>& b) {
                 ElfEditor(b).Set<uint64_t>(SectionField(b, ".text", offsetof(Elf64_Shdr, sh_size)), ~uint64_t{0});
               },
               {"section 2 (.text)", "sh_size 0xffffffffffffffff runs past the end of the file"}},
        Damage{"huge zero-filled section",
               [](std::vector<uint8_t>& b) {
                 ElfEditor e(b);  // .rodata as SHT_NOBITS: no file bytes, and 1 TiB of memory
                 e.Set<uint32_t>(SectionField(b, ".rodata", offsetof(Elf64_Shdr, sh_type)), SHT_NOBITS);
                 e.Set<uint64_t>(SectionField(b, ".rodata", offsetof(Elf64_Shdr, sh_size)), uint64_t{1} << 40);
               },
               {"section 3 (.rodata)", "placed at image offset 0x280", "ends beyond the 256 MiB"}},
        Damage{"misaligned sh_addralign",
               [](std::vector<uint8_t>& b) {
                 ElfEditor(b).Set<uint64_t>(SectionField(b, ".rodata", offsetof(Elf64_Shdr, sh_addralign)), 96);
               },
               {"section 3 (.rodata) (header at offset", "sh_addralign 0x60 is not a power of two up to 0x10000000"}},
        Damage{"oversized sh_addralign",
               [](std::vector<uint8_t>& b) {
                 ElfEditor(b).Set<uint64_t>(SectionField(b, ".text", offsetof(Elf64_Shdr, sh_addralign)),
                                            uint64_t{1} << 40);
               },
               {"section 2 (.text)", "sh_addralign 0x10000000000 is not a power of two up to 0x10000000"}},
        Damage{"nothing to load",
               [](std::vector<uint8_t>& b) {
                 ElfEditor e(b);
                 for (size_t i = 0; i < e.header().e_shnum; ++i) {
                   const size_t at = e.SectionHeaderOffset(i) + offsetof(Elf64_Shdr, sh_flags);
                   e.Set<uint64_t>(at, e.Get<uint64_t>(at) & ~uint64_t{SHF_ALLOC});
                 }
               },
               {"no SHF_ALLOC section among 10: nothing to load"}}),
    [](const ::testing::TestParamInfo<Damage>& info) {
      std::string name;
      for (const char* c = info.param.what; *c; ++c) name += std::isalnum(static_cast<unsigned char>(*c)) ? *c : '_';
      return name;
    });

TEST(CodeObjectTest, EveryTruncationIsRefused) {
  for (const std::vector<uint8_t>& whole : {VectorAddO2(), VectorAddO2Relocatable()}) {
    ASSERT_FALSE(whole.empty());
    for (size_t length = 0; length < whole.size(); ++length) {
      std::vector<uint8_t> cut(whole.begin(), whole.begin() + length);
      EXPECT_FALSE(Parse(cut).ok()) << "cut to " << length << " of " << whole.size() << " bytes";
    }
  }
}

// Thousands of random damages to each corpus object, linked and relocatable: the parser must return (ASan checks every
// read), and what it accepts must be self-consistent.
TEST(CodeObjectTest, RandomMutationsNeverCrashOrEscapeTheImage) {
  std::mt19937_64 random(20260612);
  int accepted = 0, refused = 0;
  std::vector<std::string> paths;
  for (const CorpusEntry& entry : kCorpusEntries) {
    paths.push_back(entry.code_object_path());
    paths.push_back(entry.relocatable_object_path());
  }
  for (size_t index = 0; index < paths.size(); ++index) {
    const CorpusEntry& entry = kCorpusEntries[index / 2];
    const std::vector<uint8_t> original = ReadCorpusFile(paths[index]);
    ASSERT_FALSE(original.empty());
    for (int round = 0; round < 400; ++round) {
      std::vector<uint8_t> bytes = original;
      const int edits = 1 + random() % 4;
      for (int e = 0; e < edits; ++e) {
        switch (random() % 4) {
          case 0:  // a random byte anywhere
            bytes[random() % bytes.size()] = random();
            break;
          case 1: {  // an extreme 64-bit value at an 8-byte boundary (offsets, sizes, addresses in the tables)
            const uint64_t values[] = {0, ~uint64_t{0}, uint64_t{1} << 63, bytes.size(), bytes.size() - 1, 0x40};
            if (bytes.size() < 8) break;
            const size_t at = (random() % (bytes.size() / 8)) * 8;
            std::memcpy(bytes.data() + at, &values[random() % 6], 8);
            break;
          }
          case 2:  // a flipped bit in the first 4 KiB (the headers, the symbol and string tables, descriptors)
            bytes[random() % std::min<size_t>(bytes.size(), 4096)] ^= 1 << (random() % 8);
            break;
          default:  // a cut
            bytes.resize(random() % bytes.size() + 1);
            break;
        }
      }
      absl::StatusOr<CodeObject> object = CodeObject::Parse(bytes, entry.stem());
      if (!object.ok()) {
        ++refused;
        EXPECT_TRUE(absl::StartsWith(object.status().message(), entry.stem() + ": ")) << object.status();
        continue;
      }
      ++accepted;
      EXPECT_LE(object->image().size(), uint64_t{256} << 20);
      for (const CodeObject::Kernel& kernel : object->kernels()) {
        EXPECT_LE(kernel.descriptor_offset + 64, object->image().size());
        EXPECT_LT(kernel.entry_offset, object->image().size());
        EXPECT_EQ(kernel.entry_offset % 256, 0u);
      }
    }
  }
  // Both outcomes happen: bytes outside what the parser reads (code, notes) leave the object valid.
  EXPECT_GT(accepted, 0);
  EXPECT_GT(refused, 0);
}

}  // namespace
}  // namespace am
