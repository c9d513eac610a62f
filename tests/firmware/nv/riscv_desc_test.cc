// The bootloader (nvfw_bin_hdr + RM_RISCV_UCODE_DESC, rmRiscvUcode.h) on synthetic files: version 5's 21 u32s,
// version 4's 19, and regions checked against the payload.
#include "firmware/nv/riscv_desc.h"

#include "absl/strings/match.h"
#include "gtest/gtest.h"
#include "tests/firmware/nv/nv_firmware.h"

namespace firmware::nv {
namespace {

using testing::Bytes;

constexpr uint32_t kDesc = 0x18;

// A descriptor of `words` u32s followed by a 0x1000-byte payload; field values shaped like GA102's.
Bytes WithWords(uint32_t words) {
  const uint32_t data = kDesc + words * 4;
  Bytes b(data + 0x1000);
  b.U32(0, 0x10de).U32(4, 1).U32(8, 0x1100).U32(12, kDesc).U32(16, data).U32(20, 0x1000);
  const uint32_t v[21] = {words == 21 ? 5u : 4u,
                          0xc00,
                          0x58,
                          0xc58,
                          0x10,  // bootloader, its parameters
                          0,
                          0,
                          0,  // riscvElf, appVersion
                          0,
                          0x100,  // manifest
                          0x100,
                          0x400,  // monitor data
                          0x500,
                          0x600,  // monitor code
                          1,
                          0,
                          0,
                          0,
                          0,  // bIsMonitorEnabled, swbrom
                          0x1000,
                          0};  // fbReservedSize, bSignedAsCode
  for (uint32_t i = 0; i < words; ++i) b.U32(kDesc + i * 4, v[i]);
  return b;
}

void ExpectError(const Bytes& b, absl::string_view expected) {
  absl::StatusOr<Bootloader> r = ParseBootloader("bootloader-1.bin", b.str());
  ASSERT_FALSE(r.ok()) << "accepted; expected: " << expected;
  EXPECT_EQ(r.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_TRUE(absl::StrContains(r.status().message(), expected)) << r.status();
}

TEST(RiscvDescTest, Version5HasAllFields) {
  absl::StatusOr<Bootloader> b = ParseBootloader("bootloader-1.bin", WithWords(21).str());
  ASSERT_TRUE(b.ok()) << b.status();
  EXPECT_EQ(b->desc_words, 21u);
  EXPECT_EQ(b->desc.version, 5u);
  EXPECT_EQ(b->desc.monitor_code_offset, 0x500u);
  EXPECT_EQ(b->desc.manifest_size, 0x100u);
  ASSERT_TRUE(b->desc.fb_reserved_size.has_value());
  EXPECT_EQ(*b->desc.fb_reserved_size, 0x1000u);
  EXPECT_EQ(b->desc.signed_as_code, 0u);
}

TEST(RiscvDescTest, Version4StopsAfterSwbromDataSize) {
  absl::StatusOr<Bootloader> b = ParseBootloader("bootloader-1.bin", WithWords(19).str());
  ASSERT_TRUE(b.ok()) << b.status();
  EXPECT_EQ(b->desc_words, 19u);
  EXPECT_FALSE(b->desc.fb_reserved_size.has_value());
  EXPECT_FALSE(b->desc.signed_as_code.has_value());
  bool noted = false;
  for (const std::string& n : b->notes) noted |= absl::StrContains(n, "fbReservedSize, bSignedAsCode absent");
  EXPECT_TRUE(noted);
}

TEST(RiscvDescTest, DescriptorTooShort) { ExpectError(WithWords(18), "has room for 72 bytes before 0x60"); }

// The payload before the descriptor: the descriptor runs to the end of the file, which is too close.
TEST(RiscvDescTest, DescriptorAtTheEndOfTheFile) {
  Bytes b = WithWords(21);
  b.U32(12, static_cast<uint32_t>(b.size() - 8));
  b.U32(16, 0x18).U32(20, 0x10);
  ExpectError(b, "has room for 8 bytes");
}

TEST(RiscvDescTest, MonitorCodePastThePayload) {
  ExpectError(WithWords(21).U32(kDesc + 13 * 4, 0xb01),
              "monitorCode region (monitorCodeOffset 0x500, monitorCodeSize 0xb01) ends past the payload");
}

TEST(RiscvDescTest, ManifestOffsetThatWraps) {
  ExpectError(WithWords(21).U32(kDesc + 8 * 4, 0xffffff80), "manifest region (manifestOffset 0xffffff80");
}

// A region of size 0 is absent, wherever its offset points (riscvElf in the real files).
TEST(RiscvDescTest, EmptyRegionIsNotChecked) {
  EXPECT_TRUE(ParseBootloader("bootloader-1.bin", WithWords(21).U32(kDesc + 5 * 4, 0xffffffff).str()).ok());
}

}  // namespace
}  // namespace firmware::nv
