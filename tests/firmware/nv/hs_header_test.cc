// Booters (nvfw_bin_hdr + nvfw_hs_header_v2 + nvfw_hs_load_header_v2, include/nvfw/hs.h) on synthetic files laid out
// like the real ones: four header fields are file offsets of the values (patch_loc, patch_sig, num_sig, meta data).
#include "firmware/nv/hs_header.h"

#include "absl/strings/match.h"
#include "gtest/gtest.h"
#include "tests/firmware/nv/nv_firmware.h"

namespace firmware::nv {
namespace {

using testing::Bytes;

constexpr uint32_t kHs = 0x18;    // nvfw_hs_header_v2
constexpr uint32_t kLoad = 0x78;  // nvfw_hs_load_header_v2
constexpr uint32_t kData = 0x100;

Bytes Valid() {
  Bytes b(0x300);
  b.U32(0, 0x10de).U32(4, 1).U32(8, 0x300).U32(12, kHs).U32(16, kData).U32(20, 0x200);
  b.U32(kHs + 0, 0x40)      // sig_prod_offset
      .U32(kHs + 4, 0x20)   // sig_prod_size: two 16-byte signatures
      .U32(kHs + 8, 0x60)   // patch_loc -> 0x110
      .U32(kHs + 12, 0x64)  // patch_sig -> 0
      .U32(kHs + 16, 0x68)  // meta_data_offset
      .U32(kHs + 20, 0xc)   // meta_data_size
      .U32(kHs + 24, 0x74)  // num_sig -> 2
      .U32(kHs + 28, kLoad)
      .U32(kHs + 32, 0x24);  // header_size: as in the real files, 8 bytes more than one app needs
  b.U32(0x60, 0x110).U32(0x64, 0).U32(0x68, 1).U32(0x6c, 1).U32(0x70, 3).U32(0x74, 2);
  b.U32(kLoad + 0, 0)         // os_code_offset
      .U32(kLoad + 4, 0x40)   // os_code_size
      .U32(kLoad + 8, 0x100)  // os_data_offset
      .U32(kLoad + 12, 0x100)
      .U32(kLoad + 16, 1)      // num_apps
      .U32(kLoad + 20, 0x40)   // app[0].offset
      .U32(kLoad + 24, 0xc0);  // app[0].size
  return b;
}

absl::StatusOr<Booter> Parse(const Bytes& b) { return ParseBooter("booter_load-1.bin", b.str()); }

void ExpectError(const Bytes& b, absl::string_view expected) {
  absl::StatusOr<Booter> r = Parse(b);
  ASSERT_FALSE(r.ok()) << "accepted; expected: " << expected;
  EXPECT_EQ(r.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_TRUE(absl::StrContains(r.status().message(), expected)) << r.status();
}

TEST(HsHeaderTest, FollowsTheIndirectFields) {
  absl::StatusOr<Booter> b = Parse(Valid());
  ASSERT_TRUE(b.ok()) << b.status();
  EXPECT_EQ(b->hs.patch_loc, 0x60u);  // the field: where the value is
  EXPECT_EQ(b->patch_loc, 0x110u);    // the value
  EXPECT_EQ(b->patch_sig, 0u);
  EXPECT_EQ(b->num_sig, 2u);
  EXPECT_EQ(b->sig_size, 0x10u);
  EXPECT_EQ(b->fuse_ver, 1u);
  EXPECT_EQ(b->engine_id, 1u);
  EXPECT_EQ(b->ucode_id, 3u);
  EXPECT_EQ(b->load.os_data_offset, 0x100u);
  ASSERT_EQ(b->load.apps.size(), 1u);
  EXPECT_EQ(b->load.apps[0].offset, 0x40u);
  EXPECT_EQ(b->load.apps[0].size, 0xc0u);
  ASSERT_EQ(b->notes.size(), 1u);
  EXPECT_TRUE(absl::StrContains(b->notes[0], "header_size 36 is 8 bytes more")) << b->notes[0];
}

// fuse_ver 3 with two signatures: a chip fused at 1 would take signature 2 (ga100_flcn_fw_signature); noted.
TEST(HsHeaderTest, FuseVersionBeyondTheSignaturesIsANote) {
  absl::StatusOr<Booter> b = Parse(Valid().U32(0x68, 3));
  ASSERT_TRUE(b.ok()) << b.status();
  bool noted = false;
  for (const std::string& n : b->notes) noted |= absl::StrContains(n, "would select signature 2, which the file lacks");
  EXPECT_TRUE(noted);
}

TEST(HsHeaderTest, HsHeaderPastTheEnd) {
  // header_offset leaves 20 of nvfw_hs_header_v2's 36 bytes in the file.
  ExpectError(Valid().U32(12, 0x300 - 20), "nvfw_hs_header_v2 (at nvfw_bin_hdr.header_offset, 36 bytes) spans");
}

TEST(HsHeaderTest, PatchLocPointsPastTheEnd) {
  ExpectError(Valid().U32(kHs + 8, 0x2fe), "field *nvfw_hs_header_v2.patch_loc spans 0x2fe..0x302");
}

TEST(HsHeaderTest, ZeroSignatures) { ExpectError(Valid().U32(0x74, 0), "the signature count"); }

TEST(HsHeaderTest, SignaturesOfUnequalSize) {
  ExpectError(Valid().U32(0x74, 3), "sig_prod_size 0x20 does not divide into 3 signatures");
}

TEST(HsHeaderTest, SignaturesPastTheEnd) {
  ExpectError(Valid().U32(kHs + 0, 0x2f0), "production signatures (nvfw_hs_header_v2.sig_prod_offset, sig_prod_size)");
}

// patch_sig moves the copied signatures; the moved range is checked too.
TEST(HsHeaderTest, PatchSigMovesSignaturesPastTheEnd) {
  ExpectError(Valid().U32(0x64, 0x2d0), "signatures nouveau copies");
}

TEST(HsHeaderTest, MetaDataTooShort) { ExpectError(Valid().U32(kHs + 20, 8), "meta_data_size is 8 bytes"); }

TEST(HsHeaderTest, LoadHeaderPastTheEnd) {
  ExpectError(Valid().U32(kHs + 28, 0x2f0), "nvfw_hs_load_header_v2 (nvfw_hs_header_v2.header_offset, header_size)");
}

// num_apps from the file is bounded by header_size before anything is read or allocated.
TEST(HsHeaderTest, HugeAppCount) {
  ExpectError(Valid().U32(kLoad + 16, 0xffffffff), "nvfw_hs_load_header_v2.num_apps is 4294967295");
}

TEST(HsHeaderTest, NoApps) { ExpectError(Valid().U32(kLoad + 16, 0), "num_apps is 0"); }

TEST(HsHeaderTest, AppPastThePayload) {
  ExpectError(Valid().U32(kLoad + 24, 0x1c1), "app[0] (nvfw_hs_load_header_v2.app[0]) spans payload bytes 0x40..0x201");
}

TEST(HsHeaderTest, AppOffsetThatWraps) {
  ExpectError(Valid().U32(kLoad + 20, 0xffffff00).U32(kLoad + 24, 0x200), "past the payload's end at 0x200");
}

TEST(HsHeaderTest, OsDataPastThePayload) {
  ExpectError(Valid().U32(kLoad + 12, 0x101), "OS data (nvfw_hs_load_header_v2.os_data_offset, os_data_size)");
}

TEST(HsHeaderTest, PatchLocationOutsideTheDataImage) {
  ExpectError(Valid().U32(0x60, 0xf8), "the signature patch location 0xf8");
  // The last 16 bytes of the data image still hold a whole signature; one byte further does not.
  Bytes edge = Valid().U32(0x60, 0x1f0);
  EXPECT_TRUE(Parse(edge).ok());
  ExpectError(Valid().U32(0x60, 0x1f1), "the signature patch location 0x1f1");
}

TEST(HsHeaderTest, WrongMagicIsTheContainersError) { ExpectError(Valid().U32(0, 0), "bin_magic at offset 0 is 0x0"); }

}  // namespace
}  // namespace firmware::nv
