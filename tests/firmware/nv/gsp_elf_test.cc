// The GSP-RM image (ELF64, elf.h's Elf64_Ehdr/Elf64_Shdr) on synthetic files with the real image's section names
// and odd section offsets.
#include "firmware/nv/gsp_elf.h"

#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "firmware/nv/file_kind.h"
#include "gtest/gtest.h"
#include "tests/firmware/nv/nv_firmware.h"

namespace firmware::nv {
namespace {

using testing::Bytes;

struct Section {
  std::string name;
  std::string contents;
  uint32_t type = 1;  // SHT_PROGBITS
};

// Sections back to back from offset 64 (unaligned after an odd-sized one, as in the real file), then the
// section-name string table, then the section header table.
Bytes Elf(const std::vector<Section>& sections) {
  Bytes b(64);
  b.Text(0, std::string("\x7f"
                        "ELF",
                        4))
      .Text(4, std::string("\x02\x01\x01", 3));
  b.U16(16, 1).U16(18, 243).U32(20, 1);
  std::string names(1, '\0');
  std::vector<uint64_t> offsets, name_offsets;
  size_t at = 64;
  for (const Section& s : sections) {
    name_offsets.push_back(names.size());
    names += s.name + '\0';
    offsets.push_back(at);
    b.Text(at, s.contents);
    at += s.contents.size();
  }
  const uint32_t shstrtab_name = static_cast<uint32_t>(names.size());
  names += std::string(".shstrtab") + '\0';
  const size_t names_at = at;
  b.Text(names_at, names);
  const size_t shoff = (names_at + names.size() + 7) & ~size_t{7};
  const uint16_t count = static_cast<uint16_t>(sections.size() + 2);  // NULL section first, .shstrtab last
  b.Resize(shoff + count * 64);
  b.U64(40, shoff).U16(52, 64).U16(58, 64).U16(60, count).U16(62, count - 1);
  for (size_t i = 0; i < sections.size(); ++i) {
    const size_t h = shoff + (i + 1) * 64;
    b.U32(h, static_cast<uint32_t>(name_offsets[i])).U32(h + 4, sections[i].type);
    b.U64(h + 24, offsets[i]).U64(h + 32, sections[i].contents.size());
  }
  const size_t h = shoff + (count - 1) * 64;
  b.U32(h, shstrtab_name).U32(h + 4, 3).U64(h + 24, names_at).U64(h + 32, names.size());
  return b;
}

std::vector<Section> RealNames() {
  return {{".fwimage", std::string(0x101, 'i')},
          {".fwversion", std::string("535.113.01\0", 11)},
          {".fwsignature_ad10x", std::string(0x40, 's')},
          {".fwsignature_ga10x", std::string(0x40, 't')}};
}

// The file offset of section `index`'s header (e_shoff at offset 40).
size_t SectionHeader(const Bytes& b, int index) {
  uint64_t shoff = 0;
  for (int i = 0; i < 8; ++i) shoff |= uint64_t{static_cast<uint8_t>(b.str()[40 + i])} << (8 * i);
  return shoff + index * 64;
}

void ExpectError(const Bytes& b, absl::string_view expected) {
  absl::StatusOr<GspImage> r = ParseGspImage("gsp-1.bin", b.str());
  ASSERT_FALSE(r.ok()) << "accepted; expected: " << expected;
  EXPECT_EQ(r.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_TRUE(absl::StrContains(r.status().message(), expected)) << r.status();
}

TEST(GspElfTest, FindsTheSectionsByName) {
  const Bytes b = Elf(RealNames());
  absl::StatusOr<GspImage> g = ParseGspImage("gsp-1.bin", b.str());
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_EQ(g->fw_version, "535.113.01");
  EXPECT_EQ(g->signature_families, (std::vector<std::string>{"ad10x", "ga10x"}));
  const ElfSection* image = g->Find(".fwimage");
  ASSERT_NE(image, nullptr);
  EXPECT_EQ(image->offset, 64u);
  EXPECT_EQ(image->size, 0x101u);
  const ElfSection* version = g->Find(".fwversion");
  ASSERT_NE(version, nullptr);
  EXPECT_EQ(version->offset, 64u + 0x101);  // odd: read byte-wise
  EXPECT_EQ(g->machine, kEmRiscv);
  ASSERT_EQ(g->notes.size(), 1u);
  EXPECT_TRUE(absl::StrContains(g->notes[0], "not 4-byte aligned"));
}

TEST(GspElfTest, NotElf) { ExpectError(Bytes(64).U32(0, 0x10de), "does not start with the ELF magic"); }

TEST(GspElfTest, TruncatedHeader) {
  ExpectError(Bytes(8).Text(0, std::string("\x7f"
                                           "ELF\x02\x01",
                                           6)),
              "the ELF64 header (Elf64_Ehdr, 64 bytes) spans");
}

TEST(GspElfTest, Elf32IsRefused) {
  ExpectError(Elf(RealNames()).Text(4, std::string("\x01", 1)), "ELF class 1, data encoding 1");
}

TEST(GspElfTest, SectionTablePastTheEnd) {
  ExpectError(Elf(RealNames()).U64(40, 0xfffffffffffffff0),
              "the section header table (e_shoff, 6 entries of 64 bytes)");
}

TEST(GspElfTest, StringTableIndexOutOfRange) { ExpectError(Elf(RealNames()).U16(62, 6), "e_shnum 6 / e_shstrndx 6"); }

TEST(GspElfTest, WrongSectionHeaderSize) { ExpectError(Elf(RealNames()).U16(58, 40), "e_shentsize is 40"); }

TEST(GspElfTest, SectionPastTheEnd) {
  Bytes b = Elf(RealNames());
  b.U64(SectionHeader(b, 1) + 32, 0x7fffffffffffffff);  // .fwimage's sh_size
  ExpectError(b, "section 1 (sh_offset, sh_size) spans");
}

TEST(GspElfTest, NameNotInsideTheStringTable) {
  Bytes b = Elf(RealNames());
  b.U32(SectionHeader(b, 2), 0x10000);  // .fwversion's sh_name
  ExpectError(b, "section 2's name (sh_name 0x10000) is not a NUL-terminated string");
}

TEST(GspElfTest, MissingImage) {
  std::vector<Section> s = RealNames();
  s[0].name = ".text";
  ExpectError(Elf(s), "no .fwimage section");
}

TEST(GspElfTest, MissingSignatures) {
  std::vector<Section> s = RealNames();
  s.resize(2);
  ExpectError(Elf(s), "no .fwsignature_* section");
}

// A SHT_NOBITS section has no file bytes, so its offset is not checked, and no byte range is reported for it (the
// fuzzer's finding: DescribeNvFile listed one 4 GiB past the end, and fw info hashed it).
TEST(GspElfTest, NobitsSectionIsNoRegion) {
  std::vector<Section> s = RealNames();
  s.push_back({".bss", "", 8});  // SHT_NOBITS
  Bytes b = Elf(s);
  b.U64(SectionHeader(b, 5) + 24, 0x100000000).U64(SectionHeader(b, 5) + 32, 0x1000);
  absl::StatusOr<GspImage> g = ParseGspImage("gsp-1.bin", b.str());
  ASSERT_TRUE(g.ok()) << g.status();
  ASSERT_NE(g->Find(".bss"), nullptr);
  absl::StatusOr<NvFileInfo> info = DescribeNvFile("gsp-1.bin", b.str(), NvFileKind::kGspRm);
  ASSERT_TRUE(info.ok()) << info.status();
  for (const NvRegion& r : info->regions) {
    EXPECT_NE(r.name, ".bss");
    EXPECT_LE(r.offset + r.size, b.size()) << r.name;
  }
}

}  // namespace
}  // namespace firmware::nv
