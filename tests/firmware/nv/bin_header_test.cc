// nvfw_bin_hdr (include/nvfw/fw.h) on synthetic files: six u32s, magic 0x10de, a payload that must lie in the file.
#include "firmware/nv/bin_header.h"

#include "absl/strings/match.h"
#include "gtest/gtest.h"
#include "tests/firmware/nv/nv_firmware.h"

namespace firmware::nv {
namespace {

using testing::Bytes;

// magic, version 1, bin_size, header at 0x18, payload at 0x20 of 0x10 bytes: a 0x30-byte file.
Bytes Valid() { return Bytes(0x30).U32(0, 0x10de).U32(4, 1).U32(8, 0x30).U32(12, 0x18).U32(16, 0x20).U32(20, 0x10); }

absl::StatusOr<BinFile> Parse(const Bytes& b) { return ParseBinFile(ByteReader("t.bin", b.str())); }

TEST(BinHeaderTest, ReadsTheSixFields) {
  absl::StatusOr<BinFile> f = Parse(Valid());
  ASSERT_TRUE(f.ok()) << f.status();
  EXPECT_EQ(f->header.bin_magic, 0x10deu);
  EXPECT_EQ(f->header.bin_ver, 1u);
  EXPECT_EQ(f->header.header_offset, 0x18u);
  EXPECT_EQ(f->header.data_offset, 0x20u);
  EXPECT_EQ(f->header.data_size, 0x10u);
  EXPECT_TRUE(f->notes.empty());
}

// The real files' bin_size differs from their length; that is shown, not refused.
TEST(BinHeaderTest, BinSizeOtherThanTheFileLengthIsANote) {
  absl::StatusOr<BinFile> f = Parse(Valid().U32(8, 0x100));
  ASSERT_TRUE(f.ok()) << f.status();
  ASSERT_EQ(f->notes.size(), 1u);
  EXPECT_TRUE(absl::StrContains(f->notes[0], "bin_size 0x100 is not the file's length 0x30")) << f->notes[0];
}

TEST(BinHeaderTest, TruncatedHeader) {
  absl::StatusOr<BinFile> f = Parse(Bytes(20).U32(0, 0x10de));
  ASSERT_FALSE(f.ok());
  EXPECT_EQ(f.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_TRUE(absl::StrContains(f.status().message(), "20 bytes is shorter than nvfw_bin_hdr (24 bytes)"))
      << f.status();
}

TEST(BinHeaderTest, WrongMagic) {
  absl::StatusOr<BinFile> f = Parse(Valid().U32(0, 0x1002));
  ASSERT_FALSE(f.ok());
  EXPECT_TRUE(absl::StrContains(f.status().message(), "bin_magic at offset 0 is 0x1002, not 0x10de")) << f.status();
}

TEST(BinHeaderTest, PayloadPastTheEnd) {
  absl::StatusOr<BinFile> f = Parse(Valid().U32(20, 0x11));
  ASSERT_FALSE(f.ok());
  EXPECT_TRUE(absl::StrContains(f.status().message(),
                                "payload (nvfw_bin_hdr.data_offset, nvfw_bin_hdr.data_size) spans 0x20..0x31"))
      << f.status();
}

// data_offset + data_size overflows 32 bits: still refused (the sum is taken in 64 bits).
TEST(BinHeaderTest, PayloadSizeThatWrapsIsRefused) {
  absl::StatusOr<BinFile> f = Parse(Valid().U32(16, 0x20).U32(20, 0xffffffe0));
  ASSERT_FALSE(f.ok());
  EXPECT_TRUE(absl::StrContains(f.status().message(), "past the end of the file at 0x30")) << f.status();
}

TEST(BinHeaderTest, HeaderOffsetPastTheEnd) {
  absl::StatusOr<BinFile> f = Parse(Valid().U32(12, 0x30));
  ASSERT_FALSE(f.ok());
  EXPECT_TRUE(absl::StrContains(f.status().message(), "header_offset 0x30 (at offset 0xc) is not inside the file"))
      << f.status();
}

TEST(BinHeaderTest, HeaderOffsetInsideTheBinHeader) {
  absl::StatusOr<BinFile> f = Parse(Valid().U32(12, 4));
  ASSERT_FALSE(f.ok());
  EXPECT_TRUE(absl::StrContains(f.status().message(), "header_offset 0x4")) << f.status();
}

TEST(BinHeaderTest, Sniffing) {
  EXPECT_TRUE(HasBinMagic(Valid().str()));
  EXPECT_FALSE(HasBinMagic(Bytes(3).str()));
  EXPECT_FALSE(HasBinMagic(Bytes(8).U32(0, 0x464c457f).str()));
}

}  // namespace
}  // namespace firmware::nv
